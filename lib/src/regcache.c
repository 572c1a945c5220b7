/* SPDX-License-Identifier: MIT */
/*
 * regcache.c - the registration engine (regcache.h): the lists, the
 * drain, the LRU and its thresholds, the registrations in flight, the
 * tag check, eviction and retry, for any kind of registration through
 * its ops table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_dl.h"
#include "libgdirect_internal.h"
#include "rcindex.h"
#include "regcache.h"
#include "verbs_range.h"

static _Atomic uint64_t rc_ids = 1;

/* A try of a get, from its classification of the memory to the end of
 * its registration, so that a free reported meanwhile is not lost: the
 * registration is then given back and the lookup starts over. */
struct rc_pending {
	uint64_t start, end;
	bool freed;
	struct gdl_list node;
};

struct gdl_rc {
	/* The first member: lib-verbs holds it across a fork, as a parent
	 * thread inside the engine would. */
	pthread_mutex_t lock;
	struct gdl_list live, dying, pending;
	/* The regions of the live list, by domain, space and address, for
	 * the lookup; its stamps follow the live list's order. */
	struct gdl_rci index;
	uint64_t nregions, nbytes;	/* on the live list */
	/* Set under the lock when an unreferenced region dies (a put
	 * releases a referenced one itself); read without it by the drain
	 * every get makes, which skips the lock while nothing is due. */
	atomic_bool drain_due;
	/* The context, NULL once destroyed with regions still held; those
	 * regions' last puts release them and then the engine. */
	struct gdirect_ctx *ctx;
	/* Puts releasing a region outside the lock: the engine outlives
	 * them, and gdl_rc_destroy() waits for them before its context
	 * goes (they count into it). */
	unsigned int busy;
	pthread_cond_t idle;
	/* Set by gdl_rc_destroy() when regions were still held: the put
	 * that leaves no region, dying or busy, frees the engine. */
	bool orphaned;
	uint64_t fork_gen;		/* the context's */
	const struct gdl_rc_ops *ops;
	void *priv;			/* the kind's */
};

static bool rc_inherited(const struct gdl_rc *rc)
{
	return atomic_load_explicit(&gdl_fork_gen, memory_order_relaxed) !=
	       rc->fork_gen;
}

int gdl_rc_create(struct gdirect_ctx *c, const struct gdl_rc_ops *ops,
		  struct gdl_rc **out)
{
	struct gdl_rc *rc = calloc(1, sizeof(*rc));

	if (!rc)
		return -ENOMEM;
	pthread_mutex_init(&rc->lock, NULL);
	pthread_cond_init(&rc->idle, NULL);
	gdl_list_init(&rc->live);
	gdl_list_init(&rc->dying);
	gdl_list_init(&rc->pending);
	rc->ctx = c;
	rc->fork_gen = c->fork_gen;
	rc->ops = ops;
	*out = rc;
	return 0;
}

void **gdl_rc_priv(struct gdl_rc *rc)
{
	return &rc->priv;
}

static void rc_count(struct gdl_rc *rc, enum gdl_rc_event ev)
{
	if (rc->ctx)
		rc->ops->count(rc->ctx, ev);
}

/* Deregister and free r, which no list holds any more. */
static void rc_release(struct gdl_rc *rc, struct gdl_rc_region *r)
{
	if (rc->ops->dereg(r) == 0)
		rc_count(rc, GDL_RC_DEREG);
	free(r);
}

/* Put r on the live list, the most recently used (its counts and index
 * entry with it). */
static void rc_live_locked(struct gdl_rc *rc, struct gdl_rc_region *r)
{
	gdl_list_add(&rc->live, &r->node);
	gdl_rci_insert(&rc->index, r);
	rc->nregions++;
	rc->nbytes += r->len;
}

/* Make live region r the most recently used, on the list and in the
 * index alike. */
static void rc_touch_locked(struct gdl_rc *rc, struct gdl_rc_region *r)
{
	gdl_list_move(&rc->live, &r->node);
	gdl_rci_touch(&rc->index, r);
}

