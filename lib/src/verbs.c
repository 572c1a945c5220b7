/* SPDX-License-Identifier: MIT */
/*
 * verbs.c - the verbs registration cache (gdirect_verbs.h): memory regions
 * of GPU and host memory registered with an RDMA NIC, one per allocation,
 * reused until the memory is freed or the NIC needs the room.
 *
 * The rules are the BAR cache's (rcache.c): a region covers the whole
 * allocation (or the 64 KiB-rounded request above whole_alloc_max, never
 * past the allocation), every buffer in it is an offset into it, a region
 * is never handed out for memory freed since it was registered, unused
 * regions above max_regions/max_bytes are deregistered, and a registration
 * the NIC refuses for lack of resources evicts unused regions of that NIC,
 * least recently used first, and is retried.  Freed memory is seen the
 * same ways: the hooks report frees here (gdl_mr_notify_locked), and every
 * get classifies its pointer and, for GPU memory, makes sure of the
 * allocation's BUFFER_ID (mr_classify), then compares the allocation and
 * its BUFFER_ID with those the region was registered for.  That
 * comparison matters for dma-buf regions: NVIDIA's exporter keeps freed
 * memory alive while an import holds it, so the registration stays valid
 * for the old memory, and the next cuMemAlloc may return the same address
 * with a new BUFFER_ID.
 *
 * One mutex per context guards the lists; it is never held across a
 * registration, a deregistration or a CUDA call, so a get that hits never
 * waits for another thread's registration.  Regions live on the live list
 * (most recently used first) while they may be handed out, then on the
 * dying list until their last reference goes; deregistration happens
 * outside the hooks (a free hook must not call into the NIC's driver), at
 * the next get, put, flush, gdirect_process_events or destroy.  A fork
 * child never takes the mutex (a parent thread may have held it at the
 * fork): its puts only count.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_dl.h"
#include "gdirect_verbs.h"
#include "gdl_list.h"
#include "libgdirect_internal.h"
#include "verbs_range.h"

static _Atomic uint64_t mr_ids = 1;

/* Tries of one get whose memory keeps being freed or reallocated under
 * it, as the BAR cache's miss (rcache.c). */
#define MR_TRIES 8

struct gdirect_mr {
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	uint64_t base, len;		/* registered range; iova == base */
	int access;
	enum gdirect_mr_via via;
	/* The allocation it was registered for (0, 0 for host memory). */
	uint64_t tag_base, tag_id;
	uint64_t id;			/* unique in the process */
	/* Changed under the cache's lock, except by a fork child's put,
	 * which only counts (the lock may be held by a parent thread). */
	_Atomic long refs;
	bool dead;			/* dying: no new references */
	struct gdl_list node;		/* on live (MRU first) or dying */
	struct gdl_mrcache *mc;
};

/* A registration in progress, so that a free reported meanwhile is not
 * lost: the registration is then given back and the lookup starts over. */
struct mr_pending {
	uint64_t start, end;
	bool freed;
	struct gdl_list node;
};

/* What the fd -1 probe answered for one device (verbs context). */
struct mr_probe {
	struct ibv_context *dev;
	int err;			/* EBADF: dma-buf supported */
	struct gdl_list node;
};

struct gdl_mrcache {
	/* The first member: lib-verbs holds it across a fork, as a parent
	 * thread inside the cache would. */
	pthread_mutex_t lock;
	struct gdl_list live, dying, pending, probes;
	uint64_t nregions, nbytes;	/* on the live list */
	/* Set under the lock when an unreferenced region dies (a put
	 * releases a referenced one itself); read without it by the drain
	 * every get makes, which skips the lock while nothing is due. */
	atomic_bool drain_due;
	/* The context, NULL once destroyed with regions still held; those
	 * regions' last puts release them and then the cache. */
	struct gdirect_ctx *ctx;
	uint64_t fork_gen;		/* the context's */
};

static struct gdirect_mr *mr_of(struct gdl_list *n)
{
	return gdl_container_of(n, struct gdirect_mr, node);
}

