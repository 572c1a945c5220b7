/* SPDX-License-Identifier: MIT */
/*
 * t-verbs: what of the verbs registration cache (gdirect_verbs.h) can be
 * checked without an RDMA device.  The registrations themselves, their
 * hits, evictions and invalidation run against Soft-RoCE in the cluster
 * guest (tests/guest/cluster/c-35-verbs-cache.c); nothing here pretends to
 * be a NIC.
 *
 *  - arguments are refused before any verbs call: a NULL context, domain,
 *    pointer or result, length 0, a wrapping range, unknown flags;
 *  - memory that cannot be registered is refused before any verbs call:
 *    managed memory (-EOPNOTSUPP), a range across allocations (-EINVAL);
 *  - the range a request registers (gdl_mr_range): the whole allocation
 *    for every interior pointer up to whole_alloc_max, the request rounded
 *    to 64 KiB and clipped to the allocation above it, host pages for
 *    host memory;
 *  - gdirect_mr_flush on an empty cache, the statistics at zero;
 *  - gdirect_mr_addr outside a region (NULL) is 0.
 */
#include <infiniband/verbs.h>

#include "gdirect_verbs.h"
#include "tutil.h"
#include "verbs_range.h"

/* Never dereferenced: the checks under test come before any use of the
 * domain, and a test that reached a verbs call with it would crash. */
static struct ibv_pd *const no_pd = (struct ibv_pd *)16;

static struct gdirect_ctx *ctx(void)
{
	struct gdirect_params p;
	struct gdirect_ctx *c = NULL;

	params(&p, GDIRECT_INV_HOOKS);
	p.device_path = "/nonexistent/gdirect";
	CHECK_EQ(gdirect_ctx_create(&p, &c), 0);
	return c;
}

