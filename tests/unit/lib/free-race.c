/* SPDX-License-Identifier: MIT */
/*
 * lib-free-race: a free reported while the driver answers a query about
 * the memory keeps the answer out of the cache.
 *
 * The free runs at a chosen point (the library's race hooks, built into a
 * static copy with GDL_RACE_HOOKS): after the driver answered and before
 * the answer was cached (a classification's miss, GDL_RACE_CLASSIFY_QUERIED)
 * or pinned (a registration's miss, GDL_RACE_MISS_QUERIED).  It is what the
 * interposer does for cuMemFree: report, free, report again; then the
 * address is allocated again, so the answer the library holds describes an
 * allocation that no longer exists.  In hooks mode a cached answer is
 * never asked again, so a cached stale answer would give the next
 * allocation at the address the freed one's BUFFER_ID, and every region
 * tagged with it.  The classification after the race must give the new
 * allocation's BUFFER_ID, and the registration's pin must cover it.
 *
 * The last case frees while a registration's miss waits, with the lock
 * dropped, for another thread's pin of the same range: the query it made
 * before the wait stays announced through it, so the free marks it.
 */
#include <pthread.h>
#include <unistd.h>

#include "libgdirect_internal.h"
#include "tutil.h"

struct race {
	enum gdl_race_point at;
	bool armed;
	uint64_t addr, size, again;	/* freed, then allocated again */
	uint64_t reported;		/* the length reported (0: unknown) */
};
static struct race race;

/* The last case's two threads and where each is (waited on by polling:
 * the steps are milliseconds apart at most). */
struct waiter {
	struct gdirect_ctx *c;
	uint64_t a;
	struct gdirect_reg *r;
	int rc;
	pthread_t tid;
	_Atomic bool done;
};
static struct {
	_Atomic bool in_pin, release_pin, hold_requery;
	struct waiter a, b;
	_Atomic int a_queries;
} wait_race;
static _Thread_local bool thread_a;	/* this thread is wait_race.a's */

/* Wait up to 10 s for flag; whether it was set.  The test's own thread
 * fails when it was not (rather than hanging until the harness's
 * timeout); the other threads go on, and the checks after them fail. */
static bool wait_for(_Atomic bool *flag)
{
	for (int ms = 0; !atomic_load(flag); ms++) {
		if (ms == 10000)
			return false;
		usleep(1000);
	}
	return true;
}

/* The interposer's cuMemFree, then a new allocation of the same size. */
static void hook(enum gdl_race_point p)
{
	/* The last case: thread a's second query (after its freed pin was
	 * given back) waits until b is done, so that b, not a's retry, is
	 * the first to register after the free. */
	if (p == GDL_RACE_MISS_QUERIED && atomic_load(&wait_race.hold_requery) &&
	    thread_a &&
	    atomic_fetch_add(&wait_race.a_queries, 1) == 1)
		(void)wait_for(&wait_race.b.done);
	if (!race.armed || p != race.at)
		return;
	race.armed = false;
	gdirect_notify_free(P(race.addr), race.reported);
	CHECK_EQ(cuMemFree_v2(race.addr), CUDA_SUCCESS);
	gdirect_notify_free(P(race.addr), race.reported);
	race.again = fake_cuda_alloc(race.size);
}

static void arm(enum gdl_race_point at, uint64_t addr, uint64_t size)
{
	race = (struct race){ .at = at, .armed = true, .addr = addr,
			      .size = size, .reported = size };
}

/* The new allocation took the freed one's address (the fake's first fit
 * does): otherwise the test shows nothing. */
static void check_reallocated(void)
{
	CHECK(!race.armed);
	CHECK_EQ(race.again, race.addr);
}

static void check_classified_new(struct gdirect_ctx *c, uint64_t a)
{
	struct gdirect_ptr_info info;

	CHECK_EQ(gdirect_classify(c, P(a), &info), 0);
	CHECK_EQ(info.type, GDIRECT_MEM_DEVICE);
	CHECK_EQ(info.buffer_id, fake_cuda_buffer_id_at(a));
}