static bool mr_inherited(const struct gdl_mrcache *mc)
{
	return atomic_load_explicit(&gdl_fork_gen, memory_order_relaxed) !=
	       mc->fork_gen;
}

int gdl_mr_init(struct gdirect_ctx *c)
{
	struct gdl_mrcache *mc = calloc(1, sizeof(*mc));

	if (!mc)
		return -ENOMEM;
	pthread_mutex_init(&mc->lock, NULL);
	gdl_list_init(&mc->live);
	gdl_list_init(&mc->dying);
	gdl_list_init(&mc->pending);
	gdl_list_init(&mc->probes);
	mc->ctx = c;
	mc->fork_gen = c->fork_gen;
	c->mr = mc;
	return 0;
}

/* Deregister and free m, which no list holds any more. */
static void mr_release(struct gdl_mrcache *mc, struct gdirect_mr *m)
{
	if (m->mr && ibv_dereg_mr(m->mr) == 0 && mc->ctx)
		ST_INC(mc->ctx, mr_deregs);
	free(m);
}

/* Take m off the live list (its counts with it). */
static void mr_unlive_locked(struct gdl_mrcache *mc, struct gdirect_mr *m)
{
	gdl_list_del(&m->node);
	mc->nregions--;
	mc->nbytes -= m->len;
}

/* Move m to the dying list; it is released with its last reference. */
static void mr_kill_locked(struct gdl_mrcache *mc, struct gdirect_mr *m)
{
	if (m->dead)
		return;
	mr_unlive_locked(mc, m);
	m->dead = true;
	gdl_list_add(&mc->dying, &m->node);
	if (!atomic_load_explicit(&m->refs, memory_order_relaxed))
		atomic_store_explicit(&mc->drain_due, true,
				      memory_order_relaxed);
}

/* Release the regions on list (a private list of unreferenced ones). */
static int mr_release_list(struct gdl_mrcache *mc, struct gdl_list *list)
{
	struct gdirect_mr *m, *n;
	int k = 0;

	gdl_list_for_each_safe(list, m, n, node) {
		gdl_list_del(&m->node);
		mr_release(mc, m);
		k++;
	}
	return k;
}

/* Move the dying regions nobody holds to list. */
static void mr_reap_locked(struct gdl_mrcache *mc, struct gdl_list *list)
{
	struct gdirect_mr *m, *n;

	gdl_list_for_each_safe(&mc->dying, m, n, node)
		if (!atomic_load_explicit(&m->refs, memory_order_relaxed))
			gdl_list_move(list, &m->node);
}

/* Release the dying regions nobody holds, when one died unreferenced
 * since the last drain.  Returns how many. */
int gdl_mr_drain(struct gdirect_ctx *c)
{
	struct gdl_mrcache *mc = c->mr;
	struct gdl_list list;

	if (!mc || !atomic_load_explicit(&mc->drain_due, memory_order_relaxed))
		return 0;
	gdl_list_init(&list);
	pthread_mutex_lock(&mc->lock);
	atomic_store_explicit(&mc->drain_due, false, memory_order_relaxed);
	mr_reap_locked(mc, &list);
	pthread_mutex_unlock(&mc->lock);
	return mr_release_list(mc, &list);
}

/* Deregister the least recently used unused region of device dev.  1 if
 * there was one. */
static int mr_evict_one(struct gdl_mrcache *mc, struct ibv_context *dev)
{
	struct gdirect_mr *m, *victim = NULL;

	pthread_mutex_lock(&mc->lock);
	gdl_list_for_each_rev(&mc->live, m, node)
		if (!atomic_load_explicit(&m->refs, memory_order_relaxed) &&
		    m->pd->context == dev) {
			victim = m;
			break;
		}
	if (victim)
		mr_unlive_locked(mc, victim);
	pthread_mutex_unlock(&mc->lock);
	if (!victim)
		return 0;
	ST_INC(mc->ctx, mr_evictions);
	mr_release(mc, victim);
	return 1;
}

/* Move unused regions, least recently used first, to list while the live
 * ones are above the context's max_regions or max_bytes. */
