/* SPDX-License-Identifier: MIT */
/*
 * rcache.c - the registration cache.
 *
 * The hit paths, gdirect_reg_get() and gdirect_reg_put() with what they
 * inline, are in rcache_hit.h, which this file includes once below.  That
 * file lists the constraints they keep (no lock, no system call, no write
 * to a line another thread writes, no call but named out-of-line slow
 * paths), why each holds, and how to change them safely.  This file holds
 * what they call out of line and everything behind them.
 *
 * Miss path: classify afresh, SYNC_MEMOPS once per allocation (not on VMM
 * mappings, which the driver refuses it), announce a pending pin under
 * ctx->lock, drop the lock, pin (evicting unused regions in LRU order and
 * retrying while the pin fails for BAR space), retake the lock and point
 * the new region's pages at it.  Misses on a range that is being pinned
 * wait for that pin; hits never wait for anything.
 *
 * Death and release: a killed region leaves the index and waits on
 * ctx->dying until a scan of every thread's counts finds nobody holding
 * it; the put that drops the last reference does that scan, and so does
 * every drain (misses, gdirect_process_events, flush).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_dl.h"
#include "epoch.h"
#include "libgdirect_internal.h"
#include "regcache.h"

#define GDL_MAX_OVERLAP 64

#ifdef GDL_RACE_HOOKS
void (*gdl_race_hook)(enum gdl_race_point point);
#endif
_Atomic uint64_t gdl_kgen = 1;
_Atomic uint64_t gdl_lru_era;
static _Atomic uint64_t region_ids = 1;

/* Each region r of list h (ctx->live or ctx->dying), first to last; the
 * body may unlink the region it is on only to leave the loop. */
#define reg_for_each(h, r)                                              \
	for (struct gdl_list *n_ = (h)->next;                           \
	     n_ != (h) && ((r) = gdl_reg_of(n_), 1); n_ = n_->next)

static void reg_unlink(struct gdirect_reg *r)
{
	gdl_list_del(&GDL_RC(r)->node);
}

static void reg_link_tail(struct gdl_list *head, struct gdirect_reg *r)
{
	gdl_list_add_tail(head, &GDL_RC(r)->node);
}

/* Give c a new kill generation.  The caller holds ctx->lock and has
 * already changed the index slots of the regions it killed or held, so a
 * hit that reads the new kgen also finds those slots changed (slotab.h). */
static void kgen_bump(struct gdirect_ctx *c)
{
	atomic_store_explicit(&c->kgen, atomic_fetch_add(&gdl_kgen, 1) + 1,
			      memory_order_release);
}

int gdl_regions_init(struct gdirect_ctx *c)
{
	gdl_list_init(&c->live);
	gdl_list_init(&c->dying);
	kgen_bump(c);
	return 0;
}

/* ---- release ----------------------------------------------------------- */

static void region_free(void *p)
{
	struct gdirect_reg *r = p;

	pthread_mutex_destroy(&GDL_RC(r)->map_lock);
	/* The context outlives its retired regions (destroy waits). */
	gdl_hpmem_free(&r->ctx->regmem, r);
}

/* Unmap and unpin a claimed region, already off ctx->dying; free it after
 * a grace period. */
static void region_release(struct gdirect_reg *r)
{
	struct gdirect_ctx *c = r->ctx;
	void *m = atomic_load(&GDL_RC(r)->map);

	if (m)
		c->backend->ops->unmap(c->backend, m, GDL_RC(r)->pin.size);
	if (!gdl_inherited(c))
		c->backend->ops->unpin(c->backend, GDL_RC(r)->pin.handle);
	GDL_ST_INC(c, unpins);
	GDL_ST_SUB(c, regions, 1);
	GDL_ST_SUB(c, bytes_pinned, GDL_RC(r)->pin.size);
	gdl_tc_gone(r, r->id);
	gdl_epoch_retire(r, region_free);
	/* Its BAR space is back: wake misses that found nothing to evict.
	 * (Decrement before reading the waiters, as they count themselves
	 * before reading releasing: one side always sees the other.) */
	atomic_fetch_sub(&c->releasing, 1);
	if (atomic_load(&c->release_waiters))
		gdl_release_wake(c);
}

void gdl_release_wake(struct gdirect_ctx *c)
{
	pthread_mutex_lock(&c->lock);
	c->release_gen++;
	pthread_cond_broadcast(&c->released);
	pthread_mutex_unlock(&c->lock);
}

/*
 * In an epoch section, after gdl_epoch_sync_readers(): true if r is dead,
 * no reference to it is counted anywhere, and this thread won its release.
 * A dead region gains no reference (tcache.h), so a total of zero stays.
 */
static bool release_claim(struct gdirect_reg *r)
{
	uint64_t v = atomic_load(&r->refs);

	if (!(v & GDL_DEAD) || (v & GDL_RELEASED) ||
	    GDL_REFS(v) + gdl_tc_count(r, r->id, NULL) != 0)
		return false;
	if (atomic_fetch_or(&r->refs, GDL_RELEASED) & GDL_RELEASED)
		return false;
	atomic_fetch_add(&r->ctx->releasing, 1);
	return true;
}

