/* SPDX-License-Identifier: MIT */
/*
 * classify_gpu - on a real GPU: libgdirect's classification cache against
 * the CUDA calls it stands in for, and the per-hit cost of the BUFFER_ID
 * tag check against the per-free cost of free interception.
 *
 *   classify_gpu [--repeats N] [--short]
 *
 * Pinning goes to the fake backend (tests/fakes/fake_backend.c, free
 * pins): a GPU machine need not have gdirect.ko loaded, and only the
 * cache's hit path, which never calls the pinning device, is timed.  CUDA
 * is real: allocations, classification, BUFFER_ID, SYNC_MEMOPS.
 * Prints one line per measurement: median ns per call over the repeats,
 * their minimum and maximum, the share of the measuring CPU's time the
 * hypervisor took (steal, /proc/stat), and how much of its core the
 * thread had (independent adds per cycle before and after, x86-64 only:
 * about half when a hyperthread sibling the VM does not see is busy).
 * The measuring thread is pinned to one CPU once the CUDA context exists,
 * every measurement is warmed up with as many calls as it times, and the
 * hit rows are measured again at the end (rows "again: ..."); the last
 * section times the hits round after round across every CPU, each round
 * with the core's state, and sums them up by that state.
 * --short times a hundredth of the calls once each: a quick check that
 * every measurement still builds and runs (make test-gpu runs it so), not
 * a figure to quote.
 * Exits 77 when there is no GPU, 2 on a bad argument.
 */
#include <cuda.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gdirect.h>

#include "epoch.h"
#include "fake_backend.h"
#include "libgdirect_internal.h"

#define NALLOC 4096
#define SZ (64u << 10)

static int repeats = 9;
static size_t scale = 1;	/* --short divides the call counts by 100 */
static int cpu = -1;	/* the CPU the measuring thread is pinned to */

/* Steal and total jiffies of the pinned CPU so far (0, 0 if unknown). */
static void cpu_times(unsigned long long *steal, unsigned long long *total)
{
	char want[32], line[512];
	FILE *f = fopen("/proc/stat", "r");

	*steal = *total = 0;
	if (!f || cpu < 0) {
		if (f)
			fclose(f);
		return;
	}
	snprintf(want, sizeof(want), "cpu%d ", cpu);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[8] = { 0 };

		if (strncmp(line, want, strlen(want)))
			continue;
		sscanf(line + strlen(want), "%llu %llu %llu %llu %llu %llu %llu %llu",
		       &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
		for (int i = 0; i < 8; i++)
			*total += v[i];
		*steal = v[7];
		break;
	}
	fclose(f);
}

/* The pinned CPU's clock as the kernel reports it, in MHz (0: unknown). */
static double cpu_mhz(void)
{
	char path[128], line[256];
	double mhz = 0;
	FILE *f;
	int n = -1;

	snprintf(path, sizeof(path),
		 "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", cpu);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lf", &mhz) == 1)
			mhz /= 1000;
		fclose(f);
		return mhz;
	}
	f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f)) {
		n += !strncmp(line, "processor", 9);
		if (n == cpu && sscanf(line, "cpu MHz : %lf", &mhz) == 1)
			break;
	}
	if (f)
		fclose(f);
	return mhz;
}

/* Pin the calling thread to CPU c; false if it cannot run there. */
static bool pin_to(int c)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c, &set);
	if (c < 0 || sched_setaffinity(0, sizeof(set), &set))
		return false;
	cpu = c;
	return true;
}

/* Pin the calling thread to the CPU it runs on. */
static void pin_thread(void)
{
	pin_to(sched_getcpu());
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * Independent adds per cycle the thread gets from its core: eight add
 * chains against one chain of imul (3 cycles of latency on every x86-64
 * core of the last fifteen years, so the clock cancels out).  A core of
 * its own issues 4-5 here; one whose other hyperthread is busy, about
 * half.  0 where not measured (not x86-64), -1 where the timing was
 * disturbed: no x86-64 core issues more than six adds a cycle.
 */
static double core_adds_per_cycle(void)
{
#if defined(__x86_64__)
	/* The fastest of three short timings of each: an interruption makes
	 * one slower, never faster. */
	double t_add = 1e30, t_mul = 1e30;

	for (int k = 0; k < 3; k++) {
		uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8, x = 3;
		double t0 = now_ns(), t;

		for (int i = 0; i < 50000; i++)
			__asm__ volatile("add %0, %0\n\tadd %1, %1\n\tadd %2, %2\n\tadd %3, %3\n\t"
					 "add %4, %4\n\tadd %5, %5\n\tadd %6, %6\n\tadd %7, %7\n\t"
					 "add %0, %0\n\tadd %1, %1\n\tadd %2, %2\n\tadd %3, %3\n\t"
					 "add %4, %4\n\tadd %5, %5\n\tadd %6, %6\n\tadd %7, %7"
					 : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e),
					   "+r"(f), "+r"(g), "+r"(h));
		t = (now_ns() - t0) / (50000 * 16.0);
		t_add = t < t_add ? t : t_add;
		t0 = now_ns();
		for (int i = 0; i < 50000; i++)
			__asm__ volatile("imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0"
					 : "+r"(x));
		t = (now_ns() - t0) / (50000 * 4 * 3.0);	/* ns per cycle */
		t_mul = t < t_mul ? t : t_mul;
	}
	return t_mul / t_add > 6.5 ? -1 : t_mul / t_add;
#else
	return 0;
#endif
}

