/* SPDX-License-Identifier: MIT */
/*
 * lib-evict: LRU eviction of unused regions above the count and byte
 * thresholds, never of regions in use; evict-and-retry when a pin fails
 * for BAR space, with a working set twice the BAR budget.
 */
#include "tutil.h"

static void get_put(struct gdirect_ctx *c, uint64_t a)
{
	struct gdirect_reg *r;

	CHECK_EQ(gdirect_reg_get(c, P(a), 64 * KiB, 0, &r), 0);
	gdirect_reg_put(r);
}

static void by_count(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_stats st;
	uint64_t a[5];

	params(&p, GDIRECT_INV_HOOKS);
	p.max_regions = 3;
	p.max_bytes = 0;
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, &b);

	for (int i = 0; i < 5; i++)
		a[i] = fake_cuda_alloc(64 * KiB);
	get_put(c, a[0]);
	get_put(c, a[1]);
	get_put(c, a[2]);
	get_put(c, a[0]);	/* LRU order now: 1, 2, 0 */
	get_put(c, a[3]);	/* evicts 1 */
	gdirect_stats(c, &st);
	CHECK_EQ(st.evictions, 1);
	CHECK_EQ(st.regions, 3);
	CHECK_EQ(st.misses, 4);
	get_put(c, a[0]);	/* still cached */
	get_put(c, a[2]);
	gdirect_stats(c, &st);
	CHECK_EQ(st.misses, 4);
	get_put(c, a[1]);	/* was evicted: a miss; evicts 3 (LRU) */
	gdirect_stats(c, &st);
	CHECK_EQ(st.misses, 5);
	get_put(c, a[0]);
	get_put(c, a[2]);
	get_put(c, a[1]);
	gdirect_stats(c, &st);
	CHECK_EQ(st.misses, 5);
	get_put(c, a[3]);
	gdirect_stats(c, &st);
	CHECK_EQ(st.misses, 6);

	/* Regions in use are never evicted, even above the threshold. */
	struct gdirect_reg *held[5];

	for (int i = 0; i < 5; i++)
		CHECK_EQ(gdirect_reg_get(c, P(a[i]), 1, 0, &held[i]), 0);
	gdirect_stats(c, &st);
	CHECK_EQ(st.regions, 5);
	for (int i = 0; i < 5; i++) {
		struct gdirect_reg_info ri;

		CHECK_EQ(gdirect_reg_info(held[i], &ri), 0);
		CHECK(ri.valid);
		gdirect_reg_put(held[i]);
	}
	/* The next miss trims back to the threshold. */
	uint64_t x = fake_cuda_alloc(64 * KiB);

	get_put(c, x);
	gdirect_stats(c, &st);
	CHECK_EQ(st.regions, 3);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

static void by_bytes(void)
{
	struct gdirect_params p;
	struct gdirect_stats st;

	params(&p, GDIRECT_INV_HOOKS);
	p.max_regions = 0;
	p.max_bytes = 256 * KiB;
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);
	uint64_t big = fake_cuda_alloc(192 * KiB);
	uint64_t s1 = fake_cuda_alloc(64 * KiB), s2 = fake_cuda_alloc(64 * KiB);

	get_put(c, big);	/* 192 KiB (whole allocation) */
	get_put(c, s1);		/* 256 KiB */
	gdirect_stats(c, &st);
	CHECK_EQ(st.evictions, 0);
	get_put(c, s2);		/* 320 KiB: evicts big, the LRU */
	gdirect_stats(c, &st);
	CHECK_EQ(st.evictions, 1);
	CHECK_EQ(st.bytes_pinned, 128 * KiB);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

static void bar_exhaustion(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_stats st;
	struct fake_stats fs;
	uint64_t a[8];

	params(&p, GDIRECT_INV_HOOKS);
	p.max_regions = 0;	/* only the BAR limits the cache */
	p.max_bytes = 0;
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ .bar_bytes = 256 * KiB }, &b);

	for (int i = 0; i < 8; i++)
		a[i] = fake_cuda_alloc(64 * KiB);
	/* A working set twice the BAR: every operation succeeds. */
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 8; i++)
			get_put(c, a[i]);
	gdirect_stats(c, &st);
	fake_backend_stats(b, &fs);
	CHECK(st.evictions_bar >= 8);
	CHECK(fs.enomem >= 8);
	CHECK(fs.bar_peak <= 256 * KiB);
	CHECK_EQ(st.pin_failures, 0);
	/* LRU order: after touching 4..7, pinning 0 evicts 4 first. */
	get_put(c, a[4]);
	get_put(c, a[5]);
	get_put(c, a[6]);
	get_put(c, a[7]);
	uint64_t m0 = st.misses;

	get_put(c, a[0]);	/* evicts 4 */
	get_put(c, a[5]);	/* hit */
	get_put(c, a[6]);	/* hit */
	get_put(c, a[7]);	/* hit */
	gdirect_stats(c, &st);
	CHECK_EQ(st.misses, m0 + 1);

	/* All BAR space held by regions in use: a clean -ENOMEM. */
	struct gdirect_reg *held[4], *r;

	for (int i = 0; i < 4; i++)
		CHECK_EQ(gdirect_reg_get(c, P(a[i]), 1, 0, &held[i]), 0);
	CHECK_EQ(gdirect_reg_get(c, P(a[7]), 1, 0, &r), -ENOMEM);
	CHECK(strstr(gdirect_errmsg(), "BAR"));
	gdirect_stats(c, &st);
	CHECK_EQ(st.pin_failures, 1);
	for (int i = 0; i < 4; i++)
		gdirect_reg_put(held[i]);
	CHECK_EQ(gdirect_reg_get(c, P(a[7]), 1, 0, &r), 0);
	gdirect_reg_put(r);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

int main(void)
{
	need_fake_cuda();
	TAP_TEST(by_count);
	TAP_TEST(by_bytes);
	TAP_TEST(bar_exhaustion);
	return tap_done();
}
