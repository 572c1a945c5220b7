/* SPDX-License-Identifier: MIT */
/*
 * tcache.h - per-thread reference counts, so that a hit writes no shared
 * line (rcache_hit.h states the hit path's invariants).
 *
 * The true count of region r is GDL_REFS(r->refs) plus the n of every
 * entry tagged r->id; each get and put moves one term by one, so a put may
 * come off any term.  Counting in an entry is a Dekker handshake with
 * whoever kills:
 *
 *	getter: E.n++ ; reader fence ; reread the kill signal (the slot's
 *	        word, slotab.h, or ctx->kgen) ; E.n-- if it changed
 *	killer: set DEAD or HOLD ; change r's slots ; bump ctx->kgen ;
 *	        gdl_epoch_sync_readers() ; sum the entries tagged r->id
 *
 * Either the getter sees the signal or the sum sees its count (epoch.c
 * gives the fence pair), so a dead region gains no unseen reference and a
 * held one is evicted only when the sum is zero.  An entry is reused only
 * when its count is zero or its tag is GDL_TC_GONE, and a block only when
 * all its entries are, because a reference may outlive its thread.
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
	/* Owner only: the recent path's guesses, checked before use. */
	struct gdl_tc_ent *hint[GDL_TC_HINTS] __attribute__((aligned(64)));
	_Atomic int owned __attribute__((aligned(64)));
	unsigned exit_rounds;	/* owner only: rounds of thread-exit
				 * destructors it kept the block for */
};

/* NULL until the thread's first hit; &gdl_tc_none when no block was free,
 * or once the thread gave its block back at exit. */
extern __thread struct gdl_tc_block *gdl_tc_mine
	__attribute__((tls_model("initial-exec")));
/* The recent path's first guess, or NULL. */
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

/* The references all blocks count for r (and their newest stamp); the
 * caller fences the readers first when it needs the Dekker guarantee. */
int64_t gdl_tc_count(const struct gdirect_reg *r, uint64_t id, uint64_t *stamp);

/* r (id) was released: free the entries that name it for their owners. */
void gdl_tc_gone(const struct gdirect_reg *r, uint64_t id);

/* A fork child counts none of the parent's regions. */
void gdl_tc_atfork_child(void);

#endif
