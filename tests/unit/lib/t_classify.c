/* SPDX-License-Identifier: MIT */
/*
 * t_classify: CPU / device / managed classification through the dlopened
 * driver, answered from the cache on repeat (no CUDA call with hooks), and
 * invalidated when the memory is freed.
 */
#include <time.h>

#include <cuda.h>

#include "tutil.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void kinds(unsigned inv)
{
	struct gdirect_params p;
	struct gdirect_ptr_info in;
	struct gdirect_stats st;
	static char host[64];

	params(&p, inv);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);
	/* managed first, so that d is last and can be re-allocated larger */
	uint64_t m = fake_cuda_alloc_managed(64 * KiB), d = fake_cuda_alloc(300 * KiB);

	CHECK_EQ(gdirect_classify(c, host, &in), 0);
	CHECK_EQ(in.type, GDIRECT_MEM_CPU);
	CHECK_EQ(in.device, -1);
	CHECK_EQ(gdirect_classify(c, P(m + 5), &in), 0);
	CHECK_EQ(in.type, GDIRECT_MEM_MANAGED);
	CHECK_EQ(gdirect_classify(c, P(d + 200 * KiB), &in), 0);
	CHECK_EQ(in.type, GDIRECT_MEM_DEVICE);
	CHECK_EQ(in.device, 0);
	CHECK_EQ(in.alloc_base, d);
	CHECK_EQ(in.alloc_size, 300 * KiB);
	CHECK_EQ(in.buffer_id, fake_cuda_buffer_id_at(d));

	/* Repeat: from the cache.  With hooks, no CUDA call at all; without,
	 * one BUFFER_ID check (frees of unpinned memory are invisible). */
	unsigned long q0 = fake_cuda_queries();

	for (int i = 0; i < 10; i++) {
		CHECK_EQ(gdirect_classify(c, P(d + i * 1000), &in), 0);
		CHECK_EQ(in.type, GDIRECT_MEM_DEVICE);
	}
	CHECK_EQ(fake_cuda_queries() - q0, inv & GDIRECT_INV_HOOKS ? 0 : 10);
	gdirect_stats(c, &st);
	CHECK_EQ(st.classify_hits, 10);

	/* Freed and re-allocated larger at the same VA: the new answer. */
	if (inv & GDIRECT_INV_HOOKS)
		gdirect_notify_free(P(d), 0);
	CHECK_EQ(cuMemFree_v2(d), CUDA_SUCCESS);
	CHECK_EQ(gdirect_classify(c, P(d), &in), 0);
	CHECK_EQ(in.type, GDIRECT_MEM_CPU);	/* nothing there now */
	uint64_t d2 = fake_cuda_alloc(400 * KiB);

	CHECK_EQ(d2, d);
	CHECK_EQ(gdirect_classify(c, P(d + 350 * KiB), &in), 0);
	CHECK_EQ(in.type, GDIRECT_MEM_DEVICE);
	CHECK_EQ(in.alloc_size, 400 * KiB);
	CHECK_EQ(in.buffer_id, fake_cuda_buffer_id_at(d));

	/* The cost of a cached answer. */
	int n = 200000;
	double t0 = now_ns();

	for (int i = 0; i < n; i++)
		gdirect_classify(c, P(d + (i & 1023)), &in);
	tap_diag("classify (cached, %s): %.1f ns",
	       inv & GDIRECT_INV_HOOKS ? "hooks" : "tag-checked",
	       (now_ns() - t0) / n);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* The cache is bounded: thousands of allocations classified, answers
 * still right for old and new ones. */
static void bounded(void)
{
	enum { N = 5000 };
	struct gdirect_params p;
	struct gdirect_ptr_info in;
	static uint64_t a[N];

	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);

	for (int i = 0; i < N; i++) {
		a[i] = fake_cuda_alloc(4 * KiB);
		CHECK(a[i]);
		CHECK_EQ(gdirect_classify(c, P(a[i]), &in), 0);
		CHECK_EQ(in.alloc_base, a[i]);
	}
	for (int i = 0; i < N; i += 97) {
		CHECK_EQ(gdirect_classify(c, P(a[i] + 5), &in), 0);
		CHECK_EQ(in.type, GDIRECT_MEM_DEVICE);
		CHECK_EQ(in.alloc_base, a[i]);
	}
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

static void kinds_hooks(void)
{
	kinds(GDIRECT_INV_HOOKS);
}

static void kinds_kernel(void)
{
	kinds(GDIRECT_INV_KERNEL);
}

int main(void)
{
	need_fake_cuda();
	TAP_TEST(bounded);
	TAP_TEST(kinds_hooks);
	TAP_TEST(kinds_kernel);
	return tap_done();
}
