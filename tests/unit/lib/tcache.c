/* SPDX-License-Identifier: MIT */
/*
 * lib-tcache: the per-thread hit path (lib/src/tcache.h): a thread's repeated
 * hits count their references in its own block, never in the region's
 * shared word, and still never hand out a stale, evicted or released
 * region; references put by another thread, or outliving their thread,
 * keep the sum right.
 */
#include <pthread.h>

#include <cuda.h>

#include "libgdirect_internal.h"
#include "tutil.h"

static uint64_t word_refs(const struct gdirect_reg *r)
{
	return (uint64_t)GDL_REFS(atomic_load(&r->refs));
}

/* The second hit on a region is counted in the thread's entry: the shared
 * word keeps the index's reference and the first miss's, nothing more. */
static void repeat_hit_leaves_word_alone(void)
{
	struct gdirect_params p;
	struct gdirect_reg *r, *r2;
	struct gdirect_stats st;

	params(&p, GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);
	uint64_t x = fake_cuda_alloc(64 * KiB);

	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
	gdirect_reg_put(r);			/* off the word: 1 left */
	CHECK_EQ(word_refs(r), 1);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(gdirect_reg_get(c, P(x + 100), 8, 0, &r2), 0);
		CHECK(r2 == r);
		CHECK_EQ(word_refs(r), 1);	/* counted per thread */
		gdirect_reg_put(r2);
	}
	gdirect_stats(c, &st);
	CHECK_EQ(st.hits, 3);
	CHECK_EQ(st.misses, 1);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* A region freed (hooks) after this thread's hits is not answered from
 * the thread's entry: the next get pins afresh. */
static void stale_after_free(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_reg *r, *r2;
	struct fake_stats fs;

	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	uint64_t x = fake_cuda_alloc(64 * KiB);

	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
	gdirect_reg_put(r);
	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
	gdirect_reg_put(r);
	gdirect_notify_free(P(x), 64 * KiB);
	CHECK_EQ(cuMemFree_v2(x), CUDA_SUCCESS);
	uint64_t y = fake_cuda_alloc(64 * KiB);	/* the same address again */

	CHECK_EQ(y, x);
	CHECK_EQ(gdirect_reg_get(c, P(y), 1, 0, &r2), 0);
	struct gdirect_reg_info ri;

	CHECK_EQ(gdirect_reg_info(r2, &ri), 0);
	CHECK(fake_backend_pin_fresh(b, ri.kernel_handle, y));
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.pins, 2);
	gdirect_reg_put(r2);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* Kernel mode: a revoked pin is not answered from the thread's entry,
 * though nothing was killed in the context yet (its status word says). */
static void stale_after_revoke(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_reg *r;
	struct gdirect_stats st;

	params(&p, GDIRECT_INV_KERNEL);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	uint64_t x = fake_cuda_alloc(64 * KiB);

	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
	gdirect_reg_put(r);
	CHECK_EQ(fake_backend_revoke(b, x, 1), 1);
	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
	gdirect_stats(c, &st);
	CHECK_EQ(st.inv_kernel, 1);
	CHECK_EQ(st.misses, 2);
	gdirect_reg_put(r);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* A region evicted after this thread's hits is pinned afresh. */
static void stale_after_evict(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_reg *r;
	struct gdirect_stats st;

	params(&p, GDIRECT_INV_HOOKS);
	p.max_regions = 1;
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	uint64_t x = fake_cuda_alloc(64 * KiB), y = fake_cuda_alloc(64 * KiB);

	for (int i = 0; i < 2; i++) {
		CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
		gdirect_reg_put(r);
	}
	CHECK_EQ(gdirect_reg_get(c, P(y), 1, 0, &r), 0);	/* evicts x */
	gdirect_reg_put(r);
	gdirect_stats(c, &st);
	CHECK_EQ(st.evictions, 1);
	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
	gdirect_stats(c, &st);
	CHECK_EQ(st.misses, 3);
	gdirect_reg_put(r);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* A region held through the thread's entry is in use: over the threshold,
 * it is not evicted, though its shared word shows only the index. */
static void held_in_entry_not_evicted(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_reg *r, *held, *ry;
	struct gdirect_stats st;

	params(&p, GDIRECT_INV_HOOKS);
	p.max_regions = 1;
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	uint64_t x = fake_cuda_alloc(64 * KiB), y = fake_cuda_alloc(64 * KiB);

	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
	gdirect_reg_put(r);
	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &held), 0);
	CHECK_EQ(word_refs(held), 1);
	CHECK_EQ(gdirect_reg_get(c, P(y), 1, 0, &ry), 0);
	gdirect_stats(c, &st);
	CHECK_EQ(st.evictions, 0);
	CHECK_EQ(st.regions, 2);
	struct gdirect_reg_info ri;

	CHECK_EQ(gdirect_reg_info(held, &ri), 0);
	CHECK(ri.valid);
	gdirect_reg_put(ry);
	gdirect_reg_put(held);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* The last put of a dead region counted in an entry unpins it at once. */
static void last_put_of_dead_releases(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_reg *r;
	struct fake_stats fs;

	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	uint64_t x = fake_cuda_alloc(64 * KiB);

	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
	gdirect_reg_put(r);
	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);	/* in the entry */
	gdirect_notify_free(P(x), 64 * KiB);
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.unpins, 0);
	gdirect_reg_put(r);
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.unpins, 1);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

