// SPDX-License-Identifier: MIT
/*
 * t_evict_race - eviction never takes a region a hit is taking.
 *
 * An eviction holds the region (GD_HOLD on its refs, and the held bit in
 * its index slots), sums the per-thread counts, and only then marks it
 * dead and empties its slots.  A get that copied the slot before the hold
 * and publishes its count after the sum must then fail its re-check of
 * the slot word (held) and back off; without the held bit in the slot it
 * would return a region the eviction already counted as unused: dead at
 * once, its bytes off the books while still pinned.
 *
 * The interleaving is forced: the getter parks at GD_RACE_SLOT_COPIED;
 * gd_tc_count is wrapped at link time (-Wl,--wrap) so that the eviction's
 * sum (no stamp, region held) lets the getter run and waits for its get to
 * return (at most 300 ms: a getter that backed off blocks on the context's
 * lock until the flush ends).  The get must come back with a valid
 * region, the flush must have evicted exactly the one region, and nothing
 * may be left pinned.  Removing the hold from the slot (rcache.c's
 * index_hold before the sum) fails it every time.
 */
#include <pthread.h>
#include <time.h>
#include "libgdirect_internal.h"
#include "tutil.h"

int64_t __real_gd_tc_count(const struct gdirect_reg *r, uint64_t id, uint64_t *stamp);

static struct gdirect_ctx *cur;
static uint64_t base;
static pthread_t getter;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int parked, go, done, armed_evict;
static struct gdirect_reg *got;

static void hook(enum gd_race_point p)
{
	if (p != GD_RACE_SLOT_COPIED || !pthread_equal(pthread_self(), getter))
		return;
	pthread_mutex_lock(&mu);
	parked = 1;
	pthread_cond_broadcast(&cv);
	while (!go)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

int64_t __wrap_gd_tc_count(const struct gdirect_reg *r, uint64_t id, uint64_t *stamp)
{
	int64_t n = __real_gd_tc_count(r, id, stamp);

	if (!stamp && armed_evict && (atomic_load(&r->refs) & GD_HOLD)) {
		struct timespec t;

		armed_evict = 0;	/* the eviction's sum: let the hit run now */
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += 300000000;
		if (t.tv_nsec >= 1000000000) { t.tv_sec++; t.tv_nsec -= 1000000000; }
		pthread_mutex_lock(&mu);
		go = 1;
		pthread_cond_broadcast(&cv);
		while (!done && pthread_cond_timedwait(&cv, &mu, &t) == 0)
			;
		pthread_mutex_unlock(&mu);
	}
	return n;
}

static void *get_thread(void *p)
{
	(void)p;
	CHECK_EQ(gdirect_reg_get(cur, P(base + 100), 16, 0, &got), 0);
	pthread_mutex_lock(&mu);
	done = 1;
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
	struct gd_backend *b;
	struct gdirect_reg_info ri;
	struct fake_stats fs;
	pthread_t t;
	int flushed;

	params(&p, GDIRECT_INV_HOOKS);
	p.whole_alloc_max = 0;
	cur = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	base = fake_cuda_alloc(256 * KiB);
	CHECK(base);
	CHECK_EQ(pthread_create(&t, NULL, get_put, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);

	gd_race_hook = hook;
	CHECK_EQ(pthread_create(&getter, NULL, get_thread, NULL), 0);
	pthread_mutex_lock(&mu);
	while (!parked)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	armed_evict = 1;
	flushed = gdirect_flush(cur);
	CHECK_EQ(pthread_join(getter, NULL), 0);
	gd_race_hook = NULL;
	CHECK_EQ(flushed, 1);
	CHECK_EQ(gdirect_reg_info(got, &ri), 0);
	CHECK(ri.valid);
	gdirect_reg_put(got);
	CHECK_EQ(gdirect_flush(cur) >= 0, 1);
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.live, 0);
	CHECK_EQ(fs.bad_unpins, 0);
	gdirect_ctx_destroy(cur);
	fake_cuda_reset();
}

int main(void)
{
	need_fake_cuda();
	TAP_TEST(evict_between_sum_and_unlink);
	return tap_done();
}
