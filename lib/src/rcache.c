/* SPDX-License-Identifier: MIT */
/*
 * rcache.c - the registration cache.
 *
 * Hit path (no lock, no system call): epoch section, one lookup in the
 * page table of live regions (pgtab.h: a slot per 64 KiB page), a
 * compare-and-swap on the region's refcount, then the validity check of the
 * selected invalidation modes (an acquire load of the region's status word;
 * a BUFFER_ID query in tag mode).  The put is a store of the LRU stamp and
 * one atomic decrement.
 *
 * Miss path: classify afresh, SYNC_MEMOPS once per allocation, announce a
 * pending pin under ctx->lock, drop the lock, pin (evicting unused regions
 * in LRU order and retrying while the pin fails for BAR space), retake the
 * lock and point the new region's pages at it.  Misses on a range that is
 * being pinned wait for that pin; hits never wait for anything.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_dl.h"
#include "epoch.h"
#include "libgdirect_internal.h"

#define GD_MAX_OVERLAP 64

/* ---- release ----------------------------------------------------------- */

static void region_free(void *p)
{
	struct gdirect_reg *r = p;

	pthread_mutex_destroy(&RC(r)->map_lock);
	/* The context outlives its retired regions (destroy waits). */
	gd_hpmem_free(&r->ctx->regmem, r);
}

/* Unmap and unpin a dead, unreferenced region; free it after a grace period. */
static void region_release(struct gdirect_reg *r)
{
	struct gdirect_ctx *c = r->ctx;
	void *m = atomic_load(&RC(r)->map);

	if (m)
		c->backend->ops->unmap(c->backend, m, RC(r)->pin.size);
	if (atomic_load(&gd_fork_gen) == c->fork_gen)
		c->backend->ops->unpin(c->backend, RC(r)->pin.handle);
	ST_INC(c, unpins);
	ST_SUB(c, regions, 1);
	ST_SUB(c, bytes_pinned, RC(r)->pin.size);
	gd_epoch_retire(r, region_free);
	/* Its BAR space is back: wake misses that found nothing to evict.
	 * (Decrement before reading the waiters, as they count themselves
	 * before reading releasing: one side always sees the other.) */
	atomic_fetch_sub(&c->releasing, 1);
	if (atomic_load(&c->release_waiters))
		gd_release_wake(c);
}

void gd_release_wake(struct gdirect_ctx *c)
{
	pthread_mutex_lock(&c->lock);
	c->release_gen++;
	pthread_cond_broadcast(&c->released);
	pthread_mutex_unlock(&c->lock);
}

void gd_release_list(struct gdirect_reg *list)
{
	while (list) {
		struct gdirect_reg *next = RC(list)->gc_next;

		region_release(list);
		list = next;
	}
}

/* Drop one reference; true if the caller now owns the release. */
static bool ref_drop(struct gdirect_reg *r)
{
	uint32_t v = atomic_fetch_sub(&r->refs, 1);

	if (v != (GD_DEAD | 1) || atomic_flag_test_and_set(&r->released))
		return false;
	atomic_fetch_add(&r->ctx->releasing, 1);
	return true;
}

/*
 * Put a reference.  No epoch section is needed: references are only taken
 * from a region that is not dead (lookup_ref's compare-and-swap, or under
 * ctx->lock while it is indexed), so once dead its count only falls and
 * exactly one thread sees it go from GD_DEAD|1 to GD_DEAD|0; every other
 * thread leaves r alone after its decrement.
 */
static void put_ref(struct gdirect_reg *r)
{
	if (__builtin_expect(gd_inherited(r->ctx), 0)) {
		/* A fork child's copy of the parent's region: its mapping
		 * is not the child's (the address may be the child's own
		 * memory now), its pin and locks are the parent's.  Only
		 * count; gdirect_ctx_destroy() frees the copy. */
		atomic_fetch_sub(&r->refs, 1);
		return;
	}
	atomic_store_explicit(&r->stamp, gd_lru_stamp(r->ctx),
			      memory_order_relaxed);
	if (ref_drop(r))
		region_release(r);
}

/* ---- killing (removal from the index), under ctx->lock ----------------- */

