/* SPDX-License-Identifier: MIT */
/*
 * Declarations parser: the C (and CUDA C++ header) subset a device
 * library's interface is written in -- typedefs, struct/union/enum
 * definitions, bit-fields, alignment attributes, function declarations.
 * Anything outside that subset is an error with its line and column, never
 * a silent guess: a wrong layout is worse than no layout.
 *
 * This file: declaration specifiers, declarators and the top level;
 * records and enums are in record.c, constant expressions in expr.c.
 */
#include <string.h>

#include "parser.h"

/* ---- declaration specifiers ---- */

static const char *const ignored_words[] = {
	"extern", "inline", "__inline__", "__inline", "__forceinline__",
	"__noinline__", "__device__", "__host__", "const", "volatile",
	"__restrict__", "__restrict", "restrict", "register",
	"__device_builtin__", "__extension__", "_Noreturn", "constexpr",
	"__shared__", "__constant__", "__managed__", "__cudart_builtin__",
	"__thread", "_Thread_local", "thread_local", "mutable",
};

static bool word_in(const struct token *t, const char *const *v, size_t n)
{
	if (t->kind != TK_IDENT)
		return false;
	for (size_t i = 0; i < n; i++)
		if (tok_is(t, v[i]))
			return true;
	return false;
}

bool is_ignored(const struct token *t)
{
	return word_in(t, ignored_words,
		       sizeof(ignored_words) / sizeof(ignored_words[0]));
}

static const char *const base_words[] = {
	"void", "_Bool", "bool", "char", "short", "int", "long", "signed",
	"unsigned", "float", "double", "__int128", "struct", "union", "enum",
	"__signed__", "__signed", "__half",
};

bool is_type_start(struct parser *p, const struct token *t)
{
	if (t->kind != TK_IDENT)
		return false;
	if (word_in(t, base_words, sizeof(base_words) / sizeof(base_words[0])))
		return true;
	if (is_ignored(t) || tok_is(t, "typedef") || tok_is(t, "static"))
		return true;
	return lookup_typedef(p->ctx, t->s, t->len) ||
	       lookup_tag(p->ctx, t->s, t->len);
}

static size_t check_align(struct parser *p, long long a, struct loc loc)
{
	if (a <= 0 || (a & (a - 1)) || a > 65536)
		fail(p->ctx, loc, "alignment %lld is not a power of two", a);
	return (size_t)a;
}

/* __attribute__((...)): aligned is understood; packed and anything that
 * could change layout are refused; the rest cannot and is skipped. */
static void parse_gnu_attribute(struct parser *p, size_t *req_align)
{
	static const char *const harmless[] = {
		"deprecated", "__deprecated__", "unused", "__unused__",
		"used", "__used__", "noinline", "__noinline__", "always_inline",
		"__always_inline__", "visibility", "__visibility__", "nothrow",
		"__nothrow__", "pure", "__pure__", "const", "__const__",
		"noreturn", "__noreturn__", "warn_unused_result",
		"__warn_unused_result__", "nonnull", "__nonnull__",
		"format", "__format__", "weak", "__weak__", "device_builtin",
		"__device_builtin__", "may_alias", "__may_alias__",
	};

	expect(p, "(");
	expect(p, "(");
	while (!tok_is(peek(p), ")")) {
		struct token *a = next(p);

		if (a->kind != TK_IDENT)
			fail(p->ctx, a->loc, "unsupported attribute syntax");
		if (tok_is(a, "aligned") || tok_is(a, "__aligned__")) {
			if (!accept(p, "("))
				fail(p->ctx, a->loc,
				     "aligned without a value is not supported");
			long long v = cexpr(p);

			expect(p, ")");
			size_t al = check_align(p, v, a->loc);

			if (al > *req_align)
				*req_align = al;
		} else if (word_in(a, harmless,
				   sizeof(harmless) / sizeof(harmless[0]))) {
			if (tok_is(peek(p), "("))
				skip_group(p);
		} else {
			fail(p->ctx, a->loc, "unsupported attribute '%.*s'",
			     (int)a->len, a->s);
		}
		if (!accept(p, ","))
			break;
	}
	expect(p, ")");
	expect(p, ")");
}

/* Alignment and attribute words that may appear among specifiers, after a
 * struct keyword, or after a declarator.  Returns true if one was eaten. */