/* A core reading as printed: "n/a" not measured, "?" disturbed. */
static const char *core_str(double x, char *buf, size_t n)
{
	if (x == 0)
		return "n/a";
	if (x < 0)
		return "?";
	snprintf(buf, n, "%.1f", x);
	return buf;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void ck(CUresult rc, const char *what)
{
	if (rc != CUDA_SUCCESS) {
		const char *s = NULL;

		cuGetErrorString(rc, &s);
		fprintf(stderr, "%s: %s\n", what, s ? s : "?");
		exit(1);
	}
}

/* What one measurement runs: iters calls over ptrs[0..nptr). */
struct m {
	const char *name;
	int (*fn)(struct m *m, uint64_t p);
	uint64_t *ptrs;
	size_t nptr;
	struct gdirect_ctx *ctx;
	long errors;
	bool direct;	/* gdirect_classify called directly, not through fn */
};

/*
 * ns per call of m over iters calls in the scattered order (i * 7919) %
 * nptr, stepped without a division (a 64-bit division costs as much as a
 * hit).  The loop's state is in locals, which stay in registers across
 * the call: kept in *m, the error count would be a store and a reload
 * through memory on every call, in the figure of everything measured.
 */
static inline __attribute__((always_inline)) double
timed_loop(struct m *m, size_t iters, bool direct)
{
	int (*fn)(struct m *, uint64_t) = m->fn;
	const uint64_t *ptrs = m->ptrs;
	struct gdirect_ctx *c = m->ctx;
	size_t n = m->nptr, step = 7919 % n, j = 0;
	long errors = 0;
	double t0 = now_ns();

	for (size_t i = 0; i < iters; i++) {
		if (direct) {
			struct gdirect_ptr_info in;

			errors += gdirect_classify(c, (void *)(uintptr_t)ptrs[j],
						   &in) != 0;
			__asm__ volatile("" : : "r"(&in) : "memory");
		} else {
			errors += fn(m, ptrs[j]) != 0;
		}
		j += step;
		if (j >= n)
			j -= n;
	}
	t0 = (now_ns() - t0) / (double)iters;
	m->errors += errors;
	return t0;
}

/* Two copies of the loop, each with one kind of call in it. */
static __attribute__((noinline)) double timed_direct(struct m *m, size_t iters)
{
	return timed_loop(m, iters, true);
}

static __attribute__((noinline)) double timed_fn(struct m *m, size_t iters)
{
	return timed_loop(m, iters, false);
}

static double timed(struct m *m, size_t iters)
{
	return m->direct ? timed_direct(m, iters) : timed_fn(m, iters);
}

static void measure(struct m *m, size_t iters)
{
	double v[64], core0, core1;
	unsigned long long st0, tot0, st1, tot1;
	char b0[16], b1[16];

	timed(m, iters);	/* warm */
	m->errors = 0;
	cpu_times(&st0, &tot0);
	core0 = core_adds_per_cycle();
	for (int r = 0; r < repeats; r++)
		v[r] = timed(m, iters);
	core1 = core_adds_per_cycle();
	cpu_times(&st1, &tot1);
	qsort(v, (size_t)repeats, sizeof(v[0]), cmp_d);
	printf("%-58s %9.1f ns  (min %.1f, max %.1f; %zu pointers; steal %.1f%%; "
	       "core %s/%s adds/cycle%s)\n",
	       m->name, v[repeats / 2], v[0], v[repeats - 1], m->nptr,
	       tot1 > tot0 ? 100.0 * (double)(st1 - st0) / (double)(tot1 - tot0) : 0.0,
	       core_str(core0, b0, sizeof(b0)), core_str(core1, b1, sizeof(b1)),
	       m->errors ? ", calls returned errors" : "");
}

/* The harness alone: the loop and an indirect call to a function that
 * does nothing, included in every figure. */
static int nothing(struct m *m, uint64_t p)
{
	__asm__ volatile("" : : "r"(m), "r"(p) : "memory");
	return 0;
}

/* ---- the CUDA calls --------------------------------------------------- */

static int cu_memtype(struct m *m, uint64_t p)
{
	unsigned int t;

	(void)m;
	return cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) !=
	       CUDA_SUCCESS;
}

