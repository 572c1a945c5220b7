/* SPDX-License-Identifier: MIT */
/*
 * slotab.h - the hit path's view of the region index: per 64 KiB page, a
 * 32-byte slot holding everything a hit needs, so that a hit reads one
 * line of the index and nothing of the region.
 *
 * A slot holds the region's id (as a word that is also its sequence and
 * its kill signal), its extent around the page, the region pointer (for
 * the caller, never read by a hit) and the status-word pointer.  Writers
 * (under ctx->lock) publish a slot like a seqlock whose sequence values
 * are region ids, unique in the process:
 *
 *	w = 0 ; release fence ; span, r, status ; w = id << 1 (release)
 *
 * and a reader takes
 *
 *	w1 = w (acquire) ; span, r, status ; acquire fence ; w2 = w
 *
 * as consistent when w1 == w2 names a region (nonzero) that is not held:
 * had it read a field of a later write, w2 would show that write's 0 or
 * its different id.  Holding (an eviction checking the region) sets the
 * low bit and leaves the fields alone; a kill clears w or overwrites the
 * slot with the successor.  So w also carries the Dekker signal of the
 * per-thread counts (tcache.h): a hit counts its reference, then reads w
 * again, and backs off if it changed; a killer or an evicting thread
 * changes w of every page of the region, bumps the kill generation, then
 * fences (gdl_epoch_sync_readers) and sums the counts.
 *
 * Layout: the upper three levels of a page table (struct gdl_pgnode, 12 bits
 * each) over the page number's high 36 bits, then a leaf of 4096 slots
 * (128 KiB) per 256 MiB.  Nodes and leaves are freed only with the table,
 * and a thread remembers its last leaves (by the table's unique serial),
 * so a hit in one of the last 256 MiB ranges it hit reads one slot.
 */
#ifndef GDL_SLOTAB_H
#define GDL_SLOTAB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hpmem.h"
#include "pgtab.h"

struct gdirect_reg;

/*
 * Race hooks: points of the concurrent paths where tests (lib-slot,
 * lib-model, lib-evict-race, lib-release-wait, lib-verbs-race, built with
 * GDL_RACE_HOOKS against a static copy of the library) run a kill, an
 * eviction, a free or a slot rewrite, or hand over to another thread,
 * deterministically, in the middle of a hit, of an eviction, of a pin's
 * wait for BAR space or of a registration engine's get.
 * Nothing in the library proper.
 */
enum gdl_race_point {
	GDL_RACE_SLOT_FIELDS,	/* slot word read, fields not yet */
	GDL_RACE_SLOT_COPIED,	/* slot copied, reference not yet counted */
	GDL_RACE_COUNTED,	/* counted in the entry, slot not yet reread */
	GDL_RACE_BACKED_OFF,	/* slot changed at the reread: count taken back */
	/* An eviction's, with the context's lock held: a held candidate's
	 * counts summed, the verdict not yet acted on. */
	GDL_RACE_EVICT_SUMMED,
	/* A pin's out of BAR space, with the context's lock held: counted
	 * among the release waiters, about to wait for a release to end. */
	GDL_RACE_RELEASE_WAIT,
	/* A registration engine's get (regcache.c), no lock held: its
	 * registration announced, the memory classified, the cache not yet
	 * looked up. */
	GDL_RACE_RC_CLASSIFIED,
	/* A classification's miss (classify.c) and a BAR pin's miss
	 * (rcache.c), no lock held: the driver asked what the memory is, the
	 * answer not yet cached or pinned. */
	GDL_RACE_CLASSIFY_QUERIED,
	GDL_RACE_MISS_QUERIED,
};
#ifdef GDL_RACE_HOOKS
extern void (*gdl_race_hook)(enum gdl_race_point point);
#define GDL_RACE(point) do {				\
	if (gdl_race_hook)				\
		gdl_race_hook(point);			\
} while (0)
#else
#define GDL_RACE(point) do { } while (0)
#endif

#define GDL_SLOT_HELD 1ULL