/* Release claimed regions v[0..n) (outside any epoch section). */
static void release_claimed(struct gdirect_ctx *c, struct gdirect_reg **v,
			    size_t n)
{
	if (!n)
		return;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < n; i++)
		reg_unlink(v[i]);
	pthread_mutex_unlock(&c->lock);
	for (size_t i = 0; i < n; i++)
		region_release(v[i]);
}

/*
 * Release every dead region nobody holds any more; returns how many.  One
 * readers' fence for all of them.
 */
static size_t release_dying(struct gdirect_ctx *c)
{
	struct gdirect_reg *few[64], **v = few, *r;
	struct gdl_epoch_slot *s;
	size_t n = 0, k = 0, max = 64;

	pthread_mutex_lock(&c->lock);
	c->drain_due = false;
	if (gdl_list_empty(&c->dying)) {
		pthread_mutex_unlock(&c->lock);
		return 0;
	}
	reg_for_each(&c->dying, r)
		n++;
	if (n > max) {
		struct gdirect_reg **big = malloc(n * sizeof(*big));

		if (big) {
			v = big;
			max = n;
		}
	}
	n = 0;
	reg_for_each(&c->dying, r) {
		if (n == max)
			break;
		v[n++] = r;
	}
	/* Entered before the lock is dropped: whoever releases one of these
	 * meanwhile cannot free it under us. */
	s = gdl_epoch_enter();
	pthread_mutex_unlock(&c->lock);
	if (gdl_epoch_sync_readers())
		for (size_t i = 0; i < n; i++)
			if (release_claim(v[i]))
				v[k++] = v[i];
	gdl_epoch_exit(s);
	release_claimed(c, v, k);
	if (v != few)
		free(v);
	return k;
}

/*
 * Release every dead region of c that nobody holds any more, and return
 * how many were released.  Other files call it after gdl_kill_locked() and
 * after dropping ctx->lock.  It scans all of ctx->dying, because a release
 * is claimed by whoever sees a dead region's counts reach zero, not owned
 * by the thread that killed it.
 */
size_t gdl_release_try(struct gdirect_ctx *c)
{
	return release_dying(c);
}

/* The put of a reference to a dead region: take it off, then see, with
 * every thread's counts, whether it was the last one anywhere. */
static void put_dead(struct gdirect_reg *r, struct gdl_tc_ent *x)
{
	struct gdirect_ctx *c = r->ctx;
	struct gdl_epoch_slot *s = gdl_epoch_enter();	/* r stays readable */
	bool claim;

	if (x)
		atomic_store_explicit(&x->n, atomic_load_explicit(&x->n,
				      memory_order_relaxed) - 1,
				      memory_order_release);
	else
		atomic_fetch_sub(&r->refs, 1);
	claim = gdl_epoch_sync_readers() && release_claim(r);
	gdl_epoch_exit(s);
	if (claim)
		release_claimed(c, &r, 1);
}

/*
 * Put a reference that put_ref() (rcache_hit.h) could not put itself.
 * It comes off this thread's entry for r when that entry counts one,
 * which writes no shared line, and off r->refs otherwise.  A region
 * killed between the dead-bit check and the decrement below was scanned
 * while this reference was still counted, so it waits on ctx->dying for
 * the next drain.
 */
static __attribute__((noinline)) void put_ref_slow(struct gdirect_reg *r)
{
	struct gdirect_ctx *c = r->ctx;
	struct gdl_tc_block *b = gdl_tc_mine;
	struct gdl_tc_ent *x = NULL;
	uint64_t v = atomic_load_explicit(&r->refs, memory_order_relaxed);

	if (__builtin_expect(gdl_inherited(c), 0)) {
		/* A fork child's copy of the parent's region: its mapping
		 * is not the child's (the address may be the child's own
		 * memory now), its pin and locks are the parent's.  Only
		 * count; gdirect_ctx_destroy() frees the copy. */
		atomic_fetch_sub(&r->refs, 1);
		return;
	}
	if (b) {
		x = &b->e[gdl_tc_way(r)];
		if (atomic_load_explicit(&x->n, memory_order_relaxed) <= 0 ||
		    atomic_load_explicit(&x->tag, memory_order_relaxed) != r->id)
			x = NULL;
	}
	if (__builtin_expect(v & GDL_DEAD, 0)) {
		put_dead(r, x);
		return;
	}
	if (x) {
		atomic_store_explicit(&x->stamp, gdl_lru_stamp(),
				      memory_order_relaxed);
		atomic_store_explicit(&x->n, atomic_load_explicit(&x->n,
				      memory_order_relaxed) - 1,
				      memory_order_release);
		return;
	}
	atomic_store_explicit(&r->stamp, gdl_lru_stamp(), memory_order_relaxed);
	atomic_fetch_sub(&r->refs, 1);	/* r is not ours to read after this */
}

/* ---- killing (removal from the index), under ctx->lock ----------------- */

static void count_cause(struct gdirect_ctx *c, enum gdl_cause cause)
{
	switch (cause) {
	case GDL_CAUSE_EVICT: GDL_ST_INC(c, evictions); break;
	case GDL_CAUSE_EVICT_BAR: GDL_ST_INC(c, evictions_bar); break;
	case GDL_CAUSE_KERNEL: GDL_ST_INC(c, inv_kernel); break;
	case GDL_CAUSE_HOOKS: GDL_ST_INC(c, inv_hooks); break;
	case GDL_CAUSE_BUFFER_ID: GDL_ST_INC(c, inv_buffer_id); break;
	default: break;
	}
}