/* Expected to fail for plain host memory: that failure is the answer. */
static int cu_memtype_host(struct m *m, uint64_t p)
{
	cu_memtype(m, p);
	return 0;
}

static int cu_attrs4(struct m *m, uint64_t p)
{
	unsigned int memtype = 0, managed = 0;
	int ordinal = -1;
	unsigned long long id = 0;
	CUpointer_attribute a[] = {
		CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
		CU_POINTER_ATTRIBUTE_IS_MANAGED,
		CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
		CU_POINTER_ATTRIBUTE_BUFFER_ID,
	};
	void *d[] = { &memtype, &managed, &ordinal, &id };

	(void)m;
	return cuPointerGetAttributes(4, a, d, p) != CUDA_SUCCESS;
}

static int cu_buffer_id(struct m *m, uint64_t p)
{
	unsigned long long id;

	(void)m;
	return cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, p) !=
	       CUDA_SUCCESS;
}

static int cu_range(struct m *m, uint64_t p)
{
	CUdeviceptr b;
	size_t s;

	(void)m;
	return cuMemGetAddressRange(&b, &s, p) != CUDA_SUCCESS;
}

/* ---- libgdirect ------------------------------------------------------- */

static int bench_classify(struct m *m, uint64_t p)
{
	struct gdirect_ptr_info in;

	return gdirect_classify(m->ctx, (void *)(uintptr_t)p, &in);
}

/* Parts of a hit, for telling the code's cost from the machine's. */
static int part_epoch(struct m *m, uint64_t p)
{
	struct gdl_epoch_slot *s = gdl_epoch_enter();

	__asm__ volatile("" : : "r"(m), "r"(p) : "memory");
	gdl_epoch_exit(s);
	return 0;
}

static int part_find(struct m *m, uint64_t p)
{
	struct gdl_epoch_slot *s = gdl_epoch_enter();
	struct gdl_alloc *al = gdl_alloc_find(m->ctx, p);
	uint64_t t = al ? al->info.alloc_base : 0;

	__asm__ volatile("" : : "r"(t) : "memory");
	gdl_epoch_exit(s);
	return !al;
}

static int part_copy(struct m *m, uint64_t p)
{
	struct gdl_epoch_slot *s = gdl_epoch_enter();
	struct gdl_alloc *al = gdl_alloc_find(m->ctx, p);
	struct gdirect_ptr_info in;

	if (al)
		in = al->info;
	gdl_epoch_exit(s);
	__asm__ volatile("" : : "r"(&in) : "memory");
	return !al;
}

static int part_count(struct m *m, uint64_t p)
{
	struct gdl_epoch_slot *s = gdl_epoch_enter();
	struct gdl_alloc *al = gdl_alloc_find(m->ctx, p);
	struct gdirect_ptr_info in;

	if (al)
		in = al->info;
	gdl_epoch_exit(s);
	__asm__ volatile("" : : "r"(&in) : "memory");
	GDL_SHARD_INC(m->ctx, classify_hits);
	return !al;
}

/*
 * The hits round after round, the thread moved to the next CPU each
 * round, each round with the core's state measured around it: whether a
 * figure is the code's or the core's (a hyperthread sibling busy with
 * another guest halves the issue width) is then told from the data.
 * Rounds whose core gave at least 0.85 of the 90th percentile of adds per
 * cycle count as "own core", the rest as "shared"; a run whose best is
 * under 3.5 is taken as shared throughout (x86-64 cores of the last
 * decade issue four adds a cycle or more), and rounds whose reading was
 * disturbed, or not taken, count as neither.  Each row is run once
 * untimed first, to fill the new CPU's caches.
 */