/* Take r off the live list (its counts and index entry with it). */
static void rc_unlive_locked(struct gdl_rc *rc, struct gdl_rc_region *r)
{
	gdl_list_del(&r->node);
	gdl_rci_remove(&rc->index, r);
	rc->nregions--;
	rc->nbytes -= r->len;
}

/* Move r to the dying list; it is released with its last reference. */
static void rc_kill_locked(struct gdl_rc *rc, struct gdl_rc_region *r)
{
	if (r->dead)
		return;
	rc_unlive_locked(rc, r);
	r->dead = true;
	gdl_list_add(&rc->dying, &r->node);
	if (!atomic_load_explicit(&r->refs, memory_order_relaxed))
		atomic_store_explicit(&rc->drain_due, true,
				      memory_order_relaxed);
}

/* Release the regions on list (a private list of unreferenced ones). */
static int rc_release_list(struct gdl_rc *rc, struct gdl_list *list)
{
	struct gdl_rc_region *r, *n;
	int k = 0;

	gdl_list_for_each_safe(list, r, n, node) {
		gdl_list_del(&r->node);
		rc_release(rc, r);
		k++;
	}
	return k;
}

/* Move the dying regions nobody holds to list. */
static void rc_reap_locked(struct gdl_rc *rc, struct gdl_list *list)
{
	struct gdl_rc_region *r, *n;

	gdl_list_for_each_safe(&rc->dying, r, n, node)
		if (!atomic_load_explicit(&r->refs, memory_order_relaxed))
			gdl_list_move(list, &r->node);
}

int gdl_rc_drain(struct gdl_rc *rc)
{
	struct gdl_list list;

	if (!rc || !atomic_load_explicit(&rc->drain_due, memory_order_relaxed))
		return 0;
	gdl_list_init(&list);
	pthread_mutex_lock(&rc->lock);
	atomic_store_explicit(&rc->drain_due, false, memory_order_relaxed);
	rc_reap_locked(rc, &list);
	pthread_mutex_unlock(&rc->lock);
	return rc_release_list(rc, &list);
}

/* Release the least recently used unused region sharing dom's
 * resources.  1 if there was one. */
static int rc_evict_one(struct gdl_rc *rc, const void *dom)
{
	struct gdl_rc_region *r, *victim = NULL;

	pthread_mutex_lock(&rc->lock);
	gdl_list_for_each_rev(&rc->live, r, node)
		if (!atomic_load_explicit(&r->refs, memory_order_relaxed) &&
		    rc->ops->shares(r, dom)) {
			victim = r;
			break;
		}
	if (victim)
		rc_unlive_locked(rc, victim);
	pthread_mutex_unlock(&rc->lock);
	if (!victim)
		return 0;
	rc_count(rc, GDL_RC_EVICT);
	rc_release(rc, victim);
	return 1;
}

/* Move unused regions, least recently used first, to list while the live
 * ones are above the context's max_regions or max_bytes. */
static void rc_trim_locked(struct gdl_rc *rc, struct gdl_list *list)
{
	const struct gdirect_params *p = &rc->ctx->p;
	struct gdl_rc_region *r, *n;

	for (r = gdl_container_of(rc->live.prev, struct gdl_rc_region, node);
	     &r->node != &rc->live; r = n) {
		n = gdl_container_of(r->node.prev, struct gdl_rc_region, node);
		if (!(p->max_regions && rc->nregions > p->max_regions) &&
		    !(p->max_bytes && rc->nbytes > p->max_bytes))
			break;
		if (atomic_load_explicit(&r->refs, memory_order_relaxed))
			continue;
		rc_unlive_locked(rc, r);
		gdl_list_add(list, &r->node);
		rc_count(rc, GDL_RC_EVICT);
	}
}

/* Whether r's range is in the space a request names (NULL: virtual
 * addresses). */
static bool rc_in_space(const struct gdl_rc_region *r, const uint64_t *space)
{
	static const uint64_t va[4];

	return !memcmp(r->space, space ? space : va, sizeof(r->space));
}

/* Whether r's range is in an object's space, not virtual addresses. */
static bool rc_foreign(const struct gdl_rc_region *r)
{
	return !rc_in_space(r, NULL);
}

