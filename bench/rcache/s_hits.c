/* SPDX-License-Identifier: MIT */
/*
 * s_hits.c - scenario 1: the hit path (lookup, reference, release) with
 * 16, 4096 and 65536 registered regions, one and two threads.
 *
 * Both caches get the same 64 KiB buffers (64 KiB apart), registered whole
 * once; then every thread replays its own pre-computed trace of 4 KiB
 * requests (same traces for both caches), of three kinds: random (every
 * request at a random buffer and offset), locality (90% of requests in
 * the buffer of the thread's previous request, at a random offset; the
 * rest at a random buffer), as a communication library reusing its send
 * buffer and receive ring would ask, and reuse (every request in the
 * thread's own buffer, at a random offset: a thread's own reuse, what
 * libgdirect's per-thread hit path answers).
 * Regions are registered with a free pin: only hits are timed here, and
 * 65536 pins at 1.3 ms would take 85 s per cache.
 *
 * Where libgdirect has its verbs API, a third cache takes the same
 * buffers and traces, one thread and two: libgdirect's NIC registration
 * (gdirect_mr_get + gdirect_mr_put, cache_verbs.c, over the fake
 * libibverbs), timed in repeats of its own after the BAR hit's and UCX's
 * (which take turns within each repeat), and reported against the BAR
 * hit.  Its hit may cost far more
 * than the BAR hit's, so each repeat replays a window of each trace sized
 * to take about NIC_BUDGET_NS (ns per operation are compared, not totals),
 * a window of its own where the trace is long enough: the NIC cache keeps
 * its regions most recently used first, and one short window replayed
 * again and again would find the few regions it touches at the front,
 * where a random trace's requests are found anywhere.
 */
#include <stdlib.h>
#include <time.h>

#include "chase.h"
#include "harness.h"

/* What one repeat of the NIC hit may take, the fewest operations it
 * replays, and how many the calibration replays first.  A random hit
 * among 65536 regions took milliseconds on a loaded 2-core VM, so the
 * floor is what keeps it to seconds a repeat: a random hit's walk is
 * about uniform over the regions, and the mean of 200 is within about 4%
 * (one standard deviation) of the walk's. */
#define NIC_BUDGET_NS (100 * MS)
#define NIC_MIN_OPS 200
#define NIC_CAL_OPS 200

/* The caches of this scenario: [0] and [1] always, [2] where built. */
enum { GD, UCX, NIC, NCACHE };
#ifdef BENCH_HAVE_VERBS
#define HAVE_NIC true
#else
#define HAVE_NIC false
#endif

/*
 * What a random hit among n regions cannot avoid in libgdirect's lookup
 * path, beyond what the reuse trace's hit costs (whose reads all hit L1):
 * two dependent loads.  First the request page's slot (slot_set_bytes()).
 * Then its status word, found from the slot: 4 bytes each, dense (the
 * status page, tests/fakes/fake_backend.c).  The reuse trace pays an L1 load of the
 * status word itself, hence less one L1 load.
 */
#define SLOT_BYTES 32	/* lib/src/slotab.h: one per 64 KiB page, two a line */
#define STATUS_BYTES 4

/* The bytes of slot lines n regions' hits draw from, from the buffers'
 * own stride: buffers a page apart share lines, and alloc_buffers()'s
 * hole after each gives every region's slot a line to itself. */
static size_t slot_set_bytes(const uint64_t *bufs, size_t n)
{
	uint64_t pages = n > 1 ? (bufs[1] - bufs[0]) / GPU_PAGE : 2;

	return n * (pages >= 2 ? 2 * SLOT_BYTES : SLOT_BYTES);
}