bool parse_align_word(struct parser *p, size_t *req_align)
{
	struct token *t = peek(p);

	if (t->kind != TK_IDENT)
		return false;
	if (tok_is(t, "__attribute__") || tok_is(t, "__attribute")) {
		next(p);
		parse_gnu_attribute(p, req_align);
		return true;
	}
	if (tok_is(t, "__align__") || tok_is(t, "__builtin_align__") ||
	    tok_is(t, "alignas") || tok_is(t, "_Alignas")) {
		long long v;

		next(p);
		expect(p, "(");
		if (is_type_start(p, peek(p))) {
			struct type *ty = type_name(p);

			v = (long long)ty->align;
		} else {
			v = cexpr(p);
		}
		expect(p, ")");
		size_t al = check_align(p, v, t->loc);

		if (al > *req_align)
			*req_align = al;
		return true;
	}
	if (tok_is(t, "__declspec")) {
		fail(p->ctx, t->loc, "__declspec is not supported");
	}
	if (tok_is(t, "__global__"))
		fail(p->ctx, t->loc,
		     "__global__ kernels are not supported (their parameters "
		     "are .entry parameters, not .func ones)");
	if (tok_is(t, "packed") || tok_is(t, "__packed__"))
		fail(p->ctx, t->loc, "packed layouts are not supported");
	return false;
}

void parse_declspec(struct parser *p, struct declspec *ds)
{
	int nvoid = 0, nbool = 0, nchar = 0, nshort = 0, nint = 0, nlong = 0;
	int nsigned = 0, nunsigned = 0, nfloat = 0, ndouble = 0, nint128 = 0;
	struct type *named = NULL;
	bool any = false;

	memset(ds, 0, sizeof(*ds));
	ds->loc = peek(p)->loc;
	for (;;) {
		struct token *t = peek(p);

		if (t->kind != TK_IDENT)
			break;
		if (parse_align_word(p, &ds->req_align))
			continue;
		if (tok_is(t, "typedef")) {
			ds->is_typedef = true;
		} else if (tok_is(t, "static")) {
			ds->is_static = true;
		} else if (is_ignored(t)) {
			/* qualifiers and CUDA execution space words */
		} else if (tok_is(t, "void")) {
			nvoid++;
		} else if (tok_is(t, "_Bool") || tok_is(t, "bool")) {
			nbool++;
		} else if (tok_is(t, "char")) {
			nchar++;
		} else if (tok_is(t, "short")) {
			nshort++;
		} else if (tok_is(t, "int")) {
			nint++;
		} else if (tok_is(t, "long")) {
			nlong++;
		} else if (tok_is(t, "signed") || tok_is(t, "__signed__") ||
			   tok_is(t, "__signed")) {
			nsigned++;
		} else if (tok_is(t, "unsigned")) {
			nunsigned++;
		} else if (tok_is(t, "float")) {
			nfloat++;
		} else if (tok_is(t, "double")) {
			ndouble++;
		} else if (tok_is(t, "__int128")) {
			nint128++;
		} else if (tok_is(t, "struct") || tok_is(t, "union") ||
			   tok_is(t, "class")) {
			if (any || named)
				fail(p->ctx, t->loc, "two types in one "
				     "declaration");
			named = parse_record(p);
			any = true;
			continue;
		} else if (tok_is(t, "enum")) {
			if (any || named)
				fail(p->ctx, t->loc, "two types in one "
				     "declaration");
			named = parse_enum(p);
			any = true;
			continue;
		} else if (!any && !named) {
			struct type *ty = lookup_typedef(p->ctx, t->s, t->len);

			if (ty)
				ds->tdname = tokstr(p, t);
			else
				ty = lookup_tag(p->ctx, t->s, t->len);
			if (!ty)
				break;
			named = ty;
		} else {
			break;
		}
		if (!tok_is(t, "typedef") && !tok_is(t, "static") &&
		    !is_ignored(t) && !named)
			any = true;
		next(p);
	}
	struct loc at = ds->loc;

	if (named) {
		if (any && !type_is_record(named) && named->kind != TY_ENUM)
			fail(p->ctx, at, "two types in one declaration");
		ds->type = named;
		return;
	}
	if (!any)
		fail(p->ctx, peek(p)->loc, "expected a type, found %s%s",
		     tokdesc(p->ctx, peek(p)),
		     peek(p)->kind == TK_IDENT ? " (unknown type name?)" : "");
	if (nsigned && nunsigned)
		fail(p->ctx, at, "both signed and unsigned");
	if (nlong && ndouble)
		fail(p->ctx, at, "long double is not supported in device code");
	int nbase = (nvoid > 0) + (nbool > 0) + (nchar > 0) + (nfloat > 0) +
		    (ndouble > 0) + (nint128 > 0);
	if (nbase > 1 || nvoid > 1 || nchar > 1 || nshort > 1 || nlong > 2 ||
	    nint > 1 || (nshort && nlong) ||
	    ((nvoid || nbool || nfloat || ndouble) &&
	     (nsigned || nunsigned || nshort || nlong || nint)) ||
	    (nint128 && (nshort || nlong || nchar)))
		fail(p->ctx, at, "invalid combination of type specifiers");
	enum tykind k;

	if (nvoid)
		k = TY_VOID;
	else if (nbool)
		k = TY_BOOL;
	else if (nfloat)
		k = TY_FLOAT;
	else if (ndouble)
		k = TY_DOUBLE;
	else if (nint128)
		k = nunsigned ? TY_UINT128 : TY_INT128;
	else if (nchar)
		k = nunsigned ? TY_UCHAR : nsigned ? TY_SCHAR : TY_CHAR;
	else if (nshort)
		k = nunsigned ? TY_USHORT : TY_SHORT;
	else if (nlong == 1)
		k = nunsigned ? TY_ULONG : TY_LONG;
	else if (nlong == 2)
		k = nunsigned ? TY_ULLONG : TY_LLONG;
	else
		k = nunsigned ? TY_UINT : TY_INT;
	if (nchar && (nshort || nlong || nint))
		fail(p->ctx, at, "invalid combination of type specifiers");
	ds->type = type_scalar(p->ctx, k);
}