/* ---- the region index (ctx->index), under ctx->lock -------------------- */

/* Point r's pages at r, in the page table and in the hit path's slots;
 * they must have been reserved (index_reserve). */
static void index_add(struct gdirect_ctx *c, struct gdirect_reg *r)
{
	uint64_t p0 = gdl_pg_first(r->start), p1 = gdl_pg_last(r->end);
	const uint32_t *st = c->p.invalidation & GDIRECT_INV_KERNEL ?
			     r->status : NULL;

	for (uint64_t p = p0; p <= p1; p++) {
		gdl_pgtab_set(&c->index, p, r);
		gdl_slotab_set(&c->slots, p, r->id, p - p0, p1 - p, r, st);
	}
}

static int index_reserve(struct gdirect_ctx *c, uint64_t s, uint64_t e)
{
	int rc = gdl_pgtab_reserve(&c->index, gdl_pg_first(s), gdl_pg_last(e));

	if (!rc)
		rc = gdl_slotab_reserve(&c->slots, gdl_pg_first(s),
					gdl_pg_last(e));
	return rc;
}

/* Clear r's pages that still point to it (a successor may own some). */
static void index_del(struct gdirect_ctx *c, struct gdirect_reg *r)
{
	uint64_t last = gdl_pg_last(r->end);

	for (uint64_t p = gdl_pg_first(r->start); p <= last; p++) {
		if (gdl_pgtab_get(&c->index, p) == r)
			gdl_pgtab_set(&c->index, p, NULL);
		gdl_slotab_clear(&c->slots, p, r->id);
	}
}

/* Mark r's slots held (an eviction checks it) or not. */
static void index_hold(struct gdirect_ctx *c, struct gdirect_reg *r,
		       bool held)
{
	for (uint64_t p = gdl_pg_first(r->start); p <= gdl_pg_last(r->end); p++)
		gdl_slotab_hold(&c->slots, p, r->id, held);
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
size_t gdl_regions_overlapping(struct gdirect_ctx *c, uint64_t s, uint64_t e,
			      struct gdirect_reg **out, size_t max)
{
	struct ov_walk w = { s, e, out, NULL, 0, max };

	if (e > s)
		gdl_pgtab_walk(&c->index, gdl_pg_first(s), gdl_pg_last(e),
			      ov_visit, &w);
	return w.n;
}

/* Take a region marked dead out of the index and the live list onto
 * ctx->dying, and drop the index's reference. */
static void unlink_dead(struct gdirect_ctx *c, struct gdirect_reg *r,
			enum gdl_cause cause)
{
	index_del(c, r);
	reg_unlink(r);
	reg_link_tail(&c->dying, r);
	c->nregions--;
	c->nbytes -= GDL_RC(r)->pin.size;
	count_cause(c, cause);
	atomic_fetch_sub(&r->refs, 1);
}

/*
 * Kill regions v[0..n), whoever holds them: mark them dead and move them
 * from the index and the live list to ctx->dying.  add, if not NULL, takes
 * over the pages (reserved by the caller) once the killed regions are
 * dead.  The caller releases what nobody holds (gdl_release_try) after
 * dropping the lock, or leaves that to the next drain.  Returns how many
 * were killed.
 */
static size_t kill_locked(struct gdirect_ctx *c, struct gdirect_reg **v,
			  size_t n, enum gdl_cause cause,
			  struct gdirect_reg *add)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!(atomic_fetch_or(&v[i]->refs, GDL_DEAD) & GDL_DEAD))
			v[k++] = v[i];
	/* The killed regions' slots change (to the successor's, or empty):
	 * a hit that read one of them live finds it changed when it checks
	 * again after counting, or its count is seen by the release's scan. */
	if (add)
		index_add(c, add);
	for (size_t i = 0; i < k; i++)
		unlink_dead(c, v[i], cause);
	/* After the slots, before any release can scan: entries that saw
	 * these live are stale now. */
	if (k)
		kgen_bump(c);
	return k;
}

/* kill_locked() for other files.  When killed is not NULL and some region
 * was killed, *killed is set to one of them, so that the caller knows a
 * release is due. */
void gdl_kill_locked(struct gdirect_ctx *c, struct gdirect_reg **v, size_t n,
		    enum gdl_cause cause, struct gdirect_reg **killed)
{
	if (kill_locked(c, v, n, cause, NULL) && killed)
		*killed = v[0];
}

/* ---- eviction, under ctx->lock ----------------------------------------- */

struct cand {
	struct gdirect_reg *r;
	uint64_t stamp;
};

static int by_stamp(const void *a, const void *b)
{
	uint64_t x = ((const struct cand *)a)->stamp;
	uint64_t y = ((const struct cand *)b)->stamp;

	return x < y ? -1 : x > y;
}

/* Live regions nobody seems to use (to be confirmed by evict_locked),
 * least recently used first: the newest stamp of r and its entries. */
