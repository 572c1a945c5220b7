/* SPDX-License-Identifier: MIT */
/*
 * verbs.c - the verbs registration cache (gdirect_verbs.h): memory regions
 * of GPU and host memory registered with an RDMA NIC, one per allocation,
 * reused until the memory is freed or the NIC needs the room.
 *
 * The rules are the BAR cache's (rcache.c): a region covers the whole
 * allocation (or the 64 KiB-rounded request above whole_alloc_max), every
 * buffer in it is an offset into it, a region is never handed out for
 * memory freed since it was registered, and a registration the NIC refuses
 * for lack of resources evicts unused regions, least recently used first,
 * and is retried.  Freed memory is seen the same ways: the hooks report
 * frees here (gdl_mr_notify_locked), and every get classifies its pointer
 * (gdirect_classify, which checks BUFFER_ID where the modes ask it to) and
 * compares the allocation and its BUFFER_ID with those the region was
 * registered for.  That comparison matters for dma-buf regions: NVIDIA's
 * exporter keeps freed memory alive while an import holds it, so the
 * registration stays valid for the old memory, and the next cuMemAlloc may
 * return the same address with a new BUFFER_ID.
 *
 * One mutex per context guards the lists; it is never held across a
 * registration, a deregistration or a CUDA call, so a get that hits never
 * waits for another thread's registration.  Regions live on the live list
 * (most recently used first) while they may be handed out, then on the
 * dying list until their last reference goes; deregistration happens
 * outside the hooks (a free hook must not call into the NIC's driver), at
 * the next get, put, flush or destroy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_dl.h"
#include "gdirect_verbs.h"
#include "libgdirect_internal.h"
#include "verbs_range.h"

struct gdirect_mr {
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	uint64_t base, len;		/* registered range; iova == base */
	int access;
	enum gdirect_mr_via via;
	/* The allocation it was registered for (0, 0 for host memory). */
	uint64_t tag_base, tag_id;
	long refs;			/* under the cache's lock */
	bool dead;			/* dying: no new references */
	struct gdirect_mr *prev, *next;
	struct gdirect_ctx *ctx;
};

/* A registration in progress, so that a free reported meanwhile is not
 * lost: the registration is then given back and the lookup starts over. */
struct mr_pending {
	uint64_t start, end;
	bool freed;
	struct mr_pending *next;
};

/* What the fd -1 probe answered for one device (verbs context). */
struct mr_probe {
	struct ibv_context *dev;
	int err;			/* EBADF: dma-buf supported */
	struct mr_probe *next;
};

struct gdl_mrcache {
	pthread_mutex_t lock;
	struct gdirect_mr live, dying;	/* list heads */
	struct mr_pending *pending;
	struct mr_probe *probes;
};

static void mr_unlink(struct gdirect_mr *m)
{
	m->prev->next = m->next;
	m->next->prev = m->prev;
}

static void mr_push(struct gdirect_mr *head, struct gdirect_mr *m)
{
	m->next = head->next;
	m->prev = head;
	head->next->prev = m;
	head->next = m;
}

int gdl_mr_init(struct gdirect_ctx *c)
{
	struct gdl_mrcache *mc = calloc(1, sizeof(*mc));

	if (!mc)
		return -ENOMEM;
	pthread_mutex_init(&mc->lock, NULL);
	mc->live.next = mc->live.prev = &mc->live;
	mc->dying.next = mc->dying.prev = &mc->dying;
	c->mr = mc;
	return 0;
}

/* Deregister and free m, which no list holds any more. */
static void mr_release(struct gdirect_ctx *c, struct gdirect_mr *m)
{
	if (m->mr && ibv_dereg_mr(m->mr) == 0)
		ST_INC(c, mr_deregs);
	free(m);
}

/* Move m to the dying list; it is released with its last reference. */
static void mr_kill_locked(struct gdl_mrcache *mc, struct gdirect_mr *m)
{
	if (m->dead)
		return;
	mr_unlink(m);
	m->dead = true;
	mr_push(&mc->dying, m);
}

/* Release the dying regions nobody holds.  Returns how many. */
static int mr_drain(struct gdirect_ctx *c)
{
	struct gdl_mrcache *mc = c->mr;
	struct gdirect_mr *list = NULL, *m, *n;
	int k = 0;

	pthread_mutex_lock(&mc->lock);
	for (m = mc->dying.next; m != &mc->dying; m = n) {
		n = m->next;
		if (m->refs)
			continue;
		mr_unlink(m);
		m->next = list;
		list = m;
	}
	pthread_mutex_unlock(&mc->lock);
	for (; list; list = n, k++) {
		n = list->next;
		mr_release(c, list);
	}
	return k;
}

/* Deregister the least recently used unused region.  1 if there was one. */
static int mr_evict_one(struct gdirect_ctx *c)
{
	struct gdl_mrcache *mc = c->mr;
	struct gdirect_mr *m;

	pthread_mutex_lock(&mc->lock);
	for (m = mc->live.prev; m != &mc->live && m->refs; m = m->prev)
		;
	if (m == &mc->live) {
		pthread_mutex_unlock(&mc->lock);
		return 0;
	}
	mr_unlink(m);
	pthread_mutex_unlock(&mc->lock);
	ST_INC(c, mr_evictions);
	mr_release(c, m);
	return 1;
}