/*
 * Without hooks no free is reported: kill the unused GPU regions whose
 * allocation is gone (its BUFFER_ID no longer the region's), so that a
 * region does not keep freed GPU memory until a get overlaps it.  The
 * driver is asked with the lock dropped; a region is then found again by
 * its id.
 */
int gdl_rc_sweep(struct gdl_rc *rc)
{
	struct gdl_rc_region *r, *n;
	struct sweep { uint64_t id, base, tag; } *v;
	size_t k = 0, max;
	int killed = 0;

	if (!rc || (rc->ctx->p.invalidation & GDIRECT_INV_HOOKS))
		return 0;
	pthread_mutex_lock(&rc->lock);
	max = rc->nregions;
	pthread_mutex_unlock(&rc->lock);
	v = max ? malloc(max * sizeof(*v)) : NULL;
	if (!v)
		return 0;
	pthread_mutex_lock(&rc->lock);
	gdl_list_for_each_safe(&rc->live, r, n, node)
		if (k < max && !r->host && !rc_foreign(r) &&
		    !atomic_load_explicit(&r->refs, memory_order_relaxed))
			v[k++] = (struct sweep){ r->id, r->base, r->tag_id };
	pthread_mutex_unlock(&rc->lock);
	for (size_t i = 0; i < k; i++) {
		uint64_t id = 0;

		if (gdl_cuda_buffer_id(v[i].base, &id) == 0 && id == v[i].tag)
			continue;
		pthread_mutex_lock(&rc->lock);
		gdl_list_for_each_safe(&rc->live, r, n, node)
			if (r->id == v[i].id) {
				rc_kill_locked(rc, r);
				killed++;
				break;
			}
		pthread_mutex_unlock(&rc->lock);
	}
	free(v);
	return killed;
}

/* The index's kill callback: r dies under the engine's lock. */
static void rc_kill_cb(struct gdl_rc_region *r, void *rc)
{
	rc_kill_locked(rc, r);
}

/*
 * A free of [s, e) kills the live regions of virtual addresses it
 * overlaps, found through the index (a reported free costs O(log n) per
 * region it kills, not a visit of every live region), and marks the
 * registrations pending over it.  Regions in an object's space are not
 * concerned: no free of virtual addresses touches them.
 */
void gdl_rc_notify_locked(struct gdl_rc *rc, uint64_t s, uint64_t e)
{
	struct rc_pending *p, *q;

	if (!rc)
		return;
	pthread_mutex_lock(&rc->lock);
	gdl_rci_kill_va(&rc->index, s, e, rc_kill_cb, rc);
	gdl_list_for_each_safe(&rc->pending, p, q, node)
		if (p->start < e && s < p->end)
			p->freed = true;
	pthread_mutex_unlock(&rc->lock);
}

static void rc_free(struct gdl_rc *rc)
{
	rc->ops->priv_free(rc->priv);
	pthread_cond_destroy(&rc->idle);
	pthread_mutex_destroy(&rc->lock);
	free(rc);
}

void gdl_rc_destroy(struct gdl_rc *rc, bool in_child)
{
	struct gdl_rc_region *r, *n;
	struct gdl_list list;
	bool leaked;

	if (!rc)
		return;
	if (in_child) {
		/* The regions are the parent's: free our copies only. */
		gdl_list_for_each_safe(&rc->live, r, n, node)
			free(r);
		gdl_list_for_each_safe(&rc->dying, r, n, node)
			free(r);
		pthread_mutex_init(&rc->lock, NULL);
		pthread_cond_init(&rc->idle, NULL);
		rc_free(rc);
		return;
	}
	gdl_list_init(&list);
	pthread_mutex_lock(&rc->lock);
	gdl_list_for_each_safe(&rc->live, r, n, node)
		rc_kill_locked(rc, r);
	rc_reap_locked(rc, &list);
	rc->busy++;
	pthread_mutex_unlock(&rc->lock);
	rc_release_list(rc, &list);
	pthread_mutex_lock(&rc->lock);
	rc->busy--;
	/* The context goes when this returns: no put may count into it. */
	rc->ctx = NULL;
	while (rc->busy)
		pthread_cond_wait(&rc->idle, &rc->lock);
	/* Still referenced: the caller broke the contract, and its holder
	 * may still read the region: its last put releases it, then the
	 * engine. */
	leaked = !gdl_list_empty(&rc->dying);
	rc->orphaned = leaked;
	pthread_mutex_unlock(&rc->lock);
	if (!leaked)
		rc_free(rc);
}

