/* SPDX-License-Identifier: MIT */
/*
 * s_contended.c - scenario 2: hit latency on one thread while another
 * thread registers new buffers back to back, each pin taking 1.3 ms.
 *
 * 4096 regions are registered (free pins), then pins cost 1.3 ms.  The
 * hitter replays a random 4 KiB trace for a fixed window, timing batches
 * of 64 operations, first alone (uncontended), then while the other thread
 * registers fresh buffers so that a pin is in flight nearly all the time.
 * Reported: ns per hit over the window (total time / hits done) and the
 * slowest batch, per cache.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "harness.h"

#define NREG 4096

/* Per-operation timing with the TSC: ~10 ns a read where clock_gettime
 * costs twice that, and the same for both caches. */
static inline uint64_t tsc(void)
{
	return __builtin_ia32_rdtsc();
}

static double ns_per_tick;

static void calibrate(void)
{
	uint64_t n0 = bench_now_ns(), c0 = tsc();

	bench_sleep_until(n0 + 50 * MS);
	ns_per_tick = (double)(bench_now_ns() - n0) / (double)(tsc() - c0);
}

struct hitwin {
	struct inst *in;
	const uint64_t *trace;
	size_t tlen;
	uint64_t window_ns;
	/* out: all hits, and those that began while a pin was in flight */
	uint64_t ops, ns;
	uint64_t n_pin, ticks_pin, max_pin, n_free, ticks_free, max_free;
	uint32_t *lat_pin, *lat_free;	/* ticks of each hit, up to LAT_MAX */
};

#define LAT_MAX (1u << 22)

static void hit_window(struct hitwin *h)
{
	const struct cache_ops *ops = h->in->ops;
	struct gdl_backend *dev = h->in->dev;
	void *c = h->in->c, *ref;
	uint64_t t0 = bench_now_ns(), end = t0 + h->window_ns, t = t0;
	size_t i = 0;

	h->ops = h->n_pin = h->ticks_pin = h->max_pin = 0;
	h->n_free = h->ticks_free = h->max_free = 0;
	while (t < end) {
		for (int b = 0; b < 64; b++) {
			bool pinning = fake_backend_pins_in_flight(dev) != 0;
			uint64_t c0 = tsc(), d;

			if (ops->get(c, h->trace[i], 4 * KiB, &ref) == 0)
				ops->put(c, ref);
			d = tsc() - c0;
			if (d > UINT32_MAX)
				d = UINT32_MAX;
			if (pinning) {
				if (h->n_pin < LAT_MAX)
					h->lat_pin[h->n_pin] = (uint32_t)d;
				h->n_pin++;
				h->ticks_pin += d;
				h->max_pin = d > h->max_pin ? d : h->max_pin;
			} else {
				if (h->n_free < LAT_MAX)
					h->lat_free[h->n_free] = (uint32_t)d;
				h->n_free++;
				h->ticks_free += d;
				h->max_free = d > h->max_free ? d : h->max_free;
			}
			if (++i == h->tlen)
				i = 0;
		}
		h->ops += 64;
		t = bench_now_ns();
	}
	h->ns = t - t0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Points of the latency distribution written for the plot. */
#define NQ 1000

/* The i/(NQ-1) quantiles of the sorted v[0..n), in ns, into q[]. */
static void distribution(const uint32_t *v, uint64_t n, double *q)
{
	if (n > LAT_MAX)
		n = LAT_MAX;
	for (int i = 0; i < NQ; i++)
		q[i] = n ? v[(uint64_t)((double)i / (NQ - 1) * (double)(n - 1))] *
			   ns_per_tick : 0;
}

/* The q-quantile of v[0..n) in ns (sorts v). */
static double quantile_ns(uint32_t *v, uint64_t n, double q)
{
	if (n > LAT_MAX)
		n = LAT_MAX;
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u32);
	return v[(uint64_t)(q * (double)(n - 1))] * ns_per_tick;
}

struct registrar {
	struct inst *in;
	const uint64_t *fresh;
	size_t nfresh, next;
	atomic_bool stop;
	unsigned long regs, fails;
};

static void *register_loop(void *p)
{
	struct registrar *r = p;

	while (!atomic_load(&r->stop) && r->next < r->nfresh) {
		void *ref;

		if (r->in->ops->get(r->in->c, r->fresh[r->next++], GPU_PAGE, &ref)) {
			r->fails++;
			continue;
		}
		r->in->ops->put(r->in->c, ref);
		r->regs++;
	}
	return NULL;
}