void gdl_mr_notify_locked(struct gdirect_ctx *c, uint64_t s, uint64_t e)
{
	struct gdl_mrcache *mc = c->mr;
	struct gdirect_mr *m, *n;

	if (!mc)
		return;
	pthread_mutex_lock(&mc->lock);
	for (m = mc->live.next; m != &mc->live; m = n) {
		n = m->next;
		if (m->base < e && s < m->base + m->len)
			mr_kill_locked(mc, m);
	}
	for (struct mr_pending *p = mc->pending; p; p = p->next)
		if (p->start < e && s < p->end)
			p->freed = true;
	pthread_mutex_unlock(&mc->lock);
}

void gdl_mr_fini(struct gdirect_ctx *c, bool in_child)
{
	struct gdl_mrcache *mc = c->mr;
	struct gdirect_mr *m, *n;
	bool leaked = false;

	if (!mc)
		return;
	if (in_child) {
		/* The regions are the parent's: free our copies only. */
		for (m = mc->live.next; m != &mc->live; m = n) {
			n = m->next;
			free(m);
		}
		for (m = mc->dying.next; m != &mc->dying; m = n) {
			n = m->next;
			free(m);
		}
	} else {
		pthread_mutex_lock(&mc->lock);
		for (m = mc->live.next; m != &mc->live; m = n) {
			n = m->next;
			mr_kill_locked(mc, m);
		}
		pthread_mutex_unlock(&mc->lock);
		mr_drain(c);
		/* Still referenced: the caller broke the contract, and its
		 * holder may still read the region: keep it. */
		leaked = mc->dying.next != &mc->dying;
	}
	for (struct mr_probe *p = mc->probes, *q; p; p = q) {
		q = p->next;
		free(p);
	}
	c->mr = NULL;
	if (!leaked) {
		pthread_mutex_destroy(&mc->lock);
		free(mc);
	}
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
	/* An export and a registration are made of host pages. */
	*s &= ~(GDL_MR_HOST_PAGE - 1);
	*e = (*e + GDL_MR_HOST_PAGE - 1) & ~(GDL_MR_HOST_PAGE - 1);
	return 0;
}

/* The probe's answer for pd's device: 0 (dma-buf supported), or the errno
 * that says it is not. */
static int mr_probe_dmabuf(struct gdirect_ctx *c, struct ibv_pd *pd)
{
	struct gdl_mrcache *mc = c->mr;
	struct mr_probe *p;
	struct ibv_mr *x;
	int err;

	pthread_mutex_lock(&mc->lock);
	for (p = mc->probes; p && p->dev != pd->context; p = p->next)
		;
	err = p ? p->err : -1;
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
		p->next = mc->probes;
		mc->probes = p;
		pthread_mutex_unlock(&mc->lock);
	}
	return err == EBADF ? 0 : err;
}

/* Why the last dma-buf attempt of this thread fell back to peer memory. */
static __thread char mr_fallback[160];

/*
 * Register [s, e) once, by the path the context chose.  0 with *out set,
 * or a negative errno (with the reason set): -ENOMEM or -ENOSPC when the
 * NIC refused for lack of resources.
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

		if (perr && c->p.mr_path == GDIRECT_MR_PATH_DMABUF) {
			free(m);
			return gdl_err(-EOPNOTSUPP, "registration path dmabuf: "
				       "%s cannot import a dma-buf "
				       "(ibv_reg_dmabuf_mr with fd -1 "
				       "answered %s, not EBADF)",
				       ibv_get_device_name(pd->context->device),
				       strerror(perr));
		}
		rc = perr ? -EOPNOTSUPP : gdl_cuda_dmabuf_fd(s, e - s, &fd,
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
					       (unsigned long long)s,
					       (unsigned long long)(e - s),
					       cu_err);
			}
			snprintf(mr_fallback, sizeof(mr_fallback),
				 "cuMemGetHandleForAddressRange: CUDA error "
				 "%d", cu_err);
		}
		if (!rc) {
			errno = 0;
			ibmr = ibv_reg_dmabuf_mr(pd, 0, e - s, s, fd, access);
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
	m->ctx = c;
	if (via == GDIRECT_MR_VIA_DMABUF)
		ST_INC(c, mr_regs_dmabuf);
	else if (via == GDIRECT_MR_VIA_PEER)
		ST_INC(c, mr_regs_peer);
	else
		ST_INC(c, mr_regs_host);
	*out = m;
	return 0;
}

/* Register, evicting unused regions while the NIC refuses for lack of
 * resources. */