static size_t lru_candidates(struct gdirect_ctx *c, struct cand **out)
{
	size_t n = 0;
	struct cand *v = malloc((c->nregions + 1) * sizeof(*v));

	*out = v;
	if (!v)
		return 0;
	struct gdirect_reg *r;

	reg_for_each(&c->live, r) {
		uint64_t x = atomic_load_explicit(&r->refs, memory_order_relaxed);
		uint64_t st, own;

		if (x & GDL_REF_FLAGS ||
		    GDL_REFS(x) + gdl_tc_count(r, r->id, &st) != 1)
			continue;
		own = atomic_load_explicit(&r->stamp, memory_order_relaxed);
		v[n++] = (struct cand){ r, st > own ? st : own };
	}
	qsort(v, n, sizeof(*v), by_stamp);
	return n;
}

/*
 * Evict up to want of the candidates v[*i..n), in order, advancing *i past
 * those looked at; returns how many were evicted.  A candidate is held
 * (GDL_HOLD: new references refused) while every thread's counts are read
 * after the readers' fence; it is evicted only if the index's reference
 * is all there is, else let go.  The evicted go to ctx->dying, unheld: the
 * caller's release_dying() unpins them.
 */
static size_t evict_locked(struct gdirect_ctx *c, struct cand *v, size_t n,
			   size_t *i, size_t want, enum gdl_cause cause)
{
	size_t done = 0;

	while (done < want && *i < n) {
		struct gdirect_reg *h[64];
		size_t k = 0;
		bool ok;

		while (*i < n && k < want - done && k < 64) {
			struct gdirect_reg *r = v[(*i)++].r;
			uint64_t x = atomic_load(&r->refs);

			do {
				if (x & GDL_REF_FLAGS)
					break;
			} while (!atomic_compare_exchange_weak(&r->refs, &x,
							       x | GDL_HOLD));
			if (!(x & GDL_REF_FLAGS)) {
				index_hold(c, r, true);
				h[k++] = r;
			}
		}
		if (!k)
			break;
		kgen_bump(c);
		ok = gdl_epoch_sync_readers();
		for (size_t j = 0; j < k; j++) {
			struct gdirect_reg *r = h[j];
			uint64_t x = atomic_load(&r->refs);
			bool unused = ok &&
				GDL_REFS(x) + gdl_tc_count(r, r->id, NULL) == 1;

			/* Between the sum and what it decides: a hit that
			 * copied r's slot before the hold and counts only now
			 * is in no sum, and must find the slot held at its
			 * reread and back off (lib-evict-race runs that hit
			 * here). */
			GDL_RACE(GDL_RACE_EVICT_SUMMED);
			if (unused) {
				atomic_fetch_or(&r->refs, GDL_DEAD);
				atomic_fetch_and(&r->refs, ~GDL_HOLD);
				unlink_dead(c, r, cause);
				done++;
			} else {
				index_hold(c, r, false);
				atomic_fetch_and(&r->refs, ~GDL_HOLD);
			}
		}
	}
	return done;
}

static bool over_threshold(struct gdirect_ctx *c)
{
	return (c->p.max_regions && c->nregions > c->p.max_regions) ||
	       (c->p.max_bytes && c->nbytes > c->p.max_bytes);
}

static void evict_thresholds_locked(struct gdirect_ctx *c)
{
	struct cand *v;
	size_t n, i = 0;

	if (!over_threshold(c))
		return;
	n = lru_candidates(c, &v);
	while (i < n && over_threshold(c))
		evict_locked(c, v, n, &i, 1, GDL_CAUSE_EVICT);
	free(v);
}

/* Evict the least recently used unused region; false if there is none. */
static bool evict_one_for_bar(struct gdirect_ctx *c)
{
	struct cand *v;
	size_t n, i = 0, killed;

	pthread_mutex_lock(&c->lock);
	n = lru_candidates(c, &v);
	killed = evict_locked(c, v, n, &i, 1, GDL_CAUSE_EVICT_BAR);
	pthread_mutex_unlock(&c->lock);
	free(v);
	release_dying(c);
	return killed != 0;
}

/* ---- invalidation ------------------------------------------------------ */

/* invalidate() kills r, which a hit or a miss found invalid, under
 * ctx->lock. */
static void invalidate(struct gdirect_ctx *c, struct gdirect_reg *r,
		       enum gdl_cause cause)
{
	pthread_mutex_lock(&c->lock);
	kill_locked(c, &r, 1, cause, NULL);
	if (cause == GDL_CAUSE_KERNEL)
		gdl_allocs_drop_locked(c, r->start, r->end);
	pthread_mutex_unlock(&c->lock);
	/* The caller still holds r: its put releases it. */
}

/* ---- hit paths (rcache_hit.h) ------------------------------------------ */

/* The hit path falls back to the miss path, which is defined below. */
static int miss(struct gdirect_ctx *c, uint64_t a, uint64_t e,
		struct gdirect_reg **out);

#include "rcache_hit.h"

/* ---- miss path --------------------------------------------------------- */

/* Live regions overlapping [s, e), up to GDL_MAX_OVERLAP; returns the count. */
static size_t overlapping_regions(struct gdirect_ctx *c, uint64_t s, uint64_t e,
				  struct gdirect_reg **out)
{
	return gdl_regions_overlapping(c, s, e, out, GDL_MAX_OVERLAP);
}

