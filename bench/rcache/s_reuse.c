/* SPDX-License-Identifier: MIT */
/*
 * s_reuse.c - scenario 3: a reuse-heavy trace with gdrcopy's V100 costs
 * (1.3 ms pin, 0.7 ms unpin).
 *
 * 256 buffers; 90% of the operations go to a hot set of 32, the rest to
 * any of the 256; both caches keep at most 64 regions (LRU eviction of
 * unused regions above that, the same limit for both).  One thread, then
 * two threads sharing the cache (each its own trace of half the length).
 * Both caches replay the trace once, untimed, before the timed repeats.
 */
#include <stdlib.h>

#include "replay.h"

#define POOL 256
#define HOT 32
#define HOT_PCT 90
#define LIMIT 64

void scenario_reuse(const struct opts *o)
{
	const size_t len = o->quick ? 400 : 2000;
	uint64_t *bufs = alloc_buffers(POOL);
	uint64_t *t1[1] = { zipfish_trace(bufs, POOL, HOT, HOT_PCT, len, 31) };
	uint64_t *t2[2] = {
		zipfish_trace(bufs, POOL, HOT, HOT_PCT, len / 2, 32),
		zipfish_trace(bufs, POOL, HOT, HOT_PCT, len / 2, 33),
	};
	const struct fake_cfg dev = { .pin_ns = PIN_NS, .unpin_ns = UNPIN_NS };
	struct inst in[2];
	double ns[2][2][64], pins[2][2][64], unpins[2][2][64], fails[2][2][64];

	inst_open(&in[0], &cache_gdirect, "gdirect", &dev, LIMIT, 0) || (abort(), 0);
	inst_open(&in[1], &cache_ucx, "ucx", &dev, LIMIT, 0) || (abort(), 0);
	for (int k = 0; k < 2; k++) {
		progress("reuse: warming %s", in[k].label);
		replay(&in[k], t1, len, 1);
	}
	for (int r = 0; r < o->repeats; r++) {
		for (int nt = 1; nt <= 2; nt++)
			for (int kk = 0; kk < 2; kk++) {
				int k = (r + kk) % 2;
				struct replay_result x = nt == 1 ?
					replay(&in[k], t1, len, 1) :
					replay(&in[k], t2, len / 2, 2);

				ns[nt - 1][k][r] = x.ns_per_op;
				pins[nt - 1][k][r] = (double)x.dev.pins;
				unpins[nt - 1][k][r] = (double)x.dev.unpins;
				fails[nt - 1][k][r] = (double)x.fails;
			}
		progress("reuse: repeat %d/%d: 1 thread gdirect %.0f us/op, ucx "
			 "%.0f; 2 threads gdirect %.0f, ucx %.0f", r + 1,
			 o->repeats, ns[0][0][r] / 1e3, ns[0][1][r] / 1e3,
			 ns[1][0][r] / 1e3, ns[1][1][r] / 1e3);
	}
	double m[2][2][4];

	for (int t = 0; t < 2; t++)
		for (int k = 0; k < 2; k++) {
			m[t][k][0] = median(ns[t][k], o->repeats);
			m[t][k][1] = median(pins[t][k], o->repeats);
			m[t][k][2] = median(unpins[t][k], o->repeats);
			m[t][k][3] = median(fails[t][k], o->repeats);
		}
	printf("\n3. Reuse-heavy trace (%zu ops, %d buffers, %d%% to %d hot, "
	       "limit %d regions), median of %d\n", len, POOL, HOT_PCT, HOT,
	       LIMIT, o->repeats);
	printf("%7s %8s %12s %6s %7s %6s %8s\n", "threads", "cache", "us/op",
	       "pins", "unpins", "fails", "gd/ucx");
	for (int t = 0; t < 2; t++)
		for (int k = 0; k < 2; k++)
			printf("%7d %8s %12.1f %6.0f %7.0f %6.0f %8s\n", t + 1,
			       in[k].label, m[t][k][0] / 1e3, m[t][k][1],
			       m[t][k][2], m[t][k][3], "");
	for (int t = 0; t < 2; t++)
		printf("%7d gdirect/ucx time per op: %.2f\n", t + 1,
		       m[t][0][0] / m[t][1][0]);
	if (o->md) {
		fprintf(o->md, "\n### 3. Reuse-heavy trace, 1.3 ms pin, 0.7 ms "
			"unpin\n\n%zu registrations (get + put of a whole 64 KiB "
			"buffer) per repeat: %d%% to a hot set of %d buffers, the "
			"rest to any of %d; both caches limited to %d regions "
			"(LRU).  With 2 threads each replays its own half-length "
			"trace on the shared cache.  Time per operation = wall "
			"time / operations; pins, unpins and failed operations "
			"per repeat; median of %d repeats after one untimed "
			"replay.\n\n", len, HOT_PCT, HOT, POOL, LIMIT, o->repeats);
		fprintf(o->md, "| threads | cache | us/op | pins | unpins | "
			"failed | gdirect/UCX |\n|---:|---|---:|---:|---:|---:|---:|\n");
		for (int t = 0; t < 2; t++)
			for (int k = 0; k < 2; k++) {
				fprintf(o->md, "| %d | %s | %.1f | %.0f | %.0f | "
					"%.0f | ", t + 1, k ? "UCX" : "gdirect",
					m[t][k][0] / 1e3, m[t][k][1], m[t][k][2],
					m[t][k][3]);
				if (k)
					fprintf(o->md, "|\n");
				else
					fprintf(o->md, "%.2f |\n",
						m[t][0][0] / m[t][1][0]);
			}
	}
	for (int k = 0; k < 2; k++)
		inst_close(&in[k]);
	free(t1[0]);
	free(t2[0]);
	free(t2[1]);
	free(bufs);
}