/* ---- declarators ---- */

static void skip_qualifiers(struct parser *p)
{
	while (peek(p)->kind == TK_IDENT &&
	       (tok_is(peek(p), "const") || tok_is(peek(p), "volatile") ||
		tok_is(peek(p), "__restrict__") || tok_is(peek(p), "__restrict") ||
		tok_is(peek(p), "restrict")))
		next(p);
}

static struct type *param_list(struct parser *p, struct type *ret,
			       struct loc at)
{
	ptxabi_ctx *ctx = p->ctx;
	struct type *f = type_new(ctx, TY_FUNC);
	size_t cap = 0;

	f->ret = ret;
	f->complete = false;
	if (tok_is(peek(p), "void") && tok_is(peek2(p), ")")) {
		next(p);
		next(p);
		return f;
	}
	while (!accept(p, ")")) {
		if (tok_is(peek(p), "..."))
			fail(ctx, peek(p)->loc,
			     "variadic functions are not supported");
		struct declspec ds;
		struct decl d = { 0 };

		parse_declspec(p, &ds);
		struct type *pt = declarator(p, ds.type, &d, true);

		if (accept(p, "=")) {	/* C++ default argument */
			while (!tok_is(peek(p), ",") && !tok_is(peek(p), ")")) {
				if (peek(p)->kind == TK_EOF)
					fail(ctx, at, "unterminated parameter "
					     "list");
				if (tok_is(peek(p), "(") || tok_is(peek(p), "{"))
					skip_group(p);
				else
					next(p);
			}
		}
		if (pt->kind == TY_VOID)
			fail(ctx, ds.loc, "parameter of type void");
		/* Arrays and functions decay to pointers, as in C. */
		if (pt->kind == TY_ARRAY)
			pt = type_ptr(ctx, pt->base, TY_PTR);
		else if (pt->kind == TY_FUNC)
			pt = type_ptr(ctx, pt, TY_PTR);
		f->params = vec_grow(ctx, f->params, &cap, f->nparams + 1,
				     sizeof(*f->params));
		const char **pn = ar_alloc(ctx, (f->nparams + 1) * sizeof(*pn));

		if (f->pnames)
			memcpy(pn, f->pnames, f->nparams * sizeof(*pn));
		pn[f->nparams] = d.name;
		f->pnames = pn;
		f->params[f->nparams++] = pt;
		if (!tok_is(peek(p), ")"))
			expect(p, ",");
	}
	return f;
}

/* Array and function suffixes, applied innermost-last. */
static struct type *suffixes(struct parser *p, struct type *base)
{
	struct token *t = peek(p);