struct hitter {
	struct inst *in;
	const uint64_t *trace;
	size_t ops;
	uint64_t ns, cpu_ns;
	long fails;
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *hit_loop(void *p)
{
	struct hitter *h = p;
	const struct cache_ops *ops = h->in->ops;
	void *c = h->in->c, *ref;
	uint64_t t0 = bench_now_ns(), c0 = thread_cpu_ns();

	for (size_t i = 0; i < h->ops; i++) {
		if (ops->get(c, h->trace[i], 4 * KiB, &ref)) {
			h->fails++;
			continue;
		}
		ops->put(c, ref);
	}
	h->ns = bench_now_ns() - t0;
	h->cpu_ns = thread_cpu_ns() - c0;
	return NULL;
}

/*
 * What an empty batch measures: two clock reads back to back, the median
 * of many.  A batch's time includes it once; at 64 gets a batch it is
 * about a tenth of a 5 ns get, the same for both caches.
 */
static double clock_cost_ns(void)
{
	enum { N = 4096 };
	double *v = malloc(N * sizeof(*v)), m;

	if (!v)
		abort();
	for (int i = 0; i < N; i++) {
		uint64_t t0 = bench_now_ns();

		v[i] = (double)(bench_now_ns() - t0);
	}
	m = median(v, N);
	free(v);
	return m;
}

/*
 * The get alone, timed 64 at a time (the references are put between
 * batches, untimed): what the caller waits for before it can use the
 * registration.  ns per get, the median over batches (a batch the
 * scheduler interrupted is an outlier, not a mean's bias), less the
 * clock's own cost (clk, clock_cost_ns()).
 */
static double get_only(struct inst *in, const uint64_t *trace, size_t ops,
		       double clk)
{
	const struct cache_ops *o = in->ops;
	size_t nb = 0;
	double *v = malloc((ops / 64 + 1) * sizeof(*v)), m;
	void *refs[64];

	if (!v)
		abort();
	for (size_t i = 0; i + 64 <= ops; i += 64) {
		uint64_t t0 = bench_now_ns();
		size_t k = 0;

		for (; k < 64; k++)
			if (o->get(in->c, trace[i + k], 4 * KiB, &refs[k]))
				break;
		if (k == 64)
			v[nb++] = ((double)(bench_now_ns() - t0) - clk) / 64;
		while (k)
			o->put(in->c, refs[--k]);
	}
	m = nb ? median(v, (int)nb) : 0;
	free(v);
	return m;
}

/* The NIC cache's ops, NULL where it is not built. */
static const struct cache_ops *nic_cache(void)
{
#ifdef BENCH_HAVE_VERBS
	return &cache_verbs;
#else
	return NULL;
#endif
}

/* The registrations the fake NIC made so far (0 where it is not built). */
static unsigned long nic_regs(void)
{
#ifdef BENCH_HAVE_VERBS
	return cache_verbs_nic_regs();
#else
	return 0;
#endif
}

/* How many operations of trace one repeat of in's hit replays: about
 * NIC_BUDGET_NS (a tenth of it with --quick) at the rate of a first
 * pass over the trace's first NIC_CAL_OPS, at least NIC_MIN_OPS, at most
 * ops.  The repeats' windows start after those (window_start()). */
static size_t budget_ops(struct inst *in, const uint64_t *trace, size_t ops,
			 bool quick)
{
	struct hitter h = { in, trace, ops < NIC_CAL_OPS ? ops : NIC_CAL_OPS,
			    0, 0, 0 };
	double per_op, want;

	hit_loop(&h);
	if (h.fails) {
		fprintf(stderr, "%s: %ld failed hits\n", in->label, h.fails);
		exit(1);
	}
	per_op = (double)h.ns / (double)h.ops;
	want = (double)NIC_BUDGET_NS / (quick ? 10 : 1) / (per_op > 0 ? per_op : 1);
	if (want < NIC_MIN_OPS)
		want = NIC_MIN_OPS;
	return want < (double)ops ? (size_t)want : ops;
}

/* Where repeat r's window of kops operations starts in a trace of ops:
 * after the calibration's first NIC_CAL_OPS and the earlier repeats' windows,
 * wrapping around where the trace is too short to hold them all; at 0
 * when the window is the whole trace. */
static size_t window_start(int r, size_t kops, size_t ops)
{
	return (NIC_CAL_OPS + (size_t)r * kops) % (ops - kops + 1);
}

enum { RANDOM, LOCALITY, REUSE, NTRACE };
static const char *const trace_name[NTRACE] = { "random", "locality", "reuse" };

/* A trace of 4 KiB requests inside buffers of bufs[0..n): random ones, or
 * with locality, 90% in the previous request's buffer. */
static uint64_t *make_trace(const uint64_t *bufs, size_t n, size_t len,
			    uint64_t seed, int kind)
{
	uint64_t *t = malloc(len * sizeof(*t)), s = seed;
	size_t last = 0;

	if (!t)
		abort();
	for (size_t i = 0; i < len; i++) {
		uint64_t r = rnd(&s);
		bool stay = i > 0 && (kind == REUSE ||
				      (kind == LOCALITY && rnd(&s) % 10 != 0));

		if (!stay)
			last = (size_t)(r % n);
		t[i] = bufs[last] + ((r >> 40) % 15) * 4 * KiB;
	}
	return t;
}

/*
 * How close a random hit is to its floor, per size: the dependent loads
 * it adds to the reuse trace's hit, each by a pointer chase over a buffer
 * the size of what it is drawn from, measured in this run.
 */
static void floor_report(FILE *f, const size_t nreg[3],
			 double wall[NTRACE][3][2][NCACHE])
{
	const struct summary *s = &summary;

	fprintf(f, "\nThe serial floor of a random hit, one thread: the reuse "
		"trace's get + put (every line it reads in L1), plus the two "
		"dependent loads a random hit adds in libgdirect's lookup "
		"path, each timed by a pointer chase over a buffer the size of "
		"what it is drawn from (`bench/rcache/chase.c`, in this run): "
		"the request page's slot (one 64-byte line per region here: "
		"the benchmark's buffers have a hole after each), then the "
		"region's status word (4 bytes per region), less the L1 load "
		"of the status word that the reuse trace pays too (%.1f ns).  "
		"UCX's hit waits for at least three dependent lines (its lock, "
		"a page-table level, the region).  At 16 regions the recent "
		"path answers from per-page hints, and the slot is not read at "
		"all.  It is the floor of hits taken one at a time: the next "
		"request's address does not depend on this hit, so the core "
		"may start its loads before this one ends, and a hit may come "
		"in under it (random / floor below 1).\n\n"
		"| regions | reuse get + put | slot load | status-word load | "
		"floor | random hit | random / floor | 3x UCX needs at most |\n"
		"|---:|---:|---:|---:|---:|---:|---:|---:|\n", s->lat_l1);
	for (int si = 0; si < 3; si++)
		fprintf(f, "| %zu | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | "
			"%.1f |\n", nreg[si], wall[REUSE][si][0][0],
			s->lat_slot[si], s->lat_status[si], s->floor[si],
			wall[RANDOM][si][0][0],
			wall[RANDOM][si][0][0] / s->floor[si],
			wall[RANDOM][si][0][1] / 3);
}

/* The NIC hit's rows (one thread and two): the BAR hit, the NIC hit and
 * UCX's from the same run, and the NIC hit against the other two. */
static void nic_rows(FILE *f, bool md, const size_t nreg[3],
		     double wall[NTRACE][3][2][NCACHE],
		     double cpu[NTRACE][3][2][NCACHE],
		     size_t nicops[NTRACE][3])
{
	for (int tr = 0; tr < NTRACE; tr++)
		for (int si = 0; si < 3; si++)
			for (int nt = 0; nt < 2; nt++) {
				const double *w = wall[tr][si][nt];
				const double *c = cpu[tr][si][nt];

				fprintf(f, md ? "| %s | %zu | %d | %zu | %.1f | "
					"%.1f | %.1f | %.2f | %.2f | %.2f |\n" :
					"%9s %8zu %7d %8zu %10.1f %10.1f %10.1f "
					"%8.2f %8.2f %8.2f\n", trace_name[tr],
					nreg[si], nt + 1, nicops[tr][si], w[GD],
					w[NIC], w[UCX], w[NIC] / w[GD],
					c[NIC] / c[GD], w[NIC] / w[UCX]);
			}
}

/* The table rows, to stdout and to the report. */
static void hit_rows(FILE *f, bool md,
		     const size_t nreg[3], double wall[NTRACE][3][2][NCACHE],
		     double cpu[NTRACE][3][2][NCACHE])
{
	for (int tr = 0; tr < NTRACE; tr++)
		for (int si = 0; si < 3; si++)
			for (int nt = 0; nt < 2; nt++) {
				const double *w = wall[tr][si][nt], *c = cpu[tr][si][nt];

				fprintf(f, md ? "| %s | %zu | %d | %.1f | %.1f | "
					"%.2f | %.1f | %.1f | %.2f |\n" :
					"%9s %8zu %7d %10.1f %10.1f %8.2f %10.1f "
					"%10.1f %8.2f\n", trace_name[tr], nreg[si],
					nt + 1, w[0], w[1], w[0] / w[1], c[0], c[1],
					c[0] / c[1]);
			}
}

/*
 * Replays @ops requests of each of @nt threads' traces from @w0 on @in
 * and stores the mean wall and CPU ns per request over the threads.
 */
static void time_hits(struct inst *in, uint64_t *const trace[2], int nt,
		      size_t w0, size_t ops, double *wall, double *cpu)
{
	struct hitter h[2];
	double sw = 0, sc = 0;

	for (int t = 0; t < nt; t++)
		h[t] = (struct hitter){ in, trace[t] + w0, ops, 0, 0, 0 };
	run_threads(nt, hit_loop, h, sizeof(h[0]));
	for (int t = 0; t < nt; t++) {
		if (h[t].fails)
			fprintf(stderr, "%s: %ld failed hits\n", in->label,
				h[t].fails);
		sw += (double)h[t].ns / (double)ops;
		sc += (double)h[t].cpu_ns / (double)ops;
	}
	*wall = sw / nt;
	*cpu = sc / nt;
}

void scenario_hits(const struct opts *o)
{
	static const size_t sizes[] = { 16, 4096, 65536 };
	const size_t ops = o->quick ? 100000 : 300000;
	const struct fake_cfg free_pins = { 0 };
	/* [trace][size][threads-1][cache]. */
	double wall[NTRACE][3][2][NCACHE] = { 0 }, cpu[NTRACE][3][2][NCACHE] = { 0 };
	double ins[3][NCACHE] = { 0 }, getns[3][2], clk = clock_cost_ns();
	size_t nreg[3], nicops[NTRACE][3] = { 0 };
	const int ncache = HAVE_NIC ? 3 : 2;

	for (int si = 0; si < 3; si++) {
		size_t n = o->quick && sizes[si] > 4096 ? 8192 : sizes[si];
		uint64_t *bufs = alloc_buffers(n);
		uint64_t *trace[NTRACE][2];
		struct inst in[NCACHE];
		unsigned long regs0 = nic_regs();
		size_t kops[NCACHE] = { ops, ops, ops };

		nreg[si] = n;
		progress("hits: %zu regions: registering", n);
		inst_open(&in[0], &cache_gdirect, "gdirect", &free_pins, 0, 0) ||
			(abort(), 0);
		inst_open(&in[1], &cache_ucx, "ucx", &free_pins, 0, 0) ||
			(abort(), 0);
		if (HAVE_NIC)
			inst_open(&in[NIC], nic_cache(), "gdirect-mr", &free_pins,
				  0, 0) || (abort(), 0);
		for (int k = 0; k < ncache; k++)
			ins[si][k] = register_each(&in[k], bufs, n);
		progress("hits: %zu regions registered: gdirect %.0f ns, ucx %.0f "
			 "ns per registration", n, ins[si][0], ins[si][1]);
		if (HAVE_NIC)
			progress("hits: %zu regions registered: gdirect-mr %.0f "
				 "ns per registration", n, ins[si][NIC]);
		for (int tr = 0; tr < NTRACE; tr++)
			for (int t = 0; t < 2; t++)
				trace[tr][t] = make_trace(bufs, n, ops, 0x5eed0000u +
							  t * 77 + n + tr * 1000003,
							  tr);

		for (int run = 0; run < 2 * NTRACE; run++) {
			int tr = run / 2, nt = run % 2 + 1;
			int nc = ncache;
			double vw[NCACHE][64], vc[NCACHE][64];

			if (nc > NIC && nt == 1) {
				kops[NIC] = budget_ops(&in[NIC], trace[tr][0], ops,
						       o->quick);
				nicops[tr][si] = kops[NIC];
			}
			/* The BAR hit and UCX's take turns in each repeat; the
			 * NIC hit's repeats come after theirs, so that its
			 * longer windows do not evict between two repeats of
			 * theirs what their next repeat finds in cache. */
			for (int r = 0; r < o->repeats; r++)
				for (int kk = 0; kk < 2; kk++) {
					int k = (r + kk) % 2;

					time_hits(&in[k], trace[tr], nt,
						  window_start(r, kops[k], ops),
						  kops[k], &vw[k][r], &vc[k][r]);
				}
			for (int r = 0; nc > NIC && r < o->repeats; r++)
				time_hits(&in[NIC], trace[tr], nt,
					  window_start(r, kops[NIC], ops),
					  kops[NIC], &vw[NIC][r], &vc[NIC][r]);
			for (int k = 0; k < nc; k++) {
				wall[tr][si][nt - 1][k] = median(vw[k], o->repeats);
				cpu[tr][si][nt - 1][k] = median(vc[k], o->repeats);
			}
			progress("hits: %s, %zu regions, %d thread(s): gdirect %.1f ns "
				 "(cpu %.1f), ucx %.1f ns (cpu %.1f)", trace_name[tr],
				 n, nt, wall[tr][si][nt - 1][0], cpu[tr][si][nt - 1][0],
				 wall[tr][si][nt - 1][1], cpu[tr][si][nt - 1][1]);
			if (nc > NIC)
				progress("hits: %s, %zu regions, %d thread(s): "
					 "gdirect-mr %.1f ns (cpu %.1f) over %zu "
					 "operations, %.2fx the BAR hit",
					 trace_name[tr], n, nt,
					 wall[tr][si][nt - 1][NIC],
					 cpu[tr][si][nt - 1][NIC], kops[NIC],
					 wall[tr][si][nt - 1][NIC] /
					 wall[tr][si][nt - 1][GD]);
		}
		/* Every NIC get after the registrations was a hit: the fake
		 * NIC registered each buffer once, no more. */
		if (HAVE_NIC && nic_regs() - regs0 != n) {
			fprintf(stderr, "gdirect-mr: the fake NIC made %lu "
				"registrations for %zu buffers: the timed gets "
				"were not all hits\n", nic_regs() - regs0, n);
			exit(1);
		}
		for (int k = 0; k < 2; k++) {
			double v[64];

			for (int r = 0; r < o->repeats; r++)
				v[r] = get_only(&in[k], trace[REUSE][0], ops,
						clk);
			getns[si][k] = median(v, o->repeats);
		}
		progress("hits: reuse, %zu regions, get alone: gdirect %.1f ns, "
			 "ucx %.1f ns", n, getns[si][0], getns[si][1]);
		summary.lat_slot[si] = chase_ns(slot_set_bytes(bufs, n),
						 o->repeats);
		summary.lat_status[si] = chase_ns(n * STATUS_BYTES, o->repeats);
		progress("hits: %zu regions, a dependent load among the slots "
			 "%.1f ns, among the status words %.1f ns", n,
			 summary.lat_slot[si], summary.lat_status[si]);
		/* Not timed. */
		for (int k = 0; k < ncache; k++)
			inst_close(&in[k]);
		for (int tr = 0; tr < NTRACE; tr++)
			for (int t = 0; t < 2; t++)
				free(trace[tr][t]);
		free(bufs);
	}

	summary.lat_l1 = chase_ns(4 * KiB, o->repeats);
	for (int si = 0; si < 3; si++)
		summary.floor[si] = wall[REUSE][si][0][0] + summary.lat_slot[si] +
				    summary.lat_status[si] - summary.lat_l1;

	printf("\n1. Hit path (get + put of a 4 KiB request), ns/op per thread, "
	       "median of %d (wall clock; thread CPU time)\n", o->repeats);
	printf("%9s %8s %7s %10s %10s %8s %10s %10s %8s\n", "trace", "regions",
	       "threads", "gdirect", "ucx", "gd/ucx", "gd cpu", "ucx cpu",
	       "gd/ucx");
	hit_rows(stdout, false, nreg, wall, cpu);
	printf("Get alone, reuse trace, 1 thread, ns (gdirect, ucx; less an "
	       "empty batch, %.0f ns):", clk);
	for (int si = 0; si < 3; si++)
		printf(" %zu regions %.2f, %.1f%s", nreg[si], getns[si][0],
		       getns[si][1], si < 2 ? ";" : "\n");
	printf("Floor of a random hit, 1 thread, ns (gdirect measured, floor):");
	for (int si = 0; si < 3; si++)
		printf(" %zu regions %.1f, %.1f%s", nreg[si],
		       wall[RANDOM][si][0][0], summary.floor[si],
		       si < 2 ? ";" : "\n");
	if (HAVE_NIC) {
		printf("\nNIC-registration hit (gdirect_mr_get + gdirect_mr_put "
		       "of a 4 KiB request, the verbs kind of the registration "
		       "engine) beside the BAR hit (gdirect_reg_get + put) and "
		       "UCX's, 1 and 2 threads, ns/op per thread, median of %d "
		       "repeats of its own; "
		       "on fakes: libibverbs (tests/fakes/fake_ibv.h), CUDA "
		       "(libfakecuda.so), pinning backend (fake_backend.c)\n",
		       o->repeats);
		printf("%9s %8s %7s %8s %10s %10s %10s %8s %8s %8s\n", "trace",
		       "regions", "threads", "nic ops", "bar", "nic", "ucx",
		       "nic/bar",
		       "(cpu)", "nic/ucx");
		nic_rows(stdout, false, nreg, wall, cpu, nicops);
	} else {
		printf("\nNIC-registration hit: not measured (libgdirect built "
		       "without libibverbs: no gdirect_mr_get)\n");
	}

	/* For the plots: one file per trace and thread count. */
	for (int tr = 0; tr < NTRACE; tr++)
		for (int nt = 0; nt < 2; nt++) {
			char name[64];
			FILE *f;

			snprintf(name, sizeof(name), "hits-%s-%d.dat",
				 trace_name[tr], nt + 1);
			f = data_file(o, name);
			if (!f)
				break;
			fprintf(f, "# %s trace, %d thread(s): regions, gdirect "
				"ns/op, UCX ns/op (wall clock, median of %d)\n",
				trace_name[tr], nt + 1, o->repeats);
			for (int si = 0; si < 3; si++)
				fprintf(f, "%zu %.2f %.2f\n", nreg[si],
					wall[tr][si][nt][0], wall[tr][si][nt][1]);
			fclose(f);
		}

	summary.hits = true;
	summary.nic = HAVE_NIC;
	for (int tr = 0; tr < NTRACE; tr++)
		for (int si = 0; si < 3; si++)
			summary.nic_ratio[tr][si] = HAVE_NIC ?
				wall[tr][si][0][NIC] / wall[tr][si][0][GD] : 0;
	for (int si = 0; si < 3; si++) {
		const double (*w)[NCACHE] = wall[RANDOM][si];
		const double (*c)[NCACHE] = cpu[RANDOM][si];

		summary.nreg[si] = nreg[si];
		summary.hit_ratio[si] = w[0][0] / w[0][1];
		summary.random1[si][0] = w[0][0];
		summary.random1[si][1] = w[0][1];
		summary.hit_ratio_cpu[si] = c[0][0] / c[0][1];
		summary.hit_ratio2[si] = w[1][0] / w[1][1];
		summary.hit_ratio2_cpu[si] = c[1][0] / c[1][1];
		for (int k = 0; k < 2; k++)
			summary.reuse_get[si][k] = getns[si][k];
		for (int k = 0; k < 2; k++) {
			summary.scaling[si][k] = 2 * w[0][k] / w[1][k];
			summary.scaling_cpu[si][k] = 2 * c[0][k] / c[1][k];
		}
	}
	if (!o->md)
		return;
	fprintf(o->md, "\n### 1. Hit path\n\n"
		"`get` + `put` of a 4 KiB request inside one of N registered "
		"64 KiB regions, from pre-computed traces (the same for both "
		"caches; with 2 threads, each its own): *random*, every request "
		"at a region chosen at random; *locality*, 90%% of requests in "
		"the region of the thread's previous request (at a random "
		"offset), the rest at a random region; *reuse*, every request "
		"in the thread's own region (chosen at random), at a random "
		"offset.  "
		"%zu operations per thread per repeat; ns per operation per "
		"thread, median of %d repeats.  Wall clock, and the thread's "
		"CPU time (what the operation costs when the scheduler takes "
		"the core away in the middle of a repeat).\n\n", ops, o->repeats);
	fprintf(o->md, "| trace | regions | threads | gdirect ns/op | UCX ns/op | "
		"gdirect/UCX | gdirect CPU ns/op | UCX CPU ns/op | "
		"gdirect/UCX (CPU) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	hit_rows(o->md, true, nreg, wall, cpu);
	for (int tr = 0; tr < NTRACE; tr++) {
		fprintf(o->md, "\nScaling from 1 to 2 threads, %s trace "
			"(aggregate throughput ratio; 2.00 is linear), from the "
			"wall clock:", trace_name[tr]);
		for (int si = 0; si < 3; si++)
			fprintf(o->md, " %zu regions: gdirect %.2f, UCX %.2f%s",
				nreg[si], 2 * wall[tr][si][0][0] / wall[tr][si][1][0],
				2 * wall[tr][si][0][1] / wall[tr][si][1][1],
				si < 2 ? ";" : ".");
		fprintf(o->md, "  From thread CPU time (what two threads with "
			"a core each would give; the wall-clock ratio is only "
			"meaningful on an otherwise idle machine):");
		for (int si = 0; si < 3; si++)
			fprintf(o->md, " %zu regions: gdirect %.2f, UCX %.2f%s",
				nreg[si], 2 * cpu[tr][si][0][0] / cpu[tr][si][1][0],
				2 * cpu[tr][si][0][1] / cpu[tr][si][1][1],
				si < 2 ? ";" : ".");
		fprintf(o->md, "\n");
	}
	fprintf(o->md, "\nThe get alone (timed 64 at a time, the references "
		"put untimed between batches; median over batches, less the "
		"clock's own cost, an empty batch's median, %.0f ns; then the "
		"median over %d repeats), reuse trace, one thread:", clk,
		o->repeats);
	for (int si = 0; si < 3; si++)
		fprintf(o->md, " %zu regions: gdirect %.2f ns, UCX %.1f ns%s",
			nreg[si], getns[si][0], getns[si][1], si < 2 ? ";" : ".");
	fprintf(o->md, "\n");
	floor_report(o->md, nreg, wall);
	if (HAVE_NIC) {
		fprintf(o->md, "\nThe NIC-registration hit: `gdirect_mr_get` + "
			"`gdirect_mr_put` of the same 4 KiB requests in the same "
			"registered 64 KiB buffers (the verbs kind of the "
			"registration engine, one NIC registration per buffer, "
			"registered before timing and checked to be the only "
			"ones the NIC saw), one thread and two (each its own "
			"trace, as above), timed in repeats of its own after "
			"those of the BAR hit (`gdirect_reg_get` + "
			"`gdirect_reg_put`, the table above) and UCX's, which "
			"take turns within each repeat.  No NIC: libibverbs is the tests' fake "
			"(`tests/fakes/fake_ibv.h`, its device fake0), CUDA the "
			"fake driver (`libfakecuda.so`), the pinning device the "
			"fake backend.  Each repeat of the NIC hit replays a "
			"window of the trace sized to about %.0f ms (*NIC ops*; "
			"the whole trace where that is shorter), a window of its "
			"own where the trace holds them all, so that a random "
			"trace's requests find their regions anywhere in the "
			"engine's most-recently-used order, not only the few a "
			"window replayed again would bring to its front; "
			"ns per operation per thread, median of %d repeats.  "
			"*NIC ops* is per thread.  *NIC/BAR* is "
			"the ratio the NIC hit is held to (at most 1.2); "
			"*(CPU)* the same from thread CPU time.\n\n"
			"| trace | regions | threads | NIC ops | BAR ns/op | "
			"NIC ns/op | UCX ns/op | NIC/BAR | NIC/BAR (CPU) | "
			"NIC/UCX |\n"
			"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
			(double)NIC_BUDGET_NS / (o->quick ? 10 : 1) / MS,
			o->repeats);
		nic_rows(o->md, true, nreg, wall, cpu, nicops);
	} else {
		fprintf(o->md, "\nThe NIC-registration hit was not measured: "
			"libgdirect was built without libibverbs (no "
			"`gdirect_mr_get`).\n");
	}
	fprintf(o->md, "\nRegistration with a free pin (the cache's own "
		"insertion cost, mean over the N registrations, one thread):");
	for (int si = 0; si < 3; si++)
		fprintf(o->md, " %zu regions: gdirect %.0f ns, UCX %.0f ns%s",
			nreg[si], ins[si][0], ins[si][1], si < 2 ? ";" : ".");
	fprintf(o->md, "\n");
}
