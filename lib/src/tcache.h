/* SPDX-License-Identifier: MIT */
/*
 * tcache.h - per-thread reference counts: hits that write no shared line.
 *
 * A region's reference count is split: the shared word r->refs (the
 * index's reference, the dead and hold bits, and references taken with a
 * compare-and-swap) plus one count per thread, in that thread's block of
 * entries, which only the owner writes.  The true count of r is
 *
 *	GDL_REFS(r->refs) + sum over all blocks of n of the entries tagged r->id
 *
 * and every get and put moves one of the terms by one, so it does not
 * matter which term a put takes from (a reference handed to another thread
 * and put there comes off r->refs, or off that thread's entry).
 *
 * Acquiring through an entry is a Dekker pattern against whoever kills:
 *
 *	getter: E.n++ ; reader fence ; load the kill signal (the word of the
 *	        region's index slot, slotab.h, on the lookup path; ctx->kgen
 *	        on the recent path) ; back off (E.n--) if it changed
 *	killer: set DEAD or HOLD ; change the region's slots (emptied,
 *	        rewritten for a successor, or held) ; bump ctx->kgen ;
 *	        gdl_epoch_sync_readers() ; scan every block for entries
 *	        tagged r->id
 *
 * Either the getter sees the signal, or its increment is visible to the
 * scan (epoch.c explains the fence pair).  So a killed region gains no
 * reference the scan cannot see, and a held one (an eviction in progress)
 * is evicted only if the scan found none.  Once a region is dead its terms
 * only fall (puts), apart from a backing-off getter's +1 that it takes
 * back, so a scan that reads a total of zero may release it.  (A
 * reference taken in r->refs instead, by compare-and-swap, is refused by
 * the DEAD and HOLD bits themselves.)
 *
 * Entries are direct-mapped by region address; a thread finds the entry of
 * a region it used recently again through its hints (one per 64 KiB page
 * of the request, modulo GDL_TC_HINTS) without touching the region or any
 * page table (tc_recent, rcache_hit.h): a thread cycling among up to
 * GDL_TC_HINTS single-page regions hits that way every time.  An entry is
 * reused for another region only when its count is zero or its region was
 * released (tag marked GDL_TC_GONE by the releaser).  Blocks of exited
 * threads keep their counts (a reference may outlive its thread) and are
 * scanned until a new thread claims them, which it does only when every
 * count in them is zero or gone.  An exiting thread keeps its block through
 * further rounds of thread-exit destructors while it still counts a
 * reference there, so that another library's destructor that puts it
 * takes it off the block (tc_release, tcache.c).
 */
#ifndef GDL_TCACHE_H
#define GDL_TCACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GDL_TC_WAYS 64
#define GDL_TC_BLOCKS 256
#define GDL_TC_GONE (1ULL << 63)

struct gdirect_reg;

struct gdl_tc_ent {
	/* The region id, with GDL_TC_GONE set once released; 0 when free. */
	_Atomic uint64_t tag;
	_Atomic int64_t n;	/* references counted here (>= 0) */
	_Atomic uint64_t stamp;	/* LRU stamp of the last put through here */
	/* Owner only: */
	struct gdirect_reg *r;
	uint64_t start, end;	/* r's range, so the recent path needs no r */
	uint64_t kgen;		/* ctx->kgen at which r was last seen live
				 * (0: not yet) */
	const uint32_t *status;	/* r->status */
} __attribute__((aligned(64)));

/* Hints: one per 64 KiB page number modulo GDL_TC_HINTS. */
#define GDL_TC_HINTS 64
#define GDL_TC_HINT_SHIFT 16

struct gdl_tc_block {
	struct gdl_tc_ent e[GDL_TC_WAYS];
	/* Owner only: the entry of the thread's last acquisition through an
	 * entry in each page (by request address), or NULL: the recent
	 * path's guesses.  A guess is only a guess: the recent path checks
	 * the entry's own range, kill generation and status word, so an
	 * entry since taken over by another region answers for that region
	 * or not at all. */
	struct gdl_tc_ent *hint[GDL_TC_HINTS] __attribute__((aligned(64)));
	_Atomic int owned __attribute__((aligned(64)));
	unsigned exit_rounds;	/* owner only: rounds of thread-exit
				 * destructors it kept the block for */
};

/* NULL until the thread's first hit; &gdl_tc_none when no block was free,
 * or once the thread gave its block back at exit. */
extern __thread struct gdl_tc_block *gdl_tc_mine
	__attribute__((tls_model("initial-exec")));
/* The entry of this thread's last acquisition through an entry (the
 * recent path's first guess, before the per-page hints), or NULL. */
extern __thread struct gdl_tc_ent *gdl_tc_last
	__attribute__((tls_model("initial-exec")));
extern struct gdl_tc_block gdl_tc_none;

struct gdl_tc_block *gdl_tc_claim(void);

static inline struct gdl_tc_block *gdl_tc_block(void)
{
	struct gdl_tc_block *b = gdl_tc_mine;

	if (__builtin_expect(b == NULL, 0))
		b = gdl_tc_claim();
	return b == &gdl_tc_none ? NULL : b;
}

/* The hint slot of the page holding address a. */
static inline struct gdl_tc_ent **gdl_tc_hint(struct gdl_tc_block *b,
					       uint64_t a)
{
	return &b->hint[(a >> GDL_TC_HINT_SHIFT) & (GDL_TC_HINTS - 1)];
}

static inline unsigned gdl_tc_way(const struct gdirect_reg *r)
{
	return (unsigned)((uintptr_t)r >> 6) & (GDL_TC_WAYS - 1);
}

/*
 * The references every block counts for region r (id r->id, passed so
 * that r is not read) and, if stamp is not NULL, the newest stamp among
 * those entries.  An entry for r can only sit in r's way, so this reads
 * one entry per block.  Counts are consistent per entry (tag read before
 * and after the count); the caller forces the readers' fence first when it
 * needs the Dekker guarantee.
 */
int64_t gdl_tc_count(const struct gdirect_reg *r, uint64_t id, uint64_t *stamp);

/* r (id) was released: free the entries that name it for their owners. */
void gdl_tc_gone(const struct gdirect_reg *r, uint64_t id);

/* In a fork child: only the calling thread exists, and the parent's
 * regions are not the child's to count. */
void gdl_tc_atfork_child(void);

#endif