static void count_cause(struct gdirect_ctx *c, enum gd_cause cause)
{
	switch (cause) {
	case GD_CAUSE_EVICT: ST_INC(c, evictions); break;
	case GD_CAUSE_EVICT_BAR: ST_INC(c, evictions_bar); break;
	case GD_CAUSE_KERNEL: ST_INC(c, inv_kernel); break;
	case GD_CAUSE_HOOKS: ST_INC(c, inv_hooks); break;
	case GD_CAUSE_BUFFER_ID: ST_INC(c, inv_buffer_id); break;
	default: break;
	}
}

/* ---- the region index (ctx->index), under ctx->lock -------------------- */

/* Point r's pages at r; they must have been reserved (index_reserve). */
static void index_add(struct gdirect_ctx *c, struct gdirect_reg *r)
{
	for (uint64_t p = gd_pg_first(r->start); p <= gd_pg_last(r->end); p++)
		gd_pgtab_set(&c->index, p, r);
}

static int index_reserve(struct gdirect_ctx *c, uint64_t s, uint64_t e)
{
	return gd_pgtab_reserve(&c->index, gd_pg_first(s), gd_pg_last(e));
}

/* Clear r's pages that still point to it (a successor may own some). */
static void index_del(struct gdirect_ctx *c, struct gdirect_reg *r)
{
	for (uint64_t p = gd_pg_first(r->start); p <= gd_pg_last(r->end); p++)
		if (gd_pgtab_get(&c->index, p) == r)
			gd_pgtab_set(&c->index, p, NULL);
}

struct ov_walk {
	uint64_t s, e;
	struct gdirect_reg **out, *last;
	size_t n, max;
};

static int ov_visit(uint64_t page, void *v, void *arg)
{
	struct ov_walk *w = arg;
	struct gdirect_reg *r = v;

	(void)page;
	/* A region's pages are consecutive and no page has two regions, so
	 * skipping repeats of the previous one counts each region once. */
	if (r == w->last || r->end <= w->s || w->e <= r->start)
		return 0;
	w->last = r;
	if (w->n < w->max)
		w->out[w->n] = r;
	w->n++;
	return 0;
}

/* Live regions overlapping [s, e), up to max in out; returns how many
 * overlap (may exceed max).  Costs the pages of [s, e) that are indexed. */
size_t gd_regions_overlapping(struct gdirect_ctx *c, uint64_t s, uint64_t e,
			      struct gdirect_reg **out, size_t max)
{
	struct ov_walk w = { s, e, out, NULL, 0, max };

	if (e > s)
		gd_pgtab_walk(&c->index, gd_pg_first(s), gd_pg_last(e),
			      ov_visit, &w);
	return w.n;
}

/*
 * Kill regions v[0..n): mark them dead, take them out of the index and the
 * live list, drop the index's reference.  Those left unreferenced are
 * pushed on *release for the caller to release (outside the lock) or defer.
 * With cause GD_CAUSE_EVICT*, only unused regions are killed.  add, if not
 * NULL, takes over the pages (reserved by the caller) once the killed
 * regions are dead.  Returns how many were killed.
 */
static size_t kill_locked(struct gdirect_ctx *c, struct gdirect_reg **v,
			  size_t n, enum gd_cause cause, struct gdirect_reg *add,
			  struct gdirect_reg **release)
{
	bool evict = cause == GD_CAUSE_EVICT || cause == GD_CAUSE_EVICT_BAR ||
		     cause == GD_CAUSE_FLUSH;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		struct gdirect_reg *r = v[i];

		if (evict) {
			uint32_t one = 1;

			if (!atomic_compare_exchange_strong(&r->refs, &one,
							    GD_DEAD | 1))
				continue;
		} else if (atomic_fetch_or(&r->refs, GD_DEAD) & GD_DEAD) {
			continue;
		}
		v[k++] = r;
	}
	/* A reader that still finds a killed region in a page (it is freed
	 * only after the epoch grace period) sees it dead: a miss. */
	if (add)
		index_add(c, add);
	for (size_t i = 0; i < k; i++) {
		struct gdirect_reg *r = v[i];

		index_del(c, r);
		r->prev->next = r->next;
		r->next->prev = r->prev;
		c->nregions--;
		c->nbytes -= RC(r)->pin.size;
		count_cause(c, cause);
		if (ref_drop(r)) {
			RC(r)->gc_next = *release;
			*release = r;
		}
	}
	return k;
}

