/* SPDX-License-Identifier: MIT */
/*
 * tcache.c - the blocks of per-thread reference counts (tcache.h).
 */
#include "tcache.h"

#include <limits.h>
#include <pthread.h>

#include "epoch.h"

static struct gdl_tc_block blocks[GDL_TC_BLOCKS];
static _Atomic unsigned blocks_used;	/* high-water mark of claimed blocks */
struct gdl_tc_block gdl_tc_none;
__thread struct gdl_tc_block *gdl_tc_mine
	__attribute__((tls_model("initial-exec")));
__thread struct gdl_tc_ent *gdl_tc_last
	__attribute__((tls_model("initial-exec")));

static pthread_key_t tc_key;
static pthread_once_t tc_once = PTHREAD_ONCE_INIT;

/* Nothing in b counts a reference any more. */
static bool block_clean(struct gdl_tc_block *b)
{
	for (int i = 0; i < GDL_TC_WAYS; i++) {
		uint64_t t = atomic_load(&b->e[i].tag);

		if (t && !(t & GDL_TC_GONE) && atomic_load(&b->e[i].n))
			return false;
	}
	return true;
}

/*
 * At thread exit, run by the exiting thread.  While the thread still
 * counts references in its block, another library's thread-exit
 * destructor may yet put them (their order is unspecified): the thread
 * keeps the block for another round of destructors, up to the one before
 * the last, so that those puts come off the block rather than strand its
 * counts until the regions go.  (Not into the last round: ThreadSanitizer
 * tears its state of the thread down there, and instrumented code that
 * runs after that crashes.  The rounds are counted from this function's
 * first call, which is the first round unless the block was claimed from
 * a destructor.)  Then the block keeps whatever counts are left
 * (references may outlive the thread) and a new thread claims it once
 * none is.  What the thread does after that goes through the regions'
 * shared words (as a thread without a free block does), since the block
 * may be claimed and reset by a new owner as soon as owned is 0.
 */
static void tc_release(void *p)
{
	struct gdl_tc_block *b = p;

	gdl_thread_exiting = true;
	if (!block_clean(b) &&
	    ++b->exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS - 1 &&
	    pthread_setspecific(tc_key, b) == 0)
		return;
	gdl_tc_mine = &gdl_tc_none;
	gdl_tc_last = NULL;
	atomic_store(&b->owned, 0);
}

static void tc_key_make(void)
{
	pthread_key_create(&tc_key, tc_release);
}

static void block_reset(struct gdl_tc_block *b)
{
	for (int i = 0; i < GDL_TC_WAYS; i++) {
		atomic_store(&b->e[i].tag, 0);
		atomic_store(&b->e[i].n, 0);
		atomic_store(&b->e[i].stamp, 0);
		b->e[i].r = NULL;
		b->e[i].start = b->e[i].end = 0;
		b->e[i].kgen = 0;
		b->e[i].status = NULL;
	}
	for (int i = 0; i < GDL_TC_HINTS; i++)
		b->hint[i] = NULL;
	b->exit_rounds = 0;
}

struct gdl_tc_block *gdl_tc_claim(void)
{
	/* Readers' fence chosen before this thread's first acquisition. */
	gdl_epoch_init();
	pthread_once(&tc_once, tc_key_make);
	if (gdl_thread_exiting)
		return gdl_tc_mine = &gdl_tc_none;
	for (unsigned i = 0; i < GDL_TC_BLOCKS; i++) {
		struct gdl_tc_block *b = &blocks[i];
		int zero = 0;

		if (atomic_load_explicit(&b->owned, memory_order_relaxed) ||
		    !atomic_compare_exchange_strong(&b->owned, &zero, 1))
			continue;
		if (!block_clean(b) || pthread_setspecific(tc_key, b)) {
			atomic_store(&b->owned, 0);
			continue;
		}
		block_reset(b);
		unsigned hw = atomic_load(&blocks_used);

		while (hw < i + 1 &&
		       !atomic_compare_exchange_weak(&blocks_used, &hw, i + 1))
			;
		return gdl_tc_mine = b;
	}
	return gdl_tc_mine = &gdl_tc_none;
}

int64_t gdl_tc_count(const struct gdirect_reg *r, uint64_t id, uint64_t *stamp)
{
	unsigned hw = atomic_load(&blocks_used), w = gdl_tc_way(r);
	uint64_t newest = 0;
	int64_t sum = 0;

	for (unsigned i = 0; i < hw; i++) {
		struct gdl_tc_ent *e = &blocks[i].e[w];

		if (atomic_load_explicit(&e->tag, memory_order_acquire) != id)
			continue;
		/* The owner writes a new tag after the count of a new
		 * region: seeing id again after the count means the count
		 * was id's. */
		int64_t n = atomic_load_explicit(&e->n, memory_order_acquire);
		uint64_t s = atomic_load_explicit(&e->stamp, memory_order_relaxed);

		if (atomic_load_explicit(&e->tag, memory_order_acquire) != id)
			continue;
		sum += n;
		if (s > newest)
			newest = s;
	}
	if (stamp)
		*stamp = newest;
	return sum;
}

void gdl_tc_gone(const struct gdirect_reg *r, uint64_t id)
{
	unsigned hw = atomic_load(&blocks_used), w = gdl_tc_way(r);

	for (unsigned i = 0; i < hw; i++) {
		uint64_t t = id;

		atomic_compare_exchange_strong(&blocks[i].e[w].tag, &t,
					       id | GDL_TC_GONE);
	}
}

void gdl_tc_atfork_child(void)
{
	unsigned hw = atomic_load(&blocks_used);

	for (unsigned i = 0; i < hw; i++) {
		block_reset(&blocks[i]);
		gdl_tc_last = NULL;
		if (&blocks[i] != gdl_tc_mine)
			atomic_store(&blocks[i].owned, 0);
	}
}
