/* SPDX-License-Identifier: MIT */
/*
 * s_reg.c - scenario 5: registrations alone, for profiling (not in the
 * default set, not in the report).
 *
 * Each repeat opens a fresh context of each cache on a device whose pins
 * cost nothing and registers N buffers once each (get + put): what a miss
 * costs the cache itself, first touches of its memory included, which is
 * what a context pays while it fills.  Long enough to profile:
 *
 *	perf record --call-graph dwarf -- rcache_bench --only 5
 *
 * (GDIRECT_LIBCUDA set as bench/rcache/run.sh sets it).
 */
#include <stdlib.h>

#include "harness.h"

/* ns per registration of bufs[0..n) in a fresh context of ops. */
static double register_all(const struct cache_ops *ops, const uint64_t *bufs,
			   size_t n)
{
	const struct fake_cfg free_pins = { 0 };
	struct inst in;
	double ns;

	if (!inst_open(&in, ops, ops->name, &free_pins, 0, 0))
		abort();
	ns = register_each(&in, bufs, n);
	inst_close(&in);
	return ns;
}

void scenario_registration(const struct opts *o)
{
	static const size_t sizes[] = { 4096, 65536 };
	const struct cache_ops *ops[2] = { &cache_gdirect, &cache_ucx };

	for (int si = 0; si < 2; si++) {
		size_t n = o->quick && sizes[si] > 4096 ? 8192 : sizes[si];
		uint64_t *bufs = alloc_buffers(n);
		double ns[2][64];

		for (int r = 0; r < o->repeats; r++)
			for (int k = 0; k < 2; k++)
				ns[k][r] = register_all(ops[k], bufs, n);
		printf("registration: %zu regions, fresh context, free pins: "
		       "gdirect %.0f ns, ucx %.0f ns per registration "
		       "(median of %d; gdirect/ucx %.2f)\n", n,
		       median(ns[0], o->repeats), median(ns[1], o->repeats),
		       o->repeats, median(ns[0], o->repeats) /
		       median(ns[1], o->repeats));
		free(bufs);
	}
}