static int mr_register(struct gdirect_ctx *c, struct ibv_pd *pd,
		       const struct gdirect_ptr_info *info, uint64_t s,
		       uint64_t e, int access, struct gdirect_mr **out)
{
	for (;;) {
		int rc = mr_register_once(c, pd, info, s, e, access, out);

		if (rc != -ENOMEM && rc != -ENOSPC)
			return rc;
		if (!mr_drain(c) && !mr_evict_one(c)) {
			char why[256];

			snprintf(why, sizeof(why), "%s", gdirect_errmsg());
			return gdl_err(rc, "%s; no unused memory region is "
				       "left to deregister", why);
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

	for (m = mc->live.next; m != &mc->live; m = n) {
		n = m->next;
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

GDL_EXPORT int gdirect_mr_get(struct gdirect_ctx *c, struct ibv_pd *pd,
			      const void *ptr, size_t len, int access,
			      unsigned int flags, struct gdirect_mr **out)
{
	uint64_t a = (uintptr_t)ptr, end = a + len, s, e;
	struct gdirect_ptr_info info;
	struct gdl_mrcache *mc;
	struct gdirect_mr *m = NULL, *h;
	struct mr_pending pend, **pp;
	bool cached;
	int rc;

	if (!c || !pd || !ptr || !len || !out || end < a)
		return gdl_err(-EINVAL, "invalid argument");
	*out = NULL;
	if (flags)
		return gdl_err(-EINVAL, "unknown flags 0x%x", flags);
	if (gdl_inherited(c))
		return gdl_err(-EPERM, "context inherited across fork");
	mc = c->mr;
again:
	mr_drain(c);
	rc = gdirect_classify(c, ptr, &info);
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
	pthread_mutex_lock(&mc->lock);
	if (cached) {
		m = mr_lookup_locked(mc, pd, &info, a, end, &access);
		if (m) {
			m->refs++;
			mr_unlink(m);
			mr_push(&mc->live, m);
			pthread_mutex_unlock(&mc->lock);
			ST_INC(c, mr_hits);
			*out = m;
			return 0;
		}
	}
	pend = (struct mr_pending){ .start = s, .end = e, .next = mc->pending };
	mc->pending = &pend;
	pthread_mutex_unlock(&mc->lock);

	rc = mr_register(c, pd, &info, s, e, access, &m);

	pthread_mutex_lock(&mc->lock);
	for (pp = &mc->pending; *pp != &pend; pp = &(*pp)->next)
		;
	*pp = pend.next;
	if (rc) {
		pthread_mutex_unlock(&mc->lock);
		return rc;
	}
	if (pend.freed) {
		/* Part of it was freed while it was being registered: the
		 * region may hold the old memory.  Give it back, ask again. */
		pthread_mutex_unlock(&mc->lock);
		mr_release(c, m);
		goto again;
	}
	m->refs = 1;
	if (!cached) {
		m->dead = true;
		mr_push(&mc->dying, m);
	} else if ((h = mr_lookup_locked(mc, pd, &info, a, end, &access)) &&
		   h->access == m->access) {
		/* Another thread registered the same range meanwhile. */
		h->refs++;
		mr_unlink(h);
		mr_push(&mc->live, h);
		pthread_mutex_unlock(&mc->lock);
		mr_release(c, m);
		*out = h;
		return 0;
	} else {
		mr_push(&mc->live, m);
	}
	pthread_mutex_unlock(&mc->lock);
	*out = m;
	return 0;
}

GDL_EXPORT void gdirect_mr_put(struct gdirect_mr *m)
{
	struct gdirect_ctx *c;
	struct gdl_mrcache *mc;
	bool release = false;

	if (!m)
		return;
	c = m->ctx;
	mc = c->mr;
	pthread_mutex_lock(&mc->lock);
	if (--m->refs == 0 && m->dead) {
		mr_unlink(m);
		release = !gdl_inherited(c);
	} else if (!m->dead) {
		/* Least recently used is least recently put or got. */
		mr_unlink(m);
		mr_push(&mc->live, m);
	}
	pthread_mutex_unlock(&mc->lock);
	if (release)
		mr_release(c, m);
}

GDL_EXPORT int gdirect_mr_info(const struct gdirect_mr *m,
			       struct gdirect_mr_info *info)
{
	if (!m || !info)
		return gdl_err(-EINVAL, "invalid argument");
	memset(info, 0, sizeof(*info));
	info->mr = m->mr;
	info->lkey = m->mr->lkey;
	info->rkey = m->mr->rkey;
	info->base = m->base;
	info->length = m->len;
	info->iova = m->base;
	info->via = m->via;
	info->access = m->access;
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

GDL_EXPORT int gdirect_mr_flush(struct gdirect_ctx *c)
{
	struct gdl_mrcache *mc;
	struct gdirect_mr *m, *n;

	if (!c)
		return gdl_err(-EINVAL, "invalid argument");
	if (gdl_inherited(c))
		return gdl_err(-EPERM, "context inherited across fork");
	mc = c->mr;
	pthread_mutex_lock(&mc->lock);
	for (m = mc->live.next; m != &mc->live; m = n) {
		n = m->next;
		if (!m->refs)
			mr_kill_locked(mc, m);
	}
	pthread_mutex_unlock(&mc->lock);
	return mr_drain(c);
}