	if (accept(p, "[")) {
		if (accept(p, "]"))
			fail(p->ctx, t->loc,
			     "arrays without a size (flexible array members) "
			     "are not supported");
		long long n = cexpr(p);

		expect(p, "]");
		if (n <= 0)
			fail(p->ctx, t->loc, "array size must be positive, "
			     "not %lld", n);
		struct type *elem = suffixes(p, base);

		return type_array(p->ctx, elem, (size_t)n, t->loc);
	}
	if (accept(p, "(")) {
		struct type *f = param_list(p, base, t->loc);

		if (base->kind == TY_ARRAY || base->kind == TY_FUNC)
			fail(p->ctx, t->loc, "function returning %s",
			     base->kind == TY_ARRAY ? "an array" : "a function");
		if (tok_is(peek(p), "[") || tok_is(peek(p), "("))
			fail(p->ctx, peek(p)->loc, "function returning %s",
			     tok_is(peek(p), "[") ? "an array" : "a function");
		return f;
	}
	return base;
}

struct type *declarator(struct parser *p, struct type *base, struct decl *d,
			bool abstract)
{
	while (tok_is(peek(p), "*") || tok_is(peek(p), "&")) {
		bool ref = tok_is(peek(p), "&");

		next(p);
		base = type_ptr(p->ctx, base, ref ? TY_REF : TY_PTR);
		skip_qualifiers(p);
		while (parse_align_word(p, &d->req_align))
			;
	}
	struct token *t = peek(p);

	if (tok_is(t, "(") && (tok_is(peek2(p), "*") || tok_is(peek2(p), "&") ||
			       tok_is(peek2(p), "(") ||
			       (peek2(p)->kind == TK_IDENT &&
				!is_type_start(p, peek2(p))))) {
		/* Nested declarator: the suffixes after ')' apply first. */
		size_t inner = p->i + 1;

		skip_group(p);
		struct type *outer = suffixes(p, base);
		size_t after = p->i;

		p->i = inner;
		struct type *res = declarator(p, outer, d, abstract);

		expect(p, ")");
		p->i = after;
		while (parse_align_word(p, &d->req_align))
			;
		return res;
	}
	if (t->kind == TK_IDENT && !is_ignored(t) &&
	    !tok_is(t, "__attribute__")) {
		d->name = tokstr(p, t);
		d->loc = t->loc;
		next(p);
	} else if (!abstract) {
		fail(p->ctx, t->loc, "expected a name, found %s",
		     tokdesc(p->ctx, t));
	} else {
		d->loc = t->loc;
	}
	struct type *res = suffixes(p, base);

	while (parse_align_word(p, &d->req_align))
		;
	return res;
}

struct type *type_name(struct parser *p)
{
	struct declspec ds;
	struct decl d = { 0 };

	parse_declspec(p, &ds);
	struct type *t = declarator(p, ds.type, &d, true);

	if (d.name)
		fail(p->ctx, d.loc, "unexpected name '%s' in a type name",
		     d.name);
	return t;
}

static const struct typenames decl_typenames = {
	.is_type_start = is_type_start,
	.type_name = type_name,
};

void parser_init(struct parser *p, ptxabi_ctx *ctx, struct token *toks,
		 size_t n)
{
	*p = (struct parser){ ctx, toks, n, 0, &decl_typenames };
}

/* ---- top level ---- */

static void add_func(ptxabi_ctx *ctx, const char *name, struct type *fty,
		     struct loc loc)
{
	for (size_t i = 0; i < ctx->nfuncs; i++)
		if (strcmp(ctx->funcs[i].name, name) == 0) {
			/* A redeclaration must agree on parameter count; the
			 * parameter types are checked by the C compiler. */
			if (ctx->funcs[i].fty->nparams != fty->nparams)
				fail(ctx, loc, "'%s' redeclared with %zu "
				     "parameters (first declared with %zu)",
				     name, fty->nparams,
				     ctx->funcs[i].fty->nparams);
			return;
		}
	ctx->funcs = vec_grow(ctx, ctx->funcs, &ctx->capfuncs, ctx->nfuncs + 1,
			      sizeof(*ctx->funcs));
	ctx->funcs[ctx->nfuncs++] = (struct func){ name, fty, loc };
}