static bool pending_overlaps(struct gdirect_ctx *c, uint64_t s, uint64_t e)
{
	for (struct gdl_pending *p = c->pending; p; p = p->next)
		if (p->start < e && s < p->end)
			return true;
	return false;
}

static void pending_del(struct gdirect_ctx *c, struct gdl_pending *x)
{
	for (struct gdl_pending **pp = &c->pending; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			return;
		}
}

/*
 * SYNC_MEMOPS once per allocation, before its first registration.  Called
 * and returns with ctx->lock held; drops it around the CUDA call.  Returns
 * 0, -EAGAIN if the allocation went away meanwhile (or *freed says a free
 * overtook the caller's driver answer, which must then not be cached
 * again: freed is marked under ctx->lock), or an error, with the
 * driver's answer in *cu_err.  A VMM mapping, which the driver refuses the
 * attribute, counts as done: its registration goes on without it, as
 * NCCL's and UCX's registrations of such memory do.
 */
static int sync_memops_locked(struct gdirect_ctx *c,
			      const struct gdl_cuquery *q, int *cu_err,
			      const bool *freed)
{
	*cu_err = 0;
	for (;;) {
		struct gdl_alloc *al;
		int rc, st;

		if (*freed)
			return -EAGAIN;
		al = gdl_alloc_update(c, q);
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
		rc = gdl_cuda_sync_memops(q->base, cu_err);
		pthread_mutex_lock(&c->lock);
		/* Look again: a free may have dropped the entry meanwhile. */
		struct gdl_alloc *now = gdl_alloc_find(c, q->base);
		if (now != al || al->buffer_id != q->buffer_id)
			rc = -EAGAIN;
		else
			atomic_store(&al->sync_done, rc < 0 ? 0 : 2);
		pthread_cond_broadcast(&c->pin_done);
		if (rc == 0)
			GDL_ST_INC(c, sync_memops);
		if (rc == GDL_SYNC_VMM) {
			GDL_ST_INC(c, sync_memops_vmm);
			rc = 0;
		}
		return rc;
	}
}

/* sync_memops_locked() for a caller that does not hold ctx->lock: the
 * registrations of the engine (regcache.c). */
int gdl_sync_memops(struct gdirect_ctx *c, const struct gdl_cuquery *q,
		    int *cu_err, const bool *freed)
{
	int rc;

	pthread_mutex_lock(&c->lock);
	rc = sync_memops_locked(c, q, cu_err, freed);
	pthread_mutex_unlock(&c->lock);
	return rc;
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
	bool any = c->drain_due || atomic_load(&c->releasing);

	/* Counted among the waiters and the generation read, under the
	 * lock: a release that ends from here on wakes this wait (the point
	 * where lib-release-wait lets one end). */
	if (any)
		GDL_RACE(GDL_RACE_RELEASE_WAIT);
	while (any && !c->drain_due && c->release_gen == gen &&
	       atomic_load(&c->releasing))
		pthread_cond_wait(&c->released, &c->lock);
	atomic_fetch_sub(&c->release_waiters, 1);
	pthread_mutex_unlock(&c->lock);
	if (any)
		GDL_ST_INC(c, release_waits);
	return any;
}

static int pin_evicting(struct gdirect_ctx *c, uint64_t s, uint64_t e,
			struct gdl_pin *pin)
{
	for (;;) {
		int rc = c->backend->ops->pin(c->backend, s, e - s, pin);

		if (rc != -ENOMEM)
			return rc;
		/* BAR space exhausted: make room, LRU first, and retry. */
		gdl_drain(c);
		if (!evict_one_for_bar(c) && !wait_for_releases(c))
			return rc;
	}
}

/* What [a, e) is, and whether it can be registered at all. */
static int miss_check(struct gdirect_ctx *c, uint64_t a, uint64_t e,
		      struct gdl_cuquery *q)
{
	gdl_cuda_query(a, q);
	if (q->type == GDIRECT_MEM_CPU)
		return gdl_err(-EINVAL,
			       "%#llx is not GPU memory: use the CPU path",
			       (unsigned long long)a);
	if (q->type == GDIRECT_MEM_MANAGED)
		return gdl_err(-EOPNOTSUPP,
			       "%#llx is managed (Unified) memory, "
			       "which GPUDirect RDMA does not support",
			       (unsigned long long)a);
	if (e > q->base + q->size)
		return gdl_err(-EINVAL,
			       "[%#llx, %#llx) runs past its allocation "
			       "[%#llx, %#llx)", (unsigned long long)a,
			       (unsigned long long)e,
			       (unsigned long long)q->base,
			       (unsigned long long)(q->base + q->size));
	if (!c->backend)
		return gdl_err(-ENODEV,
			       "no pinning device (is gdirect.ko loaded?)");
	return 0;
}

/* The range to pin for [a, e) of allocation q: [*ps, *pe). */
static void miss_range(const struct gdirect_ctx *c, const struct gdl_cuquery *q,
		       uint64_t a, uint64_t e, uint64_t *ps, uint64_t *pe)
{
	if (c->p.whole_alloc_max && q->size <= c->p.whole_alloc_max) {
		*ps = GDL_ALIGN_DOWN(q->base);
		*pe = GDL_ALIGN_UP(q->base + q->size);
	} else {
		*ps = GDL_ALIGN_DOWN(a);
		*pe = GDL_ALIGN_UP(e);
	}
}