/* Register r, evicting unused regions sharing its domain's resources
 * while the kind is refused for lack of them. */
static int rc_register(struct gdl_rc *rc, struct gdirect_ctx *c,
		       const struct gdirect_ptr_info *info,
		       struct gdl_rc_region *r, void *arg)
{
	for (;;) {
		int err = rc->ops->reg(c, info, r, arg);

		if (!err || !rc->ops->refused(err))
			return err;
		if (!gdl_rc_drain(rc) && !rc_evict_one(rc, r->dom)) {
			char why[256];

			snprintf(why, sizeof(why), "%s", gdirect_errmsg());
			return gdl_err(err, "%s; no unused region of %s is "
				       "left to release", why,
				       rc->ops->dom_name(r->dom));
		}
	}
}

/*
 * The live region of dom that serves [a, end) with attr, or NULL: what a
 * walk of the live list, most recently used first, over the regions of
 * dom in the request's space overlapping [a, end) returns, with its
 * side effects.  The walk kills each region registered for another
 * allocation (freed since, the address reused) and each region covering
 * the request without the flags asked for (adding its flags to *attr, so
 * that its successor serves both), and returns the first covering region
 * with the flags.  The index (rcindex.h) answers the same in O(log n)
 * per overlapping region and kills the same set of regions: those of
 * another allocation after the returned one in the walk's order stay
 * alive, as they did when the walk itself ran.  Killing them too would
 * be as correct (no region of another allocation is ever returned, and
 * the next lookup over them kills them), but exactness keeps the
 * lookup's effects those of the documented walk, which the unit test
 * lib-rcindex compares it with.
 */
static struct gdl_rc_region *rc_lookup_locked(struct gdl_rc *rc,
					      const struct gdl_rc_req *req,
					      const struct gdirect_ptr_info *info,
					      uint64_t a, uint64_t end,
					      int *attr)
{
	const struct gdl_rci_req q = {
		.dom = req->dom, .space = req->space,
		.tag_base = info->alloc_base, .tag_id = info->buffer_id,
		.a = a, .end = end,
	};

	return gdl_rci_lookup(&rc->index, &q, attr, rc_kill_cb, rc);
}

/* Take a reference to live region r, now the most recently used. */
static void rc_hold_locked(struct gdl_rc *rc, struct gdl_rc_region *r)
{
	atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
	rc_touch_locked(rc, r);
}

/*
 * Classify [a, end) for a registration.  The classification cache may
 * answer from a hook-kept entry without asking the driver, and a free the
 * hooks did not see (no interposer, a library freeing through its own
 * handle) leaves that entry stale: the allocation's own tag, its
 * BUFFER_ID, is asked for GPU memory, as libfabric's cuda_mm_valid does,
 * and a changed one invalidates the old allocation here (its regions of
 * every kind, its entry) before the caller starts over (-EAGAIN).
 */
static int rc_classify(struct gdirect_ctx *c, const void *ptr,
		       struct gdirect_ptr_info *info)
{
	uint64_t id = 0;
	int rc = gdirect_classify(c, ptr, info);

	if (rc || info->type != GDIRECT_MEM_DEVICE ||
	    !(c->p.invalidation & GDIRECT_INV_HOOKS))
		return rc;	/* without hooks, classify asked already */
	if (gdl_cuda_buffer_id((uintptr_t)ptr, &id) == 0 &&
	    id == info->buffer_id)
		return 0;
	gdl_invalidate(c, info->alloc_base,
		       info->alloc_base + info->alloc_size);
	return -EAGAIN;
}

