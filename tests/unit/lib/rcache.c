/* SPDX-License-Identifier: MIT */
/*
 * lib-rcache: the registration cache's basic contract: 64 KiB rounding,
 * refcounted handles, lazy unpinning, hits without CUDA calls, whole-
 * allocation registration and its cap, SYNC_MEMOPS once per allocation
 * (VMM memory registered without it, other refusals reported),
 * managed and CPU memory refused, growing and overlapping requests.
 */
#include <pthread.h>

/* Each test in a child of its own: one that fails leaves nothing behind. */
#define TAP_FORK
#include "tutil.h"

/*
 * One registration followed through its life, one behaviour a test.  Each
 * test builds its own: a context, a 1 MiB buffer and r1, a registration
 * of its first 64 KiB page (held); then does what the story did before
 * its behaviour, so that it runs alone.
 */
struct one_reg {
	struct gdirect_ctx *c;
	struct gdl_backend *b;
	uint64_t buf;
	struct gdirect_reg *r1;
};

static void one_reg(struct one_reg *rr)
{
	struct gdirect_params p;

	params(&p, GDIRECT_INV_HOOKS);
	p.whole_alloc_max = 0;
	rr->r1 = NULL;
	rr->c = mkctx(&p, &(struct fake_cfg){ 0 }, &rr->b);
	rr->buf = fake_cuda_alloc(1 * MiB);

	CHECK(rr->buf);
	CHECK_EQ(gdirect_reg_get(rr->c, P(rr->buf + 100), 10, 0, &rr->r1), 0);
}

static void one_reg_end(struct one_reg *rr)
{
	gdirect_ctx_destroy(rr->c);
	fake_cuda_reset();
}

/* Another request inside r1's page, a hit: the second step of the story. */
static void one_reg_hit(struct one_reg *rr)
{
	struct gdirect_reg *r2;

	CHECK_EQ(gdirect_reg_get(rr->c, P(rr->buf + 60 * KiB), 4 * KiB, 0, &r2), 0);
	gdirect_reg_put(rr->r1);
	gdirect_reg_put(r2);
}

static void rounds_to_64k(void)
{
	struct one_reg rr;
	struct gdirect_reg_info ri;

	one_reg(&rr);
	CHECK_EQ(gdirect_reg_info(rr.r1, &ri), 0);
	CHECK_EQ(ri.addr, rr.buf);		/* rounded down to 64 KiB */
	CHECK_EQ(ri.size, 64 * KiB);		/* and up */
	CHECK(ri.valid);
	gdirect_reg_put(rr.r1);
	one_reg_end(&rr);
}

/* Another request inside the same 64 KiB page: the same region. */
static void same_page_hit_without_cuda(void)
{
	struct one_reg rr;
	struct gdirect_reg *r2;

	one_reg(&rr);
	CHECK(rr.r1);
	unsigned long q0 = fake_cuda_queries();

	CHECK_EQ(gdirect_reg_get(rr.c, P(rr.buf + 60 * KiB), 4 * KiB, 0, &r2), 0);
	CHECK(rr.r1 == r2);
	CHECK_EQ(fake_cuda_queries(), q0);	/* a hit costs no CUDA call */
	gdirect_reg_put(rr.r1);
	gdirect_reg_put(r2);
	one_reg_end(&rr);
}

/* Lazy unpinning: still pinned after the last put. */
static void unpins_lazily(void)
{
	struct one_reg rr;
	struct fake_stats fs;

	one_reg(&rr);
	one_reg_hit(&rr);
	CHECK(rr.c);
	fake_backend_stats(rr.b, &fs);
	CHECK_EQ(fs.pins, 1);
	CHECK_EQ(fs.unpins, 0);
	one_reg_end(&rr);
}

static void counts_hits_and_misses(void)
{
	struct one_reg rr;
	struct gdirect_reg *r1;
	struct gdirect_stats st;

	one_reg(&rr);
	one_reg_hit(&rr);
	CHECK(rr.c);
	CHECK_EQ(gdirect_reg_get(rr.c, P(rr.buf), 1, 0, &r1), 0);
	gdirect_reg_put(r1);
	gdirect_stats(rr.c, &st);
	CHECK_EQ(st.misses, 1);
	CHECK_EQ(st.hits, 2);			/* one_reg_hit's and this one */
	CHECK_EQ(st.regions, 1);
	CHECK_EQ(st.bytes_pinned, 64 * KiB);
	one_reg_end(&rr);
}