static void mr_trim_locked(struct gdl_mrcache *mc, struct gdl_list *list)
{
	const struct gdirect_params *p = &mc->ctx->p;
	struct gdirect_mr *m, *n;

	for (m = mr_of(mc->live.prev); &m->node != &mc->live; m = n) {
		n = mr_of(m->node.prev);
		if (!(p->max_regions && mc->nregions > p->max_regions) &&
		    !(p->max_bytes && mc->nbytes > p->max_bytes))
			break;
		if (atomic_load_explicit(&m->refs, memory_order_relaxed))
			continue;
		mr_unlive_locked(mc, m);
		gdl_list_add(list, &m->node);
		ST_INC(mc->ctx, mr_evictions);
	}
}

/*
 * Without hooks no free is reported: kill the unused GPU regions whose
 * allocation is gone (its BUFFER_ID no longer the region's), so that a
 * dma-buf region does not keep freed GPU memory until a get overlaps it.
 * The driver is asked with the lock dropped; a region is then found again
 * by its id.  Returns how many it killed.
 */
int gdl_mr_sweep(struct gdirect_ctx *c)
{
	struct gdl_mrcache *mc = c->mr;
	struct gdirect_mr *m, *n;
	struct sweep { uint64_t id, base, tag; } *v;
	size_t k = 0, max;
	int killed = 0;

	if (!mc || (c->p.invalidation & GDIRECT_INV_HOOKS))
		return 0;
	pthread_mutex_lock(&mc->lock);
	max = mc->nregions;
	pthread_mutex_unlock(&mc->lock);
	v = max ? malloc(max * sizeof(*v)) : NULL;
	if (!v)
		return 0;
	pthread_mutex_lock(&mc->lock);
	gdl_list_for_each_safe(&mc->live, m, n, node)
		if (k < max && m->via != GDIRECT_MR_VIA_HOST &&
		    !atomic_load_explicit(&m->refs, memory_order_relaxed))
			v[k++] = (struct sweep){ m->id, m->base, m->tag_id };
	pthread_mutex_unlock(&mc->lock);
	for (size_t i = 0; i < k; i++) {
		uint64_t id = 0;

		if (gdl_cuda_buffer_id(v[i].base, &id) == 0 && id == v[i].tag)
			continue;
		pthread_mutex_lock(&mc->lock);
		gdl_list_for_each_safe(&mc->live, m, n, node)
			if (m->id == v[i].id) {
				mr_kill_locked(mc, m);
				killed++;
				break;
			}
		pthread_mutex_unlock(&mc->lock);
	}
	free(v);
	return killed;
}

void gdl_mr_notify_locked(struct gdirect_ctx *c, uint64_t s, uint64_t e)
{
	struct gdl_mrcache *mc = c->mr;
	struct gdirect_mr *m, *n;
	struct mr_pending *p, *q;

	if (!mc)
		return;
	pthread_mutex_lock(&mc->lock);
	gdl_list_for_each_safe(&mc->live, m, n, node)
		if (m->base < e && s < m->base + m->len)
			mr_kill_locked(mc, m);
	gdl_list_for_each_safe(&mc->pending, p, q, node)
		if (p->start < e && s < p->end)
			p->freed = true;
	pthread_mutex_unlock(&mc->lock);
}

static void mr_cache_free(struct gdl_mrcache *mc)
{
	struct mr_probe *p, *q;

	gdl_list_for_each_safe(&mc->probes, p, q, node)
		free(p);
	pthread_mutex_destroy(&mc->lock);
	free(mc);
}