/* SYNC_MEMOPS on the GPU allocation before its first registration, as a
 * BAR pin's (rcache.c): 0, -EAGAIN (freed meanwhile, or *freed set: start
 * over), or an error with its reason.  *freed is the try's pending mark,
 * set with ctx->lock held (gdl_invalidate calls gdl_rc_notify_locked),
 * under which the allocation's entry is made: a free that overtook the
 * classification leaves no entry of the freed allocation behind. */
static int rc_sync_memops(struct gdirect_ctx *c,
			  const struct gdirect_ptr_info *info, const bool *freed)
{
	struct gdl_cuquery q = {
		.type = info->type, .device = info->device,
		.base = info->alloc_base, .size = info->alloc_size,
		.buffer_id = info->buffer_id,
	};
	int cu_err, rc = gdl_sync_memops(c, &q, &cu_err, freed);

	if (rc == 0 || rc == -EAGAIN)
		return rc;
	if (cu_err)
		return gdl_err(rc, "cannot set SYNC_MEMOPS on %#llx: "
			       "cuPointerSetAttribute failed with CUDA error "
			       "%d", (unsigned long long)q.base, cu_err);
	return gdl_err(rc, "cannot set SYNC_MEMOPS on %#llx%s",
		       (unsigned long long)q.base,
		       rc == -ENOSYS ? ": the CUDA driver has no "
				       "cuPointerSetAttribute" : "");
}

int gdl_mr_range(const struct gdirect_ptr_info *info, uint64_t a,
		 uint64_t end, uint64_t whole_max, uint64_t *s, uint64_t *e)
{
	uint64_t ab = info->alloc_base, ae = ab + info->alloc_size;

	if (end <= a)
		return -EINVAL;
	if (info->type != GDIRECT_MEM_DEVICE) {
		*s = a & ~(GDL_MR_HOST_PAGE - 1);
		*e = (end + GDL_MR_HOST_PAGE - 1) & ~(GDL_MR_HOST_PAGE - 1);
		return 0;
	}
	if (a < ab || end > ae)
		return -EINVAL;
	if (whole_max && info->alloc_size <= whole_max) {
		*s = ab;
		*e = ae;
	} else {
		*s = GDL_ALIGN_DOWN(a) < ab ? ab : GDL_ALIGN_DOWN(a);
		*e = GDL_ALIGN_UP(end) > ae ? ae : GDL_ALIGN_UP(end);
	}
	return 0;
}

/*
 * What a request in an object's space (req->space) stands for in place of
 * a classification, and the range it registers: [a, end) widened to
 * whole 4 KiB pages within the object, as a host range is, so that
 * neighbouring requests share a region.  The object has no allocation to
 * tag (0, 0).  0, or -EINVAL when the request runs past the object.
 */
static int rc_space_range(const struct gdl_rc_req *req, uint64_t a,
			  uint64_t end, struct gdirect_ptr_info *info,
			  uint64_t *s, uint64_t *e)
{
	uint64_t size = req->space_size;

	if (end <= a || (size && end > size))
		return gdl_err(-EINVAL, "[%#llx, +%zu) runs past the end of "
			       "its object (%llu bytes)", (unsigned long long)a,
			       req->len, (unsigned long long)size);
	*info = (struct gdirect_ptr_info){
		.type = GDIRECT_MEM_DEVICE, .device = -1,
		.alloc_size = size,
	};
	*s = a & ~(GDL_MR_HOST_PAGE - 1);
	*e = (end + GDL_MR_HOST_PAGE - 1) & ~(GDL_MR_HOST_PAGE - 1);
	if (size && *e > size)
		*e = size;
	return 0;
}

/* A new region for [s, e) of req, tagged with info's allocation. */
static struct gdl_rc_region *rc_region_new(struct gdl_rc *rc,
					   const struct gdl_rc_req *req,
					   const struct gdirect_ptr_info *info,
					   uint64_t s, uint64_t e, int attr)
{
	struct gdl_rc_region *r = calloc(1, rc->ops->region_size);

	if (!r)
		return NULL;
	r->base = s;
	r->len = e - s;
	r->attr = attr;
	r->dom = req->dom;
	r->host = info->type != GDIRECT_MEM_DEVICE;
	r->tag_base = info->alloc_base;
	r->tag_id = info->buffer_id;
	if (req->space)
		memcpy(r->space, req->space, sizeof(r->space));
	r->id = atomic_fetch_add(&rc_ids, 1);
	r->rc = rc;
	return r;
}

