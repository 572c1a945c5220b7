/* SPDX-License-Identifier: MIT */
/*
 * Declarations parser: the C (and CUDA C++ header) subset a device
 * library's interface is written in -- typedefs, struct/union/enum
 * definitions, bit-fields, alignment attributes, function declarations.
 * Anything outside that subset is an error with its line and column, never
 * a silent guess: a wrong layout is worse than no layout.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ptxabi_internal.h"

struct parser {
	ptxabi_ctx *ctx;
	struct token *t;
	size_t n, i;
	bool pp;		/* #if: identifiers are 0, no sizeof */
};

struct declspec {
	struct type *type;
	const char *tdname;	/* the typedef name used, if any */
	bool is_typedef, is_static, has_body_ok;
	size_t req_align;
	struct loc loc;
};

static struct token *peek(struct parser *p)
{
	return &p->t[p->i < p->n ? p->i : p->n - 1];
}

static struct token *peek2(struct parser *p)
{
	return &p->t[p->i + 1 < p->n ? p->i + 1 : p->n - 1];
}

static struct token *next(struct parser *p)
{
	struct token *t = peek(p);

	if (p->i < p->n - 1)
		p->i++;
	return t;
}

static bool accept(struct parser *p, const char *s)
{
	if (peek(p)->kind != TK_STR && peek(p)->kind != TK_CHAR &&
	    tok_is(peek(p), s)) {
		next(p);
		return true;
	}
	return false;
}

static const char *tokdesc(ptxabi_ctx *ctx, const struct token *t)
{
	if (t->kind == TK_EOF)
		return "end of input";
	return ar_printf(ctx, "'%.*s'", (int)t->len, t->s);
}

static void expect(struct parser *p, const char *s)
{
	if (!accept(p, s))
		fail(p->ctx, peek(p)->loc, "expected '%s', found %s", s,
		     tokdesc(p->ctx, peek(p)));
}

static char *tokstr(struct parser *p, const struct token *t)
{
	return ar_strndup(p->ctx, t->s, t->len);
}

/* Skips a balanced (...), [...] or {...} group starting at the opener. */
static void skip_group(struct parser *p)
{
	int depth = 0;
	struct loc at = peek(p)->loc;

	do {
		struct token *t = next(p);

		if (t->kind == TK_EOF)
			fail(p->ctx, at, "unbalanced brackets");
		if (t->kind != TK_PUNCT)
			continue;
		if (tok_is(t, "(") || tok_is(t, "[") || tok_is(t, "{"))
			depth++;
		else if (tok_is(t, ")") || tok_is(t, "]") || tok_is(t, "}"))
			depth--;
	} while (depth > 0);
}

/* ---- constant expressions ---- */

static long long cexpr(struct parser *p);
static bool is_type_start(struct parser *p, const struct token *t);
static struct type *type_name(struct parser *p);

