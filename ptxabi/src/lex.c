/* SPDX-License-Identifier: MIT */
/*
 * Tokenizer and a small preprocessor.  Device headers guard their CUDA
 * parts with #ifdef __CUDACC__ / __cplusplus and name qualifiers through
 * macros, so conditionals and object- and function-like macros are needed;
 * #include is skipped (the types it would bring, <stdint.h> and the CUDA
 * vector types, are built in) and # / ## are rejected.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ptxabi_internal.h"

static const char *const puncts[] = {
	"...", "<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==",
	"!=", "&&", "||", "##", "::", "+=", "-=", "*=", "/=", "%=", "&=",
	"|=", "^=", "{", "}", "(", ")", "[", "]", ";", ",", ":", "*", "&",
	"=", ".", "<", ">", "!", "~", "+", "-", "/", "%", "^", "|", "?", "#",
};

struct lexer {
	ptxabi_ctx *ctx;
	const char *p, *end;
	const char *file;
	unsigned line, col;
};

/* Skips backslash-newline pairs so directives may continue over lines. */
static void skip_splices(struct lexer *lx)
{
	while (lx->p + 1 < lx->end && lx->p[0] == '\\' &&
	       (lx->p[1] == '\n' || (lx->p[1] == '\r' && lx->p + 2 < lx->end &&
				     lx->p[2] == '\n'))) {
		lx->p += lx->p[1] == '\n' ? 2 : 3;
		lx->line++;
		lx->col = 1;
	}
}

static void adv(struct lexer *lx, size_t n)
{
	while (n-- && lx->p < lx->end) {
		if (*lx->p == '\n') {
			lx->line++;
			lx->col = 1;
		} else {
			lx->col++;
		}
		lx->p++;
	}
}

static void lex_raw(ptxabi_ctx *ctx, const char *text, size_t len,
		    const char *file, struct tokvec *out)
{
	struct lexer lx = { ctx, text, text + len, file, 1, 1 };
	bool bol = true;

	for (;;) {
		skip_splices(&lx);
		if (lx.p >= lx.end)
			break;
		char c = *lx.p;

		if (c == '\n') {
			bol = true;
			adv(&lx, 1);
			continue;
		}
		if (isspace((unsigned char)c)) {
			adv(&lx, 1);
			continue;
		}
		if (c == '/' && lx.p + 1 < lx.end && lx.p[1] == '/') {
			while (lx.p < lx.end && *lx.p != '\n') {
				adv(&lx, 1);
				skip_splices(&lx);
			}
			continue;
		}
		if (c == '/' && lx.p + 1 < lx.end && lx.p[1] == '*') {
			struct loc at = { file, lx.line, lx.col };

			adv(&lx, 2);
			while (lx.p + 1 < lx.end &&
			       !(lx.p[0] == '*' && lx.p[1] == '/'))
				adv(&lx, 1);
			if (lx.p + 1 >= lx.end)
				fail(ctx, at, "unterminated comment");
			adv(&lx, 2);
			continue;
		}
		struct token t = { 0 };

		t.loc = (struct loc){ file, lx.line, lx.col };
		t.bol = bol;
		bol = false;
		t.s = lx.p;
		if (isalpha((unsigned char)c) || c == '_') {
			size_t n = 0;

			while (lx.p + n < lx.end &&
			       (isalnum((unsigned char)lx.p[n]) || lx.p[n] == '_'))
				n++;
			t.kind = TK_IDENT;
			t.len = n;
			adv(&lx, n);
		} else if (isdigit((unsigned char)c) ||
			   (c == '.' && lx.p + 1 < lx.end &&
			    isdigit((unsigned char)lx.p[1]))) {
			size_t n = 1;

			while (lx.p + n < lx.end) {
				char d = lx.p[n];

				if ((d == '+' || d == '-') &&
				    strchr("eEpP", lx.p[n - 1])) {
					n++;
					continue;
				}
				if (!isalnum((unsigned char)d) && d != '.' &&
				    d != '_' && d != '\'')
					break;
				n++;
			}
			t.kind = TK_NUM;
			t.len = n;
			adv(&lx, n);
		} else if (c == '"' || c == '\'') {
			size_t n = 1;

			while (lx.p + n < lx.end && lx.p[n] != c &&
			       lx.p[n] != '\n') {
				if (lx.p[n] == '\\')
					n++;
				n++;
			}
			if (lx.p + n >= lx.end || lx.p[n] != c)
				fail(ctx, t.loc, "unterminated %s literal",
				     c == '"' ? "string" : "character");
			t.kind = c == '"' ? TK_STR : TK_CHAR;
			t.len = n + 1;
			adv(&lx, n + 1);
		} else {
			size_t i;

			for (i = 0; i < sizeof(puncts) / sizeof(puncts[0]); i++) {
				size_t n = strlen(puncts[i]);

				if ((size_t)(lx.end - lx.p) >= n &&
				    memcmp(lx.p, puncts[i], n) == 0)
					break;
			}
			if (i == sizeof(puncts) / sizeof(puncts[0]))
				fail(ctx, t.loc, "unexpected character '%c'",
				     isprint((unsigned char)c) ? c : '?');
			t.kind = TK_PUNCT;
			t.len = strlen(puncts[i]);
			adv(&lx, t.len);
		}
		tokvec_push(ctx, out, &t);
	}
	struct token eof = { .kind = TK_EOF, .s = "", .len = 0,
			     .loc = { file, lx.line, lx.col }, .bol = true };

	tokvec_push(ctx, out, &eof);
}

