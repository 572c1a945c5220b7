/* SPDX-License-Identifier: MIT */
#include "pgtab.h"

#include <errno.h>

#define LEAF_LEVEL (GD_PG_LEVELS - 1)

/* A zeroed node: all NULL slots (atomic pointers have the representation
 * of plain ones on every target we build for). */
static struct gd_pgnode *node_new(struct gd_pgtab *t)
{
	return gd_hpmem_alloc(&t->mem);
}

__thread struct gd_pg_hint gd_pg_hint[2]
	__attribute__((tls_model("initial-exec")));
static _Atomic uint64_t serials = 1;

int gd_pgtab_init(struct gd_pgtab *t)
{
	t->serial = atomic_fetch_add(&serials, 1);
	gd_hpmem_init(&t->mem, sizeof(struct gd_pgnode), 0);
	t->root = node_new(t);
	return t->root ? 0 : -ENOMEM;
}

/* Nodes are only freed with the table. */
void gd_pgtab_destroy(struct gd_pgtab *t)
{
	if (t->root)
		gd_hpmem_destroy(&t->mem);
	t->root = NULL;
}

/* The leaf holding page, creating the path if create; NULL if absent or
 * out of memory. */
static struct gd_pgnode *leaf(struct gd_pgtab *t, uint64_t page, int create)
{
	struct gd_pgnode *n = t->root;

	for (int l = 0; l < LEAF_LEVEL; l++) {
		_Atomic(void *) *slot = &n->s[gd_pg_idx(page, l)];
		struct gd_pgnode *c = atomic_load_explicit(slot,
						memory_order_relaxed);

		if (!c) {
			if (!create || !(c = node_new(t)))
				return NULL;
			/* release: readers that find the node see it zeroed */
			atomic_store_explicit(slot, c, memory_order_release);
		}
		n = c;
	}
	return n;
}

int gd_pgtab_reserve(struct gd_pgtab *t, uint64_t p0, uint64_t p1)
{
	/* One leaf per GD_PG_FAN pages: visit each leaf of the range once. */
	for (uint64_t p = p0;; p = (p | (GD_PG_FAN - 1)) + 1) {
		if (!leaf(t, p, 1))
			return -ENOMEM;
		if ((p | (GD_PG_FAN - 1)) >= p1)
			return 0;
	}
}

void gd_pgtab_set(struct gd_pgtab *t, uint64_t page, void *v)
{
	struct gd_pgnode *n = leaf(t, page, 0);

	/* Storing NULL in an absent subtree is a no-op; anything else must
	 * have been reserved. */
	if (n)
		atomic_store_explicit(&n->s[gd_pg_idx(page, LEAF_LEVEL)], v,
				      memory_order_release);
}

/* Walk node n at level, whose first page is base; returns nonzero to stop. */
static int walk(const struct gd_pgnode *n, int level, uint64_t base,
		uint64_t p0, uint64_t p1,
		int (*fn)(uint64_t, void *, void *), void *arg)
{
	int shift = GD_PG_BITS * (GD_PG_LEVELS - 1 - level);
	uint64_t span = 1ULL << shift;	/* pages per slot at this level */
	unsigned i0 = p0 > base ? (unsigned)((p0 - base) >> shift) : 0;
	uint64_t last = base + ((uint64_t)GD_PG_FAN << shift) - 1;
	unsigned i1 = p1 < last ? (unsigned)((p1 - base) >> shift) : GD_PG_FAN - 1;

	for (unsigned i = i0; i <= i1; i++) {
		void *v = atomic_load_explicit(&n->s[i], memory_order_relaxed);

		if (!v)
			continue;
		if (level == LEAF_LEVEL) {
			if (fn(base + i, v, arg))
				return 1;
		} else if (walk(v, level + 1, base + i * span, p0, p1, fn, arg)) {
			return 1;
		}
	}
	return 0;
}

void gd_pgtab_walk(const struct gd_pgtab *t, uint64_t p0, uint64_t p1,
		   int (*fn)(uint64_t page, void *v, void *arg), void *arg)
{
	const uint64_t max = (1ULL << (GD_PG_BITS * GD_PG_LEVELS)) - 1;

	if (p0 > max || p0 > p1)
		return;
	walk(t->root, 0, 0, p0, p1 > max ? max : p1, fn, arg);
}
