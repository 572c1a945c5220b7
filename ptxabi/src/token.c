/* SPDX-License-Identifier: MIT */
/*
 * Tokens: the vectors the preprocessor fills, comparison with a spelling,
 * and the parsers' cursor over a vector.
 */
#include <string.h>

#include "parser.h"

void tokvec_push(ptxabi_ctx *ctx, struct tokvec *tv, const struct token *t)
{
	tv->v = vec_grow(ctx, tv->v, &tv->cap, tv->n + 1, sizeof(*t));
	tv->v[tv->n++] = *t;
}

bool tok_is(const struct token *t, const char *s)
{
	size_t n = strlen(s);

	return (t->kind == TK_PUNCT || t->kind == TK_IDENT) && t->len == n &&
	       memcmp(t->s, s, n) == 0;
}

struct token *peek(struct parser *p)
{
	return &p->t[p->i < p->n ? p->i : p->n - 1];
}

struct token *peek2(struct parser *p)
{
	return &p->t[p->i + 1 < p->n ? p->i + 1 : p->n - 1];
}

struct token *next(struct parser *p)
{
	struct token *t = peek(p);

	if (p->i < p->n - 1)
		p->i++;
	return t;
}

bool accept(struct parser *p, const char *s)
{
	if (peek(p)->kind != TK_STR && peek(p)->kind != TK_CHAR &&
	    tok_is(peek(p), s)) {
		next(p);
		return true;
	}
	return false;
}

const char *tokdesc(ptxabi_ctx *ctx, const struct token *t)
{
	if (t->kind == TK_EOF)
		return "end of input";
	return ar_printf(ctx, "'%.*s'", (int)t->len, t->s);
}

void expect(struct parser *p, const char *s)
{
	if (!accept(p, s))
		fail(p->ctx, peek(p)->loc, "expected '%s', found %s", s,
		     tokdesc(p->ctx, peek(p)));
}

char *tokstr(struct parser *p, const struct token *t)
{
	return ar_strndup(p->ctx, t->s, t->len);
}

/* Skips a balanced (...), [...] or {...} group starting at the opener. */
void skip_group(struct parser *p)
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
