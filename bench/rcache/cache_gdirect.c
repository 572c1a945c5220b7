/* SPDX-License-Identifier: MIT */
/*
 * cache_gdirect.c - libgdirect's registration cache (the real library,
 * through its public calls) over the benchmark's pinning device, plugged
 * in with gdl_ctx_create_backend() (the library's GDIRECT_PRIVATE entry
 * point for a context over another backend).
 */
#include <stdio.h>

#include <gdirect.h>

#include "fake_backend.h"
#include "cache.h"

static void *bench_create(const struct cache_cfg *cfg)
{
	struct gdirect_params p;
	struct gdirect_ctx *c = NULL;

	gdirect_params_init(&p);
	/* The library's default invalidation (gdirect.ko's status word, read
	 * on every hit, plus CUDA free interception); limits as asked. */
	p.invalidation = GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS;
	p.max_regions = cfg->max_regions;
	p.max_bytes = cfg->max_bytes;
	if (gdl_ctx_create_backend(&p, cfg->backend, &c)) {
		fprintf(stderr, "gdirect: %s\n", gdirect_errmsg());
		return NULL;
	}
	return c;
}

static int bench_get(void *cache, uint64_t addr, size_t len, void **ref)
{
	return gdirect_reg_get(cache, (const void *)(uintptr_t)addr, len, 0,
			       (struct gdirect_reg **)ref);
}

static void bench_put(void *cache, void *ref)
{
	(void)cache;
	gdirect_reg_put(ref);
}

static void bench_destroy(void *cache)
{
	gdirect_ctx_destroy(cache);
}

const struct cache_ops cache_gdirect = {
	.name = "gdirect",
	.create = bench_create,
	.get = bench_get,
	.put = bench_put,
	.destroy = bench_destroy,
};
