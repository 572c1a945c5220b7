/* SPDX-License-Identifier: MIT */
/*
 * stats.c - a context's statistics: the per-thread shards that hits count
 * in without a locked instruction, and gdirect_stats(), which sums them
 * with the context's other counters.
 *
 * A thread owns one of GDL_SHARDS shards of every context while it lives,
 * so its inline counts write a line that no other thread writes
 * (rcache_hit.h, invariant 3); threads beyond them count in a shared shard
 * with atomic increments.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "epoch.h"
#include "libgdirect_internal.h"

__thread unsigned gdl_my_shard __attribute__((tls_model("initial-exec")));
__thread unsigned gdl_my_shard_own __attribute__((tls_model("initial-exec")));

/* Bit i: shard i has a live owner (who writes it without atomics). */
static _Atomic uint32_t shards_owned;
static _Atomic unsigned next_shared;
static pthread_key_t shard_key;
static pthread_once_t shard_once = PTHREAD_ONCE_INIT;

/* 1 + the index of a shared shard, counted with atomic increments. */
static unsigned shared_shard(void)
{
	return 1 + GDL_SHARDS +
	       atomic_fetch_add(&next_shared, 1) % GDL_SHARDS_SHARED;
}

/* At thread exit: the shard is free for a new thread.  The release and
 * the next owner's claim order its writes after ours.  Run by the exiting
 * thread: what it counts after this, from another library's later
 * thread-exit destructor, goes to a shared shard (a new claim here would
 * need another round of destructors, and without one keep the shard
 * owned forever). */
static void shard_release(void *p)
{
	unsigned i = (unsigned)(uintptr_t)p - 1;

	gdl_thread_exiting = true;
	gdl_my_shard_own = 0;
	gdl_my_shard = shared_shard();
	atomic_fetch_and(&shards_owned, ~(1u << i));
}

static void shard_key_make(void)
{
	pthread_key_create(&shard_key, shard_release);
}

unsigned gdl_shard_assign(void)
{
	uint32_t v;

	pthread_once(&shard_once, shard_key_make);
	/* A claim made now might never be given back. */
	if (gdl_thread_exiting) {
		gdl_my_shard = shared_shard();
		return gdl_my_shard - 1;
	}
	v = atomic_load(&shards_owned);
	while (v != (1u << GDL_SHARDS) - 1) {
		unsigned i = (unsigned)__builtin_ctz(~v);

		if (atomic_compare_exchange_weak(&shards_owned, &v, v | 1u << i)) {
			if (pthread_setspecific(shard_key, (void *)(uintptr_t)(i + 1))) {
				/* Cannot learn of our exit: give it back. */
				atomic_fetch_and(&shards_owned, ~(1u << i));
				break;
			}
			gdl_my_shard = 1 + i;
			gdl_my_shard_own = offsetof(struct gdirect_ctx, shard) +
					  i * sizeof(struct gdl_shard);
			return i;
		}
	}
	gdl_my_shard = shared_shard();
	return gdl_my_shard - 1;
}

/* A thread's first count: assign it a shard, then count there, inline
 * if it owns it now.  Apart, so that gdl_shard_inc_slow() calls nothing
 * and saves no register. */
static __attribute__((noinline, cold)) int shard_inc_first(
	struct gdirect_ctx *c, size_t field)
{
	gdl_shard_assign();
	if (gdl_shard_try_inc(c, field))
		return 0;
	return gdl_shard_inc_slow(c, field);
}

/* Called where the inline count was refused (gdl_my_shard_own 0): the
 * thread has no shard yet, or counts in a shared one, atomically. */
int gdl_shard_inc_slow(struct gdirect_ctx *c, size_t field)
{
	unsigned sh = gdl_my_shard;
	char *shard;

	if (__builtin_expect(sh == 0, 0))
		return shard_inc_first(c, field);
	shard = (char *)&c->shard[sh - 1];
	atomic_fetch_add_explicit((_Atomic uint64_t *)(shard + field), 1,
				  memory_order_relaxed);
	return 0;
}

GDL_EXPORT void gdirect_stats(struct gdirect_ctx *c, struct gdirect_stats *st)
{
	if (!c || !st)
		return;
	memset(st, 0, sizeof(*st));
#define CP(f) st->f = atomic_load_explicit(&c->st.f, memory_order_relaxed);
	GDL_COUNTER_FIELDS(CP)
#undef CP
	for (int i = 0; i < GDL_SHARDS + GDL_SHARDS_SHARED; i++) {
		st->hits += atomic_load_explicit(&c->shard[i].hits,
						 memory_order_relaxed);
		st->classify_hits += atomic_load_explicit(&c->shard[i].classify_hits,
							  memory_order_relaxed);
	}
}