void gd_kill_locked(struct gdirect_ctx *c, struct gdirect_reg **v, size_t n,
		    enum gd_cause cause, struct gdirect_reg **release)
{
	kill_locked(c, v, n, cause, NULL, release);
}

/* ---- eviction ---------------------------------------------------------- */

static int by_stamp(const void *a, const void *b)
{
	uint64_t x = atomic_load_explicit(&(*(struct gdirect_reg *const *)a)->stamp,
					  memory_order_relaxed);
	uint64_t y = atomic_load_explicit(&(*(struct gdirect_reg *const *)b)->stamp,
					  memory_order_relaxed);

	return x < y ? -1 : x > y;
}

/* Unused live regions, least recently used first. */
static size_t lru_candidates(struct gdirect_ctx *c, struct gdirect_reg ***out)
{
	size_t n = 0;
	struct gdirect_reg **v = malloc((c->nregions + 1) * sizeof(*v));

	*out = v;
	if (!v)
		return 0;
	for (struct gdirect_reg *r = c->regions.next; r != &c->regions; r = r->next)
		if (atomic_load_explicit(&r->refs, memory_order_relaxed) == 1)
			v[n++] = r;
	qsort(v, n, sizeof(*v), by_stamp);
	return n;
}

static bool over_threshold(struct gdirect_ctx *c)
{
	return (c->p.max_regions && c->nregions > c->p.max_regions) ||
	       (c->p.max_bytes && c->nbytes > c->p.max_bytes);
}

static void evict_thresholds_locked(struct gdirect_ctx *c,
				    struct gdirect_reg **release)
{
	struct gdirect_reg **v;
	size_t n;

	if (!over_threshold(c))
		return;
	n = lru_candidates(c, &v);
	for (size_t i = 0; i < n && over_threshold(c); i++)
		kill_locked(c, &v[i], 1, GD_CAUSE_EVICT, NULL, release);
	free(v);
}

/* Evict the least recently used unused region; false if there is none. */
static bool evict_one_for_bar(struct gdirect_ctx *c)
{
	struct gdirect_reg **v, *release = NULL;
	size_t n, killed = 0;

	pthread_mutex_lock(&c->lock);
	n = lru_candidates(c, &v);
	for (size_t i = 0; i < n && !killed; i++)
		killed = kill_locked(c, &v[i], 1, GD_CAUSE_EVICT_BAR, NULL,
				     &release);
	pthread_mutex_unlock(&c->lock);
	free(v);
	gd_release_list(release);
	return killed != 0;
}

/* ---- validity ---------------------------------------------------------- */

#define GD_VALID 0
#define GD_ASK_SLOW (-1)

/* GD_VALID, a cause of invalidity, or GD_ASK_SLOW when the tag check needs
 * the miss path (the request is in another allocation than the tag's). */
static int validate(struct gdirect_ctx *c, struct gdirect_reg *r, uint64_t a,
		    uint64_t e)
{
	uint32_t inv = c->p.invalidation;

	if ((inv & GDIRECT_INV_KERNEL) && r->status &&
	    __atomic_load_n(r->status, __ATOMIC_ACQUIRE) != GD_STATUS_PINNED)
		return GD_CAUSE_KERNEL;
	if (inv & GDIRECT_INV_BUFFER_ID) {
		const struct gd_reg_cold *x = RC(r);
		uint64_t id;

		if (a < x->tag_base || e > x->tag_base + x->tag_size)
			return GD_ASK_SLOW;
		if (gd_cuda_buffer_id(a, &id) < 0 || id != x->tag_id)
			return GD_CAUSE_BUFFER_ID;
	}
	return GD_VALID;
}

static void invalidate(struct gdirect_ctx *c, struct gdirect_reg *r,
		       enum gd_cause cause)
{
	struct gdirect_reg *release = NULL;

	pthread_mutex_lock(&c->lock);
	kill_locked(c, &r, 1, cause, NULL, &release);
	if (cause == GD_CAUSE_KERNEL)
		gd_allocs_drop_locked(c, r->start, r->end);
	pthread_mutex_unlock(&c->lock);
	gd_release_list(release);
}

/* ---- hit path ---------------------------------------------------------- */

/*
 * Find the region and take a reference, unless it is dead (killed after
 * the page was read: a miss).  The epoch section keeps r's memory alive
 * between the lookup and the compare-and-swap; a reference is never taken
 * on a dead region, which is what lets put_ref run outside any section.
 */
