// SPDX-License-Identifier: MIT
/*
 * evict-race.c - eviction never takes a region a hit is taking.
 *
 * An eviction holds the region (GDL_HOLD on its refs, and the held bit in
 * its index slots), sums the per-thread counts, and only then marks it
 * dead and empties its slots.  A get that copied the slot before the hold
 * and publishes its count after the sum must then fail its re-check of
 * the slot word (held) and back off; without the held bit in the slot it
 * would return a region the eviction already counted as unused: dead at
 * once, its bytes off the books while still pinned.
 *
 * The interleaving is forced with the library's race hooks: the getter
 * parks at GDL_RACE_SLOT_COPIED; the flush, at GDL_RACE_EVICT_SUMMED (the
 * region held, its counts summed), lets it run and waits until its hit
 * has decided: backed off (GDL_RACE_BACKED_OFF) or returned.  A getter
 * that backed off goes on to the miss path, where it waits for the
 * context's lock until the flush ends.  The hit must have backed off, the
 * get must come back with a valid region, the flush must have evicted
 * exactly the one region, and nothing may be left pinned.  Removing the
 * hold from the slot (rcache.c's index_hold before the sum) fails it
 * every time.
 */
#include <pthread.h>
#include <stdbool.h>

#include "libgdirect_internal.h"
#include "tutil.h"

static struct gdirect_ctx *cur;
static uint64_t base;
static _Thread_local bool is_getter;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
/* All under mu. */
static bool parked, go, summed, backed_off, done, armed;
static struct gdirect_reg *got;

static void hook(enum gdl_race_point p)
{
	pthread_mutex_lock(&mu);
	if (is_getter && p == GDL_RACE_SLOT_COPIED && !parked) {
		/* The slot copied, before the eviction holds it. */
		parked = true;
		pthread_cond_broadcast(&cv);
		while (!go)
			pthread_cond_wait(&cv, &mu);
	} else if (is_getter && p == GDL_RACE_BACKED_OFF) {
		backed_off = true;
		pthread_cond_broadcast(&cv);
	} else if (!is_getter && p == GDL_RACE_EVICT_SUMMED && armed) {
		/* The eviction's sum is taken: the hit counts only now. */
		armed = false;
		summed = true;
		go = true;
		pthread_cond_broadcast(&cv);
		while (!backed_off && !done)
			pthread_cond_wait(&cv, &mu);
	}
	pthread_mutex_unlock(&mu);
}

static void *get_thread(void *p)
{
	(void)p;
	is_getter = true;
	CHECK_EQ(gdirect_reg_get(cur, P(base + 100), 16, 0, &got), 0);
	pthread_mutex_lock(&mu);
	done = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void *get_put(void *p)
{
	struct gdirect_reg *r;
	(void)p;
	CHECK_EQ(gdirect_reg_get(cur, P(base + 100), 16, 0, &r), 0);
	gdirect_reg_put(r);
	return NULL;
}

static void evict_between_sum_and_unlink(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_reg_info ri;
	pthread_t t, getter;
	int flushed;

	params(&p, GDIRECT_INV_HOOKS);
	p.whole_alloc_max = 0;
	cur = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	base = fake_cuda_alloc(256 * KiB);
	CHECK(base);
	CHECK_EQ(pthread_create(&t, NULL, get_put, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);

	gdl_race_hook = hook;
	CHECK_EQ(pthread_create(&getter, NULL, get_thread, NULL), 0);
	pthread_mutex_lock(&mu);
	while (!parked)
		pthread_cond_wait(&cv, &mu);
	armed = true;
	pthread_mutex_unlock(&mu);
	flushed = gdirect_flush(cur);
	CHECK_EQ(pthread_join(getter, NULL), 0);
	gdl_race_hook = NULL;
	CHECK(summed);		/* the race ran */
	CHECK(backed_off);
	CHECK_EQ(flushed, 1);
	CHECK_EQ(gdirect_reg_info(got, &ri), 0);
	CHECK(ri.valid);
	gdirect_reg_put(got);
	flush_destroy_clean(cur, b);
}

int main(void)
{
	need_fake_cuda();
	TAP_TEST(evict_between_sum_and_unlink);
	return tap_done();
}
