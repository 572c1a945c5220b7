/* SPDX-License-Identifier: MIT */
/*
 * cache_ucx.c - UCX's ucs_rcache (Debian's libucx-dev) over the benchmark's
 * pinning device, configured as UCX's gdr_copy transport configures it:
 * 64 KiB alignment (GPU pages), the LRU limits as asked (UCX's default is
 * none), no memory events (the benchmark never frees; UCM hooks would only
 * add work outside the measured paths).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <ucs/memory/rcache.h>

#include "fake_backend.h"
#include "cache.h"

#define GPU_PAGE (64u << 10)

struct ureg {
	ucs_rcache_region_t super;	/* first, as UCX requires */
	uint64_t handle;
};

struct ucache {
	ucs_rcache_t *rc;
	struct gdl_backend *dev;
};

static ucs_status_t u_mem_reg(void *context, ucs_rcache_t *rcache, void *arg,
			      ucs_rcache_region_t *region, uint16_t flags)
{
	struct ucache *u = context;
	struct ureg *r = (struct ureg *)region;
	struct gdl_pin pin;
	int rc = u->dev->ops->pin(u->dev, region->super.start,
				  region->super.end - region->super.start, &pin);

	(void)rcache;
	(void)arg;
	(void)flags;
	if (rc == -ENOMEM)
		return UCS_ERR_NO_MEMORY;
	if (rc)
		return UCS_ERR_IO_ERROR;
	r->handle = pin.handle;
	return UCS_OK;
}

static void u_mem_dereg(void *context, ucs_rcache_t *rcache,
			ucs_rcache_region_t *region)
{
	struct ucache *u = context;

	(void)rcache;
	u->dev->ops->unpin(u->dev, ((struct ureg *)region)->handle);
}

static void u_dump(void *context, ucs_rcache_t *rcache,
		   ucs_rcache_region_t *region, char *buf, size_t max)
{
	(void)context;
	(void)rcache;
	snprintf(buf, max, "handle %llu",
		 (unsigned long long)((struct ureg *)region)->handle);
}

static const ucs_rcache_ops_t u_ops = {
	.mem_reg = u_mem_reg,
	.mem_dereg = u_mem_dereg,
	.dump_region = u_dump,
};

static void *u_create(const struct cache_cfg *cfg)
{
	struct ucache *u = calloc(1, sizeof(*u));
	ucs_rcache_params_t p = {
		.region_struct_size = sizeof(struct ureg),
		.alignment = GPU_PAGE,
		.max_alignment = GPU_PAGE,
		.ucm_events = 0,
		.ucm_event_priority = 1000,
		.ops = &u_ops,
		.context = u,
		.flags = 0,
		.max_regions = cfg->max_regions ? cfg->max_regions : ULONG_MAX,
		.max_size = cfg->max_bytes ? cfg->max_bytes : SIZE_MAX,
		.max_unreleased = SIZE_MAX,
	};

	if (!u)
		return NULL;
	u->dev = cfg->backend;
	if (ucs_rcache_create(&p, "bench", NULL, &u->rc) != UCS_OK) {
		fprintf(stderr, "ucs_rcache_create failed\n");
		free(u);
		return NULL;
	}
	return u;
}

static int u_get(void *cache, uint64_t addr, size_t len, void **ref)
{
	struct ucache *u = cache;
	ucs_rcache_region_t *r;
	ucs_status_t st = ucs_rcache_get(u->rc, (void *)(uintptr_t)addr, len,
					 PROT_READ | PROT_WRITE, NULL, &r);

	if (st != UCS_OK)
		return st == UCS_ERR_NO_MEMORY ? -ENOMEM : -EIO;
	*ref = r;
	return 0;
}

static void u_put(void *cache, void *ref)
{
	ucs_rcache_region_put(((struct ucache *)cache)->rc, ref);
}

static void u_destroy(void *cache)
{
	struct ucache *u = cache;

	ucs_rcache_destroy(u->rc);
	free(u);
}

const struct cache_ops cache_ucx = {
	.name = "ucx",
	.create = u_create,
	.get = u_get,
	.put = u_put,
	.destroy = u_destroy,
};
