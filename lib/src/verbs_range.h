/* SPDX-License-Identifier: MIT */
/*
 * verbs_range.h - what range the registration engine (regcache.c)
 * registers for a request, apart from the verbs calls so that it can be
 * tested without a NIC.
 */
#ifndef GDL_VERBS_RANGE_H
#define GDL_VERBS_RANGE_H

#include <stdint.h>

#include "gdirect.h"

/* Registrations and dma-buf exports are made of host pages. */
#define GDL_MR_HOST_PAGE 4096ULL

/*
 * The range [*s, *e) to register for a request [a, end) that info
 * classified.  GPU memory: the whole allocation when it is at most
 * whole_max bytes (whole_max 0: never), else the request rounded out to
 * 64 KiB pages and clipped to the allocation, so that a dma-buf export of
 * it stays inside the allocation; -EINVAL when the request is not inside
 * the allocation.  Host memory: the request rounded out to host pages.
 * -EINVAL for an empty request.
 */
int gdl_mr_range(const struct gdirect_ptr_info *info, uint64_t a,
		 uint64_t end, uint64_t whole_max, uint64_t *s, uint64_t *e);

#endif