void gdl_mr_fini(struct gdirect_ctx *c, bool in_child)
{
	struct gdl_mrcache *mc = c->mr;
	struct gdirect_mr *m, *n;
	struct gdl_list list;
	bool leaked;

	if (!mc)
		return;
	c->mr = NULL;
	if (in_child) {
		/* The regions are the parent's: free our copies only. */
		gdl_list_for_each_safe(&mc->live, m, n, node)
			free(m);
		gdl_list_for_each_safe(&mc->dying, m, n, node)
			free(m);
		pthread_mutex_init(&mc->lock, NULL);
		mr_cache_free(mc);
		return;
	}
	gdl_list_init(&list);
	pthread_mutex_lock(&mc->lock);
	gdl_list_for_each_safe(&mc->live, m, n, node)
		mr_kill_locked(mc, m);
	mr_reap_locked(mc, &list);
	/* Still referenced: the caller broke the contract, and its holder
	 * may still read the region: its last put releases it, then the
	 * cache, which forgets the context now. */
	leaked = !gdl_list_empty(&mc->dying);
	mc->ctx = NULL;
	pthread_mutex_unlock(&mc->lock);
	mr_release_list(mc, &list);
	if (!leaked)
		mr_cache_free(mc);
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

/* The probe's answer for pd's device: 0 (dma-buf supported), or the errno
 * that says it is not. */
static int mr_probe_dmabuf(struct gdirect_ctx *c, struct ibv_pd *pd)
{
	struct gdl_mrcache *mc = c->mr;
	struct mr_probe *p, *n;
	struct ibv_mr *x;
	int err = -1;

	pthread_mutex_lock(&mc->lock);
	gdl_list_for_each_safe(&mc->probes, p, n, node)
		if (p->dev == pd->context) {
			err = p->err;
			break;
		}
	pthread_mutex_unlock(&mc->lock);
	if (err >= 0)
		return err == EBADF ? 0 : err;
	/* NCCL's, UCX's and libfabric's probe: a provider that can import
	 * a dma-buf looks the fd up and fails with EBADF; one that cannot
	 * answers EOPNOTSUPP (libibverbs' default for a missing op). */
	errno = 0;
	x = ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0);
	err = x ? EINVAL : errno ? errno : EIO;
	if (x)
		ibv_dereg_mr(x);
	p = malloc(sizeof(*p));
	if (p) {
		p->dev = pd->context;
		p->err = err;
		pthread_mutex_lock(&mc->lock);
		gdl_list_add(&mc->probes, &p->node);
		pthread_mutex_unlock(&mc->lock);
	}
	return err == EBADF ? 0 : err;
}

/* Why the last dma-buf attempt of this thread fell back to peer memory. */
static __thread char mr_fallback[160];

/*
 * Register [s, e) once, by the path the context chose.  0 with *out set,
 * or a negative errno (with the reason set): -ENOMEM or -ENOSPC when the
 * NIC refused for lack of resources.  A dma-buf is exported in host pages
 * (the driver's granularity), [s, e) being registered at its offset in
 * the export; an allocation smaller than its host pages cannot be
 * exported alone and takes the peer path.
 */