struct gdl_slot {
	_Atomic uint64_t w;	/* region id << 1 | GDL_SLOT_HELD; 0: none */
	/* Pages of the region before this page (low 32 bits) and after it
	 * (high 32 bits). */
	_Atomic uint64_t span;
	_Atomic(struct gdirect_reg *) r;
	_Atomic(const uint32_t *) status;	/* NULL: no status word */
} __attribute__((aligned(32)));

_Static_assert(sizeof(struct gdl_slot) == 32, "two slots a line");

struct gdl_slotleaf {
	struct gdl_slot s[GDL_PG_FAN];
};

struct gdl_slotab {
	struct gdl_pgnode *root;
	uint64_t serial;	/* unique in the process, never 0 */
	struct gdl_hpmem nodes;
	/* Leaves: the first in 4 KiB pages (a small cache does not pay for
	 * zeroing a huge page), every other one in huge pages from the
	 * start (16 leaves cover 4 GiB: a random hit among them would miss
	 * the TLB in 4 KiB pages). */
	struct gdl_hpmem first, leaves;
};

/* A thread's last leaves, direct-mapped by the page number's prefix
 * (its 256 MiB): 16 consecutive leaves (4 GiB) stay in them together. */
#define GDL_SLOT_HINTS 16
struct gdl_slot_hint {
	uint64_t serial, prefix;
	struct gdl_slotleaf *leaf;
};
extern __thread struct gdl_slot_hint gdl_slot_hint[GDL_SLOT_HINTS]
	__attribute__((tls_model("initial-exec")));

struct gdl_slotleaf *gdl_slotab_leaf_slow(const struct gdl_slotab *t,
					uint64_t page);

/* The slot of page, or NULL if none was ever reserved.  Lock-free. */
static inline struct gdl_slot *gdl_slotab_get(const struct gdl_slotab *t,
					    uint64_t page)
{
	uint64_t prefix = page >> GDL_PG_BITS;
	struct gdl_slot_hint *h = &gdl_slot_hint[prefix & (GDL_SLOT_HINTS - 1)];
	struct gdl_slotleaf *l;

	if (__builtin_expect(h->serial == t->serial && h->prefix == prefix, 1))
		l = h->leaf;
	else if (!(l = gdl_slotab_leaf_slow(t, page)))
		return NULL;
	return &l->s[page & (GDL_PG_FAN - 1)];
}

/*
 * A consistent copy of a slot: its word (0 if empty, torn or held), then
 * the fields.  The caller reads w again later (the Dekker recheck) and
 * trusts what it took only if w is unchanged.
 */
struct gdl_slot_copy {
	uint64_t w, span;
	struct gdirect_reg *r;
	const uint32_t *status;
};

static inline uint64_t gdl_slot_read(const struct gdl_slot *s,
				    struct gdl_slot_copy *c)
{
	uint64_t w = atomic_load_explicit(&s->w, memory_order_acquire);

	GDL_RACE(GDL_RACE_SLOT_FIELDS);
	c->span = atomic_load_explicit(&s->span, memory_order_relaxed);
	c->r = atomic_load_explicit(&s->r, memory_order_relaxed);
	c->status = atomic_load_explicit(&s->status, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&s->w, memory_order_relaxed) != w ||
	    (w & GDL_SLOT_HELD))
		w = 0;
	return c->w = w;
}

int gdl_slotab_init(struct gdl_slotab *t);
void gdl_slotab_destroy(struct gdl_slotab *t);

/* Make sure pages [p0, p1] have slots (-ENOMEM if not). */
int gdl_slotab_reserve(struct gdl_slotab *t, uint64_t p0, uint64_t p1);

/* Writers (serialized), on reserved pages: */
void gdl_slotab_set(struct gdl_slotab *t, uint64_t page, uint64_t id,
		   uint64_t before, uint64_t after, struct gdirect_reg *r,
		   const uint32_t *status);
/* Empty page's slot if it is region id's. */
void gdl_slotab_clear(struct gdl_slotab *t, uint64_t page, uint64_t id);
/* Set or clear the held bit of page's slot if it is region id's. */
void gdl_slotab_hold(struct gdl_slotab *t, uint64_t page, uint64_t id,
		    bool held);

#endif