#define GDL_MISS_PIN 1	/* nothing to hit and no pin to wait for */
#define GDL_MISS_AGAIN 2	/* the region was invalid: start over */

/*
 * Under ctx->lock: a region that another thread published meanwhile (a
 * reference in *out, lock dropped, 0), or a pin in progress over [ps, pe)
 * to wait for, until neither: GDL_MISS_PIN with the lock held.  With the
 * lock dropped: GDL_MISS_AGAIN after invalidating what was found.
 */
static int miss_find_locked(struct gdirect_ctx *c, uint64_t a, uint64_t e,
			    uint64_t ps, uint64_t pe, struct gdirect_reg **out)
{
	for (;;) {
		struct gdirect_reg *r = gdl_region_find(c, a, e);
		int rc;

		if (!r) {
			if (!pending_overlaps(c, ps, pe))
				return GDL_MISS_PIN;
			GDL_ST_INC(c, pin_waits);
			pthread_cond_wait(&c->pin_done, &c->lock);
			continue;
		}
		/* In the index under the lock: neither dead nor held. */
		atomic_fetch_add(&r->refs, 1);
		pthread_mutex_unlock(&c->lock);
		rc = validate(c, r, c->p.invalidation & GDIRECT_INV_KERNEL ?
			      r->status : NULL, a, e);
		if (rc == GDL_ASK_SLOW) {
			/* The caller's query says the request's allocation is
			 * live; check the allocation the region was pinned
			 * for. */
			uint64_t id;

			rc = gdl_cuda_buffer_id(GDL_RC(r)->tag_base, &id) == 0 &&
			     id == GDL_RC(r)->tag_id ?
			     GDL_VALID : GDL_CAUSE_BUFFER_ID;
		}
		if (rc == GDL_VALID) {
			GDL_SHARD_INC(c, hits);
			*out = r;
			return 0;
		}
		invalidate(c, r, rc);
		put_ref(r);
		return GDL_MISS_AGAIN;
	}
}

/* Under ctx->lock: grow [*ps, *pe) over overlapping regions of the same
 * allocation [ab, ae), so that two overlapping requests end up sharing
 * one region. */
static void miss_grow_locked(struct gdirect_ctx *c, uint64_t ab, uint64_t ae,
			     uint64_t *ps, uint64_t *pe)
{
	for (bool grew = true; grew;) {
		struct gdirect_reg *ov[GDL_MAX_OVERLAP];
		size_t n = overlapping_regions(c, *ps, *pe, ov);

		grew = false;
		for (size_t i = 0; i < n && i < GDL_MAX_OVERLAP; i++) {
			struct gdirect_reg *o = ov[i];

			if (o->start < ab || o->end > ae)
				continue;
			if (o->start < *ps) {
				*ps = o->start;
				grew = true;
			}
			if (o->end > *pe) {
				*pe = o->end;
				grew = true;
			}
		}
	}
}

/*
 * Called and returns with ctx->lock held: announce [ps, pe) as pending,
 * pin it with the lock dropped, and hand back a fresh region (*out, not
 * yet indexed) and its pin.  0, GDL_MISS_AGAIN if a free of part of the
 * range was reported meanwhile (the pin is given back), or an error.
 */
static int miss_pin_locked(struct gdirect_ctx *c, uint64_t ps, uint64_t pe,
			   struct gdirect_reg **out, struct gdl_pin *pin)
{
	struct gdl_pending pend = {
		.start = ps, .end = pe, .next = c->pending,
	};
	struct gdirect_reg *r;
	int rc;

	c->pending = &pend;
	/* Zeroed memory; the allocator is under the lock. */
	r = gdl_hpmem_alloc(&c->regmem);
	pthread_mutex_unlock(&c->lock);

	rc = r ? pin_evicting(c, ps, pe, pin) : -ENOMEM;

	pthread_mutex_lock(&c->lock);
	pending_del(c, &pend);
	pthread_cond_broadcast(&c->pin_done);
	if (!rc && pend.freed) {
		/* A free of part of the range was reported while we pinned
		 * (notify.c): the pages may be gone, so the pin is not
		 * published.  Give it back and look again. */
		gdl_hpmem_free(&c->regmem, r);
		pthread_mutex_unlock(&c->lock);
		c->backend->ops->unpin(c->backend, pin->handle);
		GDL_ST_INC(c, inv_hooks);
		pthread_mutex_lock(&c->lock);
		return GDL_MISS_AGAIN;
	}
	if (rc) {
		if (r)
			gdl_hpmem_free(&c->regmem, r);
		GDL_ST_INC(c, pin_failures);
		if (rc == -ENOMEM)
			return gdl_err(rc, "no BAR space for %llu bytes, "
				       "even after evicting every unused "
				       "region",
				       (unsigned long long)(pe - ps));
		return gdl_err(rc, "pinning [%#llx, %#llx) failed: %s",
			       (unsigned long long)ps, (unsigned long long)pe,
			       strerror(-rc));
	}
	*out = r;
	return 0;
}