static void arguments(void)
{
	struct gdirect_ctx *c = ctx();
	struct gdirect_mr *m = (struct gdirect_mr *)1;
	uint64_t d = fake_cuda_alloc(1 * MiB);
	char host[64];

	CHECK_EQ(gdirect_mr_get(NULL, no_pd, P(d), 8, 0, 0, &m), -EINVAL);
	CHECK_EQ(gdirect_mr_get(c, NULL, P(d), 8, 0, 0, &m), -EINVAL);
	CHECK_EQ(gdirect_mr_get(c, no_pd, NULL, 8, 0, 0, &m), -EINVAL);
	CHECK_EQ(gdirect_mr_get(c, no_pd, P(d), 0, 0, 0, &m), -EINVAL);
	CHECK_EQ(gdirect_mr_get(c, no_pd, P(d), 8, 0, 0, NULL), -EINVAL);
	CHECK_EQ(gdirect_mr_get(c, no_pd, P(d), SIZE_MAX, 0, 0, &m), -EINVAL);
	CHECK_EQ(gdirect_mr_get(c, no_pd, host, 8, 0, 1, &m), -EINVAL);
	CHECK(strstr(gdirect_errmsg(), "flags"));
	CHECK(m == NULL);
	CHECK_EQ(gdirect_mr_flush(NULL), -EINVAL);
	CHECK_EQ(gdirect_mr_info(NULL, NULL), -EINVAL);
	CHECK_EQ(gdirect_mr_addr(NULL, host), 0);
	gdirect_mr_put(NULL);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

static void refused_memory(void)
{
	struct gdirect_ctx *c = ctx();
	struct gdirect_mr *m = NULL;
	uint64_t a = fake_cuda_alloc(1 * MiB), b = fake_cuda_alloc(1 * MiB);
	uint64_t u = fake_cuda_alloc_managed(1 * MiB);
	struct gdirect_stats st;

	CHECK_EQ(gdirect_mr_get(c, no_pd, P(u + 4096), 64, 0, 0, &m),
		 -EOPNOTSUPP);
	CHECK(strstr(gdirect_errmsg(), "managed"));
	/* The end of one allocation and the start of the next (or a gap). */
	CHECK(b > a);
	CHECK_EQ(gdirect_mr_get(c, no_pd, P(a + 1 * MiB - 8), 16, 0, 0, &m),
		 -EINVAL);
	CHECK(strstr(gdirect_errmsg(), "one allocation"));
	CHECK_EQ(gdirect_mr_flush(c), 0);
	gdirect_stats(c, &st);
	CHECK_EQ(st.mr_hits + st.mr_regs_dmabuf + st.mr_regs_peer +
		 st.mr_regs_host + st.mr_evictions + st.mr_deregs, 0);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

static struct gdirect_ptr_info dev(uint64_t base, uint64_t size)
{
	return (struct gdirect_ptr_info){ .type = GDIRECT_MEM_DEVICE,
		.device = 0, .alloc_base = base, .alloc_size = size,
		.buffer_id = 7 };
}

static void ranges(void)
{
	const uint64_t base = 0x7f0000200000ULL, cap = 32 * MiB;
	struct gdirect_ptr_info i = dev(base, 4 * MiB);
	struct gdirect_ptr_info host = { .type = GDIRECT_MEM_CPU, .device = -1 };
	uint64_t s, e, s2, e2;

	/* Two interior pointers of one allocation: one range, the whole
	 * allocation. */
	CHECK_EQ(gdl_mr_range(&i, base + 100, base + 200, cap, &s, &e), 0);
	CHECK_EQ(s, base);
	CHECK_EQ(e, base + 4 * MiB);
	CHECK_EQ(gdl_mr_range(&i, base + 3 * MiB + 5, base + 4 * MiB, cap,
			      &s2, &e2), 0);
	CHECK_EQ(s2, s);
	CHECK_EQ(e2, e);
	/* Past its end, before its start: not one allocation. */
	CHECK_EQ(gdl_mr_range(&i, base + 4 * MiB - 1, base + 4 * MiB + 1, cap,
			      &s, &e), -EINVAL);
	CHECK_EQ(gdl_mr_range(&i, base - 1, base + 1, cap, &s, &e), -EINVAL);
	CHECK_EQ(gdl_mr_range(&i, base, base, cap, &s, &e), -EINVAL);
	/* Above the cap (or with none): the request in 64 KiB pages,
	 * clipped to the allocation. */
	CHECK_EQ(gdl_mr_range(&i, base + 70 * KiB, base + 130 * KiB, 1 * MiB,
			      &s, &e), 0);
	CHECK_EQ(s, base + 64 * KiB);
	CHECK_EQ(e, base + 192 * KiB);
	CHECK_EQ(gdl_mr_range(&i, base + 70 * KiB, base + 130 * KiB, 0,
			      &s, &e), 0);
	CHECK_EQ(s, base + 64 * KiB);
	i = dev(base + 8 * KiB, 100 * KiB);
	CHECK_EQ(gdl_mr_range(&i, base + 9 * KiB, base + 108 * KiB, 0, &s, &e),
		 0);
	CHECK_EQ(s, base + 8 * KiB);
	CHECK_EQ(e, base + 108 * KiB);
	/* An allocation of a size that is not whole host pages: the export
	 * is made of host pages. */
	i = dev(base, 5000);
	CHECK_EQ(gdl_mr_range(&i, base + 10, base + 20, cap, &s, &e), 0);
	CHECK_EQ(s, base);
	CHECK_EQ(e, base + 8 * KiB);
	/* Host memory: the request's host pages. */
	CHECK_EQ(gdl_mr_range(&host, 0x1000010, 0x1002001, cap, &s, &e), 0);
	CHECK_EQ(s, 0x1000000);
	CHECK_EQ(e, 0x1003000);
}

int main(void)
{
	need_fake_cuda();
	TAP_TEST(arguments);
	TAP_TEST(refused_memory);
	TAP_TEST(ranges);
	return tap_done();
}