static int mr_register_once(struct gdirect_ctx *c, struct ibv_pd *pd,
			    const struct gdirect_ptr_info *info, uint64_t s,
			    uint64_t e, int access, struct gdirect_mr **out)
{
	enum gdirect_mr_via via = GDIRECT_MR_VIA_HOST;
	struct ibv_mr *ibmr = NULL;
	struct gdirect_mr *m;
	int err;

	mr_fallback[0] = 0;
	m = calloc(1, sizeof(*m));
	if (!m)
		return gdl_err(-ENOMEM, "out of memory");
	if (info->type == GDIRECT_MEM_DEVICE &&
	    c->p.mr_path != GDIRECT_MR_PATH_PEER) {
		int perr = mr_probe_dmabuf(c, pd), fd = -1, cu_err = 0, rc;
		uint64_t ps = s & ~(GDL_MR_HOST_PAGE - 1);
		uint64_t pe = (e + GDL_MR_HOST_PAGE - 1) &
			      ~(GDL_MR_HOST_PAGE - 1);

		if (perr && c->p.mr_path == GDIRECT_MR_PATH_DMABUF) {
			free(m);
			return gdl_err(-EOPNOTSUPP, "registration path dmabuf: "
				       "%s cannot import a dma-buf "
				       "(ibv_reg_dmabuf_mr with fd -1 "
				       "answered %s, not EBADF)",
				       ibv_get_device_name(pd->context->device),
				       strerror(perr));
		}
		rc = perr ? -EOPNOTSUPP : gdl_cuda_dmabuf_fd(ps, pe - ps, &fd,
							     &cu_err);
		if (perr)
			snprintf(mr_fallback, sizeof(mr_fallback),
				 "no dma-buf import: the probe answered %s",
				 strerror(perr));
		if (!perr && rc) {
			if (c->p.mr_path == GDIRECT_MR_PATH_DMABUF) {
				free(m);
				return gdl_err(rc, "cannot export [0x%llx, "
					       "+0x%llx) as a dma-buf: "
					       "cuMemGetHandleForAddressRange "
					       "failed with CUDA error %d",
					       (unsigned long long)ps,
					       (unsigned long long)(pe - ps),
					       cu_err);
			}
			snprintf(mr_fallback, sizeof(mr_fallback),
				 "cuMemGetHandleForAddressRange: CUDA error "
				 "%d", cu_err);
		}
		if (!rc) {
			errno = 0;
			ibmr = ibv_reg_dmabuf_mr(pd, s - ps, e - s, s, fd,
						 access);
			err = errno ? errno : EIO;
			/* The import holds the dma-buf; the fd is ours. */
			close(fd);
			via = GDIRECT_MR_VIA_DMABUF;
			if (!ibmr && (err == ENOMEM || err == ENOSPC ||
				      c->p.mr_path == GDIRECT_MR_PATH_DMABUF)) {
				free(m);
				return gdl_err(-err, "ibv_reg_dmabuf_mr of "
					       "[0x%llx, +0x%llx) failed: %s",
					       (unsigned long long)s,
					       (unsigned long long)(e - s),
					       strerror(err));
			}
			if (!ibmr)
				snprintf(mr_fallback, sizeof(mr_fallback),
					 "ibv_reg_dmabuf_mr: %s",
					 strerror(err));
		}
		if (!ibmr)
			via = GDIRECT_MR_VIA_PEER;
	} else if (info->type == GDIRECT_MEM_DEVICE) {
		via = GDIRECT_MR_VIA_PEER;
	}
	if (!ibmr) {
		errno = 0;
		ibmr = ibv_reg_mr(pd, (void *)(uintptr_t)s, e - s, access);
		err = errno ? errno : EIO;
		if (!ibmr) {
			free(m);
			return gdl_err(-err, "ibv_reg_mr of %s memory "
				       "[0x%llx, +0x%llx) failed: %s%s%s%s",
				       via == GDIRECT_MR_VIA_HOST ? "host"
								  : "GPU",
				       (unsigned long long)s,
				       (unsigned long long)(e - s),
				       strerror(err),
				       mr_fallback[0] ? " (peer memory; "
							"dma-buf: " : "",
				       mr_fallback,
				       mr_fallback[0] ? ")" : "");
		}
	}
	m->mr = ibmr;
	m->pd = pd;
	m->base = s;
	m->len = e - s;
	m->access = access;
	m->via = via;
	m->tag_base = info->alloc_base;
	m->tag_id = info->buffer_id;
	m->id = atomic_fetch_add(&mr_ids, 1);
	m->mc = c->mr;
	if (via == GDIRECT_MR_VIA_DMABUF)
		ST_INC(c, mr_regs_dmabuf);
	else if (via == GDIRECT_MR_VIA_PEER)
		ST_INC(c, mr_regs_peer);
	else
		ST_INC(c, mr_regs_host);
	*out = m;
	return 0;
}

/* Register, evicting unused regions of the same device while the NIC
 * refuses for lack of resources. */
static int mr_register(struct gdirect_ctx *c, struct ibv_pd *pd,
		       const struct gdirect_ptr_info *info, uint64_t s,
		       uint64_t e, int access, struct gdirect_mr **out)
{
	for (;;) {
		int rc = mr_register_once(c, pd, info, s, e, access, out);

		if (rc != -ENOMEM && rc != -ENOSPC)
			return rc;
		if (!gdl_mr_drain(c) && !mr_evict_one(c->mr, pd->context)) {
			char why[256];

			snprintf(why, sizeof(why), "%s", gdirect_errmsg());
			return gdl_err(rc, "%s; no unused memory region of %s "
				       "is left to deregister", why,
				       ibv_get_device_name(
					       pd->context->device));
		}
	}
}

