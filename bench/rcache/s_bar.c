/* SPDX-License-Identifier: MIT */
/*
 * s_bar.c - scenario 4: a working set twice the BAR budget.
 *
 * The device refuses a pin (-ENOMEM, after costing a pin) once the pinned
 * total would pass 32 regions' worth (2 MiB); the trace registers 64
 * buffers in random order.  Neither cache has a region or size limit (the
 * default of both): what happens when the BAR runs out is the cache's
 * answer to the failure.  UCX is also run with max_size set just below the
 * budget, the best a user who knows the budget and the region size can do.
 * gdirect pays for each refused pin before it evicts and retries; it is also
 * run on a device whose refusals are free, to show that part of its cost.
 */
#include <stdlib.h>

#include "replay.h"

#define BUDGET_REGIONS 32
#define WORKING_SET (2 * BUDGET_REGIONS)
#define NC 4	/* configurations */

void scenario_bar(const struct opts *o)
{
	const size_t len = o->quick ? 100 : 400;
	const uint64_t budget = BUDGET_REGIONS * GPU_PAGE;
	uint64_t *bufs = alloc_buffers(WORKING_SET);
	uint64_t *tr[1] = { zipfish_trace(bufs, WORKING_SET, WORKING_SET, 0,
					  len, 41) };
	const struct fake_cfg dev = { .pin_ns = PIN_NS, .unpin_ns = UNPIN_NS, .bar_bytes = budget };
	const struct fake_cfg dev_free = { .pin_ns = PIN_NS, .unpin_ns = UNPIN_NS, .bar_bytes = budget,
					  .refuse_free = true };
	static const char *const labels[NC] = {
		"gdirect", "UCX", "UCX, max_size = budget - 64 KiB",
		"gdirect, refused pins free" };
	struct inst in[NC];
	double ns[NC][64], fails[NC][64], pins[NC][64], unpins[NC][64];
	double enomem[NC][64];

	inst_open(&in[0], &cache_gdirect, labels[0], &dev, 0, 0) || (abort(), 0);
	inst_open(&in[1], &cache_ucx, labels[1], &dev, 0, 0) || (abort(), 0);
	inst_open(&in[2], &cache_ucx, labels[2], &dev, 0, budget - GPU_PAGE) ||
		(abort(), 0);
	inst_open(&in[3], &cache_gdirect, labels[3], &dev_free, 0, 0) ||
		(abort(), 0);
	for (int k = 0; k < NC; k++) {
		progress("bar: warming %s", labels[k]);
		replay(&in[k], tr, len, 1);
	}
	for (int r = 0; r < o->repeats; r++) {
		for (int kk = 0; kk < NC; kk++) {
			int k = (r + kk) % NC;
			struct replay_result x = replay(&in[k], tr, len, 1);

			ns[k][r] = x.ns_per_op;
			fails[k][r] = (double)x.fails;
			pins[k][r] = (double)x.dev.pins;
			unpins[k][r] = (double)x.dev.unpins;
			enomem[k][r] = (double)x.dev.enomem;
		}
		progress("bar: repeat %d/%d: failed ops gdirect %.0f, ucx %.0f, "
			 "ucx(max_size) %.0f", r + 1, o->repeats, fails[0][r],
			 fails[1][r], fails[2][r]);
	}
	double m[NC][5];

	for (int k = 0; k < NC; k++) {
		m[k][0] = median(ns[k], o->repeats);
		m[k][1] = median(fails[k], o->repeats);
		m[k][2] = median(pins[k], o->repeats);
		m[k][3] = median(unpins[k], o->repeats);
		m[k][4] = median(enomem[k], o->repeats);
	}
	summary.bar = true;
	summary.bar_fails[0] = m[0][1];
	summary.bar_fails[1] = m[1][1];
	printf("\n4. Working set 2x the BAR budget (%zu ops over %d buffers, "
	       "budget %d regions), median of %d\n", len, WORKING_SET,
	       BUDGET_REGIONS, o->repeats);
	printf("%34s %9s %7s %6s %7s %8s\n", "cache", "us/op", "failed", "pins",
	       "unpins", "refused");
	for (int k = 0; k < NC; k++)
		printf("%34s %9.1f %7.0f %6.0f %7.0f %8.0f\n", labels[k],
		       m[k][0] / 1e3, m[k][1], m[k][2], m[k][3], m[k][4]);
	printf("gdirect/UCX time per op: %.2f (tuned UCX: %.2f; refused pins "
	       "free: %.2f)\n", m[0][0] / m[1][0], m[0][0] / m[2][0],
	       m[3][0] / m[2][0]);
	if (o->md) {
		fprintf(o->md, "\n### 4. Working set twice the BAR budget\n\n"
			"The device refuses a pin (after costing 1.3 ms) once "
			"more than %d regions (%llu KiB) would be pinned; %zu "
			"registrations of %d buffers in random order per repeat, "
			"no cache limits (both caches' default).  Failed = "
			"operations that returned an error to the caller; "
			"refused = pins the device refused.  Median of %d "
			"repeats after one untimed replay.  The last row is "
			"gdirect on a device that refuses a pin at no cost (its "
			"time column compares it with itself).\n\n", BUDGET_REGIONS,
			(unsigned long long)(budget / KiB), len, WORKING_SET,
			o->repeats);
		fprintf(o->md, "| cache | failed ops | us/op | pins | unpins | "
			"refused pins | gdirect/this (time) |\n"
			"|---|---:|---:|---:|---:|---:|---:|\n");
		for (int k = 0; k < NC; k++)
			fprintf(o->md, "| %s | %.0f | %.1f | %.0f | %.0f | %.0f "
				"| %.2f |\n", labels[k], m[k][1], m[k][0] / 1e3,
				m[k][2], m[k][3], m[k][4],
				m[k == 3 ? 3 : 0][0] / m[k][0]);
	}
	for (int k = 0; k < NC; k++)
		inst_close(&in[k]);
	free(tr[0]);
	free(bufs);
}
