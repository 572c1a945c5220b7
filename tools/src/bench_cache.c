// SPDX-License-Identifier: MIT
/*
 * bench_cache.c - what a registration cache buys on a trace
 *
 * A communication library registers the same buffers again and again; the
 * guide's 11.1/11.2 answer is lazy unpinning behind a cache.  This replays a
 * skewed trace (90% of accesses to one eighth of the buffers, the rest
 * uniform, from a fixed-seed generator so runs compare) through libgdirect
 * and times each gdirect_reg_get + gdirect_reg_put, split by whether the
 * cache's hit counter moved.
 */
#include "bench_cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gdirect.h>

#include "tool_cuda.h"

static uint64_t next_rand(uint64_t *s)
{
	/* xorshift64*: deterministic and good enough to pick buffers. */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

int gdcli_bench_cache(int buffers, uint64_t buf_size, int accesses,
		      int max_regions, struct cache_result *res)
{
	uint64_t *bufs = calloc((size_t)buffers, sizeof(*bufs)), seed = 0x9e3779b97f4a7c15ULL;
	double *th = malloc((size_t)accesses * sizeof(double));
	double *tm = malloc((size_t)accesses * sizeof(double));
	struct gdirect_params p;
	struct gdirect_stats st0, st1, st;
	struct gdirect_ctx *ctx = NULL;
	size_t nh = 0, nm = 0;
	int i, err = 0, hot = buffers / 8 ? buffers / 8 : 1;

	memset(res, 0, sizeof(*res));
	res->buffers = buffers;
	res->buf_size = buf_size;
	res->accesses = accesses;
	res->max_regions = max_regions;
	if (!bufs || !th || !tm) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < buffers; i++) {
		err = gdcli_cuda_alloc(buf_size, &bufs[i]);
		if (err) {
			fprintf(stderr, "gdirect bench: GPU allocation %d of %d failed\n", i + 1, buffers);
			goto out;
		}
	}
	gdirect_params_init(&p);
	p.max_regions = (uint64_t)max_regions;
	err = gdirect_ctx_create(&p, &ctx);
	if (err) {
		fprintf(stderr, "gdirect bench: gdirect_ctx_create: %s\n", gdirect_errmsg());
		goto out;
	}
	gdirect_stats(ctx, &st0);
	for (i = 0; i < accesses; i++) {
		uint64_t r = next_rand(&seed);
		int b = r % 10 < 9 ? (int)((r >> 8) % (uint64_t)hot) :
			(int)((r >> 8) % (uint64_t)buffers);
		struct gdirect_reg *reg;
		double t0, t;

		gdirect_stats(ctx, &st);
		t0 = gdcli_now_ns();
		err = gdirect_reg_get(ctx, (const void *)(uintptr_t)bufs[b], buf_size, 0, &reg);
		if (!err)
			gdirect_reg_put(reg);
		t = gdcli_now_ns() - t0;
		if (err) {
			fprintf(stderr, "gdirect bench: gdirect_reg_get: %s\n", gdirect_errmsg());
			goto out;
		}
		gdirect_stats(ctx, &st1);
		if (st1.hits > st.hits)
			th[nh++] = t;
		else
			tm[nm++] = t;
	}
	gdirect_stats(ctx, &st1);
	res->hits = st1.hits - st0.hits;
	res->misses = st1.misses - st0.misses;
	res->evictions = st1.evictions - st0.evictions;
	res->pins = st1.pins - st0.pins;
	res->unpins = st1.unpins - st0.unpins;
	gdcli_summarise(th, nh, &res->hit);
	gdcli_summarise(tm, nm, &res->miss);
out:
	if (ctx)
		gdirect_ctx_destroy(ctx);
	for (i = 0; bufs && i < buffers; i++)
		if (bufs[i])
			gdcli_cuda_free(bufs[i]);
	free(bufs);
	free(th);
	free(tm);
	return err;
}

void gdcli_bench_cache_print(const struct cache_result *r)
{
	printf("registration cache (libgdirect) on a trace: %d accesses to %d buffers of %llu KiB,\n"
	       "90%% to %d hot ones; cache limit %d regions%s\n",
	       r->accesses, r->buffers, (unsigned long long)(r->buf_size >> 10),
	       r->buffers / 8 ? r->buffers / 8 : 1, r->max_regions,
	       r->max_regions ? "" : " (none)");
	printf("  hits %llu (%.1f%%), misses %llu, evictions %llu, pins %llu, unpins %llu\n",
	       (unsigned long long)r->hits,
	       r->accesses ? 100.0 * (double)r->hits / r->accesses : 0.0,
	       (unsigned long long)r->misses, (unsigned long long)r->evictions,
	       (unsigned long long)r->pins, (unsigned long long)r->unpins);
	printf("  %-6s %8s %10s %10s %10s %10s   (get + put, microseconds)\n", "", "count",
	       "min", "median", "p99", "max");
	printf("  %-6s %8zu %10.3f %10.3f %10.3f %10.3f\n", "hit", r->hit.n, r->hit.min / 1e3,
	       r->hit.median / 1e3, r->hit.p99 / 1e3, r->hit.max / 1e3);
	printf("  %-6s %8zu %10.3f %10.3f %10.3f %10.3f\n", "miss", r->miss.n, r->miss.min / 1e3,
	       r->miss.median / 1e3, r->miss.p99 / 1e3, r->miss.max / 1e3);
}

void gdcli_json_summary(struct gdcli_json *j, const char *key,
			const struct gdcli_summary *s)
{
	gdcli_json_obj(j, key);
	gdcli_json_u64(j, "samples", s->n);
	gdcli_json_dbl(j, "min_us", s->min / 1e3);
	gdcli_json_dbl(j, "median_us", s->median / 1e3);
	gdcli_json_dbl(j, "p99_us", s->p99 / 1e3);
	gdcli_json_dbl(j, "max_us", s->max / 1e3);
	gdcli_json_end(j, '}');
}

void gdcli_bench_cache_json(struct gdcli_json *j, const struct cache_result *r)
{
	gdcli_json_obj(j, "cache");
	gdcli_json_int(j, "buffers", r->buffers);
	gdcli_json_u64(j, "buffer_size", r->buf_size);
	gdcli_json_int(j, "accesses", r->accesses);
	gdcli_json_int(j, "max_regions", r->max_regions);
	gdcli_json_u64(j, "hits", r->hits);
	gdcli_json_u64(j, "misses", r->misses);
	gdcli_json_u64(j, "evictions", r->evictions);
	gdcli_json_u64(j, "pins", r->pins);
	gdcli_json_u64(j, "unpins", r->unpins);
	gdcli_json_summary(j, "hit", &r->hit);
	gdcli_json_summary(j, "miss", &r->miss);
	gdcli_json_end(j, '}');
}