/*
 * The live region of pd that serves [a, end) with access, or NULL.
 * Regions of pd overlapping the request that were registered for another
 * allocation (freed since, the address reused) are killed; one that covers
 * the request without the access asked for is killed too, and its access
 * added to *access, so that its successor serves both.
 */
static struct gdirect_mr *mr_lookup_locked(struct gdl_mrcache *mc,
					   struct ibv_pd *pd,
					   const struct gdirect_ptr_info *info,
					   uint64_t a, uint64_t end,
					   int *access)
{
	struct gdirect_mr *m, *n;

	gdl_list_for_each_safe(&mc->live, m, n, node) {
		if (m->pd != pd || m->base >= end || a >= m->base + m->len)
			continue;
		if (m->tag_base != info->alloc_base ||
		    m->tag_id != info->buffer_id) {
			mr_kill_locked(mc, m);
			continue;
		}
		if (m->base > a || end > m->base + m->len)
			continue;
		if ((m->access & *access) != *access) {
			*access |= m->access;
			mr_kill_locked(mc, m);
			continue;
		}
		return m;
	}
	return NULL;
}

/* Take a reference to live region m, now the most recently used. */
static struct gdirect_mr *mr_hold_locked(struct gdl_mrcache *mc,
					 struct gdirect_mr *m)
{
	atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
	gdl_list_move(&mc->live, &m->node);
	return m;
}

/*
 * Classify [a, end) for a registration.  The classification cache may
 * answer from a hook-kept entry without asking the driver, and a free the
 * hooks did not see (no interposer, a library freeing through its own
 * handle) leaves that entry stale: the allocation's own tag, its
 * BUFFER_ID, is asked for GPU memory, as libfabric's cuda_mm_valid does,
 * and a changed one invalidates the old allocation here (its regions of
 * both kinds, its entry) before the caller starts over (-EAGAIN).
 */
