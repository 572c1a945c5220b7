/* SPDX-License-Identifier: MIT */
/*
 * bench_rcache: cost of a cache hit (gdirect_reg_get + gdirect_reg_put)
 * and of a cached classification, against the number of cached regions,
 * single thread and with several threads hitting the same context.
 * Run: GDIRECT_LIBCUDA=<build>/tests/fakes/libfakecuda.so bench_rcache
 */
#include <pthread.h>
#include <time.h>

#include "tutil.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

struct arg {
	struct gdirect_ctx *c;
	uint64_t *bufs;
	int n, iters;
	unsigned seed;	/* each thread its own sequence of regions */
	double ns;
};

static void *hitter(void *p)
{
	struct arg *a = p;
	struct gdirect_reg *r;
	unsigned x = a->seed;
	double t0 = now_ns();

	for (int i = 0; i < a->iters; i++) {
		x = x * 1103515245 + 12345;
		gdirect_reg_get(a->c, P(a->bufs[(x >> 8) % a->n] + 64), 4096, 0, &r);
		gdirect_reg_put(r);
	}
	a->ns = (now_ns() - t0) / a->iters;
	return NULL;
}

static int threads = 2;

/* One TAP line: the registrations the numbers rest on all succeeded. */
static void bench(void)
{
	for (int n = 16; n <= 4096; n *= 4) {
		struct gdirect_params p;
		struct gdirect_ptr_info in;
		uint64_t *bufs = calloc(n, sizeof(*bufs));

		params(&p, GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS);
		p.max_regions = 0;
		p.max_bytes = 0;
		struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);

		for (int i = 0; i < n; i++) {
			struct gdirect_reg *r;

			bufs[i] = fake_cuda_alloc(64 * KiB);
			CHECK(bufs[i]);
			CHECK_EQ(gdirect_reg_get(c, P(bufs[i]), 1, 0, &r), 0);
			gdirect_reg_put(r);
		}
		struct arg one = { c, bufs, n, 2000000, 12345, 0 };

		hitter(&one);
		double t0 = now_ns();

		for (int i = 0; i < 2000000; i++)
			gdirect_classify(c, P(bufs[((unsigned)i * 7919u) % (unsigned)n] + 5), &in);
		double cl = (now_ns() - t0) / 2000000;

		pthread_t t[16];
		struct arg ta[16];

		for (int k = 0; k < threads; k++) {
			ta[k] = (struct arg){ c, bufs, n, 1000000,
					     12345 + 7919 * (unsigned)k, 0 };
			pthread_create(&t[k], NULL, hitter, &ta[k]);
		}
		double sum = 0;

		for (int k = 0; k < threads; k++) {
			pthread_join(t[k], NULL);
			sum += ta[k].ns;
		}
		printf("%5d regions: hit %.1f ns (1 thread), %.1f ns (%d threads), "
		       "classify %.1f ns\n", n, one.ns, sum / threads, threads, cl);
		gdirect_ctx_destroy(c);
		fake_cuda_reset();
		free(bufs);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1)
		threads = atoi(argv[1]);
	need_fake_cuda();
	TAP_TEST(bench);
	return tap_done();
}