/* ---- macros ---- */

static struct macro *macro_find(ptxabi_ctx *ctx, const char *s, size_t n)
{
	for (size_t i = ctx->nmacros; i-- > 0;) {
		struct macro *m = &ctx->macros[i];

		if (strlen(m->name) == n && memcmp(m->name, s, n) == 0)
			return m->undefined ? NULL : m;
	}
	return NULL;
}

static struct macro *macro_add(ptxabi_ctx *ctx, const char *name)
{
	ctx->macros = vec_grow(ctx, ctx->macros, &ctx->capmacros,
			       ctx->nmacros + 1, sizeof(*ctx->macros));
	struct macro *m = &ctx->macros[ctx->nmacros++];

	memset(m, 0, sizeof(*m));
	m->name = ar_strndup(ctx, name, strlen(name));
	return m;
}

void macro_define(ptxabi_ctx *ctx, const char *name, const char *value)
{
	struct tokvec tv = { 0 };
	const char *v = value ? value : "1";

	lex_raw(ctx, v, strlen(v), "<command line>", &tv);
	struct macro *m = macro_add(ctx, name);

	m->body = tv.v;
	m->nbody = tv.n - 1;	/* drop EOF */
}

void macro_undef(ptxabi_ctx *ctx, const char *name)
{
	struct macro *m = macro_add(ctx, name);

	m->undefined = true;
}

static void directive_define(ptxabi_ctx *ctx, struct token *d, size_t n)
{
	if (n < 2 || d[1].kind != TK_IDENT)
		fail(ctx, d[0].loc, "#define needs a macro name");
	struct macro *m = macro_add(ctx, ar_strndup(ctx, d[1].s, d[1].len));
	size_t i = 2;

	/* Function-like only when '(' touches the name. */
	if (i < n && tok_is(&d[i], "(") &&
	    d[i].loc.line == d[1].loc.line &&
	    d[i].loc.col == d[1].loc.col + d[1].len) {
		m->funclike = true;
		m->params = ar_alloc(ctx, n * sizeof(char *));
		i++;
		while (i < n && !tok_is(&d[i], ")")) {
			if (d[i].kind != TK_IDENT)
				fail(ctx, d[i].loc,
				     "unsupported macro parameter list");
			m->params[m->nparams++] =
				ar_strndup(ctx, d[i].s, d[i].len);
			i++;
			if (i < n && tok_is(&d[i], ","))
				i++;
		}
		if (i >= n)
			fail(ctx, d[1].loc, "unterminated macro parameter list");
		i++;
	}
	for (size_t j = i; j < n; j++)
		if (tok_is(&d[j], "#") || tok_is(&d[j], "##"))
			fail(ctx, d[j].loc,
			     "the # and ## macro operators are not supported");
	m->body = d + i;
	m->nbody = n - i;
}

struct expander {
	ptxabi_ctx *ctx;
	const char *active[64];	/* macros being expanded: no recursion */
	size_t nactive;
};

static bool is_active(struct expander *ex, const struct macro *m)
{
	for (size_t i = 0; i < ex->nactive; i++)
		if (ex->active[i] == m->name)
			return true;
	return false;
}

static void expand(struct expander *ex, struct token *in, size_t n,
		   struct loc use, bool use_loc, struct tokvec *out);