#define ROUNDS 64
#define ROUND_ROWS 8
static void over_time(struct m *ms, int nm, size_t iters)
{
	double v[ROUNDS][ROUND_ROWS], core[ROUNDS], sorted[ROUNDS], cut;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), home = cpu, cpus[ROUNDS];
	int nvalid = 0, nused = 0;
	long errors[ROUND_ROWS] = { 0 };
	bool used[1024] = { false };

	if (nm > ROUND_ROWS) {
		fprintf(stderr, "over_time: at most %d rows\n", ROUND_ROWS);
		exit(1);
	}
	for (int r = 0; r < ROUNDS; r++) {
		if (!pin_to(r % (ncpu > 0 ? ncpu : 1)) && home >= 0)
			pin_to(home);
		cpus[r] = cpu;
		if (cpu >= 0 && cpu < 1024 && !used[cpu])
			used[cpu] = true, nused++;
		core[r] = core_adds_per_cycle();
		for (int k = 0; k < nm; k++) {
			timed(&ms[k], iters);	/* warm: this core's caches */
			ms[k].errors = 0;
			v[r][k] = timed(&ms[k], iters);
			errors[k] += ms[k].errors;
		}
		double c2 = core_adds_per_cycle();

		core[r] = core[r] > 0 && c2 > 0 ? (core[r] + c2) / 2 :
			  core[r] < 0 || c2 < 0 ? -1 : 0;
		if (core[r] > 0)
			sorted[nvalid++] = core[r];
	}
	if (home >= 0)
		pin_to(home);
	cut = 0;
	if (nvalid) {
		qsort(sorted, (size_t)nvalid, sizeof(sorted[0]), cmp_d);
		cut = 0.85 * sorted[nvalid * 9 / 10];
		if (sorted[nvalid * 9 / 10] < 3.5)
			cut = 1e9;	/* shared throughout */
	}
	printf("%d rounds over %d CPUs, %zu calls per row per round; ", ROUNDS,
	       nused, iters);
	if (!nvalid)
		printf("core state not measured here\n");
	else if (cut > 1e8)
		printf("core shared throughout (best adds/cycle %.1f)\n",
		       sorted[nvalid * 9 / 10]);
	else
		printf("own core = at least %.1f adds/cycle (0.85 of the rounds' "
		       "90th percentile)\n", cut);
	printf("round cpu adds/cycle");
	for (int k = 0; k < nm; k++)
		printf(" | %s", ms[k].name);
	puts("");
	for (int r = 0; r < ROUNDS; r++) {
		char b[16];

		printf("%5d %3d %10s", r, cpus[r], core_str(core[r], b, sizeof(b)));
		for (int k = 0; k < nm; k++)
			printf(" %.1f", v[r][k]);
		puts("");
	}
	/* state 1: own core, 0: shared, -1: not known (all rounds if the
	 * core was not measured, the disturbed ones otherwise) */
	for (int state = 1; state >= -1; state--) {
		for (int k = 0; k < nm; k++) {
			double x[ROUNDS];
			int n = 0;

			for (int r = 0; r < ROUNDS; r++) {
				int st = core[r] <= 0 ? -1 : core[r] >= cut;

				if (st == state)
					x[n++] = v[r][k];
			}
			if (!n)
				continue;
			qsort(x, (size_t)n, sizeof(x[0]), cmp_d);
			printf("%-58s %9.1f ns  (min %.1f, max %.1f; %d of %d rounds, "
			       "core %s%s)\n", ms[k].name, x[n / 2], x[0], x[n - 1],
			       n, ROUNDS, state > 0 ? "own" : state == 0 ? "shared" : "unknown",
			       errors[k] ? "; calls returned errors" : "");
		}
	}
}

/* 256 MiB page-table leaves the pointers fall in (a lookup outside the
 * thread's last leaf walks the upper levels). */
static int leaves(const uint64_t *p, size_t n)
{
	int k = 0;

	for (size_t i = 0; i < n; i++) {
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = p[j] >> 28 == p[i] >> 28;
		k += !seen;
	}
	return k;
}

/*
 * Host pointers freed, then their VA re-allocated: the pinned buffers,
 * cached as CPU in c (GDIRECT_CTX_CACHE_HOST), are freed with cuMemFreeHost
 * (reported first, as the hooks report it) and as many device allocations
 * made.  Every answer for a new allocation must be that allocation's, and
 * every answer for an old pointer what CUDA says of it now.  Returns the
 * wrong answers; *reused: old pointers that the new allocations cover.
 */
static long host_realloc_check(struct gdirect_ctx *c, uint64_t *pinned, int n,
			       uint64_t *newp, int *reused)
{
	long wrong = 0;

	*reused = 0;
	for (int i = 0; i < n; i++) {
		struct gdirect_ptr_info in;

		gdirect_classify(c, (void *)(uintptr_t)pinned[i], &in);	/* cached */
		gdirect_notify_free((void *)(uintptr_t)pinned[i], 4096);
		ck(cuMemFreeHost((void *)(uintptr_t)pinned[i]), "cuMemFreeHost");
	}
	for (int i = 0; i < n; i++) {
		CUdeviceptr d;

		ck(cuMemAlloc(&d, SZ), "cuMemAlloc");
		newp[i] = d;
		for (int j = 0; j < n; j++)
			*reused += pinned[j] - d < SZ;
	}
	for (int i = 0; i < n; i++) {
		CUdeviceptr base;
		size_t size;
		unsigned long long id;

		ck(cuMemGetAddressRange(&base, &size, newp[i]), "range");
		ck(cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
					 newp[i]), "buffer id");
		for (uint64_t off = 0; off < SZ; off += SZ / 2 + 4096) {
			struct gdirect_ptr_info in;

			if (gdirect_classify(c, (void *)(uintptr_t)(newp[i] + off),
					     &in) ||
			    in.type != GDIRECT_MEM_DEVICE ||
			    in.alloc_base != base || in.alloc_size != size ||
			    in.buffer_id != id)
				wrong++;
		}
	}
	for (int j = 0; j < n; j++) {
		struct gdirect_ptr_info in;
		unsigned int t = 0;
		bool dev = cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
						 pinned[j]) == CUDA_SUCCESS &&
			   t == CU_MEMORYTYPE_DEVICE;

		if (gdirect_classify(c, (void *)(uintptr_t)pinned[j], &in) ||
		    in.type != (dev ? GDIRECT_MEM_DEVICE : GDIRECT_MEM_CPU))
			wrong++;
	}
	return wrong;
}

