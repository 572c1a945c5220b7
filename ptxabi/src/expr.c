/* SPDX-License-Identifier: MIT */
/*
 * Integer constant expressions: array sizes, bit-field widths, alignments,
 * enumerator values, static assertions, and #if conditions.  C's operators
 * and precedence, on long long; division by zero and out-of-range shifts
 * are errors.  Casts and sizeof/alignof of a type name go through the
 * declaration parser's struct typenames, which #if does not have.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parser.h"

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
		if (!p->types)
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
		if (tok_is(t, "(") && p->types &&
		    p->types->is_type_start(p, peek2(p))) {
			/* A cast: the value is kept, C types here are wide
			 * enough for sizes and widths. */
			next(p);
			p->types->type_name(p);
			expect(p, ")");
			return c_unary(p);
		}
	}
	if (t->kind == TK_IDENT && p->types &&
	    (tok_is(t, "sizeof") || tok_is(t, "alignof") ||
	     tok_is(t, "_Alignof") || tok_is(t, "__alignof__") ||
	     tok_is(t, "__alignof"))) {
		bool is_size = tok_is(t, "sizeof");

		next(p);
		if (!tok_is(peek(p), "(") ||
		    !p->types->is_type_start(p, peek2(p)))
			fail(p->ctx, peek(p)->loc,
			     "only sizeof/alignof of a parenthesized type "
			     "name is supported");
		next(p);
		struct type *ty = p->types->type_name(p);

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

long long cexpr(struct parser *p)
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
	struct parser p = { ctx, tv.v, tv.n, 0, NULL };

	if (n == 0)
		fail(ctx, where, "#if with no expression");
	long long v = cexpr(&p);

	if (peek(&p)->kind != TK_EOF)
		fail(ctx, peek(&p)->loc, "unexpected %s in #if",
		     tokdesc(ctx, peek(&p)));
	return v;
}