/* Expands in[*i] (an identifier naming a macro) and advances *i. */
static void expand_one(struct expander *ex, struct macro *m, struct token *in,
		       size_t n, size_t *i, struct loc use, struct tokvec *out)
{
	ptxabi_ctx *ctx = ex->ctx;
	size_t k = *i + 1;
	struct tokvec *args = NULL;

	if (m->funclike) {
		if (k >= n || !tok_is(&in[k], "(")) {
			/* A function-like macro name alone is not a call. */
			tokvec_push(ctx, out, &in[*i]);
			*i += 1;
			return;
		}
		args = ar_alloc(ctx, (m->nparams + 1) * sizeof(*args));
		size_t na = 0;
		int depth = 0;

		k++;
		for (;; k++) {
			if (k >= n || in[k].kind == TK_EOF)
				fail(ctx, in[*i].loc,
				     "unterminated call of macro '%s'", m->name);
			if (depth == 0 &&
			    (tok_is(&in[k], ")") || tok_is(&in[k], ","))) {
				if (na < m->nparams + 1)
					na++;
				if (tok_is(&in[k], ")"))
					break;
				continue;
			}
			if (tok_is(&in[k], "("))
				depth++;
			else if (tok_is(&in[k], ")"))
				depth--;
			if (na < m->nparams + 1)
				tokvec_push(ctx, &args[na], &in[k]);
		}
		if (!(na == m->nparams || (m->nparams == 0 && na == 1 &&
					   args[0].n == 0)))
			fail(ctx, in[*i].loc,
			     "macro '%s' takes %zu argument(s)", m->name,
			     m->nparams);
		k++;
	}
	/* Substitute parameters, then rescan with this macro disabled. */
	struct tokvec body = { 0 };

	for (size_t j = 0; j < m->nbody; j++) {
		const struct token *bt = &m->body[j];
		size_t p = m->nparams;

		if (m->funclike && bt->kind == TK_IDENT)
			for (p = 0; p < m->nparams; p++)
				if (strlen(m->params[p]) == bt->len &&
				    memcmp(m->params[p], bt->s, bt->len) == 0)
					break;
		if (m->funclike && p < m->nparams) {
			struct tokvec ea = { 0 };

			expand(ex, args[p].v, args[p].n, use, true, &ea);
			for (size_t q = 0; q < ea.n; q++)
				tokvec_push(ctx, &body, &ea.v[q]);
		} else {
			tokvec_push(ctx, &body, bt);
		}
	}
	if (ex->nactive == sizeof(ex->active) / sizeof(ex->active[0]))
		fail(ctx, use, "macro expansion too deep");
	ex->active[ex->nactive++] = m->name;
	expand(ex, body.v, body.n, use, true, out);
	ex->nactive--;
	*i = k;
}

static void expand(struct expander *ex, struct token *in, size_t n,
		   struct loc use, bool use_loc, struct tokvec *out)
{
	size_t i = 0;

	while (i < n) {
		struct token t = in[i];
		struct macro *m = NULL;

		if (t.kind == TK_IDENT)
			m = macro_find(ex->ctx, t.s, t.len);
		if (m && !is_active(ex, m)) {
			/* Errors inside expansions point at the use site. */
			expand_one(ex, m, in, n, &i, use_loc ? use : t.loc, out);
			continue;
		}
		if (use_loc)
			t.loc = use;
		tokvec_push(ex->ctx, out, &t);
		i++;
	}
}

/* ---- conditionals ---- */

struct cond {
	bool parent_on;		/* enclosing region is active */
	bool on;		/* this branch is active */
	bool taken;		/* some branch was taken */
	bool had_else;
	struct loc loc;
};

static long long pp_cond_value(ptxabi_ctx *ctx, struct token *d, size_t n,
			       struct loc where)
{
	/* Resolve defined(X) first: its operand must not be expanded. */
	struct tokvec pre = { 0 };

	for (size_t i = 0; i < n; i++) {
		if (tok_is(&d[i], "defined")) {
			size_t j = i + 1;
			bool paren = j < n && tok_is(&d[j], "(");

			if (paren)
				j++;
			if (j >= n || d[j].kind != TK_IDENT)
				fail(ctx, d[i].loc, "defined needs a name");
			struct token one = d[i];

			one.kind = TK_NUM;
			one.s = macro_find(ctx, d[j].s, d[j].len) ? "1" : "0";
			one.len = 1;
			tokvec_push(ctx, &pre, &one);
			if (paren) {
				j++;
				if (j >= n || !tok_is(&d[j], ")"))
					fail(ctx, d[i].loc, "missing ')'");
			}
			i = j;
			continue;
		}
		tokvec_push(ctx, &pre, &d[i]);
	}
	struct expander ex = { .ctx = ctx };
	struct tokvec post = { 0 };