static int bench_hit(struct m *m, uint64_t p)
{
	struct gdirect_reg *r;
	int rc = gdirect_reg_get(m->ctx, (void *)(uintptr_t)p, 4096, 0, &r);

	if (!rc)
		gdirect_reg_put(r);
	return rc;
}

/*
 * Freed, then re-allocated: every pointer of the old allocations is freed
 * (told to libgdirect first, as the free hooks would, when hooks is set)
 * and the range re-allocated in allocations of another size.  Each new
 * allocation's classification, at its start and at an offset, must be the
 * new allocation's (base, size, BUFFER_ID as CUDA says).  Returns how many
 * answers were wrong; fills newp with one pointer per new allocation.
 */
static long realloc_check(struct gdirect_ctx *c, uint64_t *oldp, int n,
			  bool hooks, uint64_t *newp, int *nnew)
{
	long wrong = 0;
	int k = 0;

	for (int i = 0; i < n; i++) {
		struct gdirect_ptr_info in;

		gdirect_classify(c, (void *)(uintptr_t)oldp[i], &in);	/* cached */
		if (hooks)
			gdirect_notify_free((void *)(uintptr_t)oldp[i], 0);
		ck(cuMemFree(oldp[i]), "cuMemFree");
	}
	for (int i = 0; i < n / 2; i++) {
		CUdeviceptr d;

		ck(cuMemAlloc(&d, 2 * SZ), "cuMemAlloc");
		newp[k++] = d;
	}
	for (int i = 0; i < k; i++) {
		CUdeviceptr base;
		size_t size;
		unsigned long long id;

		ck(cuMemGetAddressRange(&base, &size, newp[i]), "range");
		ck(cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
					 newp[i]), "buffer id");
		for (uint64_t off = 0; off < 2 * SZ; off += SZ + 4096) {
			struct gdirect_ptr_info in;

			if (gdirect_classify(c, (void *)(uintptr_t)(newp[i] + off),
					     &in) ||
			    in.type != GDIRECT_MEM_DEVICE ||
			    in.alloc_base != base || in.alloc_size != size ||
			    in.buffer_id != id)
				wrong++;
		}
	}
	*nnew = k;
	return wrong;
}

static struct gdirect_ctx *mkctx(struct gdl_backend *dev, unsigned inv,
				 unsigned flags)
{
	struct gdirect_params p;
	struct gdirect_ctx *c;

	gdirect_params_init(&p);
	p.invalidation = inv;
	p.flags = flags;
	p.max_regions = 0;
	p.max_bytes = 0;
	if (gdl_ctx_create_backend(&p, dev, &c)) {
		fprintf(stderr, "context: %s\n", gdirect_errmsg());
		exit(1);
	}
	return c;
}

static int usage(const char *bad)
{
	fprintf(stderr, "classify_gpu: '%s': usage: classify_gpu [--repeats N (1 to 64)] [--short]\n",
		bad);
	return 2;
}

