// SPDX-License-Identifier: MIT
/*
 * gdrapi-copybench.c - gdr_copy_to_mapping / gdr_copy_from_mapping against
 * a plain memcpy into and out of the same mapping, in one run, in the
 * emulated machine (TAP diagnostics; docs/performance.md).  The BAR there
 * is qemu's ivshmem memory, not a PCIe link: only the ratios mean anything.
 *
 *   gdrapi-copybench [REPEATS]    (run in the guest, modules loaded or not)
 *
 * Per size, the two methods take turns for REPEATS repeats (default 15) of
 * enough iterations to take about 2 ms each; the figure is the median over
 * repeats of the time per copy.  The data is checked after each direction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <gdrapi.h>

#include "guest_harness.h"
#include "tap.h"

#define KB64 (64UL << 10)
#define SPAN (4UL << 20)
#define MAXREP 64

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { GDR_TO, MEMCPY_TO, GDR_FROM, MEMCPY_FROM, METHODS };

static gdr_mh_t mh;
static char *map, *host;

static void one(int m, size_t off, size_t n)
{
	switch (m) {
	case GDR_TO:
		gdr_copy_to_mapping(mh, map + off, host + off, n);
		break;
	case MEMCPY_TO:
		memcpy(map + off, host + off, n);
		break;
	case GDR_FROM:
		gdr_copy_from_mapping(mh, host + off, map + off, n);
		break;
	default:
		memcpy(host + off, map + off, n);
		break;
	}
}

/* ns per copy of N bytes by method M, ITERS copies over the span. */
static double run(int m, size_t n, long iters)
{
	size_t slots = SPAN / n, off = 0;
	double t0 = now_ns();

	for (long i = 0; i < iters; i++) {
		one(m, off, n);
		off = (off + n) % (slots * n);
	}
	return (now_ns() - t0) / iters;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 64, 1024, 4096, 65536, 1UL << 20 };
	int reps = argc > 1 ? atoi(argv[1]) : 15, bad = 0;
	CUdeviceptr base, d;
	CUcontext ctx;
	CUdevice dev;
	void *va;
	gdr_t g;

	if (reps < 1 || reps > MAXREP) {
		fprintf(stderr, "usage: gdrapi-copybench [REPEATS 1..%d]\n", MAXREP);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (guest_module_load("nvp2p_emu", "bar1_size_mb=64 bar1_reserve_mb=8") < 0 ||
	    guest_module_load("gdirect", NULL) < 0 ||
	    cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
	    cuMemAlloc(&base, SPAN + KB64) != CUDA_SUCCESS) {
		tap_skip("copybench", "no emulated GPU");
		return tap_done();
	}
	d = (base + KB64 - 1) & ~(CUdeviceptr)(KB64 - 1);
	host = malloc(SPAN);
	g = gdr_open();
	if (!host || !g || gdr_pin_buffer(g, d, SPAN, 0, 0, &mh) ||
	    gdr_map(g, mh, &va, SPAN)) {
		tap_ok(0, "open, pin and map 4 MiB");
		return tap_done();
	}
	map = va;
	for (size_t i = 0; i < SPAN; i++)
		host[i] = (char)(i * 31 + 7);
	/* Which copy libgdirect picks follows the CPU's features. */
	if (system("grep -m1 -o -w -e avx512f -e avx2 -e sse4_1 -e movdir64b /proc/cpuinfo | sort -u | tr '\\n' ' ' | sed 's/^/# cpu has: /; s/$/\\n/'") != 0)
		tap_diag("cpu features unknown");
	tap_diag("ns per copy, median of %d repeats; ratio = gdr_copy / memcpy (below 1: gdr_copy faster)",
		 reps);
	tap_diag("%8s %12s %12s %6s %12s %12s %6s", "bytes", "gdr_to", "memcpy_to",
	       "ratio", "gdr_from", "memcpy_from", "ratio");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];
		double t[METHODS][MAXREP], med[METHODS];
		long iters;

		/* about 2 ms per repeat, from a calibration run of memcpy to */
		iters = (long)(2e6 / (run(MEMCPY_TO, n, 64) + 1)) + 1;
		for (int r = 0; r < reps; r++)
			for (int k = 0; k < METHODS; k++) {
				int m = (k + r) % METHODS;	/* take turns */

				t[m][r] = run(m, n, iters);
			}
		for (int m = 0; m < METHODS; m++)
			med[m] = median(t[m], reps);
		tap_diag("%8zu %12.1f %12.1f %6.3f %12.1f %12.1f %6.3f", n,
		       med[GDR_TO], med[MEMCPY_TO], med[GDR_TO] / med[MEMCPY_TO],
		       med[GDR_FROM], med[MEMCPY_FROM], med[GDR_FROM] / med[MEMCPY_FROM]);
	}
	/* The copies moved the right bytes. */
	for (size_t i = 0; i < SPAN; i++)
		host[i] = (char)(i * 31 + 7);
	memset(map, 0, SPAN);
	gdr_copy_to_mapping(mh, map + 3, host + 3, SPAN - 3);
	bad = memcmp(map + 3, host + 3, SPAN - 3) != 0;
	memset(host, 0, SPAN);
	gdr_copy_from_mapping(mh, host + 5, map + 5, SPAN - 10);
	for (size_t i = 5; i < SPAN - 5 && !bad; i++)
		bad = host[i] != (char)(i * 31 + 7);
	tap_ok(!bad, "the copies moved the right bytes");
	gdr_unmap(g, mh, va, SPAN);
	gdr_unpin_buffer(g, mh);
	gdr_close(g);
	cuMemFree(base);
	return tap_done();
}