void scenario_contended(const struct opts *o)
{
	const uint64_t window = (o->quick ? 50 : 200) * MS;
	const size_t tlen = 1 << 16;
	size_t nfresh = (size_t)o->repeats * (2 * window / PIN_NS + 200);
	uint64_t *bufs = alloc_buffers(NREG), *fresh = alloc_buffers(nfresh);
	uint64_t *trace = malloc(tlen * sizeof(*trace)), seed = 0xc0ffee;
	struct inst in[2];
	/* [cache][repeat]: uncontended mean, during-pin mean, worst during
	 * pin, window ns/hit alone and contended, ms per registration */
	double un[2][64], co[2][64], worst[2][64], wun[2][64], wco[2][64];
	double regms[2][64], npin[2][64], med_un[2][64], med_co[2][64];
	double p99_un[2][64], p99_co[2][64];
	/* [cache][alone, during a pin][point], from the last repeat */
	static double dist[2][2][NQ];
	uint32_t *lat_pin = malloc(LAT_MAX * sizeof(uint32_t));
	uint32_t *lat_free = malloc(LAT_MAX * sizeof(uint32_t));
	const struct fake_cfg free_pins = { 0 };

	if (!trace || !lat_pin || !lat_free)
		abort();
	calibrate();
	for (size_t i = 0; i < tlen; i++) {
		uint64_t r = rnd(&seed);

		trace[i] = bufs[r % NREG] + ((r >> 40) % 15) * 4 * KiB;
	}
	progress("contended: registering %d regions", NREG);
	inst_open(&in[0], &cache_gdirect, "gdirect", &free_pins, 0, 0) || (abort(), 0);
	inst_open(&in[1], &cache_ucx, "ucx", &free_pins, 0, 0) || (abort(), 0);
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < NREG; i++) {
			void *ref;

			if (in[k].ops->get(in[k].c, bufs[i], GPU_PAGE, &ref))
				abort();
			in[k].ops->put(in[k].c, ref);
		}
		fake_backend_set_costs(in[k].dev, PIN_NS, UNPIN_NS);
	}

	struct registrar reg[2] = {
		{ .in = &in[0], .fresh = fresh, .nfresh = nfresh },
		{ .in = &in[1], .fresh = fresh, .nfresh = nfresh },
	};

	for (int r = 0; r < o->repeats; r++) {
		for (int kk = 0; kk < 2; kk++) {
			int k = (r + kk) % 2;
			struct hitwin h = { .in = &in[k], .trace = trace,
					    .tlen = tlen, .window_ns = window,
					    .lat_pin = lat_pin, .lat_free = lat_free };
			unsigned long regs0 = reg[k].regs;
			pthread_t th;

			hit_window(&h);	/* uncontended */
			un[k][r] = h.ticks_free * ns_per_tick / (double)h.n_free;
			wun[k][r] = (double)h.ns / (double)h.ops;
			med_un[k][r] = quantile_ns(lat_free, h.n_free, 0.5);
			p99_un[k][r] = quantile_ns(lat_free, h.n_free, 0.99);
			if (r == o->repeats - 1)	/* sorted by now */
				distribution(lat_free, h.n_free, dist[k][0]);

			atomic_store(&reg[k].stop, false);
			pthread_create(&th, NULL, register_loop, &reg[k]);
			while (!fake_backend_pins_in_flight(in[k].dev))
				;	/* start with a pin in flight */
			hit_window(&h);
			atomic_store(&reg[k].stop, true);
			pthread_join(th, NULL);
			co[k][r] = h.n_pin ? h.ticks_pin * ns_per_tick /
					     (double)h.n_pin : 0;
			worst[k][r] = h.max_pin * ns_per_tick;
			wco[k][r] = (double)h.ns / (double)h.ops;
			npin[k][r] = (double)h.n_pin;
			med_co[k][r] = quantile_ns(lat_pin, h.n_pin, 0.5);
			p99_co[k][r] = quantile_ns(lat_pin, h.n_pin, 0.99);
			if (r == o->repeats - 1)
				distribution(lat_pin, h.n_pin, dist[k][1]);
			regms[k][r] = reg[k].regs > regs0 ?
				(double)h.ns / 1e6 / (double)(reg[k].regs - regs0) :
				(double)h.ns / 1e6;
		}
		progress("contended: repeat %d/%d: hit during a pin: gdirect "
			 "%.1f ns (alone %.1f), ucx %.1f ns (alone %.1f)", r + 1,
			 o->repeats, co[0][r], un[0][r], co[1][r], un[1][r]);
	}
	/* m[k]: 0 alone mean, 1 in-pin mean, 2 worst in-pin, 3 window alone,
	 * 4 window contended, 5 ms/registration, 6 hits in pins,
	 * 7 alone median, 8 in-pin median, 9 alone p99, 10 in-pin p99 */
	double m[2][11];

	for (int k = 0; k < 2; k++) {
		m[k][0] = median(un[k], o->repeats);
		m[k][1] = median(co[k], o->repeats);
		m[k][2] = median(worst[k], o->repeats);
		m[k][3] = median(wun[k], o->repeats);
		m[k][4] = median(wco[k], o->repeats);
		m[k][5] = median(regms[k], o->repeats);
		m[k][6] = median(npin[k], o->repeats);
		m[k][7] = median(med_un[k], o->repeats);
		m[k][8] = median(med_co[k], o->repeats);
		m[k][9] = median(p99_un[k], o->repeats);
		m[k][10] = median(p99_co[k], o->repeats);
		if (reg[k].fails)
			fprintf(stderr, "%s: %lu failed registrations\n",
				in[k].label, reg[k].fails);
	}
	summary.contended = true;
	summary.in_pin_median = m[0][8] / m[0][7];
	summary.in_pin_mean = m[0][1] / m[0][0];
	printf("\n2. Hits (%d regions) while another thread registers (1.3 ms "
	       "pins), ns per hit, median of %d\n", NREG, o->repeats);
	printf("%8s %21s %21s %21s %10s %8s %8s\n", "cache",
	       "median alone/in-pin", "mean alone/in-pin", "p99 alone/in-pin",
	       "worst us", "ms/reg", "n in-pin");
	for (int k = 0; k < 2; k++)
		printf("%8s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f "
		       "%8.2f %8.0f\n", in[k].label, m[k][7], m[k][8], m[k][0],
		       m[k][1], m[k][9], m[k][10], m[k][2] / 1e3, m[k][5],
		       m[k][6]);
	printf("  during/alone: gdirect median %.2f mean %.2f; ucx median %.2f "
	       "mean %.2f; gdirect/ucx during a pin: median %.4f mean %.4f\n",
	       m[0][8] / m[0][7], m[0][1] / m[0][0], m[1][8] / m[1][7],
	       m[1][1] / m[1][0], m[0][8] / m[1][8], m[0][1] / m[1][1]);
	for (int k = 0; k < 2; k++) {
		char name[64];
		FILE *f;

		snprintf(name, sizeof(name), "contended-%s.dat", in[k].label);
		f = data_file(o, name);
		if (!f)
			break;
		fprintf(f, "# %s, %d regions, last repeat: fraction of hits, "
			"ns alone, ns during a pin (quantiles)\n", in[k].label,
			NREG);
		for (int i = 0; i < NQ; i++)
			fprintf(f, "%.4f %.1f %.1f\n", (double)i / (NQ - 1),
				dist[k][0][i], dist[k][1][i]);
		fclose(f);
	}
	if (o->md) {
		fprintf(o->md, "\n### 2. Hits while another thread registers\n\n"
			"%d regions registered; one thread hits (random 4 KiB "
			"requests, each get + put timed with the TSC) for %.0f ms "
			"alone, then for %.0f ms while a second thread registers "
			"fresh buffers back to back, each pin taking 1.3 ms.  "
			"\"During a pin\" = the hits that began while a pin was in "
			"flight.  Each figure is the median over %d repeats of "
			"that repeat's median, mean or 99th percentile.\n\n",
			NREG, window / 1e6, window / 1e6, o->repeats);
		fprintf(o->md, "| cache | hits during pins | median alone (ns) "
			"| median during a pin (ns) | during/alone (median) "
			"| mean alone (ns) | mean during a pin (ns) "
			"| during/alone (mean) | p99 alone / during (ns) "
			"| slowest during a pin (us) | ms per registration |\n"
			"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (int k = 0; k < 2; k++)
			fprintf(o->md, "| %s | %.0f | %.1f | %.1f | %.2f | %.1f "
				"| %.1f | %.2f | %.0f / %.0f | %.1f | %.2f |\n",
				k ? "UCX" : "gdirect", m[k][6], m[k][7], m[k][8],
				m[k][8] / m[k][7], m[k][0], m[k][1],
				m[k][1] / m[k][0], m[k][9], m[k][10],
				m[k][2] / 1e3, m[k][5]);
		fprintf(o->md, "| gdirect/UCX | | %.2f | %.5f | | %.2f | %.5f "
			"| | | | %.2f |\n", m[0][7] / m[1][7], m[0][8] / m[1][8],
			m[0][0] / m[1][0], m[0][1] / m[1][1], m[0][5] / m[1][5]);
	}
	for (int k = 0; k < 2; k++)
		inst_close(&in[k]);
	free(trace);
	free(bufs);
	free(fresh);
	free(lat_pin);
	free(lat_free);
}