/* Under ctx->lock: fill a freshly pinned region in (the index's reference
 * and the caller's), replace what it overlaps, index it, apply the
 * thresholds. */
static void miss_publish_locked(struct gdirect_ctx *c, struct gdirect_reg *r,
				const struct gdl_pin *pin,
				const struct gdl_cuquery *q)
{
	struct gdirect_reg *old[GDL_MAX_OVERLAP];
	bool indexed;
	size_t n;

	r->start = pin->addr;
	r->end = pin->addr + pin->size;
	atomic_init(&r->refs, GDL_REF_BIAS + 2);
	r->id = atomic_fetch_add(&region_ids, 1);
	GDL_RC(r)->pin = *pin;
	GDL_RC(r)->tag_base = q->base;
	GDL_RC(r)->tag_size = q->size;
	GDL_RC(r)->tag_id = q->buffer_id;
	GDL_RC(r)->device = q->device;
	r->ctx = c;
	pthread_mutex_init(&GDL_RC(r)->map_lock, NULL);
	atomic_init(&r->stamp, gdl_lru_stamp());
	if (c->backend->status && pin->slot < c->backend->nslots)
		r->status = &c->backend->status[pin->slot];
	GDL_ST_INC(c, pins);
	GDL_ST_INC(c, regions);
	GDL_ST_ADD(c, bytes_pinned, pin->size);

	indexed = index_reserve(c, r->start, r->end) == 0;
	for (;;) {
		n = overlapping_regions(c, r->start, r->end, old);
		if (n <= GDL_MAX_OVERLAP)
			break;
		kill_locked(c, old, GDL_MAX_OVERLAP, GDL_CAUSE_SUPERSEDED,
			    NULL);
	}
	kill_locked(c, old, n, GDL_CAUSE_SUPERSEDED, indexed ? r : NULL);
	if (!indexed) {
		/* Could not publish (out of memory): hand it out uncached,
		 * dead from the start; the caller's put releases it. */
		atomic_fetch_or(&r->refs, GDL_DEAD);
		atomic_fetch_sub(&r->refs, 1);
		reg_link_tail(&c->dying, r);
	} else {
		reg_link_tail(&c->live, r);
		c->nregions++;
		c->nbytes += GDL_RC(r)->pin.size;
		evict_thresholds_locked(c);
	}
	GDL_ST_INC(c, misses);
	/* Puts from now on are younger than everything evicted so far. */
	atomic_fetch_add_explicit(&gdl_lru_era, 1, memory_order_relaxed);
}

static int miss(struct gdirect_ctx *c, uint64_t a, uint64_t e,
		struct gdirect_reg **out)
{
	struct gdl_cuquery q;
	struct gdirect_reg *r = NULL;
	struct gdl_pin pin;
	uint64_t ps, pe;
	struct gdl_pending pq;
	int rc, cu_err, tries = 0;

	gdl_drain(c);
restart:
	if (tries++ == 8)
		return gdl_err(-EAGAIN, "the registration keeps being "
			      "invalidated, or its memory freed while pinned");
	/* Announced, as the pin is below: an answer that a reported free
	 * overtook may describe the freed allocation, and its tag and cache
	 * entry would outlive it (notify.c).  Then the driver is asked
	 * again. */
	pthread_mutex_lock(&c->lock);
	gdl_query_announce_locked(c, &pq, a, e);
	pthread_mutex_unlock(&c->lock);
	rc = miss_check(c, a, e, &q);
	GDL_RACE(GDL_RACE_MISS_QUERIED);
	pthread_mutex_lock(&c->lock);
	if (rc) {
		gdl_query_done_locked(c, &pq);
		pthread_mutex_unlock(&c->lock);
		return rc;
	}
	/* The query stays announced until the pin's own announcement takes
	 * over (miss_pin_locked): both waits below drop the lock. */
	miss_range(c, &q, a, e, &ps, &pe);
	rc = sync_memops_locked(c, &q, &cu_err, &pq.freed);
	if (rc) {
		gdl_query_done_locked(c, &pq);
		pthread_mutex_unlock(&c->lock);
		if (rc == -EAGAIN)
			goto restart;
		if (rc == -ENOSYS)
			return gdl_err(rc, "cannot set SYNC_MEMOPS on %#llx: "
				      "the CUDA driver has no "
				      "cuPointerSetAttribute",
				      (unsigned long long)q.base);
		if (cu_err)
			return gdl_err(rc, "cannot set SYNC_MEMOPS on %#llx: "
				      "cuPointerSetAttribute failed with CUDA "
				      "error %d", (unsigned long long)q.base,
				      cu_err);
		return gdl_err(rc, "cannot set SYNC_MEMOPS on %#llx",
			      (unsigned long long)q.base);
	}
	rc = miss_find_locked(c, a, e, ps, pe, out);
	if (rc == 0 || rc == GDL_MISS_AGAIN) {
		/* Returned with the lock dropped. */
		pthread_mutex_lock(&c->lock);
		gdl_query_done_locked(c, &pq);
		pthread_mutex_unlock(&c->lock);
		if (rc == 0)
			return 0;
		goto restart;
	}
	if (gdl_query_done_locked(c, &pq)) {
		/* A free overtook the answer while this waited for another
		 * thread's pin or SYNC_MEMOPS. */
		pthread_mutex_unlock(&c->lock);
		goto restart;
	}