/* A context with hooks alone over a fresh fake backend, and a 64 KiB
 * allocation in *x. */
static struct gdirect_ctx *hooks_ctx(struct gdl_backend **b, uint64_t *x)
{
	struct gdirect_params p;
	struct gdirect_ctx *c;

	params(&p, GDIRECT_INV_HOOKS);
	c = mkctx(&p, &(struct fake_cfg){ 0 }, b);
	*x = fake_cuda_alloc(64 * KiB);
	CHECK(*x);
	return c;
}

/* A classification's miss: the answer it was given is the freed
 * allocation's, and it must not be cached. */
static void classify_answer_not_cached(void)
{
	struct gdirect_ptr_info info;
	struct gdl_backend *b;
	uint64_t x;
	struct gdirect_ctx *c = hooks_ctx(&b, &x);

	arm(GDL_RACE_CLASSIFY_QUERIED, x, 64 * KiB);
	CHECK_EQ(gdirect_classify(c, P(x + 100), &info), 0);
	check_reallocated();
	check_classified_new(c, x + 100);
	CHECK_EQ(cuMemFree_v2(x), CUDA_SUCCESS);
	flush_destroy_clean(c, b);
}

/* A registration's miss: the allocation it was about to pin for is
 * freed; it asks again, caches the new allocation and pins it. */
static void miss_asks_again(void)
{
	struct gdirect_reg_info ri;
	struct gdirect_reg *r;
	struct gdl_backend *b;
	uint64_t x;
	struct gdirect_ctx *c = hooks_ctx(&b, &x);

	/* Classified first, so that the miss is the registration's own. */
	check_classified_new(c, x);
	arm(GDL_RACE_MISS_QUERIED, x, 64 * KiB);
	CHECK_EQ(gdirect_reg_get(c, P(x + 100), 100, 0, &r), 0);
	check_reallocated();
	CHECK_EQ(gdirect_reg_info(r, &ri), 0);
	CHECK(fake_backend_pin_covers(b, ri.kernel_handle,
				      fake_cuda_buffer_id_at(x)));
	CHECK(fake_backend_pin_fresh(b, ri.kernel_handle, x + 100));
	gdirect_reg_put(r);
	check_classified_new(c, x + 100);
	/* And a hit now is the new allocation's region. */
	CHECK_EQ(gdirect_reg_get(c, P(x + 100), 100, 0, &r), 0);
	CHECK_EQ(gdirect_reg_info(r, &ri), 0);
	CHECK(fake_backend_pin_fresh(b, ri.kernel_handle, x + 100));
	gdirect_reg_put(r);
	CHECK_EQ(cuMemFree_v2(x), CUDA_SUCCESS);
	flush_destroy_clean(c, b);
}

/* A free of unknown length (gdirect_notify_free(p, 0), as the
 * interposer reports when the driver cannot give the range) of memory
 * the cache does not hold: the registration's miss, of an interior
 * pointer, cannot be matched to it, so it asks again all the same. */
static void miss_asks_again_unknown_length(void)
{
	struct gdirect_reg_info ri;
	struct gdirect_reg *r;
	struct gdl_backend *b;
	uint64_t x;
	struct gdirect_ctx *c = hooks_ctx(&b, &x);

	arm(GDL_RACE_MISS_QUERIED, x, 64 * KiB);
	race.reported = 0;
	CHECK_EQ(gdirect_reg_get(c, P(x + 8192), 100, 0, &r), 0);
	check_reallocated();
	CHECK_EQ(gdirect_reg_info(r, &ri), 0);
	CHECK(fake_backend_pin_fresh(b, ri.kernel_handle, x + 8192));
	gdirect_reg_put(r);
	check_classified_new(c, x + 8192);
	CHECK_EQ(cuMemFree_v2(x), CUDA_SUCCESS);
	flush_destroy_clean(c, b);
}

/* Thread a's first pin: it says so and waits to be let go. */
static void pin_held(void *arg)
{
	(void)arg;
	if (atomic_exchange(&wait_race.in_pin, true))
		return;		/* not the first pin */
	(void)wait_for(&wait_race.release_pin);
}