int gdl_rc_get(struct gdl_rc *rc, struct gdirect_ctx *c,
	       struct gdl_rc_req *req, struct gdl_rc_region **out)
{
	uint64_t a = (uintptr_t)req->ptr, end = a + req->len, s, e;
	struct gdirect_ptr_info info;
	struct gdl_rc_region *r, *h;
	struct rc_pending pend;
	struct gdl_list victims;
	int err, tries = 0, attr = req->attr;
	bool cached;

	gdl_list_init(&victims);
again:
	if (tries++ == GDL_RC_TRIES)
		return gdl_err(-EAGAIN, "the registration of %p keeps being "
			       "invalidated, or its memory freed while "
			       "registered", req->ptr);
	gdl_rc_drain(rc);
	/*
	 * The try is announced before the classification that its
	 * registration rests on, so that a free reported from then on marks
	 * it: one reported after the classification and not seen would
	 * leave a registration of the freed memory cached.  Until the range
	 * to register is known the entry covers the request, which a free
	 * of its allocation overlaps (the hooks report whole allocations;
	 * a cuMemUnmap of part of a VMM range outside the request, reported
	 * before the lookup below, is not seen).
	 */
	pend = (struct rc_pending){ .start = a, .end = end };
	if (req->space)		/* no reported free concerns an object */
		pend.start = pend.end = 0;
	pthread_mutex_lock(&rc->lock);
	gdl_list_add(&rc->pending, &pend.node);
	pthread_mutex_unlock(&rc->lock);
	if (req->space) {
		err = rc_space_range(req, a, end, &info, &s, &e);
		if (err)
			goto fail_pending;
		cached = true;
		pthread_mutex_lock(&rc->lock);
		goto lookup;
	}
	err = rc_classify(c, req->ptr, &info);
	GDL_RACE(GDL_RACE_RC_CLASSIFIED);
	if (!err && info.type == GDIRECT_MEM_MANAGED)
		err = gdl_err(-EOPNOTSUPP, "managed memory at %p cannot be "
			      "registered", req->ptr);
	else if (!err && gdl_mr_range(&info, a, end, c->p.whole_alloc_max,
				      &s, &e))
		err = gdl_err(-EINVAL, "[%p, +%zu) is not inside one "
			      "allocation", req->ptr, req->len);
	if (err)
		goto fail_pending;
	cached = info.type == GDIRECT_MEM_DEVICE ||
		 (c->p.flags & GDIRECT_CTX_CACHE_HOST);
	pthread_mutex_lock(&rc->lock);
	/* [s, e) holds the request. */
	pend.start = s;
	pend.end = e;
	if (pend.freed) {
		/* The classification is stale: a lookup with it would kill
		 * another thread's region of the address's new allocation. */
		gdl_list_del(&pend.node);
		pthread_mutex_unlock(&rc->lock);
		goto again;
	}
lookup:
	if (cached) {
		r = rc_lookup_locked(rc, req, &info, a, end, &attr);
		if (r) {
			gdl_list_del(&pend.node);
			rc_hold_locked(rc, r);
			pthread_mutex_unlock(&rc->lock);
			rc_count(rc, GDL_RC_HIT);
			*out = r;
			return 0;
		}
	}
	pthread_mutex_unlock(&rc->lock);
	if (info.type == GDIRECT_MEM_DEVICE && !req->space) {
		err = rc_sync_memops(c, &info, &pend.freed);
		if (err)
			goto fail_pending;
	}
	r = rc_region_new(rc, req, &info, s, e, attr);
	if (!r) {
		err = gdl_err(-ENOMEM, "out of memory");
		goto fail_pending;
	}

	err = rc_register(rc, c, &info, r, req->arg);