struct hand {
	struct gdirect_ctx *c;
	uint64_t x;
	struct gdirect_reg *r;
	bool put;
};

/* Two gets (the second counted in this thread's entry); put one if asked,
 * keep the other. */
static void *getter(void *arg)
{
	struct hand *h = arg;
	struct gdirect_reg *r;

	CHECK_EQ(gdirect_reg_get(h->c, P(h->x), 1, 0, &r), 0);
	gdirect_reg_put(r);
	CHECK_EQ(gdirect_reg_get(h->c, P(h->x), 1, 0, &h->r), 0);
	return NULL;
}

/* A reference taken in one thread's entry, put by another thread after
 * the first exited: the region is in use until then, unused after. */
static void put_elsewhere_after_exit(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct fake_stats fs;
	pthread_t t;

	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	struct hand h = { c, fake_cuda_alloc(64 * KiB), NULL, false };

	CHECK_EQ(pthread_create(&t, NULL, getter, &h), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(word_refs(h.r), 1);		/* counted in the exited block */
	CHECK_EQ(gdirect_flush(c), 0);		/* held: not unpinned */
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.unpins, 0);
	gdirect_reg_put(h.r);			/* off the word */
	CHECK_EQ(gdirect_flush(c), 1);		/* unused now */
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.unpins, 1);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* The same, the region freed meanwhile: the put in the other thread is
 * the last reference and releases it. */
