/* SPDX-License-Identifier: MIT */
/* bench_cache.h - libgdirect's registration cache on a synthetic trace */
#ifndef GDTOOL_BENCH_CACHE_H
#define GDTOOL_BENCH_CACHE_H

#include <stdint.h>

#include "json.h"
#include "stats.h"

struct cache_result {
	int buffers, accesses, max_regions;
	uint64_t buf_size;
	uint64_t hits, misses, evictions, pins, unpins;
	struct gdcli_summary hit, miss;	/* ns per gdirect_reg_get + put */
};

/*
 * Run the trace: `buffers` GPU allocations of buf_size bytes, `accesses`
 * gdirect_reg_get/put pairs, 90% of them on a hot eighth of the buffers,
 * with the cache limited to max_regions (0: unlimited).  CUDA must be open.
 * 0, or -errno with a reason printed.
 */
int gdcli_bench_cache(int buffers, uint64_t buf_size, int accesses,
		      int max_regions, struct cache_result *res);

void gdcli_bench_cache_print(const struct cache_result *res);
/* A latency summary as a JSON object, in microseconds. */
void gdcli_json_summary(struct gdcli_json *j, const char *key,
			const struct gdcli_summary *s);

void gdcli_bench_cache_json(struct gdcli_json *j,
			    const struct cache_result *res);

#endif