static int mr_classify(struct gdirect_ctx *c, const void *ptr,
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
 * BAR pin's (rcache.c): 0, -EAGAIN (freed meanwhile: start over), or an
 * error with its reason. */
static int mr_sync_memops(struct gdirect_ctx *c,
			  const struct gdirect_ptr_info *info)
{
	struct gdl_cuquery q = {
		.type = info->type, .device = info->device,
		.base = info->alloc_base, .size = info->alloc_size,
		.buffer_id = info->buffer_id,
	};
	int cu_err, rc = gdl_sync_memops(c, &q, &cu_err);

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

GDL_EXPORT int gdirect_mr_get(struct gdirect_ctx *c, struct ibv_pd *pd,
			      const void *ptr, size_t len, int access,
			      unsigned int flags, struct gdirect_mr **out)
{
	uint64_t a = (uintptr_t)ptr, end = a + len, s, e;
	struct gdirect_ptr_info info;
	struct gdl_mrcache *mc;
	struct gdirect_mr *m = NULL, *h;
	struct mr_pending pend;
	struct gdl_list victims;
	int rc, tries = 0;
	bool cached;

	if (!c || !pd || !ptr || !len || !out || end < a)
		return gdl_err(-EINVAL, "invalid argument");
	*out = NULL;
	if (flags)
		return gdl_err(-EINVAL, "unknown flags 0x%x", flags);
	if (gdl_inherited(c))
		return gdl_err(-EPERM, "context inherited across fork");
	mc = c->mr;
	gdl_list_init(&victims);
again:
	if (tries++ == MR_TRIES)
		return gdl_err(-EAGAIN, "the registration of %p keeps being "
			       "invalidated, or its memory freed while "
			       "registered", ptr);
	gdl_mr_drain(c);
	rc = mr_classify(c, ptr, &info);
	if (rc == -EAGAIN)
		goto again;
	if (rc)
		return rc;
	if (info.type == GDIRECT_MEM_MANAGED)
		return gdl_err(-EOPNOTSUPP, "managed memory at %p cannot be "
			       "registered with a NIC", ptr);
	if (gdl_mr_range(&info, a, end, c->p.whole_alloc_max, &s, &e))
		return gdl_err(-EINVAL, "[%p, +%zu) is not inside one "
			       "allocation", ptr, len);
	cached = info.type == GDIRECT_MEM_DEVICE ||
		 (c->p.flags & GDIRECT_CTX_CACHE_HOST);
	if (cached) {
		pthread_mutex_lock(&mc->lock);
		m = mr_lookup_locked(mc, pd, &info, a, end, &access);
		if (m) {
			mr_hold_locked(mc, m);
			pthread_mutex_unlock(&mc->lock);
			ST_INC(c, mr_hits);
			*out = m;
			return 0;
		}
		pthread_mutex_unlock(&mc->lock);
	}
	if (info.type == GDIRECT_MEM_DEVICE) {
		rc = mr_sync_memops(c, &info);
		if (rc == -EAGAIN)
			goto again;
		if (rc)
			return rc;
	}
	pend = (struct mr_pending){ .start = s, .end = e };
	pthread_mutex_lock(&mc->lock);
	gdl_list_add(&mc->pending, &pend.node);
	pthread_mutex_unlock(&mc->lock);

	rc = mr_register(c, pd, &info, s, e, access, &m);

	pthread_mutex_lock(&mc->lock);
	gdl_list_del(&pend.node);
	if (rc) {
		pthread_mutex_unlock(&mc->lock);
		return rc;
	}
	if (pend.freed) {
		/* Part of it was freed while it was being registered: the
		 * region may hold the old memory.  Give it back, ask again. */
		pthread_mutex_unlock(&mc->lock);
		mr_release(mc, m);
		goto again;
	}
	m->refs = 1;
	if (!cached) {
		m->dead = true;
		gdl_list_add(&mc->dying, &m->node);
	} else if ((h = mr_lookup_locked(mc, pd, &info, a, end, &access)) &&
		   h->access == m->access) {
		/* Another thread registered the same range meanwhile. */
		mr_hold_locked(mc, h);
		pthread_mutex_unlock(&mc->lock);
		mr_release(mc, m);
		*out = h;
		return 0;
	} else {
		gdl_list_add(&mc->live, &m->node);
		mc->nregions++;
		mc->nbytes += m->len;
		mr_trim_locked(mc, &victims);
	}
	pthread_mutex_unlock(&mc->lock);
	mr_release_list(mc, &victims);
	*out = m;
	return 0;
}

GDL_EXPORT void gdirect_mr_put(struct gdirect_mr *m)
{
	struct gdl_mrcache *mc;
	bool release = false, last = false;

	if (!m)
		return;
	mc = m->mc;
	if (mr_inherited(mc)) {
		/* A fork child's copy of the parent's region: its lock may
		 * be held by a parent thread that is not here, its
		 * registration is the parent's.  Only count;
		 * gdirect_ctx_destroy() frees the copy. */
		atomic_fetch_sub_explicit(&m->refs, 1, memory_order_relaxed);
		return;
	}
	pthread_mutex_lock(&mc->lock);
	if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_relaxed) == 1 &&
	    m->dead) {
		gdl_list_del(&m->node);
		release = true;
		last = !mc->ctx && gdl_list_empty(&mc->dying);
	} else if (!m->dead) {
		/* Least recently used is least recently put or got. */
		gdl_list_move(&mc->live, &m->node);
	}
	pthread_mutex_unlock(&mc->lock);
	if (release)
		mr_release(mc, m);
	if (last)	/* the context is gone: this was its last region */
		mr_cache_free(mc);
}

/* Whether m may still be used: not killed (freed, evicted, flushed) and,
 * for GPU memory, its allocation's BUFFER_ID the one it was registered
 * for. */
static bool mr_valid(const struct gdirect_mr *m)
{
	struct gdl_mrcache *mc = m->mc;
	uint64_t id = 0;
	bool dead;

	if (mr_inherited(mc))
		return false;
	pthread_mutex_lock(&mc->lock);
	dead = m->dead;
	pthread_mutex_unlock(&mc->lock);
	if (dead)
		return false;
	if (m->via == GDIRECT_MR_VIA_HOST)
		return true;
	return gdl_cuda_buffer_id(m->base, &id) == 0 && id == m->tag_id;
}