	miss_grow_locked(c, GDL_ALIGN_DOWN(q.base),
			 GDL_ALIGN_UP(q.base + q.size), &ps, &pe);
	rc = miss_pin_locked(c, ps, pe, &r, &pin);
	if (rc) {
		pthread_mutex_unlock(&c->lock);
		if (rc == GDL_MISS_AGAIN)
			goto restart;
		return rc;
	}
	miss_publish_locked(c, r, &pin, &q);
	pthread_mutex_unlock(&c->lock);
	release_dying(c);	/* what it superseded or evicted */
	*out = r;
	return 0;
}

/* ---- public ------------------------------------------------------------ */

GDL_EXPORT int gdirect_reg_info(const struct gdirect_reg *r,
			       struct gdirect_reg_info *info)
{
	if (!r || !info)
		return gdl_err(-EINVAL, "invalid argument");
	info->addr = r->start;
	info->size = r->end - r->start;
	info->kernel_handle = GDL_RC(r)->pin.handle;
	info->device = GDL_RC(r)->device;
	info->valid = !(atomic_load(&r->refs) & GDL_DEAD);
	if (info->valid && r->status)
		info->valid = __atomic_load_n(r->status, __ATOMIC_ACQUIRE) ==
			      GDL_STATUS_PINNED;
	return 0;
}

GDL_EXPORT void *gdirect_reg_map(struct gdirect_reg *r, const void *gpu_ptr)
{
	uint64_t a = (uintptr_t)gpu_ptr;
	void *m;

	if (!r || a < r->start || a >= r->end) {
		gdl_err(-EINVAL, "pointer outside the registration");
		return NULL;
	}
	/* A thread of the parent may have held map_lock at the fork. */
	if (gdl_inherited(r->ctx)) {
		gdl_err(-EPERM, "registration inherited across fork");
		return NULL;
	}
	m = atomic_load_explicit(&GDL_RC(r)->map, memory_order_acquire);
	if (!m) {
		pthread_mutex_lock(&GDL_RC(r)->map_lock);
		m = atomic_load(&GDL_RC(r)->map);
		if (!m) {
			m = r->ctx->backend->ops->map(r->ctx->backend, &GDL_RC(r)->pin);
			if (m)
				atomic_store_explicit(&GDL_RC(r)->map, m,
						      memory_order_release);
		}
		pthread_mutex_unlock(&GDL_RC(r)->map_lock);
		if (!m) {
			gdl_err(-errno, "mapping the BAR failed: %s",
				strerror(errno));
			return NULL;
		}
	}
	return (char *)m + (a - GDL_RC(r)->pin.addr);
}

/*
 * Deferred work: releases of dead regions nobody holds (killed by hooks,
 * or whose last put raced a stale lookup), revocation events, reclaim.
 * Returns how many regions it invalidated or unpinned.
 */
int gdl_drain(struct gdirect_ctx *c)
{
	struct gdl_revocation ev[64];
	int done, killed = 0, n;

	if (!c->backend)
		return 0;
	done = (int)release_dying(c);
	while ((n = c->backend->ops->read_events(c->backend, ev, 64)) > 0) {
		if (!(c->p.invalidation & GDIRECT_INV_KERNEL))
			continue;	/* read only to keep the queue short */
		pthread_mutex_lock(&c->lock);
		for (int i = 0; i < n; i++) {
			struct gdirect_reg *r;

			reg_for_each(&c->live, r)
				if (GDL_RC(r)->pin.handle == ev[i].handle) {
					killed += kill_locked(c, &r, 1,
							      GDL_CAUSE_KERNEL,
							      NULL);
					break;
				}
			gdl_allocs_drop_locked(c, ev[i].addr,
					      ev[i].addr + ev[i].size);
		}
		pthread_mutex_unlock(&c->lock);
		if (n < 64)
			break;
	}
	if (killed)
		release_dying(c);	/* counted as invalidated */
	gdl_epoch_reclaim();
	return done + killed;
}

GDL_EXPORT int gdirect_process_events(struct gdirect_ctx *c)
{
	if (!c)
		return gdl_err(-EINVAL, "invalid argument");
	if (gdl_inherited(c))
		return gdl_err(-EPERM, "context inherited across fork");
	gdl_rc_sweep(c->mr);
	gdl_rc_drain(c->mr);
	return gdl_drain(c);
}

GDL_EXPORT int gdirect_flush(struct gdirect_ctx *c)
{
	struct cand *v;
	size_t n, i = 0, k;

	if (!c)
		return gdl_err(-EINVAL, "invalid argument");
	if (gdl_inherited(c))
		return gdl_err(-EPERM, "context inherited across fork");
	gdl_drain(c);
	pthread_mutex_lock(&c->lock);
	n = lru_candidates(c, &v);
	k = evict_locked(c, v, n, &i, n, GDL_CAUSE_FLUSH);
	pthread_mutex_unlock(&c->lock);
	free(v);
	release_dying(c);
	gdl_epoch_reclaim();
	return (int)k;
}
