/* SPDX-License-Identifier: MIT */
/*
 * Record layout: PTX Interoperability guide chapter 1 (1.2 aggregates and
 * unions, 1.3 bit-fields), with the details the guide leaves to the host
 * ABI taken from the x86-64 System V / Itanium C++ rules that nvcc follows
 * so host and device agree:
 *   - a bit-field never straddles a naturally aligned unit of its type;
 *     if it would, it starts at the next such unit;
 *   - named bit-fields give the record their type's alignment, unnamed ones
 *     (zero-width included) do not;
 *   - a zero-width bit-field moves the next member to its type's boundary,
 *     even at the end of the record (struct {char a; int :0;} has size 4);
 *   - in a union a bit-field occupies ceil(width / 8) bytes;
 *   - a record with no storage has size 1 (nvcc compiles headers as C++).
 */
#include "ptxabi_internal.h"

static size_t round_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

static size_t member_align(const struct member *m)
{
	size_t a = m->type->align;

	return m->req_align > a ? m->req_align : a;
}

void layout_record(ptxabi_ctx *ctx, struct type *t)
{
	size_t bits = 0, align = 1;	/* struct: next free bit */
	size_t usize = 0;		/* union: largest member, bytes */

	for (size_t i = 0; i < t->nmem; i++) {
		struct member *m = &t->mem[i];
		size_t tbits = m->type->size * 8;
		size_t talign = m->type->align;
		const struct type *et = m->type;

		while (et->kind == TY_ARRAY)
			et = et->base;
		if (et->nontrivial)
			t->nontrivial = true;

		if (m->bits >= 0) {
			size_t w = (size_t)m->bits;

			if (t->kind == TY_UNION) {
				m->bitpos = 0;
				m->offset = 0;
				if (w && (w + 7) / 8 > usize)
					usize = (w + 7) / 8;
			} else if (w == 0) {
				bits = round_up(bits, talign * 8);
				m->bitpos = bits;
				m->offset = bits / 8;
			} else {
				if (bits / tbits != (bits + w - 1) / tbits)
					bits = round_up(bits, tbits);
				m->bitpos = bits;
				m->offset = bits / 8;
				bits += w;
			}
			if (m->name && w && talign > align)
				align = talign;
			continue;
		}
		size_t a = member_align(m);

		if (a > align)
			align = a;
		if (t->kind == TY_UNION) {
			m->offset = 0;
			if (m->type->size > usize)
				usize = m->type->size;
		} else {
			bits = round_up(bits, a * 8);
			m->offset = bits / 8;
			bits += m->type->size * 8;
		}
	}
	if (t->req_align > align)
		align = t->req_align;
	size_t bytes = t->kind == TY_UNION ? usize : (bits + 7) / 8;

	if (bytes == 0)
		bytes = 1;
	t->size = round_up(bytes, align);
	t->align = align;
	t->complete = true;
	(void)ctx;
}