static struct gdirect_reg *lookup_ref(struct gdirect_ctx *c, uint64_t a,
				      uint64_t e)
{
	struct gd_epoch_slot *s = gd_epoch_enter();
	struct gdirect_reg *r = gd_region_find(c, a, e);

	if (r) {
		uint32_t v = atomic_load_explicit(&r->refs, memory_order_relaxed);

		/* The validity check reads the status word next: start that
		 * (likely) cache miss now, not after the locked instruction. */
		if (r->status)
			__builtin_prefetch(r->status);

		do {
			if (v & GD_DEAD) {
				r = NULL;
				break;
			}
		} while (!atomic_compare_exchange_weak_explicit(&r->refs, &v,
				v + 1, memory_order_acquire, memory_order_relaxed));
	}
	gd_epoch_exit(s);
	return r;
}

/* ---- miss path --------------------------------------------------------- */

/* Live regions overlapping [s, e), up to GD_MAX_OVERLAP; returns the count. */
static size_t overlapping_regions(struct gdirect_ctx *c, uint64_t s, uint64_t e,
				  struct gdirect_reg **out)
{
	return gd_regions_overlapping(c, s, e, out, GD_MAX_OVERLAP);
}

static bool pending_overlaps(struct gdirect_ctx *c, uint64_t s, uint64_t e)
{
	for (struct gd_pending *p = c->pending; p; p = p->next)
		if (p->start < e && s < p->end)
			return true;
	return false;
}

static void pending_del(struct gdirect_ctx *c, struct gd_pending *x)
{
	for (struct gd_pending **pp = &c->pending; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			return;
		}
}

/*
 * SYNC_MEMOPS once per allocation, before its first registration.  Called
 * and returns with ctx->lock held; drops it around the CUDA call.  Returns
 * 0, -EAGAIN if the allocation went away meanwhile, or an error.
 */
static int sync_memops_locked(struct gdirect_ctx *c, const struct gd_cuquery *q)
{
	for (;;) {
		struct gd_alloc *al = gd_alloc_update(c, q);
		int rc, st;

		if (!al)
			return -ENOMEM;
		st = atomic_load(&al->sync_done);
		if (st == 2)
			return 0;
		if (st == 1) {	/* another thread is setting it */
			pthread_cond_wait(&c->pin_done, &c->lock);
			continue;
		}
		atomic_store(&al->sync_done, 1);
		pthread_mutex_unlock(&c->lock);
		rc = gd_cuda_sync_memops(q->base);
		pthread_mutex_lock(&c->lock);
		/* Look again: a free may have dropped the entry meanwhile. */
		struct gd_alloc *now = gd_alloc_find(c, q->base);
		if (now != al || al->buffer_id != q->buffer_id)
			rc = -EAGAIN;
		else
			atomic_store(&al->sync_done, rc ? 0 : 2);
		pthread_cond_broadcast(&c->pin_done);
		if (rc == 0)
			ST_INC(c, sync_memops);
		return rc;
	}
}

/*
 * Nothing is left to evict, but other threads may be releasing regions
 * they killed (a flush, an eviction, an invalidation): wait until one of
 * those releases ends, or deferred ones are queued for us to drain.  False
 * if none is under way: the BAR is full of regions in use.
 */
static bool wait_for_releases(struct gdirect_ctx *c)
{
	uint64_t gen;

	pthread_mutex_lock(&c->lock);
	atomic_fetch_add(&c->release_waiters, 1);
	gen = c->release_gen;
	bool any = c->gc || atomic_load(&c->releasing);

	while (any && !c->gc && c->release_gen == gen &&
	       atomic_load(&c->releasing))
		pthread_cond_wait(&c->released, &c->lock);
	atomic_fetch_sub(&c->release_waiters, 1);
	pthread_mutex_unlock(&c->lock);
	if (any)
		ST_INC(c, release_waits);
	return any;
}

static int pin_evicting(struct gdirect_ctx *c, uint64_t s, uint64_t e,
			struct gd_pin *pin)
{
	for (;;) {
		int rc = c->backend->ops->pin(c->backend, s, e - s, pin);

		if (rc != -ENOMEM)
			return rc;
		/* BAR space exhausted: make room, LRU first, and retry. */
		gd_drain(c);
		if (!evict_one_for_bar(c) && !wait_for_releases(c))
			return rc;
	}
}

