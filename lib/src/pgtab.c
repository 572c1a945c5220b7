/* SPDX-License-Identifier: MIT */
#include "pgtab.h"

#include <errno.h>

#define LEAF_LEVEL (GDL_PG_LEVELS - 1)

/* A zeroed node: all NULL slots (atomic pointers have the representation
 * of plain ones on every target we build for). */
static struct gdl_pgnode *node_new(struct gdl_pgtab *t)
{
	return gdl_hpmem_alloc(&t->mem);
}

__thread struct gdl_pg_hint gdl_pg_hint[2]
	__attribute__((tls_model("initial-exec")));
static _Atomic uint64_t serials = 1;

int gdl_pgtab_init(struct gdl_pgtab *t)
{
	t->serial = atomic_fetch_add(&serials, 1);
	gdl_hpmem_init(&t->mem, sizeof(struct gdl_pgnode), 0);
	t->root = node_new(t);
	return t->root ? 0 : -ENOMEM;
}

/* Nodes are only freed with the table. */
void gdl_pgtab_destroy(struct gdl_pgtab *t)
{
	if (t->root)
		gdl_hpmem_destroy(&t->mem);
	t->root = NULL;
}

/* The leaf holding page, creating the path if create; NULL if absent or
 * out of memory. */
static struct gdl_pgnode *leaf(struct gdl_pgtab *t, uint64_t page, int create)
{
	struct gdl_pgnode *n = t->root;

	for (int l = 0; l < LEAF_LEVEL; l++) {
		_Atomic(void *) *slot = &n->s[gdl_pg_idx(page, l)];
		struct gdl_pgnode *c = atomic_load_explicit(slot,
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

int gdl_pgtab_reserve(struct gdl_pgtab *t, uint64_t p0, uint64_t p1)
{
	/* One leaf per GDL_PG_FAN pages: visit each leaf of the range once. */
	for (uint64_t p = p0;; p = (p | (GDL_PG_FAN - 1)) + 1) {
		if (!leaf(t, p, 1))
			return -ENOMEM;
		if ((p | (GDL_PG_FAN - 1)) >= p1)
			return 0;
	}
}

void gdl_pgtab_set(struct gdl_pgtab *t, uint64_t page, void *v)
{
	struct gdl_pgnode *n = leaf(t, page, 0);

	/* Storing NULL in an absent subtree is a no-op; anything else must
	 * have been reserved. */
	if (n)
		atomic_store_explicit(&n->s[gdl_pg_idx(page, LEAF_LEVEL)], v,
				      memory_order_release);
}

/* Walk node n at level, whose first page is base; returns nonzero to stop. */
static int walk(const struct gdl_pgnode *n, int level, uint64_t base,
		uint64_t p0, uint64_t p1,
		int (*fn)(uint64_t, void *, void *), void *arg)
{
	int shift = GDL_PG_BITS * (GDL_PG_LEVELS - 1 - level);
	uint64_t span = 1ULL << shift;	/* pages per slot at this level */
	unsigned i0 = p0 > base ? (unsigned)((p0 - base) >> shift) : 0;
	uint64_t last = base + ((uint64_t)GDL_PG_FAN << shift) - 1;
	unsigned i1 = p1 < last ? (unsigned)((p1 - base) >> shift) : GDL_PG_FAN - 1;

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

void gdl_pgtab_walk(const struct gdl_pgtab *t, uint64_t p0, uint64_t p1,
		   int (*fn)(uint64_t page, void *v, void *arg), void *arg)
{
	const uint64_t max = (1ULL << (GDL_PG_BITS * GDL_PG_LEVELS)) - 1;

	if (p0 > max || p0 > p1)
		return;
	walk(t->root, 0, 0, p0, p1 > max ? max : p1, fn, arg);
}
