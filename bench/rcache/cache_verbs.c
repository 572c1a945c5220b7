/* SPDX-License-Identifier: MIT */
/*
 * cache_verbs.c - libgdirect's NIC-registration cache (gdirect_mr_get and
 * gdirect_mr_put, the verbs kind of the registration engine) over the
 * benchmark's pinning device, with no NIC: the libibverbs calls the
 * library makes are the tests' fake (tests/fakes/fake_ibv.h), defined in
 * this file.  The benchmark links libgdirect.so, whose references to
 * ibv_reg_mr and the rest bind at run time to these definitions, the
 * executable's coming first in the lookup.  A registration takes
 * fibv_pd[0] of the fake's device 0; only the miss reaches the fake, and
 * the benchmark times hits.
 */
#include <stdio.h>

#include <gdirect.h>
#include <gdirect_verbs.h>

#include "fake_backend.h"
#include "fake_ibv.h"
#include "cache.h"

/* What a communication library asks of a receive or RDMA target. */
#define MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		   IBV_ACCESS_REMOTE_READ)

static void *verbs_create(const struct cache_cfg *cfg)
{
	struct gdirect_params p;
	struct gdirect_ctx *c = NULL;

	gdirect_params_init(&p);
	/* The invalidation the BAR cache runs with (cache_gdirect.c): the
	 * CUDA free interception, and every hit checks its allocation's
	 * BUFFER_ID against the region's tag. */
	p.invalidation = GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS;
	p.max_regions = cfg->max_regions;
	p.max_bytes = cfg->max_bytes;
	if (gdl_ctx_create_backend(&p, cfg->backend, &c)) {
		fprintf(stderr, "gdirect (verbs): %s\n", gdirect_errmsg());
		return NULL;
	}
	return c;
}

static int verbs_get(void *cache, uint64_t addr, size_t len, void **ref)
{
	return gdirect_mr_get(cache, &fibv_pd[0], (const void *)(uintptr_t)addr,
			      len, MR_ACCESS, 0, (struct gdirect_mr **)ref);
}

static void verbs_put(void *cache, void *ref)
{
	(void)cache;
	gdirect_mr_put(ref);
}

static void verbs_destroy(void *cache)
{
	gdirect_ctx_destroy(cache);
}

unsigned long cache_verbs_nic_regs(void)
{
	return fibv_regs();
}

const struct cache_ops cache_verbs = {
	.name = "gdirect-mr",
	.create = verbs_create,
	.get = verbs_get,
	.put = verbs_put,
	.destroy = verbs_destroy,
};