static int miss(struct gdirect_ctx *c, uint64_t a, uint64_t e,
		struct gdirect_reg **out)
{
	struct gd_cuquery q;
	struct gdirect_reg *release = NULL, *r;
	uint64_t ps, pe, ab, ae;
	int rc, tries = 0;

	gd_drain(c);
restart:
	gd_cuda_query(a, &q);
	if (q.type == GDIRECT_MEM_CPU)
		return gd_err(-EINVAL, "%#llx is not GPU memory: use the CPU path",
			      (unsigned long long)a);
	if (q.type == GDIRECT_MEM_MANAGED)
		return gd_err(-EOPNOTSUPP, "%#llx is managed (Unified) memory, "
			      "which GPUDirect RDMA does not support",
			      (unsigned long long)a);
	if (e > q.base + q.size)
		return gd_err(-EINVAL, "[%#llx, %#llx) runs past its allocation "
			      "[%#llx, %#llx)", (unsigned long long)a,
			      (unsigned long long)e, (unsigned long long)q.base,
			      (unsigned long long)(q.base + q.size));

	if (!c->backend)
		return gd_err(-ENODEV, "no pinning device (is gdirect.ko loaded?)");

	ab = GD_ALIGN_DOWN(q.base);
	ae = GD_ALIGN_UP(q.base + q.size);
	if (c->p.whole_alloc_max && q.size <= c->p.whole_alloc_max) {
		ps = ab;
		pe = ae;
	} else {
		ps = GD_ALIGN_DOWN(a);
		pe = GD_ALIGN_UP(e);
	}

	pthread_mutex_lock(&c->lock);
	rc = sync_memops_locked(c, &q);
	if (rc) {
		pthread_mutex_unlock(&c->lock);
		if (rc == -EAGAIN && ++tries < 8)
			goto restart;
		return gd_err(rc, "cannot set SYNC_MEMOPS on %#llx",
			      (unsigned long long)q.base);
	}
	for (;;) {
		r = gd_region_find(c, a, e);
		if (r) {
			/* In the index under the lock: not dead. */
			atomic_fetch_add(&r->refs, 1);
			pthread_mutex_unlock(&c->lock);
			rc = validate(c, r, a, e);
			if (rc == GD_ASK_SLOW) {
				/* q says the request's allocation is live;
				 * check the allocation the region was pinned
				 * for. */
				uint64_t id;

				rc = gd_cuda_buffer_id(RC(r)->tag_base, &id) == 0 &&
				     id == RC(r)->tag_id ? GD_VALID : GD_CAUSE_BUFFER_ID;
			}
			if (rc == GD_VALID) {
				SHARD_INC(c, hits);
				*out = r;
				return 0;
			}
			invalidate(c, r, rc);
			put_ref(r);
			if (++tries >= 8)
				return gd_err(-EAGAIN, "registration keeps being invalidated");
			goto restart;
		}
		if (!pending_overlaps(c, ps, pe))
			break;
		ST_INC(c, pin_waits);
		pthread_cond_wait(&c->pin_done, &c->lock);
	}

	/* Grow over overlapping regions of the same allocation, so that two
	 * overlapping requests end up sharing one region. */
	for (bool grew = true; grew;) {
		struct gdirect_reg *ov[GD_MAX_OVERLAP];
		size_t n = overlapping_regions(c, ps, pe, ov);

		grew = false;
		for (size_t i = 0; i < n && i < GD_MAX_OVERLAP; i++) {
			struct gdirect_reg *o = ov[i];

			if (o->start < ab || o->end > ae)
				continue;
			if (o->start < ps) {
				ps = o->start;
				grew = true;
			}
			if (o->end > pe) {
				pe = o->end;
				grew = true;
			}
		}
	}

	struct gd_pending pend = { .start = ps, .end = pe, .next = c->pending };
	struct gd_pin pin;

	c->pending = &pend;
	r = gd_hpmem_alloc(&c->regmem);	/* zeroed; allocator under the lock */
	pthread_mutex_unlock(&c->lock);

	rc = r ? pin_evicting(c, ps, pe, &pin) : -ENOMEM;

