/* SPDX-License-Identifier: MIT */
/*
 * Struct, union and enum specifiers: tags and forward declarations,
 * members (bit-fields, anonymous records, alignment), enumerators.  A
 * completed record is laid out at once (layout.c), so later declarations
 * may take its size.
 */
#include <string.h>

#include "parser.h"

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

struct type *parse_record(struct parser *p)
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

struct type *parse_enum(struct parser *p)
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
