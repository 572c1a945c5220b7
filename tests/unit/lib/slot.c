/* SPDX-License-Identifier: MIT */
/*
 * lib-slot: the lookup path's protocol (lib/src/slotab.h) against its
 * writers, with the writer run at a chosen point in the middle of a hit
 * (the library's race hooks, built into a static copy with GDL_RACE_HOOKS),
 * so that each interleaving happens every time rather than once in a
 * million:
 *  - a torn slot read: the region's slot is rewritten (its region
 *    superseded by a larger one) between the read of its word and of its
 *    fields;
 *  - a kill racing a hit: the region is superseded after the hit copied
 *    its slot and before it counted its reference;
 *  - an eviction racing a hit: the region is evicted (flushed) after the
 *    hit copied its slot and before it counted (the hit must not return
 *    it), or after it counted and before it checked the slot again (the
 *    eviction must not take it);
 * and in each, the answer covers the request, its pin is live and fresh,
 * and the thread's later hits through the entry the race left behind are
 * right too.
 */
#include <pthread.h>

#include "libgdirect_internal.h"
#include "tutil.h"

static struct {
	enum gdl_race_point at;
	bool armed;
	void (*fn)(void);
} race;
static struct gdirect_ctx *cur;
static uint64_t base;
static int flushed;

static void hook(enum gdl_race_point p)
{
	if (!race.armed || p != race.at)
		return;
	race.armed = false;
	race.fn();
}

static void arm(enum gdl_race_point at, void (*fn)(void))
{
	race.at = at;
	race.fn = fn;
	race.armed = true;
}

/* The writers run from the hook. */
static void do_flush(void)
{
	flushed = gdirect_flush(cur);
}

/* A miss on the first two pages: supersedes the one-page region. */
static void do_supersede(void)
{
	struct gdirect_reg *r;

	CHECK_EQ(gdirect_reg_get(cur, P(base), 128 * KiB, 0, &r), 0);
	gdirect_reg_put(r);
}

struct oneget {
	uint64_t a, len;
};

static void *get_put(void *p)
{
	struct oneget *g = p;
	struct gdirect_reg *r;

	CHECK_EQ(gdirect_reg_get(cur, P(g->a), g->len, 0, &r), 0);
	gdirect_reg_put(r);
	return NULL;
}

/* The region of [a, a + len) registered by another thread, so that this
 * thread's next get takes the lookup path (its entries know nothing). */
static void register_elsewhere(uint64_t a, uint64_t len)
{
	struct oneget g = { a, len };
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, get_put, &g), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
}

/* r answers [a, a + len) with a live, fresh pin; returns its size. */
static uint64_t check_answer(struct gdl_backend *b, struct gdirect_reg *r,
			     uint64_t a, uint64_t len)
{
	struct gdirect_reg_info ri;

	CHECK_EQ(gdirect_reg_info(r, &ri), 0);
	CHECK(ri.valid);
	CHECK(ri.addr <= a && a + len <= ri.addr + ri.size);
	CHECK(fake_backend_pin_fresh(b, ri.kernel_handle, a));
	return ri.size;
}

/*
 * One race: a one-page region registered by another thread; the hook at
 * point at runs fn during this thread's get of [base + 100, +16).  Then
 * that get and further gets of both pages (through whatever entries the
 * race left) answer right, and everything is unpinned at the end.
 * Returns the size of the first answer.
 */
static uint64_t one_race_inv(unsigned inv, enum gdl_race_point at,
			     void (*fn)(void), struct gdirect_stats *st)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_reg *r;
	uint64_t size;

	params(&p, inv);
	p.whole_alloc_max = 0;	/* regions of the request's pages */
	cur = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	base = fake_cuda_alloc(256 * KiB);
	CHECK(base);
	register_elsewhere(base + 100, 16);

	gdl_race_hook = hook;
	arm(at, fn);
	CHECK_EQ(gdirect_reg_get(cur, P(base + 100), 16, 0, &r), 0);
	CHECK(!race.armed);	/* the race ran */
	gdl_race_hook = NULL;
	size = check_answer(b, r, base + 100, 16);
	gdirect_reg_put(r);
	for (int i = 0; i < 4; i++) {
		uint64_t a = base + (i & 1) * 64 * KiB + 200 + i;

		CHECK_EQ(gdirect_reg_get(cur, P(a), 16, 0, &r), 0);
		check_answer(b, r, a, 16);
		gdirect_reg_put(r);
	}
	gdirect_stats(cur, st);
	flush_destroy_clean(cur, b);
	return size;
}

/* The race in hooks mode (no status word behind the protocol), then with
 * the default modes; both must answer the same. */
static uint64_t one_race(enum gdl_race_point at, void (*fn)(void),
			 struct gdirect_stats *st)
{
	uint64_t size;
	int f;

	flushed = -1;
	size = one_race_inv(GDIRECT_INV_HOOKS, at, fn, st);
	f = flushed;

	flushed = -1;
	CHECK_EQ(one_race_inv(GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS, at, fn,
			      st), size);
	CHECK_EQ(flushed, f);
	return size;
}

/* The slot rewritten between its word and its fields: the copy is not
 * trusted, and the answer is the successor's. */
static void torn_slot_read(void)
{
	struct gdirect_stats st;

	CHECK_EQ(one_race(GDL_RACE_SLOT_FIELDS, do_supersede, &st), 128 * KiB);
}

/* Superseded after the copy, before the count: not answered with the
 * killed region (released by the superseding miss), but its successor. */
static void kill_before_count(void)
{
	struct gdirect_stats st;

	CHECK_EQ(one_race(GDL_RACE_SLOT_COPIED, do_supersede, &st), 128 * KiB);
}

/* Superseded after the count, before the recheck: the hit backs off (the
 * slot changed), and is answered by the successor; the killed region is
 * released once nobody counts it. */
static void kill_after_count(void)
{
	struct gdirect_stats st;

	CHECK_EQ(one_race(GDL_RACE_COUNTED, do_supersede, &st), 128 * KiB);
}

/* Evicted after the copy, before the count: the eviction's sum found only
 * the index's reference and unpinned it; the hit must not return it. */
static void evict_before_count(void)
{
	struct gdirect_stats st;

	CHECK_EQ(one_race(GDL_RACE_SLOT_COPIED, do_flush, &st), 64 * KiB);
	CHECK_EQ(flushed, 1);
	/* the other thread's, ours after the eviction, page 1's */
	CHECK_EQ(st.misses, 3);
}

/* Counted before the eviction's sum: the eviction must let it be. */
static void evict_after_count(void)
{
	struct gdirect_stats st;

	CHECK_EQ(one_race(GDL_RACE_COUNTED, do_flush, &st), 64 * KiB);
	CHECK_EQ(flushed, 0);
	CHECK_EQ(st.misses, 2);		/* the other thread's, and page 1 */
}

int main(void)
{
	need_fake_cuda();
	TAP_TEST(torn_slot_read);
	TAP_TEST(kill_before_count);
	TAP_TEST(kill_after_count);
	TAP_TEST(evict_before_count);
	TAP_TEST(evict_after_count);
	return tap_done();
}