	pthread_mutex_lock(&c->lock);
	pending_del(c, &pend);
	pthread_cond_broadcast(&c->pin_done);
	if (!rc && pend.freed) {
		/* A free of part of the range was reported while we pinned
		 * (notify.c): the pages may be gone, so the pin is not
		 * published.  Give it back and look again. */
		gd_hpmem_free(&c->regmem, r);
		pthread_mutex_unlock(&c->lock);
		c->backend->ops->unpin(c->backend, pin.handle);
		ST_INC(c, inv_hooks);
		if (++tries >= 8)
			return gd_err(-EAGAIN, "the memory keeps being freed "
				      "while it is pinned");
		goto restart;
	}
	if (rc) {
		if (r)
			gd_hpmem_free(&c->regmem, r);
		pthread_mutex_unlock(&c->lock);
		ST_INC(c, pin_failures);
		if (rc == -ENOMEM)
			return gd_err(rc, "no BAR space for %llu bytes, even after "
				      "evicting every unused region",
				      (unsigned long long)(pe - ps));
		return gd_err(rc, "pinning [%#llx, %#llx) failed: %s",
			      (unsigned long long)ps, (unsigned long long)pe,
			      strerror(-rc));
	}

	r->start = pin.addr;
	r->end = pin.addr + pin.size;
	atomic_init(&r->refs, 2);	/* the index's and the caller's */
	atomic_flag_clear(&r->released);
	RC(r)->pin = pin;
	RC(r)->tag_base = q.base;
	RC(r)->tag_size = q.size;
	RC(r)->tag_id = q.buffer_id;
	RC(r)->device = q.device;
	r->ctx = c;
	pthread_mutex_init(&RC(r)->map_lock, NULL);
	atomic_init(&r->stamp, gd_lru_stamp(c));
	if (c->backend->status && pin.slot < c->backend->nslots)
		r->status = &c->backend->status[pin.slot];
	ST_INC(c, pins);
	ST_INC(c, regions);
	ST_ADD(c, bytes_pinned, pin.size);

	/* Replace whatever the new region overlaps. */
	struct gdirect_reg *old[GD_MAX_OVERLAP];
	size_t n;
	bool indexed = index_reserve(c, r->start, r->end) == 0;

	for (;;) {
		n = overlapping_regions(c, r->start, r->end, old);
		if (n <= GD_MAX_OVERLAP)
			break;
		kill_locked(c, old, GD_MAX_OVERLAP, GD_CAUSE_SUPERSEDED, NULL,
			    &release);
	}
	kill_locked(c, old, n, GD_CAUSE_SUPERSEDED, indexed ? r : NULL,
		    &release);
	if (!indexed) {
		/* Could not publish (out of memory): hand it out uncached. */
		atomic_fetch_or(&r->refs, GD_DEAD);
		atomic_fetch_sub(&r->refs, 1);
		r->prev = r->next = r;
	} else {
		r->next = &c->regions;
		r->prev = c->regions.prev;
		r->prev->next = r;
		c->regions.prev = r;
		c->nregions++;
		c->nbytes += RC(r)->pin.size;
		evict_thresholds_locked(c, &release);
	}
	ST_INC(c, misses);
	/* Puts from now on are younger than everything evicted so far. */
	atomic_fetch_add_explicit(&c->lru_era, 1, memory_order_relaxed);
	pthread_mutex_unlock(&c->lock);
	gd_release_list(release);
	*out = r;
	return 0;
}

/* ---- public ------------------------------------------------------------ */

GD_EXPORT int gdirect_reg_get(struct gdirect_ctx *c, const void *ptr,
			      size_t len, unsigned int flags,
			      struct gdirect_reg **out)
{
	uint64_t a = (uintptr_t)ptr, e = a + len;
	struct gdirect_reg *r;

	if (!c || !out || !len || flags || e < a)
		return gd_err(-EINVAL, "invalid argument");
	if (gd_inherited(c))
		return gd_err(-EPERM, "context inherited across fork");
	r = lookup_ref(c, a, e);
	if (r) {
		int v = validate(c, r, a, e);

		if (v == GD_VALID) {
			SHARD_INC(c, hits);
			*out = r;
			return 0;
		}
		if (v != GD_ASK_SLOW)
			invalidate(c, r, v);
		put_ref(r);
	}
	return miss(c, a, e, out);
}

GD_EXPORT void gdirect_reg_put(struct gdirect_reg *r)
{
	if (r)
		put_ref(r);
}

