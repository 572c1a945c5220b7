/* SPDX-License-Identifier: MIT */
/*
 * slotab.c - the slot table of the region index (slotab.h).
 */
#include "slotab.h"

#include <errno.h>

#define DIR_LEVELS (GDL_PG_LEVELS - 1)

__thread struct gdl_slot_hint gdl_slot_hint[GDL_SLOT_HINTS]
	__attribute__((tls_model("initial-exec")));
static _Atomic uint64_t serials = 1;

int gdl_slotab_init(struct gdl_slotab *t)
{
	t->serial = atomic_fetch_add(&serials, 1);
	gdl_hpmem_init(&t->nodes, sizeof(struct gdl_pgnode), 0);
	gdl_hpmem_init(&t->first, sizeof(struct gdl_slotleaf), 0);
	gdl_hpmem_init(&t->leaves, sizeof(struct gdl_slotleaf), 0);
	t->leaves.huge_first = true;
	t->root = gdl_hpmem_alloc(&t->nodes);
	return t->root ? 0 : -ENOMEM;
}

void gdl_slotab_destroy(struct gdl_slotab *t)
{
	if (!t->root)
		return;
	gdl_hpmem_destroy(&t->nodes);
	gdl_hpmem_destroy(&t->first);
	gdl_hpmem_destroy(&t->leaves);
	t->root = NULL;
}

/* The index of page's entry at directory level l (0 = root). */
static unsigned dir_idx(uint64_t page, int l)
{
	return gdl_pg_idx(page, l);
}

/* The leaf of page, creating the path if create; NULL if absent or out of
 * memory. */
static struct gdl_slotleaf *leaf(struct gdl_slotab *t, uint64_t page,
				 bool create)
{
	struct gdl_pgnode *n = t->root;
	void *c = NULL;

	for (int l = 0; l < DIR_LEVELS; l++) {
		_Atomic(void *) *s = &n->s[dir_idx(page, l)];

		c = atomic_load_explicit(s, memory_order_relaxed);
		if (!c) {
			if (!create)
				return NULL;
			if (l < DIR_LEVELS - 1)
				c = gdl_hpmem_alloc(&t->nodes);
			else if (!t->first.chunks)
				c = gdl_hpmem_alloc(&t->first);
			else
				c = gdl_hpmem_alloc(&t->leaves);
			if (!c)
				return NULL;
			/* release: readers that find it see it zeroed */
			atomic_store_explicit(s, c, memory_order_release);
		}
		n = c;
	}
	return c;
}

struct gdl_slotleaf *gdl_slotab_leaf_slow(const struct gdl_slotab *t,
					uint64_t page)
{
	const struct gdl_pgnode *n = t->root;
	void *c = NULL;

	for (int l = 0; l < DIR_LEVELS; l++) {
		c = atomic_load_explicit(&n->s[dir_idx(page, l)],
					 memory_order_acquire);
		if (!c)
			return NULL;
		n = c;
	}
	struct gdl_slot_hint *h = &gdl_slot_hint[(page >> GDL_PG_BITS) &
					       (GDL_SLOT_HINTS - 1)];

	h->serial = t->serial;
	h->prefix = page >> GDL_PG_BITS;
	h->leaf = c;
	return c;
}

int gdl_slotab_reserve(struct gdl_slotab *t, uint64_t p0, uint64_t p1)
{
	for (uint64_t p = p0;; p = (p | (GDL_PG_FAN - 1)) + 1) {
		if (!leaf(t, p, true))
			return -ENOMEM;
		if ((p | (GDL_PG_FAN - 1)) >= p1)
			return 0;
	}
}

static struct gdl_slot *slot(struct gdl_slotab *t, uint64_t page)
{
	struct gdl_slotleaf *l = leaf(t, page, false);

	return l ? &l->s[page & (GDL_PG_FAN - 1)] : NULL;
}

void gdl_slotab_set(struct gdl_slotab *t, uint64_t page, uint64_t id,
		   uint64_t before, uint64_t after, struct gdirect_reg *r,
		   const uint32_t *status)
{
	struct gdl_slot *s = slot(t, page);

	if (!s)		/* not reserved: the caller's bug, nothing published */
		return;
	atomic_store_explicit(&s->w, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&s->span, before | after << 32,
			      memory_order_relaxed);
	atomic_store_explicit(&s->r, r, memory_order_relaxed);
	atomic_store_explicit(&s->status, status, memory_order_relaxed);
	atomic_store_explicit(&s->w, id << 1, memory_order_release);
}

void gdl_slotab_clear(struct gdl_slotab *t, uint64_t page, uint64_t id)
{
	struct gdl_slot *s = slot(t, page);

	if (s && atomic_load_explicit(&s->w, memory_order_relaxed) >> 1 == id)
		atomic_store_explicit(&s->w, 0, memory_order_release);
}

void gdl_slotab_hold(struct gdl_slotab *t, uint64_t page, uint64_t id,
		    bool held)
{
	struct gdl_slot *s = slot(t, page);

	if (s && atomic_load_explicit(&s->w, memory_order_relaxed) >> 1 == id)
		atomic_store_explicit(&s->w, id << 1 | (held ? GDL_SLOT_HELD : 0),
				      memory_order_release);
}
