/* SPDX-License-Identifier: MIT */
/* Human-readable layouts: one line per member, nested records indented. */
#include "ptxabi_internal.h"

static void print_members(ptxabi_ctx *ctx, FILE *out, const struct type *t,
			  size_t base, int depth);

static void print_member(ptxabi_ctx *ctx, FILE *out, const struct member *m,
			 size_t base, int depth)
{
	char pos[48], size[32];
	const char *name = m->name ? m->name :
			   m->bits >= 0 ? "(unnamed)" : "(anonymous)";

	if (m->bits >= 0) {
		snprintf(pos, sizeof(pos), "%zu.%zu", base + m->bitpos / 8,
			 m->bitpos % 8);
		snprintf(size, sizeof(size), ":%d", m->bits);
	} else {
		snprintf(pos, sizeof(pos), "%zu", base + m->offset);
		snprintf(size, sizeof(size), "%zu", m->type->size);
	}
	fprintf(out, "  %8s %6s  %*s%-*s %s", pos, size, depth * 2, "",
		24 - depth * 2 > 1 ? 24 - depth * 2 : 1, name,
		m->tyname ? m->tyname : type_str(ctx, m->type));
	if (m->bits >= 0)
		fprintf(out, " : %d", m->bits);
	if (m->req_align)
		fprintf(out, " (aligned %zu)", m->req_align);
	fputc('\n', out);

	const struct type *inner = m->type;

	while (inner->kind == TY_ARRAY)
		inner = inner->base;
	if (type_is_record(inner) && !inner->builtin)
		print_members(ctx, out, inner, base + m->offset, depth + 1);
}

static void print_members(ptxabi_ctx *ctx, FILE *out, const struct type *t,
			  size_t base, int depth)
{
	for (size_t i = 0; i < t->nmem; i++)
		print_member(ctx, out, &t->mem[i], base, depth);
}

void print_record(ptxabi_ctx *ctx, FILE *out, const struct type *t)
{
	fprintf(out, "%s: size %zu, align %zu\n",
		t->name ? t->name : "<anonymous>", t->size, t->align);
	if (t->nmem)
		fprintf(out, "  %8s %6s  %s\n", "offset", "size", "member");
	print_members(ctx, out, t, 0, 0);
}