/* SYNC_MEMOPS was set exactly once, before the pin. */
static void sync_memops_once(void)
{
	struct one_reg rr;
	struct gdirect_stats st;

	one_reg(&rr);
	one_reg_hit(&rr);
	CHECK(rr.c);
	gdirect_stats(rr.c, &st);
	CHECK_EQ(fake_cuda_sync_count(rr.buf), 1);
	CHECK_EQ(st.sync_memops, 1);
	one_reg_end(&rr);
}

/*
 * VMM memory (cuMemCreate + cuMemMap), with and without
 * gpuDirectRDMACapable: the driver refuses SYNC_MEMOPS on it with
 * CUDA_ERROR_NOT_SUPPORTED (measured on an H200, driver 580.159.04), and
 * its registration goes on without it, once per allocation.
 */
static void vmm_registers_without_sync_memops(void)
{
	struct gdirect_params p;
	struct gdirect_stats st;
	struct gdirect_reg *r;

	params(&p, GDIRECT_INV_HOOKS);
	p.whole_alloc_max = 0;
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);

	for (int rdma = 0; rdma < 2; rdma++) {
		uint64_t v = fake_cuda_alloc_vmm(2 * MiB, rdma);

		CHECK(v);
		CHECK_EQ(gdirect_reg_get(c, P(v + 100), 10, 0, &r), 0);
		gdirect_reg_put(r);
		/* another page of it: a second pin, no second attempt */
		CHECK_EQ(gdirect_reg_get(c, P(v + 1 * MiB), 10, 0, &r), 0);
		gdirect_reg_put(r);
		CHECK_EQ(fake_cuda_sync_count(v), 0);
	}
	gdirect_stats(c, &st);
	CHECK_EQ(st.sync_memops, 0);
	CHECK_EQ(st.sync_memops_vmm, 2);
	CHECK_EQ(st.misses, 4);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* Any other refusal of SYNC_MEMOPS fails the registration and says what
 * the driver answered: CUDA_ERROR_NOT_SUPPORTED on memory that is not a
 * VMM mapping, or another error. */
static void sync_memops_failure_reported(void)
{
	struct gdirect_params p;
	struct gdirect_stats st;
	struct gdirect_reg *r;

	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);
	uint64_t d = fake_cuda_alloc(1 * MiB);

	fake_cuda_fail_sync_memops(CUDA_ERROR_NOT_SUPPORTED);
	CHECK_EQ(gdirect_reg_get(c, P(d), 10, 0, &r), -EOPNOTSUPP);
	CHECK(strstr(gdirect_errmsg(), "cannot set SYNC_MEMOPS"));
	CHECK(strstr(gdirect_errmsg(), "CUDA error 801"));
	fake_cuda_fail_sync_memops(CUDA_ERROR_INVALID_VALUE);
	CHECK_EQ(gdirect_reg_get(c, P(d), 10, 0, &r), -EINVAL);
	CHECK(strstr(gdirect_errmsg(), "CUDA error 1"));
	/* Nothing was marked done: once the driver agrees, it is set. */
	fake_cuda_fail_sync_memops(CUDA_SUCCESS);
	CHECK_EQ(gdirect_reg_get(c, P(d), 10, 0, &r), 0);
	gdirect_reg_put(r);
	CHECK_EQ(fake_cuda_sync_count(d), 1);
	gdirect_stats(c, &st);
	CHECK_EQ(st.sync_memops, 1);
	CHECK_EQ(st.sync_memops_vmm, 0);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* A different page of the same allocation: a second pin, no second
 * SYNC_MEMOPS. */
static void second_page_second_pin(void)
{
	struct one_reg rr;
	struct gdirect_reg *r1;
	struct fake_stats fs;

	one_reg(&rr);
	one_reg_hit(&rr);
	CHECK(rr.c);
	CHECK_EQ(gdirect_reg_get(rr.c, P(rr.buf + 512 * KiB), 8, 0, &r1), 0);
	gdirect_reg_put(r1);
	CHECK_EQ(fake_cuda_sync_count(rr.buf), 1);
	CHECK_EQ(gdirect_flush(rr.c), 2);
	fake_backend_stats(rr.b, &fs);
	CHECK_EQ(fs.unpins, 2);
	one_reg_end(&rr);
}