/* GDIRECT_0.2's struct gdirect_mr_info ended where valid begins. */
_Static_assert(offsetof(struct gdirect_mr_info, valid) == GDL_MR_INFO_V02_SIZE,
	       "struct gdirect_mr_info of GDIRECT_0.2 changed");

/* Fill info for m; the caller checked both. */
static void mr_fill_info(const struct gdirect_mr *m,
			 struct gdirect_mr_info *info)
{
	memset(info, 0, sizeof(*info));
	info->mr = m->mr;
	info->lkey = m->mr->lkey;
	info->rkey = m->mr->rkey;
	info->base = m->base;
	info->length = m->len;
	info->iova = m->base;
	info->via = m->via;
	info->access = m->access;
	info->valid = mr_valid(m);
}

/*
 * gdirect_mr_info has two versions, because GDIRECT_0.3 appended valid to
 * struct gdirect_mr_info.  A program built against GDIRECT_0.2 passes the
 * smaller structure (everything before valid), and gdirect_mr_info@GDIRECT_0.2
 * writes only that much; programs built since bind to
 * gdirect_mr_info@@GDIRECT_0.3, which writes the whole structure.
 */
GDL_EXPORT __attribute__((symver("gdirect_mr_info@GDIRECT_0.2")))
int gdl_mr_info_v02(const struct gdirect_mr *m, void *info)
{
	struct gdirect_mr_info all;

	if (!m || !info)
		return gdl_err(-EINVAL, "invalid argument");
	mr_fill_info(m, &all);
	memcpy(info, &all, GDL_MR_INFO_V02_SIZE);
	return 0;
}

GDL_EXPORT __attribute__((symver("gdirect_mr_info@@GDIRECT_0.3")))
int gdl_mr_info_v03(const struct gdirect_mr *m, struct gdirect_mr_info *info)
{
	if (!m || !info)
		return gdl_err(-EINVAL, "invalid argument");
	mr_fill_info(m, info);
	return 0;
}

GDL_EXPORT uint64_t gdirect_mr_addr(const struct gdirect_mr *m,
				    const void *ptr)
{
	uint64_t off;

	if (!m)
		return 0;
	off = (uintptr_t)ptr - m->base;
	/* The iova is the base's address: the registrations pass it so. */
	return off < m->len ? m->base + off : 0;
}

/* Deregister the unused regions of pd (every domain's: pd NULL).  The
 * number deregistered, or -EBUSY when pd still has regions held. */
static int mr_flush(struct gdirect_ctx *c, struct ibv_pd *pd)
{
	struct gdl_mrcache *mc = c->mr;
	struct gdirect_mr *m, *n;
	struct gdl_list list;
	bool busy = false;
	int k;

	gdl_list_init(&list);
	pthread_mutex_lock(&mc->lock);
	gdl_list_for_each_safe(&mc->live, m, n, node)
		if (!pd || m->pd == pd) {
			if (!atomic_load_explicit(&m->refs,
						  memory_order_relaxed))
				mr_kill_locked(mc, m);
			else
				busy = true;
		}
	mr_reap_locked(mc, &list);
	if (pd)
		gdl_list_for_each_safe(&mc->dying, m, n, node)
			busy |= m->pd == pd;
	pthread_mutex_unlock(&mc->lock);
	k = mr_release_list(mc, &list);
	if (pd && busy)
		return gdl_err(-EBUSY, "memory regions of the protection "
			       "domain are still held");
	return k;
}

GDL_EXPORT int gdirect_mr_flush(struct gdirect_ctx *c)
{
	if (!c)
		return gdl_err(-EINVAL, "invalid argument");
	if (gdl_inherited(c))
		return gdl_err(-EPERM, "context inherited across fork");
	return mr_flush(c, NULL);
}

GDL_EXPORT int gdirect_mr_flush_pd(struct gdirect_ctx *c, struct ibv_pd *pd)
{
	if (!c || !pd)
		return gdl_err(-EINVAL, "invalid argument");
	if (gdl_inherited(c))
		return gdl_err(-EPERM, "context inherited across fork");
	return mr_flush(c, pd);
}
