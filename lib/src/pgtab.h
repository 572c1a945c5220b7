/* SPDX-License-Identifier: MIT */
/*
 * pgtab.h - a radix table from 64 KiB page numbers to pointers, like a CPU
 * page table: the lookup structure of both caches (regions, allocations).
 *
 * Four levels of 4096 slots (12 bits each) cover every 48-bit page number,
 * that is every 64-bit address.  A lookup is four dependent loads, the upper
 * three almost always in L1 (a process's GPU memory sits in a few
 * gigabyte-sized ranges; a thread's hint skips them, below), and writes
 * nothing shared.  Slots are atomic pointers:
 * writers (serialized by their owner's lock) store with release, readers
 * load with acquire, so a reader that finds an object also sees it
 * initialized.  Interior nodes are never freed before the table itself, so
 * readers need no protection for the walk; what the slots point to is the
 * owner's business (epoch reclamation, refcounts).  Setting a page costs
 * O(1), so indexing an object costs O(its pages), not O(objects indexed).
 */
#ifndef GDL_PGTAB_H
#define GDL_PGTAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "hpmem.h"

#define GDL_PG_SHIFT 16
#define GDL_PG_BITS 12
#define GDL_PG_FAN (1u << GDL_PG_BITS)
#define GDL_PG_LEVELS 4

struct gdl_pgnode {
	_Atomic(void *) s[GDL_PG_FAN];
};

struct gdl_pgtab {
	struct gdl_pgnode *root;	/* allocated by gdl_pgtab_init */
	uint64_t serial;	/* unique in the process, never 0 */
	struct gdl_hpmem mem;	/* the nodes, in huge pages */
};

/*
 * Each thread remembers the leaf of its last lookup, for two tables (by
 * the serial's low bit: a context's two tables are made one after the
 * other).  Interior nodes never change or go away while their table
 * lives, and a table's serial is never reused, so a remembered leaf is
 * right for as long as the serial matches: a lookup in the same 256 MiB
 * as the thread's previous one is one load, not four dependent ones.
 */
struct gdl_pg_hint {
	uint64_t serial, prefix;
	const struct gdl_pgnode *leaf;
};
extern __thread struct gdl_pg_hint gdl_pg_hint[2]
	__attribute__((tls_model("initial-exec")));

static inline unsigned gdl_pg_idx(uint64_t page, int level)
{
	return (unsigned)(page >> (GDL_PG_BITS * (GDL_PG_LEVELS - 1 - level))) &
	       (GDL_PG_FAN - 1);
}

/* The leaf holding page's slot, walked down from the root, or NULL. */
static inline const struct gdl_pgnode *gdl_pgtab_leaf(const struct gdl_pgtab *t,
						    uint64_t page)
{
	const struct gdl_pgnode *n = t->root;

	for (int l = 0; l < GDL_PG_LEVELS - 1 && n; l++)
		n = atomic_load_explicit(&n->s[gdl_pg_idx(page, l)],
					 memory_order_acquire);
	return n;
}

/* What page 'page' maps to, or NULL.  Lock-free; writes nothing shared. */
static inline void *gdl_pgtab_get(const struct gdl_pgtab *t, uint64_t page)
{
	struct gdl_pg_hint *h = &gdl_pg_hint[t->serial & 1];
	uint64_t prefix = page >> GDL_PG_BITS;
	const struct gdl_pgnode *n;

	if (__builtin_expect(h->serial == t->serial && h->prefix == prefix, 1)) {
		n = h->leaf;
	} else {
		n = gdl_pgtab_leaf(t, page);
		if (!n)
			return NULL;
		h->serial = t->serial;
		h->prefix = prefix;
		h->leaf = n;
	}
	return atomic_load_explicit(&n->s[gdl_pg_idx(page, GDL_PG_LEVELS - 1)],
				    memory_order_acquire);
}

int gdl_pgtab_init(struct gdl_pgtab *t);
void gdl_pgtab_destroy(struct gdl_pgtab *t);

/* Make sure pages [p0, p1] have slots, so that gdl_pgtab_set() on them
 * cannot fail.  -ENOMEM, with nothing changed that matters, on failure. */
int gdl_pgtab_reserve(struct gdl_pgtab *t, uint64_t p0, uint64_t p1);

/* Store v in the slot of a reserved page (writers only, serialized). */
void gdl_pgtab_set(struct gdl_pgtab *t, uint64_t page, void *v);

/*
 * Call fn(page, value, arg) for every non-NULL slot of pages [p0, p1] in
 * ascending order, skipping absent subtrees (so a range of the whole
 * address space costs what is indexed in it); stops when fn returns
 * nonzero.  Writers only.
 */
void gdl_pgtab_walk(const struct gdl_pgtab *t, uint64_t p0, uint64_t p1,
		   int (*fn)(uint64_t page, void *v, void *arg), void *arg);

/* Pages of the byte range [s, e), e > s: first and last page number. */
static inline uint64_t gdl_pg_first(uint64_t s)
{
	return s >> GDL_PG_SHIFT;
}

static inline uint64_t gdl_pg_last(uint64_t e)
{
	return (e - 1) >> GDL_PG_SHIFT;
}

#endif