static void *get_thread(void *arg)
{
	struct waiter *w = arg;

	thread_a = w == &wait_race.a;
	w->rc = gdirect_reg_get(w->c, P(w->a), 100, 0, &w->r);
	atomic_store(&w->done, true);
	return NULL;
}

/*
 * A free while a registration's miss waits for another thread's pin:
 * thread a pins the allocation and is held inside the pin; thread b
 * misses on it, asks the driver, and waits for a's pin with the lock
 * dropped; then the allocation is freed and made again at its address.
 * a's pin is given back (it was made before the free) and a is held
 * before it asks again, so b wakes to no region and no pin under way.
 * Its answer describes the freed allocation: it must ask again and tag
 * its region with the new BUFFER_ID, not pin the address under the old
 * one.
 */
static void miss_wait_asks_again(void)
{
	struct fake_cfg cfg = { .after_pin = pin_held };
	struct gdirect_reg_info ri;
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_ctx *c;
	uint64_t x, waits;

	params(&p, GDIRECT_INV_HOOKS);
	c = mkctx(&p, &cfg, &b);
	x = fake_cuda_alloc(64 * KiB);
	CHECK(x);
	check_classified_new(c, x);
	memset(&wait_race, 0, sizeof(wait_race));
	wait_race.a = (struct waiter){ .c = c, .a = x };
	wait_race.b = (struct waiter){ .c = c, .a = x + 100 };
	atomic_store(&wait_race.hold_requery, true);
	CHECK_EQ(pthread_create(&wait_race.a.tid, NULL, get_thread,
				&wait_race.a), 0);
	if (!wait_for(&wait_race.in_pin))
		TAP_FAIL("thread a did not reach its pin within 10 s");
	waits = atomic_load(&c->st.pin_waits);
	CHECK_EQ(pthread_create(&wait_race.b.tid, NULL, get_thread,
				&wait_race.b), 0);
	for (int ms = 0; atomic_load(&c->st.pin_waits) == waits; ms++) {
		if (ms == 10000)
			TAP_FAIL("thread b did not wait for a's pin within 10 s");
		usleep(1000);
	}
	/* b is in its wait (the free's report takes the lock it dropped). */
	gdirect_notify_free(P(x), 64 * KiB);
	CHECK_EQ(cuMemFree_v2(x), CUDA_SUCCESS);
	gdirect_notify_free(P(x), 64 * KiB);
	CHECK_EQ(fake_cuda_alloc(64 * KiB), x);
	atomic_store(&wait_race.release_pin, true);
	CHECK_EQ(pthread_join(wait_race.b.tid, NULL), 0);
	CHECK_EQ(pthread_join(wait_race.a.tid, NULL), 0);
	atomic_store(&wait_race.hold_requery, false);
	CHECK_EQ(wait_race.b.rc, 0);
	CHECK_EQ(wait_race.a.rc, 0);
	CHECK_EQ(gdirect_reg_info(wait_race.b.r, &ri), 0);
	CHECK(fake_backend_pin_fresh(b, ri.kernel_handle, x + 100));
	CHECK_EQ(GDL_RC(wait_race.b.r)->tag_id, fake_cuda_buffer_id_at(x));
	CHECK_EQ(gdirect_reg_info(wait_race.a.r, &ri), 0);
	CHECK(fake_backend_pin_fresh(b, ri.kernel_handle, x));
	gdirect_reg_put(wait_race.a.r);
	gdirect_reg_put(wait_race.b.r);
	check_classified_new(c, x + 100);
	CHECK_EQ(cuMemFree_v2(x), CUDA_SUCCESS);
	flush_destroy_clean(c, b);
}

int main(void)
{
	need_fake_cuda();
	gdl_race_hook = hook;
	TAP_TEST(classify_answer_not_cached);
	TAP_TEST(miss_asks_again);
	TAP_TEST(miss_asks_again_unknown_length);
	TAP_TEST(miss_wait_asks_again);
	gdl_race_hook = NULL;
	return tap_done();
}
