/* SPDX-License-Identifier: MIT */
/* gpucopy.c - host <-> GPU copies through the cache and the BAR mapping. */
#include <errno.h>
#include <stdint.h>

#include "libgdirect_internal.h"

static int with_mapping(struct gdirect_ctx *c, const void *gpu, size_t n,
			struct gdirect_reg **r, void **map)
{
	int rc = gdirect_reg_get(c, gpu, n, 0, r);

	if (rc)
		return rc;
	*map = gdirect_reg_map(*r, gpu);
	if (!*map) {
		gdirect_reg_put(*r);
		return -EIO;
	}
	return 0;
}

GDL_EXPORT int gdirect_copy_to_gpu(struct gdirect_ctx *c, void *gpu_dst,
				  const void *src, size_t n)
{
	struct gdirect_reg *r;
	void *m;
	int rc;

	if (!n)
		return 0;
	rc = with_mapping(c, gpu_dst, n, &r, &m);
	if (rc)
		return rc;
	gdirect_copy_to_mapping(m, src, n);
	gdirect_reg_put(r);
	return 0;
}

GDL_EXPORT int gdirect_copy_from_gpu(struct gdirect_ctx *c, void *dst,
				    const void *gpu_src, size_t n)
{
	struct gdirect_reg *r;
	void *m;
	int rc;

	if (!n)
		return 0;
	rc = with_mapping(c, gpu_src, n, &r, &m);
	if (rc)
		return rc;
	gdirect_copy_from_mapping(dst, m, n);
	gdirect_reg_put(r);
	return 0;
}