static long long parse_number(struct parser *p, const struct token *t)
{
	char buf[64];
	size_t n = 0;

	for (size_t i = 0; i < t->len && n + 1 < sizeof(buf); i++)
		if (t->s[i] != '\'')
			buf[n++] = t->s[i];
	buf[n] = 0;
	if (strpbrk(buf, ".") ||
	    (!(buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X')) &&
	     strpbrk(buf, "eE")))
		fail(p->ctx, t->loc, "floating constant in integer expression");
	while (n > 0 && strchr("uUlLzZ", buf[n - 1]))
		buf[--n] = 0;
	char *end;
	int base = 10;
	const char *s = buf;

	if (buf[0] == '0' && (buf[1] == 'b' || buf[1] == 'B')) {
		base = 2;
		s = buf + 2;
	} else if (buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X')) {
		base = 16;
		s = buf + 2;
	} else if (buf[0] == '0') {
		base = 8;
	}
	errno = 0;
	unsigned long long v = strtoull(s, &end, base);

	if (*end || errno || !*s)
		fail(p->ctx, t->loc, "bad integer constant '%.*s'",
		     (int)t->len, t->s);
	return (long long)v;
}

static long long char_value(struct parser *p, const struct token *t)
{
	const char *s = t->s + 1;

	if (t->len == 3)
		return (unsigned char)s[0];
	if (t->len == 4 && s[0] == '\\') {
		switch (s[1]) {
		case 'n': return '\n';
		case 't': return '\t';
		case 'r': return '\r';
		case '0': return 0;
		case '\\': return '\\';
		case '\'': return '\'';
		default: break;
		}
	}
	fail(p->ctx, t->loc, "unsupported character constant %.*s",
	     (int)t->len, t->s);
}

static long long enum_value(ptxabi_ctx *ctx, const struct token *t, bool *found)
{
	for (size_t i = ctx->nenumconsts; i-- > 0;)
		if (strlen(ctx->enumconsts[i].name) == t->len &&
		    memcmp(ctx->enumconsts[i].name, t->s, t->len) == 0) {
			*found = true;
			return ctx->enumvals[i];
		}
	*found = false;
	return 0;
}

static long long c_primary(struct parser *p)
{
	struct token *t = peek(p);

	if (t->kind == TK_NUM) {
		next(p);
		return parse_number(p, t);
	}
	if (t->kind == TK_CHAR) {
		next(p);
		return char_value(p, t);
	}
	if (tok_is(t, "(")) {
		next(p);
		long long v = cexpr(p);

		expect(p, ")");
		return v;
	}
	if (t->kind == TK_IDENT) {
		bool found;
		long long v;

		next(p);
		if (tok_is(t, "true"))
			return 1;
		if (tok_is(t, "false"))
			return 0;
		if (p->pp)
			return 0;	/* undefined macro names are 0 in #if */
		v = enum_value(p->ctx, t, &found);
		if (found)
			return v;
		fail(p->ctx, t->loc, "'%.*s' is not an integer constant",
		     (int)t->len, t->s);
	}
	fail(p->ctx, t->loc, "expected a constant expression, found %s",
	     tokdesc(p->ctx, t));
}

static long long c_unary(struct parser *p)
{
	struct token *t = peek(p);

	if (t->kind == TK_PUNCT) {
		if (accept(p, "-"))
			return -c_unary(p);
		if (accept(p, "+"))
			return c_unary(p);
		if (accept(p, "!"))
			return !c_unary(p);
		if (accept(p, "~"))
			return ~c_unary(p);
		if (tok_is(t, "(") && !p->pp && is_type_start(p, peek2(p))) {
			/* A cast: the value is kept, C types here are wide
			 * enough for sizes and widths. */
			next(p);
			type_name(p);
			expect(p, ")");
			return c_unary(p);
		}
	}
	if (t->kind == TK_IDENT && !p->pp &&
	    (tok_is(t, "sizeof") || tok_is(t, "alignof") ||
	     tok_is(t, "_Alignof") || tok_is(t, "__alignof__") ||
	     tok_is(t, "__alignof"))) {
		bool is_size = tok_is(t, "sizeof");

		next(p);
		if (!tok_is(peek(p), "(") || !is_type_start(p, peek2(p)))
			fail(p->ctx, peek(p)->loc,
			     "only sizeof/alignof of a parenthesized type "
			     "name is supported");
		next(p);
		struct type *ty = type_name(p);

		expect(p, ")");
		if (!ty->complete)
			fail(p->ctx, t->loc, "%s of incomplete type '%s'",
			     is_size ? "sizeof" : "alignof",
			     type_str(p->ctx, ty));
		return (long long)(is_size ? ty->size : ty->align);
	}
	return c_primary(p);
}

static int binprec(const struct token *t)
{
	static const struct { const char *op; int prec; } ops[] = {
		{ "*", 10 }, { "/", 10 }, { "%", 10 }, { "+", 9 }, { "-", 9 },
		{ "<<", 8 }, { ">>", 8 }, { "<", 7 }, { ">", 7 }, { "<=", 7 },
		{ ">=", 7 }, { "==", 6 }, { "!=", 6 }, { "&", 5 }, { "^", 4 },
		{ "|", 3 }, { "&&", 2 }, { "||", 1 },
	};

	if (t->kind != TK_PUNCT)
		return 0;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (tok_is(t, ops[i].op))
			return ops[i].prec;
	return 0;
}

static long long c_binary(struct parser *p, int minprec)
{
	long long l = c_unary(p);

	for (;;) {
		struct token *op = peek(p);
		int prec = binprec(op);

		if (prec == 0 || prec < minprec)
			return l;
		next(p);
		long long r = c_binary(p, prec + 1);

		if ((tok_is(op, "/") || tok_is(op, "%")) && r == 0)
			fail(p->ctx, op->loc, "division by zero");
		if ((tok_is(op, "<<") || tok_is(op, ">>")) && (r < 0 || r > 63))
			fail(p->ctx, op->loc, "shift count out of range");
		unsigned long long ul = (unsigned long long)l;
		unsigned long long ur = (unsigned long long)r;

		switch (op->s[0]) {
		case '*': l = (long long)(ul * ur); break;
		case '/': l = l / r; break;
		case '%': l = l % r; break;
		case '+': l = (long long)(ul + ur); break;
		case '-': l = (long long)(ul - ur); break;
		case '<':
			if (op->len == 2 && op->s[1] == '<')
				l = (long long)(ul << r);
			else
				l = op->len == 2 ? l <= r : l < r;
			break;
		case '>':
			if (op->len == 2 && op->s[1] == '>')
				l = l >> r;
			else
				l = op->len == 2 ? l >= r : l > r;
			break;
		case '=': l = l == r; break;
		case '!': l = l != r; break;
		case '&': l = op->len == 2 ? (l && r) : (l & r); break;
		case '^': l = l ^ r; break;
		case '|': l = op->len == 2 ? (l || r) : (l | r); break;
		default: break;
		}
	}
}

static long long cexpr(struct parser *p)
{
	long long c = c_binary(p, 1);

	if (accept(p, "?")) {
		long long a = cexpr(p);

		expect(p, ":");
		long long b = cexpr(p);

		return c ? a : b;
	}
	return c;
}

long long eval_pp_expr(ptxabi_ctx *ctx, struct token *toks, size_t n,
		       struct loc where)
{
	struct tokvec tv = { 0 };
	struct token eof = { .kind = TK_EOF, .s = "", .loc = where };

	for (size_t i = 0; i < n; i++)
		tokvec_push(ctx, &tv, &toks[i]);
	tokvec_push(ctx, &tv, &eof);
	struct parser p = { ctx, tv.v, tv.n, 0, true };

	if (n == 0)
		fail(ctx, where, "#if with no expression");
	long long v = cexpr(&p);

	if (peek(&p)->kind != TK_EOF)
		fail(ctx, peek(&p)->loc, "unexpected %s in #if",
		     tokdesc(ctx, peek(&p)));
	return v;
}

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

static bool is_ignored(const struct token *t)
{
	return word_in(t, ignored_words,
		       sizeof(ignored_words) / sizeof(ignored_words[0]));
}

static const char *const base_words[] = {
	"void", "_Bool", "bool", "char", "short", "int", "long", "signed",
	"unsigned", "float", "double", "__int128", "struct", "union", "enum",
	"__signed__", "__signed", "__half",
};

static bool is_type_start(struct parser *p, const struct token *t)
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
static bool parse_align_word(struct parser *p, size_t *req_align)
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

static struct type *parse_record(struct parser *p);
static struct type *parse_enum(struct parser *p);

static void parse_declspec(struct parser *p, struct declspec *ds)
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

struct decl {
	const char *name;
	struct loc loc;
	size_t req_align;
};

static struct type *declarator(struct parser *p, struct type *base,
			       struct decl *d, bool abstract);

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

static struct type *declarator(struct parser *p, struct type *base,
			       struct decl *d, bool abstract)
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

static struct type *type_name(struct parser *p)
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

/* ---- records and enums ---- */

static void add_member(ptxabi_ctx *ctx, struct type *rec, size_t *cap,
		       const struct member *m)
{
	rec->mem = vec_grow(ctx, rec->mem, cap, rec->nmem + 1, sizeof(*m));
	rec->mem[rec->nmem++] = *m;
}

static void parse_members(struct parser *p, struct type *rec)
{
	ptxabi_ctx *ctx = p->ctx;
	size_t cap = 0;

	while (!accept(p, "}")) {
		struct token *t = peek(p);

		if (t->kind == TK_EOF)
			fail(ctx, rec->loc, "unterminated %s definition",
			     rec->kind == TY_UNION ? "union" : "struct");
		if (accept(p, ";"))
			continue;
		if ((tok_is(t, "public") || tok_is(t, "private") ||
		     tok_is(t, "protected")) && tok_is(peek2(p), ":")) {
			next(p);
			next(p);
			continue;
		}
		if (tok_is(t, "static_assert") || tok_is(t, "_Static_assert")) {
			fail(ctx, t->loc, "static_assert inside a record is "
			     "not supported");
		}
		struct declspec ds;

		parse_declspec(p, &ds);
		if (ds.is_typedef || ds.is_static)
			fail(ctx, ds.loc, "%s members are not supported",
			     ds.is_typedef ? "typedef" : "static");
		if (accept(p, ";")) {
			/* C11 anonymous struct/union member */
			if (type_is_record(ds.type) && !ds.type->tag) {
				struct member m = { .type = ds.type, .bits = -1,
						    .req_align = ds.req_align,
						    .loc = ds.loc };

				add_member(ctx, rec, &cap, &m);
				continue;
			}
			if (type_is_record(ds.type) || ds.type->kind == TY_ENUM)
				continue;	/* nested tag declaration */
			fail(ctx, ds.loc, "declaration declares nothing");
		}
		for (;;) {
			struct member m = { .bits = -1 };
			struct decl d = { 0 };

			m.loc = peek(p)->loc;
			if (tok_is(peek(p), ":")) {
				m.type = ds.type;	/* unnamed bit-field */
			} else {
				m.type = declarator(p, ds.type, &d, false);
				m.name = d.name;
				m.loc = d.loc;
			}
			m.req_align = ds.req_align > d.req_align ?
				      ds.req_align : d.req_align;
			if (m.type == ds.type)
				m.tyname = ds.tdname;
			if (tok_is(peek(p), "(") || m.type->kind == TY_FUNC)
				fail(ctx, m.loc, "member functions are not "
				     "supported");
			if (accept(p, ":")) {
				struct loc wl = peek(p)->loc;
				long long w = cexpr(p);

				if (!type_is_integer(m.type) &&
				    m.type->kind != TY_ENUM)
					fail(ctx, m.loc, "bit-field '%s' has "
					     "non-integer type '%s'",
					     m.name ? m.name : "<unnamed>",
					     type_str(ctx, m.type));
				if (w < 0)
					fail(ctx, wl, "negative bit-field "
					     "width %lld", w);
				if ((size_t)w > m.type->size * 8)
					fail(ctx, wl, "bit-field width %lld "
					     "exceeds its type '%s' (%zu bits)",
					     w, type_str(ctx, m.type),
					     m.type->size * 8);
				if (w == 0 && m.name)
					fail(ctx, m.loc, "named bit-field '%s' "
					     "has zero width", m.name);
				if (m.type->kind == TY_BOOL && w > 1)
					fail(ctx, wl, "_Bool bit-field wider "
					     "than 1 bit is not supported");
				m.bits = (int)w;
				while (parse_align_word(p, &m.req_align))
					;
				if (m.req_align && m.bits >= 0)
					fail(ctx, m.loc, "alignment on a "
					     "bit-field is not supported");
			}
			if (!m.type->complete)
				fail(ctx, m.loc, "member '%s' has incomplete "
				     "type '%s'", m.name ? m.name : "",
				     type_str(ctx, m.type));
			if (accept(p, "="))
				fail(ctx, m.loc, "default member initializers "
				     "are not supported");
			add_member(ctx, rec, &cap, &m);
			if (accept(p, ";"))
				break;
			expect(p, ",");
		}
	}
}

static struct type *parse_record(struct parser *p)
{
	ptxabi_ctx *ctx = p->ctx;
	struct token *kw = next(p);
	enum tykind k = tok_is(kw, "union") ? TY_UNION : TY_STRUCT;
	size_t req = 0;
	struct token *tag = NULL;

	while (parse_align_word(p, &req) || tok_is(peek(p), "__device_builtin__"))
		if (tok_is(peek(p), "__device_builtin__"))
			next(p);
	if (peek(p)->kind == TK_IDENT && !is_ignored(peek(p)))
		tag = next(p);
	while (parse_align_word(p, &req))
		;
	if (tok_is(peek(p), ":"))
		fail(ctx, peek(p)->loc, "base classes are not supported");
	struct type *t = NULL;

	if (tag) {
		t = lookup_tag(ctx, tag->s, tag->len);
		if (t && t->kind != k)
			fail(ctx, tag->loc, "'%.*s' was declared as a %s",
			     (int)tag->len, tag->s,
			     t->kind == TY_UNION ? "union" :
			     t->kind == TY_ENUM ? "enum" : "struct");
	}
	if (!tok_is(peek(p), "{")) {
		if (!tag)
			fail(ctx, peek(p)->loc, "expected a tag or '{' after "
			     "'%.*s'", (int)kw->len, kw->s);
		if (!t) {	/* forward declaration */
			t = type_new(ctx, k);
			t->tag = tokstr(p, tag);
			t->name = ar_printf(ctx, "%s %s", k == TY_UNION ?
					    "union" : "struct", t->tag);
			t->loc = tag->loc;
			add_tag(ctx, t->tag, t);
		}
		if (req)
			fail(ctx, kw->loc, "alignment on a reference to a "
			     "record is not supported");
		return t;
	}
	if (t && t->complete)
		fail(ctx, tag->loc, "redefinition of '%s'", t->name);
	if (!t) {
		t = type_new(ctx, k);
		if (tag) {
			t->tag = tokstr(p, tag);
			t->name = ar_printf(ctx, "%s %s", k == TY_UNION ?
					    "union" : "struct", t->tag);
			add_tag(ctx, t->tag, t);
		}
	}
	t->loc = tag ? tag->loc : kw->loc;
	next(p);		/* '{' */
	parse_members(p, t);
	while (parse_align_word(p, &req))
		;
	t->req_align = req;
	layout_record(ctx, t);
	ctx->records = vec_grow(ctx, ctx->records, &ctx->caprecords,
				ctx->nrecords + 1, sizeof(*ctx->records));
	ctx->records[ctx->nrecords++] = t;
	return t;
}

static struct type *parse_enum(struct parser *p)
{
	ptxabi_ctx *ctx = p->ctx;
	struct token *kw = next(p);
	struct token *tag = NULL;
	struct type *t;

	if (tok_is(peek(p), "class") || tok_is(peek(p), "struct"))
		next(p);
	if (peek(p)->kind == TK_IDENT)
		tag = next(p);
	if (tag) {
		t = lookup_tag(ctx, tag->s, tag->len);
		if (t && t->kind != TY_ENUM)
			fail(ctx, tag->loc, "'%.*s' was not declared as an enum",
			     (int)tag->len, tag->s);
		if (t && !tok_is(peek(p), "{") && !tok_is(peek(p), ":"))
			return t;
	}
	t = type_new(ctx, TY_ENUM);
	t->size = t->align = 4;
	t->is_signed = true;
	t->complete = true;
	if (tag) {
		t->tag = tokstr(p, tag);
		t->name = ar_printf(ctx, "enum %s", t->tag);
		add_tag(ctx, t->tag, t);
	} else {
		t->name = "enum <anonymous>";
	}
	t->loc = kw->loc;
	if (accept(p, ":")) {
		struct type *u = type_name(p);

		if (!type_is_integer(u))
			fail(ctx, kw->loc, "enum base must be an integer type");
		t->size = u->size;
		t->align = u->align;
		t->is_signed = u->is_signed;
	}
	if (!accept(p, "{")) {
		if (!tag)
			fail(ctx, peek(p)->loc, "expected '{' after 'enum'");
		return t;
	}
	long long v = 0;

	while (!accept(p, "}")) {
		struct token *n = next(p);

		if (n->kind != TK_IDENT)
			fail(ctx, n->loc, "expected an enumerator name, found "
			     "%s", tokdesc(ctx, n));
		if (accept(p, "="))
			v = cexpr(p);
		ctx->enumconsts = vec_grow(ctx, ctx->enumconsts,
					   &ctx->capenumconsts,
					   ctx->nenumconsts + 1,
					   sizeof(*ctx->enumconsts));
		size_t cap2 = ctx->nenumconsts;
		long long *nv = ar_alloc(ctx, (cap2 + 1) * sizeof(*nv));

		if (ctx->enumvals)
			memcpy(nv, ctx->enumvals, cap2 * sizeof(*nv));
		ctx->enumvals = nv;
		ctx->enumconsts[ctx->nenumconsts] =
			(struct named){ tokstr(p, n), t };
		ctx->enumvals[ctx->nenumconsts++] = v;
		v++;
		if (!tok_is(peek(p), "}"))
			expect(p, ",");
	}
	return t;
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
	struct parser p = { ctx, toks, n, 0, false };
	unsigned linkage_depth = 0;

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
	struct parser p = { ctx, tv.v, tv.n, 0, false };
	struct type *t = type_name(&p);

	if (peek(&p)->kind != TK_EOF)
		fail(ctx, peek(&p)->loc, "unexpected %s after type name",
		     tokdesc(ctx, peek(&p)));
	return t;
}