static void dead_put_elsewhere_releases(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct fake_stats fs;
	pthread_t t;

	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	struct hand h = { c, fake_cuda_alloc(64 * KiB), NULL, false };

	CHECK_EQ(pthread_create(&t, NULL, getter, &h), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	gdirect_notify_free(P(h.x), 64 * KiB);
	CHECK_EQ(gdirect_process_events(c), 0);	/* still held */
	gdirect_reg_put(h.r);
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.unpins, 1);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* A thread cycling among several regions (each in its own hint slot)
 * gets each one right every time, counted in its own entries: the
 * shared words keep the index's reference and the first miss's. */
static void hints_answer_interleaved_regions(void)
{
	enum { N = 8 };
	struct gdirect_params p;
	struct gdirect_reg *r[N], *r2;
	struct gdirect_stats st;
	uint64_t x[N];

	params(&p, GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);

	for (int i = 0; i < N; i++) {
		x[i] = fake_cuda_alloc(64 * KiB);
		CHECK_EQ(gdirect_reg_get(c, P(x[i]), 1, 0, &r[i]), 0);
		gdirect_reg_put(r[i]);
	}
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < N; i++) {
			CHECK_EQ(gdirect_reg_get(c, P(x[i] + 4 * KiB), 8, 0, &r2), 0);
			CHECK(r2 == r[i]);
			CHECK_EQ(word_refs(r[i]), 1);	/* counted per thread */
			gdirect_reg_put(r2);
		}
	gdirect_stats(c, &st);
	CHECK_EQ(st.hits, 3 * N);
	CHECK_EQ(st.misses, N);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* Two regions whose pages share a hint slot (page numbers equal modulo
 * GDL_TC_HINTS): the slot names whichever was taken last, and a get in the
 * other one must not be answered from it. */
static void hint_slot_shared_not_trusted(void)
{
	enum { MAXB = 2 * GDL_TC_HINTS + 2 };
	struct gdirect_params p;
	struct gdirect_reg *ra, *rb, *r2;
	struct gdirect_stats st;
	uint64_t xs[MAXB], xa = 0, xb = 0;

	params(&p, GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);

	for (int i = 0; i < MAXB && !xb; i++) {
		xs[i] = fake_cuda_alloc(64 * KiB);
		for (int k = 0; k < i && !xb; k++)
			if (((xs[k] ^ xs[i]) >> GDL_TC_HINT_SHIFT) %
			    GDL_TC_HINTS == 0) {
				xa = xs[k];
				xb = xs[i];
			}
	}
	if (!xb) {
		CHECK(!"no two allocations share a hint slot");
		goto out;
	}
	CHECK_EQ(gdirect_reg_get(c, P(xa), 1, 0, &ra), 0);
	gdirect_reg_put(ra);
	CHECK_EQ(gdirect_reg_get(c, P(xb), 1, 0, &rb), 0);
	gdirect_reg_put(rb);
	CHECK(ra != rb);
	for (int i = 0; i < 4; i++) {	/* the slot alternates a, b, a, b */
		uint64_t x = i % 2 ? xb : xa;

		CHECK_EQ(gdirect_reg_get(c, P(x + 100), 8, 0, &r2), 0);
		CHECK(r2 == (i % 2 ? rb : ra));
		CHECK_EQ(word_refs(r2), 1);
		gdirect_reg_put(r2);
	}
	gdirect_stats(c, &st);
	CHECK_EQ(st.misses, 2);
	CHECK_EQ(st.hits, 4);
out:
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* One of several hinted regions freed: it is pinned afresh, the others
 * are still hits (through the index until their hints are renewed). */
static void hinted_region_freed_others_hit(void)
{
	enum { N = 4 };
	struct gdirect_params p;
	struct gdl_backend *be;
	struct gdirect_reg *r[N], *r2;
	struct gdirect_stats st;
	uint64_t x[N];

	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, &be);

	for (int i = 0; i < N; i++) {
		x[i] = fake_cuda_alloc(64 * KiB);
		for (int k = 0; k < 2; k++) {
			CHECK_EQ(gdirect_reg_get(c, P(x[i]), 1, 0, &r[i]), 0);
			gdirect_reg_put(r[i]);
		}
	}
	gdirect_notify_free(P(x[1]), 64 * KiB);
	CHECK_EQ(cuMemFree_v2(x[1]), CUDA_SUCCESS);
	uint64_t y = fake_cuda_alloc(64 * KiB);

	CHECK_EQ(y, x[1]);
	for (int i = 0; i < N; i++) {
		CHECK_EQ(gdirect_reg_get(c, P(x[i]), 1, 0, &r2), 0);
		if (i != 1) {
			CHECK(r2 == r[i]);
		} else {
			struct gdirect_reg_info ri;

			CHECK_EQ(gdirect_reg_info(r2, &ri), 0);
			CHECK(fake_backend_pin_fresh(be, ri.kernel_handle, y));
		}
		gdirect_reg_put(r2);
	}
	gdirect_stats(c, &st);
	CHECK_EQ(st.misses, N + 1);
	CHECK_EQ(st.hits, 2 * N - 1);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* Two contexts over one buffer: a thread's entry for the first context's
 * region never answers a get on the second (entries know their context by
 * its kill generation, unique in the process). */
static void entry_stays_in_its_context(void)
{
	struct gdirect_params p;
	struct gdirect_reg *ra, *rb;

	params(&p, GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS);
	struct gdirect_ctx *a = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);
	struct gdirect_ctx *b = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);
	uint64_t x = fake_cuda_alloc(64 * KiB);

	for (int i = 0; i < 2; i++) {	/* the miss, then a hit */
		CHECK_EQ(gdirect_reg_get(a, P(x), 64, 0, &ra), 0);
		gdirect_reg_put(ra);
	}
	CHECK_EQ(gdirect_reg_get(b, P(x + 8), 64, 0, &rb), 0);
	CHECK(rb != ra);
	gdirect_reg_put(rb);
	CHECK_EQ(gdirect_reg_get(a, P(x + 16), 64, 0, &ra), 0);
	CHECK(ra != rb);
	gdirect_reg_put(ra);
	gdirect_ctx_destroy(a);
	gdirect_ctx_destroy(b);
	fake_cuda_reset();
}

int main(void)
{
	need_fake_cuda();
	TAP_TEST(repeat_hit_leaves_word_alone);
	TAP_TEST(stale_after_free);
	TAP_TEST(stale_after_revoke);
	TAP_TEST(stale_after_evict);
	TAP_TEST(held_in_entry_not_evicted);
	TAP_TEST(last_put_of_dead_releases);
	TAP_TEST(put_elsewhere_after_exit);
	TAP_TEST(dead_put_elsewhere_releases);
	TAP_TEST(hints_answer_interleaved_regions);
	TAP_TEST(hint_slot_shared_not_trusted);
	TAP_TEST(hinted_region_freed_others_hit);
	TAP_TEST(entry_stays_in_its_context);
	return tap_done();
}
