/* SPDX-License-Identifier: MIT */
/*
 * notify.c - invalidation by intercepted frees (GDIRECT_INV_HOOKS).
 *
 * Called from inside CUDA free hooks, before the real free: it must be
 * quick and must not call back into CUDA or unpin (an ioctl that may wait
 * on the driver the hook is running inside).  So it only takes regions out
 * of the index; they wait on ctx->dying, and the next library call on that
 * context that drains (a miss, gdirect_process_events(), a flush) unpins
 * those nobody holds.
 */
#include <errno.h>

#include "epoch.h"
#include "libgdirect_internal.h"
#include "regcache.h"

struct range {
	uint64_t start, end;
};

void gdl_invalidate(struct gdirect_ctx *c, uint64_t s, uint64_t e)
{
	struct gdirect_reg *killed = NULL;
	size_t n;

	bool unknown = false;

	pthread_mutex_lock(&c->lock);
	if (e == s) {
		/* Length unknown: the cached allocation tells it. */
		struct gdl_alloc *al = gdl_alloc_find(c, s);

		e = al ? al->base + al->size : s + 1;
		if (al)
			s = al->base;
		unknown = !al;
	}
	gdl_free_log_locked(c, s, e, unknown);
	do {
		struct gdirect_reg *v[64];

		n = gdl_regions_overlapping(c, s, e, v, 64);
		gdl_kill_locked(c, v, n < 64 ? n : 64, GDL_CAUSE_HOOKS, &killed);
	} while (n > 64);
	gdl_rc_notify_locked(c->mr, s, e);
	gdl_allocs_drop_locked(c, s, e);
	/* A pin in progress over the range may have pinned what is being
	 * freed: its miss must not publish it (rcache.c). */
	/* Where the freed allocation's extent is not known, a pin or a
	 * query of any part of it may be one of an interior pointer that
	 * [s, s+1) misses: every one is marked (a retry is the cost). */
	for (struct gdl_pending *p = c->pending; p; p = p->next)
		if (unknown || (p->start < e && s < p->end))
			p->freed = true;
	/* Likewise a pin's driver query about the range: its answer may
	 * describe what is being freed (rcache.c). */
	for (struct gdl_pending *p = c->queries; p; p = p->next)
		if (unknown || (p->start < e && s < p->end))
			p->freed = true;
	/* Deferred: the killed regions stay on ctx->dying for a drain; a
	 * miss waiting for BAR space drains them (rcache.c). */
	if (killed) {
		c->drain_due = true;
		if (atomic_load(&c->release_waiters))
			pthread_cond_broadcast(&c->released);
	}
	pthread_mutex_unlock(&c->lock);
}

static void notify_ctx(struct gdirect_ctx *c, void *arg)
{
	const struct range *rg = arg;

	if (c->p.invalidation & GDIRECT_INV_HOOKS)
		gdl_invalidate(c, rg->start, rg->end);
}

GDL_EXPORT void gdirect_notify_free(const void *ptr, size_t len)
{
	struct range rg = { (uintptr_t)ptr, (uintptr_t)ptr + len };

	if (!ptr)
		return;
	if (rg.end < rg.start)
		rg.end = UINT64_MAX;
	gdl_ctx_list_foreach(notify_ctx, &rg);
}