static void whole_alloc(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_reg *r, *r2;
	struct gdirect_reg_info ri;

	params(&p, GDIRECT_INV_HOOKS);
	p.whole_alloc_max = 1 * MiB;
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	uint64_t small = fake_cuda_alloc(1 * MiB);
	uint64_t big = fake_cuda_alloc(4 * MiB);

	CHECK_EQ(gdirect_reg_get(c, P(small + 300 * KiB), 100, 0, &r), 0);
	CHECK_EQ(gdirect_reg_info(r, &ri), 0);
	CHECK_EQ(ri.addr, small);
	CHECK_EQ(ri.size, 1 * MiB);		/* the whole allocation */
	CHECK_EQ(gdirect_reg_get(c, P(small + 900 * KiB), 64 * KiB, 0, &r2), 0);
	CHECK(r == r2);
	gdirect_reg_put(r);
	gdirect_reg_put(r2);
	/* Above the cap: only the request, rounded. */
	CHECK_EQ(gdirect_reg_get(c, P(big + 300 * KiB), 100, 0, &r), 0);
	CHECK_EQ(gdirect_reg_info(r, &ri), 0);
	CHECK_EQ(ri.addr, big + 256 * KiB);
	CHECK_EQ(ri.size, 64 * KiB);
	gdirect_reg_put(r);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

static void growing_and_overlapping(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_reg *r1, *r2, *r3;
	struct gdirect_reg_info ri;

	params(&p, GDIRECT_INV_HOOKS);
	p.whole_alloc_max = 0;
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	uint64_t buf = fake_cuda_alloc(2 * MiB);

	CHECK_EQ(gdirect_reg_get(c, P(buf), 4 * KiB, 0, &r1), 0);
	/* The same pointer comes back with a larger size: never the small
	 * region (the stale answer of caches keyed by base pointer). */
	CHECK_EQ(gdirect_reg_get(c, P(buf), 1 * MiB, 0, &r2), 0);
	CHECK(r1 != r2);
	CHECK_EQ(gdirect_reg_info(r2, &ri), 0);
	CHECK(ri.addr <= buf && ri.addr + ri.size >= buf + 1 * MiB);
	/* The small one was superseded but stays usable while held. */
	CHECK_EQ(gdirect_reg_info(r1, &ri), 0);
	CHECK(!ri.valid);
	gdirect_reg_put(r1);
	/* Overlapping request past the end: grows over the existing region
	 * instead of thrashing between two. */
	CHECK_EQ(gdirect_reg_get(c, P(buf + 960 * KiB), 512 * KiB, 0, &r3), 0);
	CHECK_EQ(gdirect_reg_info(r3, &ri), 0);
	CHECK_EQ(ri.addr, buf);
	CHECK(ri.addr + ri.size >= buf + 1472 * KiB);
	gdirect_reg_put(r2);
	gdirect_reg_put(r3);
	CHECK_EQ(gdirect_reg_get(c, P(buf + 10), 1 * MiB, 0, &r1), 0);
	CHECK_EQ(gdirect_reg_get(c, P(buf + 1 * MiB), 400 * KiB, 0, &r2), 0);
	CHECK(r1 == r2 && r2 == r3);
	gdirect_reg_put(r1);
	gdirect_reg_put(r2);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

static void refused(void)
{
	struct gdirect_params p;
	struct gdirect_reg *r;
	char host[100];

	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);
	uint64_t m = fake_cuda_alloc_managed(1 * MiB);
	uint64_t d = fake_cuda_alloc(100 * KiB);

	CHECK_EQ(gdirect_reg_get(c, P(m), 4096, 0, &r), -EOPNOTSUPP);
	CHECK(strstr(gdirect_errmsg(), "managed"));
	CHECK_EQ(gdirect_reg_get(c, host, sizeof(host), 0, &r), -EINVAL);
	CHECK(strstr(gdirect_errmsg(), "not GPU memory"));
	/* Past the end of its allocation: the miss path's check (a hit
	 * checks the range against the region's 64 KiB pages only). */
	CHECK_EQ(gdirect_reg_get(c, P(d + 90 * KiB), 20 * KiB, 0, &r), -EINVAL);
	CHECK(strstr(gdirect_errmsg(), "past its allocation"));
	/* Each bad request after a hit, so that the thread's recent entry
	 * covers d: one that got past the argument checks would hit it. */
	CHECK_EQ(gdirect_reg_get(c, P(d), 1, 0, &r), 0);
	gdirect_reg_put(r);
	CHECK_EQ(gdirect_reg_get(c, P(d), 0, 0, &r), -EINVAL);
	CHECK_EQ(gdirect_reg_get(c, P(d), 1, 1, &r), -EINVAL);
	CHECK_EQ(gdirect_reg_get(NULL, P(d), 1, 0, &r), -EINVAL);
	CHECK_EQ(gdirect_reg_get(c, P(d), 1, 0, NULL), -EINVAL);
	/* A range reaching 2^63 holds no device memory (and would defeat
	 * the recent path's one-branch range test); nor one that wraps. */
	CHECK_EQ(gdirect_reg_get(c, P(d), (size_t)1 << 63, 0, &r), -EINVAL);
	CHECK_EQ(gdirect_reg_get(c, P(d), SIZE_MAX, 0, &r), -EINVAL);
	CHECK_EQ(gdirect_reg_get(c, P(d + 4 * KiB), SIZE_MAX - 2 * KiB, 0, &r),
		 -EINVAL);
	CHECK_EQ(gdirect_reg_get(c, (void *)(uintptr_t)(1ULL << 63), 1, 0, &r),
		 -EINVAL);
	CHECK_EQ(gdirect_reg_get(c, (void *)(uintptr_t)(UINT64_MAX - 4), 8, 0,
				 &r), -EINVAL);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

static void bar_mapping(void)
{
	struct gdirect_params p;
	struct gdirect_reg *r;
	char out[300], in[300];

	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);
	uint64_t d = fake_cuda_alloc(256 * KiB);

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)(i * 7 + 1);
	CHECK_EQ(gdirect_copy_to_gpu(c, P(d + 1000), in, sizeof(in)), 0);
	/* The fake's BAR mapping is the memory itself. */
	CHECK(!memcmp(P(d + 1000), in, sizeof(in)));
	CHECK_EQ(gdirect_copy_from_gpu(c, out, P(d + 1000), sizeof(out)), 0);
	CHECK(!memcmp(out, in, sizeof(in)));
	CHECK_EQ(gdirect_reg_get(c, P(d + 5), 10, 0, &r), 0);
	CHECK(gdirect_reg_map(r, P(d + 5)) == P(d + 5));
	CHECK(gdirect_reg_map(r, P(d + 512 * KiB)) == NULL);
	gdirect_reg_put(r);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/*
 * A new thread's gets of one buffer: a miss (which assigns the thread no
 * statistics shard), a hit on the lookup path (which does), then hits on
 * the recent path: each counted once.
 */
struct hits_arg {
	struct gdirect_ctx *c;
	uint64_t d;
	int failed;
};

static void *hits_thread(void *p)
{
	struct hits_arg *h = p;
	struct gdirect_reg *r;

	for (int i = 0; i < 4; i++) {
		if (gdirect_reg_get(h->c, P(h->d + 100), 10, 0, &r)) {
			h->failed++;
			continue;
		}
		gdirect_reg_put(r);
	}
	return NULL;
}

static void hits_counted_on_new_thread(void)
{
	struct gdirect_params p;
	struct gdirect_stats st;
	pthread_t t;

	params(&p, GDIRECT_INV_HOOKS);
	struct hits_arg h = { mkctx(&p, &(struct fake_cfg){ 0 }, NULL),
			      fake_cuda_alloc(64 * KiB), 0 };

	CHECK_EQ(pthread_create(&t, NULL, hits_thread, &h), 0);
	pthread_join(t, NULL);
	CHECK_EQ(h.failed, 0);
	gdirect_stats(h.c, &st);
	CHECK_EQ(st.misses, 1);
	CHECK_EQ(st.hits, 3);
	gdirect_ctx_destroy(h.c);
	fake_cuda_reset();
}

int main(void)
{
	need_fake_cuda();
	TAP_TEST(rounds_to_64k);
	TAP_TEST(same_page_hit_without_cuda);
	TAP_TEST(unpins_lazily);
	TAP_TEST(counts_hits_and_misses);
	TAP_TEST(sync_memops_once);
	TAP_TEST(vmm_registers_without_sync_memops);
	TAP_TEST(sync_memops_failure_reported);
	TAP_TEST(second_page_second_pin);
	TAP_TEST(whole_alloc);
	TAP_TEST(growing_and_overlapping);
	TAP_TEST(refused);
	TAP_TEST(bar_mapping);
	TAP_TEST(hits_counted_on_new_thread);
	return tap_done();
}