int main(int argc, char **argv)
{
	CUdevice dev;
	CUcontext cctx;
	char name[256];
	int drv = 0, count = 0;
	uint64_t *dptr = calloc(NALLOC, sizeof(*dptr));
	uint64_t *hptr = calloc(NALLOC, sizeof(*hptr));
	uint64_t pinned[16];
	char *host = malloc((size_t)NALLOC * 4096);

	for (int i = 1; i < argc; i++) {
		char *end;
		long v;

		if (!strcmp(argv[i], "--short")) {
			repeats = 1;
			scale = 100;
			continue;
		}
		if (strcmp(argv[i], "--repeats") || i + 1 == argc)
			return usage(argv[i]);
		errno = 0;
		v = strtol(argv[++i], &end, 10);
		if (errno || end == argv[i] || *end || v < 1 || v > 64)
			return usage(argv[i]);
		repeats = (int)v;
	}
	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&count) != CUDA_SUCCESS ||
	    count == 0) {
		printf("classify_gpu: no CUDA device here\n");
		return 77;
	}
	ck(cuDeviceGet(&dev, 0), "cuDeviceGet");
	ck(cuDeviceGetName(name, sizeof(name), dev), "cuDeviceGetName");
	ck(cuDriverGetVersion(&drv), "cuDriverGetVersion");
	ck(cuDevicePrimaryCtxRetain(&cctx, dev), "cuDevicePrimaryCtxRetain");
	ck(cuCtxSetCurrent(cctx), "cuCtxSetCurrent");
	printf("GPU: %s; CUDA driver API %d.%d; %d repeats, median ns per call\n",
	       name, drv / 1000, drv % 1000 / 10, repeats);
	if (!dptr || !hptr || !host)
		return 1;
	gdl_epoch_init();
	for (int i = 0; i < NALLOC; i++) {
		CUdeviceptr d;

		ck(cuMemAlloc(&d, SZ), "cuMemAlloc");
		dptr[i] = d;
		hptr[i] = (uint64_t)(uintptr_t)(host + (size_t)i * 4096);
		host[(size_t)i * 4096] = 1;
	}
	for (int i = 0; i < 16; i++) {
		void *h;

		ck(cuMemAllocHost(&h, 4096), "cuMemAllocHost");
		pinned[i] = (uint64_t)(uintptr_t)h;
	}

	/* Pinned only now: the driver's threads, made above, keep every CPU. */
	pin_thread();
	printf("measuring thread pinned to CPU %d (%.0f MHz)\n", cpu, cpu_mhz());
	printf("page-table leaves (256 MiB each): device pointers %d, host %d\n",
	       leaves(dptr, NALLOC), leaves(hptr, NALLOC));

	/* Shared by the contexts below, freed at the end; never mapped. */
	struct gdl_backend *devb = fake_backend_new(&(struct fake_cfg){
		.nslots = 1u << 18, .no_maps = true, .shared = true });
	struct gdirect_ctx *c_def = mkctx(devb, GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS, 0);
	struct gdirect_ctx *c_host = mkctx(devb, GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS,
					   GDIRECT_CTX_CACHE_HOST);
	struct gdirect_ctx *c_hooks = mkctx(devb, GDIRECT_INV_HOOKS, 0);
	struct gdirect_ctx *c_tag = mkctx(devb, GDIRECT_INV_BUFFER_ID, 0);
	const size_t N = 1000000 / scale, NC = 200000 / scale;

	struct m nm = { "harness: the loop and an empty indirect call", nothing, dptr, NALLOC, NULL, 0, false };

	puts("");
	measure(&nm, N);
	puts("\n-- CUDA driver calls --");
	struct m cm[] = {
		{ "cuPointerGetAttribute(MEMORY_TYPE), device pointer",
		  cu_memtype, dptr, NALLOC, NULL, 0, false },
		{ "cuPointerGetAttribute(MEMORY_TYPE), host pointer (malloc)",
		  cu_memtype_host, hptr, NALLOC, NULL, 0, false },
		{ "cuPointerGetAttribute(MEMORY_TYPE), pinned host pointer",
		  cu_memtype, pinned, 16, NULL, 0, false },
		{ "cuPointerGetAttributes(4 attributes), device pointer",
		  cu_attrs4, dptr, NALLOC, NULL, 0, false },
		{ "cuPointerGetAttributes(4 attributes), host pointer",
		  cu_attrs4, hptr, NALLOC, NULL, 0, false },
		{ "cuPointerGetAttribute(BUFFER_ID), device pointer",
		  cu_buffer_id, dptr, NALLOC, NULL, 0, false },
		{ "cuMemGetAddressRange, device pointer",
		  cu_range, dptr, NALLOC, NULL, 0, false },
	};
	for (size_t i = 0; i < sizeof(cm) / sizeof(cm[0]); i++)
		measure(&cm[i], NC);

	puts("\n-- gdirect_classify (cache hits after the first query) --");
	struct m gm[] = {
		{ "gdirect_classify, device pointer, 16 allocations",
		  bench_classify, dptr, 16, c_def, 0, false },
		{ "gdirect_classify, device pointer, 4096 allocations",
		  bench_classify, dptr, NALLOC, c_def, 0, false },
		{ "gdirect_classify, host pointer (not cached: default)",
		  bench_classify, hptr, NALLOC, c_def, 0, false },
		{ "gdirect_classify, host pointer, GDIRECT_CTX_CACHE_HOST",
		  bench_classify, hptr, NALLOC, c_host, 0, false },
		{ "gdirect_classify, device pointer, hooks off (BUFFER_ID)",
		  bench_classify, dptr, NALLOC, c_tag, 0, false },
		{ "gdirect_classify, pinned host pointer (not cached: default)",
		  bench_classify, pinned, 16, c_def, 0, false },
		{ "gdirect_classify, pinned host pointer, "
		  "GDIRECT_CTX_CACHE_HOST",
		  bench_classify, pinned, 16, c_host, 0, false },
	};
	for (size_t i = 0; i < sizeof(gm) / sizeof(gm[0]); i++)
		measure(&gm[i], gm[i].ctx == c_def && gm[i].ptrs != dptr ? NC : N);

	puts("\n-- parts of a device-pointer hit, 4096 allocations --");
	struct m pm[] = {
		{ "parts: epoch enter + exit",
		  part_epoch, dptr, NALLOC, c_def, 0, false },
		{ "parts: epoch + slot + allocation (gdl_alloc_find)",
		  part_find, dptr, NALLOC, c_def, 0, false },
		{ "parts: + the answer copied to the caller",
		  part_copy, dptr, NALLOC, c_def, 0, false },
		{ "parts: + the per-thread hit counter",
		  part_count, dptr, NALLOC, c_def, 0, false },
		{ "parts: all of gdirect_classify",
		  bench_classify, dptr, NALLOC, c_def, 0, false },
	};
	for (size_t i = 0; i < sizeof(pm) / sizeof(pm[0]); i++)
		measure(&pm[i], N);

	puts("\n-- registration hit (get + put), 4096 registered allocations --");
	struct m hm[] = {
		{ "reg hit, invalidation kernel+hooks (default)",
		  bench_hit, dptr, NALLOC, c_def, 0, false },
		{ "reg hit, invalidation hooks only",
		  bench_hit, dptr, NALLOC, c_hooks, 0, false },
		{ "reg hit, invalidation buffer_id (tag check per hit)",
		  bench_hit, dptr, NALLOC, c_tag, 0, false },
		{ "reg hit, default, the thread's last region again",
		  bench_hit, dptr, 1, c_def, 0, false },
	};
	for (size_t i = 0; i < sizeof(hm) / sizeof(hm[0]); i++)
		measure(&hm[i], hm[i].ctx == c_tag ? NC : N);

	/* Freed, then re-allocated: the last 512 of the 4096 allocations,
	 * classified in both contexts, freed (hooks told in c_def only) and
	 * re-allocated as 256 of twice the size. */
	puts("\n-- freed, then re-allocated (256 allocations of 128 KiB over 512 freed of 64 KiB) --");
	uint64_t re[NALLOC / 2];
	int nre = 0;
	const int NR = 512;

	for (int i = NALLOC - NR; i < NALLOC; i++) {
		struct gdirect_ptr_info in;

		gdirect_classify(c_tag, (void *)(uintptr_t)dptr[i], &in);
	}
	long wrong = realloc_check(c_def, dptr + NALLOC - NR, NR, true, re, &nre);
	long wrong_tag = 0;

	for (int i = 0; i < nre; i++) {
		CUdeviceptr base;
		size_t size;
		unsigned long long id;
		struct gdirect_ptr_info in;

		ck(cuMemGetAddressRange(&base, &size, re[i]), "range");
		ck(cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
					 re[i]), "buffer id");
		if (gdirect_classify(c_tag, (void *)(uintptr_t)re[i], &in) ||
		    in.alloc_base != base || in.alloc_size != size ||
		    in.buffer_id != id)
			wrong_tag++;
	}
	printf("%-58s %9ld of %d\n", "wrong answers after free + re-allocation, hooks",
	       wrong, 2 * nre);
	printf("%-58s %9ld of %d\n", "wrong answers after free + re-allocation, BUFFER_ID",
	       wrong_tag, nre);
	struct m rm[] = {
		{ "gdirect_classify, re-allocated device pointer (hooks)",
		  bench_classify, re, (size_t)nre, c_def, 0, false },
		{ "cuPointerGetAttribute(MEMORY_TYPE), re-allocated pointer",
		  cu_memtype, re, (size_t)nre, NULL, 0, false },
	};
	measure(&rm[0], N);
	measure(&rm[1], NC);
	for (int i = NALLOC - NR; i < NALLOC; i++)
		dptr[i] = 0;	/* freed above */

	puts("\n-- host pointers freed (cuMemFreeHost), then device allocations --");
	uint64_t hre[16];
	int reused;
	long wrong_host = host_realloc_check(c_host, pinned, 16, hre, &reused);

	printf("%-58s %9ld of %d\n", "wrong answers after cuMemFreeHost + cuMemAlloc",
	       wrong_host, 16 * 2 + 16);
	printf("%-58s %9d of 16\n", "freed host pointers inside a new allocation", reused);
	struct m hrm = {
		"gdirect_classify, device pointer after host free (cache host)",
		bench_classify, hre, 16, c_host, 0, false
	};

	measure(&hrm, N);

	/* The hit rows again, last: the same code and data minutes later. */
	puts("\n-- the hit rows again --");
	struct m am[] = {
		{ "again: harness",
		  nothing, dptr, NALLOC - NR, NULL, 0, false },
		{ "again: device pointer, 16 allocations",
		  bench_classify, dptr, 16, c_def, 0, false },
		{ "again: device pointer, 3584 allocations",
		  bench_classify, dptr, NALLOC - NR, c_def, 0, false },
		{ "again: host pointer, GDIRECT_CTX_CACHE_HOST",
		  bench_classify, hptr, NALLOC, c_host, 0, false },
		{ "again: re-allocated device pointer (hooks)",
		  bench_classify, re, (size_t)nre, c_def, 0, false },
	};
	for (size_t i = 0; i < sizeof(am) / sizeof(am[0]); i++)
		measure(&am[i], N);
	printf("CPU %d at the end: %.0f MHz\n", cpu, cpu_mhz());

	puts("\n-- the hits over time, by the state of the core --");
	struct m tm[] = {
		{ "rounds: harness",
		  nothing, dptr, NALLOC - NR, NULL, 0, false },
		{ "rounds: gdirect_classify, device pointer, 16 allocations",
		  bench_classify, dptr, 16, c_def, 0, false },
		{ "rounds: gdirect_classify, device pointer, 3584 allocations",
		  bench_classify, dptr, NALLOC - NR, c_def, 0, false },
		{ "rounds: gdirect_classify, host pointer, CACHE_HOST",
		  bench_classify, hptr, NALLOC, c_host, 0, false },
		{ "rounds: direct call, device pointer, 16 allocations",
		  NULL, dptr, 16, c_def, 0, true },
		{ "rounds: direct call, host pointer, CACHE_HOST",
		  NULL, hptr, NALLOC, c_host, 0, true },
		{ "rounds: cuPointerGetAttribute(MEMORY_TYPE), device pointer",
		  cu_memtype, dptr, NALLOC - NR, NULL, 0, false },
	};
	over_time(tm, (int)(sizeof(tm) / sizeof(tm[0])), 100000);


	/* Interception: what a hooked free adds (gdirect_notify_free before
	 * the real cuMemFree), on allocations that are classified and
	 * registered in every context above. */
	puts("\n-- free interception (per free of a registered 64 KiB allocation) --");
	double t_free = 0, t_notify = 0, t_alloc = 0;
	const int NF = 512;

	for (int i = 0; i < NF; i++) {
		CUdeviceptr d;
		struct gdirect_reg *r;
		double t0 = now_ns(), t1, t2, t3;

		ck(cuMemAlloc(&d, SZ), "cuMemAlloc");
		t1 = now_ns();
		if (!gdirect_reg_get(c_def, (void *)(uintptr_t)d, 4096, 0, &r))
			gdirect_reg_put(r);
		if (!gdirect_reg_get(c_hooks, (void *)(uintptr_t)d, 4096, 0, &r))
			gdirect_reg_put(r);
		t2 = now_ns();
		gdirect_notify_free((void *)(uintptr_t)d, 0);
		t3 = now_ns();
		ck(cuMemFree(d), "cuMemFree");
		t_alloc += t1 - t0;
		t_notify += t3 - t2;
		t_free += now_ns() - t3;
	}
	printf("%-58s %9.1f ns\n", "cuMemAlloc(64 KiB)", t_alloc / NF);
	printf("%-58s %9.1f ns\n", "cuMemFree(64 KiB)", t_free / NF);
	printf("%-58s %9.1f ns\n", "gdirect_notify_free (2 hooked contexts, "
	       "4096+ regions)", t_notify / NF);

	gdirect_ctx_destroy(c_def);
	gdirect_ctx_destroy(c_host);
	gdirect_ctx_destroy(c_hooks);
	gdirect_ctx_destroy(c_tag);
	fake_backend_free(devb);
	for (int i = 0; i < NALLOC; i++)
		if (dptr[i])
			cuMemFree(dptr[i]);
	for (int i = 0; i < nre; i++)
		cuMemFree(re[i]);
	for (int i = 0; i < 16; i++)
		cuMemFree(hre[i]);
	cuDevicePrimaryCtxRelease(dev);
	if (wrong || wrong_tag || wrong_host)
		printf("FAILED: classification answered a freed allocation\n");
	return wrong || wrong_tag || wrong_host;
}