	pthread_mutex_lock(&rc->lock);
	gdl_list_del(&pend.node);
	if (err) {
		pthread_mutex_unlock(&rc->lock);
		free(r);
		return err;
	}
	if (pend.freed) {
		/* Part of it was freed while it was being registered: the
		 * region may hold the old memory.  Give it back, ask again. */
		pthread_mutex_unlock(&rc->lock);
		rc_release(rc, r);
		goto again;
	}
	r->refs = 1;
	if (!cached) {
		r->dead = true;
		gdl_list_add(&rc->dying, &r->node);
	} else if ((h = rc_lookup_locked(rc, req, &info, a, end, &attr)) &&
		   h->attr == r->attr) {
		/* Another thread registered the same range meanwhile. */
		rc_hold_locked(rc, h);
		pthread_mutex_unlock(&rc->lock);
		rc_release(rc, r);
		*out = h;
		return 0;
	} else {
		rc_live_locked(rc, r);
		rc_trim_locked(rc, &victims);
	}
	pthread_mutex_unlock(&rc->lock);
	rc_release_list(rc, &victims);
	*out = r;
	return 0;

fail_pending:
	pthread_mutex_lock(&rc->lock);
	gdl_list_del(&pend.node);
	pthread_mutex_unlock(&rc->lock);
	if (err == -EAGAIN)
		goto again;
	return err;
}

void gdl_rc_put(struct gdl_rc_region *r)
{
	struct gdl_rc *rc = r->rc;
	bool release = false, last = false, ok;

	if (rc_inherited(rc)) {
		/* A fork child's copy of the parent's region: its lock may
		 * be held by a parent thread that is not here, its
		 * registration is the parent's.  Only count;
		 * gdirect_ctx_destroy() frees the copy. */
		atomic_fetch_sub_explicit(&r->refs, 1, memory_order_relaxed);
		return;
	}
	pthread_mutex_lock(&rc->lock);
	if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_relaxed) == 1 &&
	    r->dead) {
		gdl_list_del(&r->node);
		release = true;
		rc->busy++;
	} else if (!r->dead) {
		/* Least recently used is least recently put or got. */
		rc_touch_locked(rc, r);
	}
	pthread_mutex_unlock(&rc->lock);
	if (!release)
		return;
	/* Deregistered outside the lock (it is slow); counted under it,
	 * into a context that gdl_rc_destroy() keeps until busy is 0. */
	ok = rc->ops->dereg(r) == 0;
	pthread_mutex_lock(&rc->lock);
	if (ok && rc->ctx)
		rc->ops->count(rc->ctx, GDL_RC_DEREG);
	if (!--rc->busy)
		pthread_cond_broadcast(&rc->idle);
	last = rc->orphaned && !rc->busy && gdl_list_empty(&rc->dying);
	pthread_mutex_unlock(&rc->lock);
	free(r);
	if (last)	/* the context is gone: this was its last region */
		rc_free(rc);
}

bool gdl_rc_valid(const struct gdl_rc_region *r)
{
	struct gdl_rc *rc = r->rc;
	uint64_t id = 0;
	bool dead;

	if (rc_inherited(rc))
		return false;
	pthread_mutex_lock(&rc->lock);
	dead = r->dead;
	pthread_mutex_unlock(&rc->lock);
	if (dead)
		return false;
	if (r->host || rc_foreign(r))
		return true;
	return gdl_cuda_buffer_id(r->base, &id) == 0 && id == r->tag_id;
}

int gdl_rc_flush(struct gdl_rc *rc, const void *dom)
{
	struct gdl_rc_region *r, *n;
	struct gdl_list list;
	bool busy = false;
	int k;

	gdl_list_init(&list);
	pthread_mutex_lock(&rc->lock);
	gdl_list_for_each_safe(&rc->live, r, n, node)
		if (!dom || r->dom == dom) {
			if (!atomic_load_explicit(&r->refs,
						  memory_order_relaxed))
				rc_kill_locked(rc, r);
			else
				busy = true;
		}
	rc_reap_locked(rc, &list);
	if (dom)
		gdl_list_for_each_safe(&rc->dying, r, n, node)
			busy |= r->dom == dom;
	pthread_mutex_unlock(&rc->lock);
	k = rc_release_list(rc, &list);
	if (dom && busy)
		return gdl_err(-EBUSY, "regions of the domain are still held");
	return k;
}