	expand(&ex, pre.v, pre.n, where, false, &post);
	return eval_pp_expr(ctx, post.v, post.n, where);
}

void lex_preprocess(ptxabi_ctx *ctx, const char *text, size_t len,
		    const char *file, struct tokvec *out)
{
	struct tokvec raw = { 0 };
	struct cond conds[64];
	size_t nconds = 0;
	struct expander ex = { .ctx = ctx };

	lex_raw(ctx, text, len, file, &raw);
	size_t i = 0;

	while (raw.v[i].kind != TK_EOF) {
		bool on = nconds == 0 || conds[nconds - 1].on;
		struct token *t = &raw.v[i];

		if (t->bol && tok_is(t, "#")) {
			size_t e = i + 1;

			while (raw.v[e].kind != TK_EOF && !raw.v[e].bol)
				e++;
			struct token *d = &raw.v[i + 1];
			size_t n = e - i - 1;
			struct loc at = t->loc;

			i = e;
			if (n == 0)
				continue;	/* null directive */
			if (tok_is(&d[0], "if") || tok_is(&d[0], "ifdef") ||
			    tok_is(&d[0], "ifndef")) {
				if (nconds == sizeof(conds) / sizeof(conds[0]))
					fail(ctx, at, "#if nesting too deep");
				bool v = false;

				if (on && tok_is(&d[0], "if")) {
					v = pp_cond_value(ctx, d + 1, n - 1, at);
				} else if (on) {
					if (n < 2 || d[1].kind != TK_IDENT)
						fail(ctx, d[0].loc,
						     "#%.*s needs a name",
						     (int)d[0].len, d[0].s);
					v = macro_find(ctx, d[1].s, d[1].len);
					if (tok_is(&d[0], "ifndef"))
						v = !v;
				}
				conds[nconds++] = (struct cond){ on, on && v,
								 on && v, false,
								 at };
			} else if (tok_is(&d[0], "elif")) {
				if (!nconds || conds[nconds - 1].had_else)
					fail(ctx, at, "#elif without #if");
				struct cond *c = &conds[nconds - 1];

				if (c->parent_on && !c->taken) {
					c->on = pp_cond_value(ctx, d + 1, n - 1,
							      at);
					c->taken = c->on;
				} else {
					c->on = false;
				}
			} else if (tok_is(&d[0], "else")) {
				if (!nconds || conds[nconds - 1].had_else)
					fail(ctx, at, "#else without #if");
				struct cond *c = &conds[nconds - 1];

				c->had_else = true;
				c->on = c->parent_on && !c->taken;
				c->taken = true;
			} else if (tok_is(&d[0], "endif")) {
				if (!nconds)
					fail(ctx, at, "#endif without #if");
				nconds--;
			} else if (!on) {
				continue;
			} else if (tok_is(&d[0], "define")) {
				directive_define(ctx, d, n);
			} else if (tok_is(&d[0], "undef")) {
				if (n < 2 || d[1].kind != TK_IDENT)
					fail(ctx, at, "#undef needs a name");
				macro_undef(ctx,
					    ar_strndup(ctx, d[1].s, d[1].len));
			} else if (tok_is(&d[0], "include") ||
				   tok_is(&d[0], "pragma") ||
				   tok_is(&d[0], "line") ||
				   tok_is(&d[0], "warning") ||
				   tok_is(&d[0], "ident")) {
				/* Types from includes are built in. */
			} else if (tok_is(&d[0], "error")) {
				fail(ctx, at, "#error");
			} else {
				fail(ctx, d[0].loc,
				     "unsupported directive #%.*s",
				     (int)d[0].len, d[0].s);
			}
			continue;
		}
		if (!on) {
			i++;
			continue;
		}
		/* Expand up to the end of this line, or further when a
		 * function-like macro call spans lines. */
		size_t e = i + 1;

		while (raw.v[e].kind != TK_EOF &&
		       !(raw.v[e].bol && tok_is(&raw.v[e], "#")))
			e++;
		struct macro *m = NULL;

		if (t->kind == TK_IDENT)
			m = macro_find(ctx, t->s, t->len);
		if (m) {
			size_t j = 0;
			struct token *seg = raw.v + i;

			expand_one(&ex, m, seg, e - i, &j, t->loc, out);
			i += j;
		} else {
			tokvec_push(ctx, out, t);
			i++;
		}
	}
	if (nconds)
		fail(ctx, conds[nconds - 1].loc, "unterminated #if");
	tokvec_push(ctx, out, &raw.v[i]);
}