static void check_func_types(struct parser *p, struct type *f, struct loc loc)
{
	ptxabi_ctx *ctx = p->ctx;
	struct pspec ps;

	if (f->ret->kind != TY_VOID)
		param_spec(ctx, f->ret, loc, &ps);
	for (size_t i = 0; i < f->nparams; i++)
		param_spec(ctx, f->params[i], loc, &ps);
}

static void static_assertion(struct parser *p)
{
	struct token *kw = next(p);

	expect(p, "(");
	long long v = cexpr(p);
	const char *msg = "";

	if (accept(p, ",")) {
		struct token *s = next(p);

		if (s->kind != TK_STR)
			fail(p->ctx, s->loc, "expected a string");
		msg = ar_strndup(p->ctx, s->s, s->len);
	}
	expect(p, ")");
	expect(p, ";");
	if (!v)
		fail(p->ctx, kw->loc, "static assertion failed %s", msg);
}

static void declaration(struct parser *p)
{
	ptxabi_ctx *ctx = p->ctx;
	struct declspec ds;

	parse_declspec(p, &ds);
	if (accept(p, ";"))
		return;
	for (;;) {
		struct decl d = { 0 };
		struct type *t = declarator(p, ds.type, &d, false);

		if (ds.is_typedef) {
			if (type_is_record(t) && !t->name)
				t->name = d.name;
			if (t->kind == TY_ENUM && !t->tag)
				t->name = d.name;
			if (d.req_align) {
				/* typedef T __align__(N) name: a new type */
				struct type *c = type_new(ctx, t->kind);

				*c = *t;
				if (d.req_align > c->align)
					c->align = d.req_align;
				if (c->size % c->align)
					fail(ctx, d.loc, "aligned typedef "
					     "whose size is not a multiple of "
					     "its alignment");
				c->name = d.name;
				t = c;
			}
			add_typedef(ctx, d.name, t);
		} else if (t->kind == TY_FUNC) {
			check_func_types(p, t, d.loc);
			if (tok_is(peek(p), "{")) {
				/* A body in a header: an inline helper, not
				 * part of the linked interface. */
				skip_group(p);
				if (!ds.is_static)
					add_func(ctx, d.name, t, d.loc);
				return;
			}
			if (!ds.is_static)
				add_func(ctx, d.name, t, d.loc);
		} else if (accept(p, "=")) {
			while (!tok_is(peek(p), ",") && !tok_is(peek(p), ";")) {
				if (peek(p)->kind == TK_EOF)
					fail(ctx, d.loc, "unterminated "
					     "initializer");
				if (tok_is(peek(p), "(") || tok_is(peek(p), "{") ||
				    tok_is(peek(p), "["))
					skip_group(p);
				else
					next(p);
			}
		}
		if (accept(p, ";"))
			return;
		expect(p, ",");
	}
}

void parse_tokens(ptxabi_ctx *ctx, struct token *toks, size_t n)
{
	struct parser p;
	unsigned linkage_depth = 0;

	parser_init(&p, ctx, toks, n);
	while (peek(&p)->kind != TK_EOF) {
		struct token *t = peek(&p);

		if (tok_is(t, "extern") && peek2(&p)->kind == TK_STR) {
			next(&p);
			next(&p);
			if (accept(&p, "{"))
				linkage_depth++;
			continue;
		}
		if (tok_is(t, "}") && linkage_depth) {
			next(&p);
			linkage_depth--;
			continue;
		}
		if (accept(&p, ";"))
			continue;
		if (tok_is(t, "static_assert") || tok_is(t, "_Static_assert")) {
			static_assertion(&p);
			continue;
		}
		if (tok_is(t, "namespace") || tok_is(t, "template") ||
		    tok_is(t, "using"))
			fail(ctx, t->loc, "C++ '%.*s' is not supported",
			     (int)t->len, t->s);
		declaration(&p);
	}
	if (linkage_depth)
		fail(ctx, peek(&p)->loc, "unterminated extern \"C\" block");
}

struct type *parse_type_string(ptxabi_ctx *ctx, const char *s)
{
	struct tokvec tv = { 0 };

	lex_preprocess(ctx, s, strlen(s), "<type>", &tv);
	struct parser p;

	parser_init(&p, ctx, tv.v, tv.n);
	struct type *t = type_name(&p);

	if (peek(&p)->kind != TK_EOF)
		fail(ctx, peek(&p)->loc, "unexpected %s after type name",
		     tokdesc(ctx, peek(&p)));
	return t;
}