GD_EXPORT int gdirect_reg_info(const struct gdirect_reg *r,
			       struct gdirect_reg_info *info)
{
	if (!r || !info)
		return gd_err(-EINVAL, "invalid argument");
	info->addr = r->start;
	info->size = r->end - r->start;
	info->kernel_handle = RC(r)->pin.handle;
	info->device = RC(r)->device;
	info->valid = !(atomic_load(&r->refs) & GD_DEAD);
	if (info->valid && r->status)
		info->valid = __atomic_load_n(r->status, __ATOMIC_ACQUIRE) ==
			      GD_STATUS_PINNED;
	return 0;
}

GD_EXPORT void *gdirect_reg_map(struct gdirect_reg *r, const void *gpu_ptr)
{
	uint64_t a = (uintptr_t)gpu_ptr;
	void *m;

	if (!r || a < r->start || a >= r->end) {
		gd_err(-EINVAL, "pointer outside the registration");
		return NULL;
	}
	if (gd_inherited(r->ctx)) {	/* map_lock may be held by a parent thread */
		gd_err(-EPERM, "registration inherited across fork");
		return NULL;
	}
	m = atomic_load_explicit(&RC(r)->map, memory_order_acquire);
	if (!m) {
		pthread_mutex_lock(&RC(r)->map_lock);
		m = atomic_load(&RC(r)->map);
		if (!m) {
			m = r->ctx->backend->ops->map(r->ctx->backend, &RC(r)->pin);
			if (m)
				atomic_store_explicit(&RC(r)->map, m,
						      memory_order_release);
		}
		pthread_mutex_unlock(&RC(r)->map_lock);
		if (!m) {
			gd_err(-errno, "mapping the BAR failed: %s", strerror(errno));
			return NULL;
		}
	}
	return (char *)m + (a - RC(r)->pin.addr);
}

/* Deferred work: revocation events, releases queued by hooks, reclaim. */
int gd_drain(struct gdirect_ctx *c)
{
	struct gdirect_reg *release = NULL, *gc;
	struct gd_revocation ev[64];
	int done = 0, n;

	if (!c->backend)
		return 0;
	while ((n = c->backend->ops->read_events(c->backend, ev, 64)) > 0) {
		if (!(c->p.invalidation & GDIRECT_INV_KERNEL))
			continue;	/* read only to keep the queue short */
		pthread_mutex_lock(&c->lock);
		for (int i = 0; i < n; i++) {
			for (struct gdirect_reg *r = c->regions.next;
			     r != &c->regions; r = r->next)
				if (RC(r)->pin.handle == ev[i].handle) {
					done += kill_locked(c, &r, 1,
							    GD_CAUSE_KERNEL,
							    NULL, &release);
					break;
				}
			gd_allocs_drop_locked(c, ev[i].addr,
					      ev[i].addr + ev[i].size);
		}
		pthread_mutex_unlock(&c->lock);
		if (n < 64)
			break;
	}
	pthread_mutex_lock(&c->lock);
	gc = c->gc;
	c->gc = NULL;
	pthread_mutex_unlock(&c->lock);
	for (struct gdirect_reg *r = gc; r; r = RC(r)->gc_next)
		done++;
	gd_release_list(gc);
	gd_release_list(release);
	gd_epoch_reclaim();
	return done;
}

GD_EXPORT int gdirect_process_events(struct gdirect_ctx *c)
{
	if (!c)
		return gd_err(-EINVAL, "invalid argument");
	if (atomic_load(&gd_fork_gen) != c->fork_gen)
		return gd_err(-EPERM, "context inherited across fork");
	return gd_drain(c);
}

GD_EXPORT int gdirect_flush(struct gdirect_ctx *c)
{
	struct gdirect_reg **v, *release = NULL;
	size_t n, k = 0;

	if (!c)
		return gd_err(-EINVAL, "invalid argument");
	if (atomic_load(&gd_fork_gen) != c->fork_gen)
		return gd_err(-EPERM, "context inherited across fork");
	gd_drain(c);
	pthread_mutex_lock(&c->lock);
	n = lru_candidates(c, &v);
	for (size_t i = 0; i < n; i++)
		k += kill_locked(c, &v[i], 1, GD_CAUSE_FLUSH, NULL, &release);
	pthread_mutex_unlock(&c->lock);
	free(v);
	gd_release_list(release);
	gd_epoch_reclaim();
	return (int)k;
}
