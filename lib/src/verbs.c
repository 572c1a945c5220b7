/* SPDX-License-Identifier: MIT */
/*
 * verbs.c - the NIC kind of the registration engine (regcache.c), behind
 * gdirect_verbs.h: memory regions of GPU and host memory registered with
 * an RDMA NIC, one per allocation, reused until the memory is freed or the
 * NIC needs the room.
 *
 * The engine owns the regions' lists, their invalidation, eviction and
 * retry; this file supplies the registration itself (ibv_reg_dmabuf_mr of
 * a CUDA dma-buf, else ibv_reg_mr of peer or host memory, by the context's
 * mr_path), its deregistration, ENOMEM and ENOSPC as "refused for lack of
 * resources", a device (verbs context) as the resource a refusal lacks,
 * and the dma-buf probe, whose answers it keeps per device.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cuda_dl.h"
#include "gdirect_verbs.h"
#include "gdl_list.h"
#include "libgdirect_internal.h"
#include "regcache.h"
#include "verbs_range.h"

/* A caller's dma-buf being registered (gdirect_mr_get_dmabuf), mr_reg's
 * argument: the descriptor and the iova less the offset. */
struct mr_dmabuf_arg {
	int fd;
	uint64_t delta;
};

/* A region of the engine, with what the NIC made of it. */
struct gdirect_mr {
	struct gdl_rc_region r;		/* first: the engine allocates it */
	struct ibv_mr *mr;
	enum gdirect_mr_via via;
};

/* What the fd -1 probe answered for one device (verbs context). */
struct mr_probe {
	struct ibv_context *dev;
	int err;			/* EBADF: dma-buf supported */
	struct gdl_list node;
};

/* The kind's own state in the engine: the probes' answers. */
struct mr_kind {
	pthread_mutex_t lock;
	struct gdl_list probes;
};

static struct gdirect_mr *mr_of(struct gdl_rc_region *r)
{
	return gdl_container_of(r, struct gdirect_mr, r);
}

/* The probe's answer for pd's device: 0 (dma-buf supported), or the errno
 * that says it is not. */
static int mr_probe_dmabuf(struct gdirect_ctx *c, struct ibv_pd *pd)
{
	struct mr_kind *k = *gdl_rc_priv(c->mr);
	struct mr_probe *p, *n;
	struct ibv_mr *x;
	int err = -1;

	pthread_mutex_lock(&k->lock);
	gdl_list_for_each_safe(&k->probes, p, n, node)
		if (p->dev == pd->context) {
			err = p->err;
			break;
		}
	pthread_mutex_unlock(&k->lock);
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
		pthread_mutex_lock(&k->lock);
		gdl_list_add(&k->probes, &p->node);
		pthread_mutex_unlock(&k->lock);
	}
	return err == EBADF ? 0 : err;
}

/* Why the last dma-buf attempt of this thread fell back to peer memory. */
static __thread char mr_fallback[160];

/*
 * Register r's range once, by the path the context chose (the engine's
 * reg op).  0 with *out set,
 * or a negative errno (with the reason set): -ENOMEM or -ENOSPC when the
 * NIC refused for lack of resources.  A dma-buf is exported in host pages
 * (the driver's granularity), [s, e) being registered at its offset in
 * the export; an allocation smaller than its host pages cannot be
 * exported alone and takes the peer path.
 */
static int mr_reg(struct gdirect_ctx *c, const struct gdirect_ptr_info *info,
		  struct gdl_rc_region *r, void *arg)
{
	enum gdirect_mr_via via = GDIRECT_MR_VIA_HOST;
	struct gdirect_mr *m = mr_of(r);
	struct ibv_pd *pd = r->dom;
	uint64_t s = r->base, e = r->base + r->len;
	int access = r->attr, err;
	struct ibv_mr *ibmr = NULL;

	mr_fallback[0] = 0;
	if (arg) {
		const struct mr_dmabuf_arg *d = arg;

		errno = 0;
		ibmr = ibv_reg_dmabuf_mr(pd, s, e - s, s + d->delta, d->fd,
					 access);
		err = errno ? errno : EIO;
		if (!ibmr)
			return gdl_err(-err, "ibv_reg_dmabuf_mr of the caller's "
				       "dma-buf (fd %d) [0x%llx, +0x%llx) "
				       "failed: %s", d->fd,
				       (unsigned long long)s,
				       (unsigned long long)(e - s),
				       strerror(err));
		via = GDIRECT_MR_VIA_DMABUF;
	} else if (info->type == GDIRECT_MEM_DEVICE &&
	    c->p.mr_path != GDIRECT_MR_PATH_PEER) {
		int perr = mr_probe_dmabuf(c, pd), fd = -1, cu_err = 0, rc;
		uint64_t ps = s & ~(GDL_MR_HOST_PAGE - 1);
		uint64_t pe = (e + GDL_MR_HOST_PAGE - 1) &
			      ~(GDL_MR_HOST_PAGE - 1);

		if (perr && c->p.mr_path == GDIRECT_MR_PATH_DMABUF) {
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
	m->via = via;
	if (via == GDIRECT_MR_VIA_DMABUF)
		GDL_ST_INC(c, mr_regs_dmabuf);
	else if (via == GDIRECT_MR_VIA_PEER)
		GDL_ST_INC(c, mr_regs_peer);
	else
		GDL_ST_INC(c, mr_regs_host);
	return 0;
}

static int mr_dereg(struct gdl_rc_region *r)
{
	struct gdirect_mr *m = mr_of(r);

	return m->mr ? ibv_dereg_mr(m->mr) : -1;
}

/* The NIC refuses for lack of resources with ENOMEM or ENOSPC. */
static bool mr_refused(int err)
{
	return err == -ENOMEM || err == -ENOSPC;
}

/* A refusal lacks the device's resources: any domain's on that device. */
static bool mr_shares(const struct gdl_rc_region *r, const void *dom)
{
	const struct ibv_pd *a = r->dom, *b = dom;

	return a->context == b->context;
}

static const char *mr_dom_name(const void *dom)
{
	const struct ibv_pd *pd = dom;

	return ibv_get_device_name(pd->context->device);
}

static void mr_count(struct gdirect_ctx *c, enum gdl_rc_event ev)
{
	switch (ev) {
	case GDL_RC_HIT:
		GDL_ST_INC(c, mr_hits);
		break;
	case GDL_RC_EVICT:
		GDL_ST_INC(c, mr_evictions);
		break;
	case GDL_RC_DEREG:
		GDL_ST_INC(c, mr_deregs);
		break;
	}
}

static void mr_kind_free(void *priv)
{
	struct mr_kind *k = priv;
	struct mr_probe *p, *n;

	if (!k)
		return;
	gdl_list_for_each_safe(&k->probes, p, n, node)
		free(p);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

static const struct gdl_rc_ops mr_ops = {
	.region_size = sizeof(struct gdirect_mr),
	.reg = mr_reg,
	.dereg = mr_dereg,
	.refused = mr_refused,
	.shares = mr_shares,
	.dom_name = mr_dom_name,
	.count = mr_count,
	.priv_free = mr_kind_free,
};

int gdl_mr_init(struct gdirect_ctx *c)
{
	struct mr_kind *k = calloc(1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	pthread_mutex_init(&k->lock, NULL);
	gdl_list_init(&k->probes);
	if (gdl_rc_create(c, &mr_ops, &c->mr)) {
		mr_kind_free(k);
		return -ENOMEM;
	}
	*gdl_rc_priv(c->mr) = k;
	return 0;
}

GDL_EXPORT int gdirect_mr_get(struct gdirect_ctx *c, struct ibv_pd *pd,
			      const void *ptr, size_t len, int access,
			      unsigned int flags, struct gdirect_mr **out)
{
	struct gdl_rc_req req = {
		.dom = pd, .ptr = ptr, .len = len, .attr = access,
	};
	struct gdl_rc_region *r;
	int rc;

	if (!c || !pd || !ptr || !len || !out ||
	    (uintptr_t)ptr + len < (uintptr_t)ptr)
		return gdl_err(-EINVAL, "invalid argument");
	*out = NULL;
	if (flags)
		return gdl_err(-EINVAL, "unknown flags 0x%x", flags);
	if (gdl_inherited(c))
		return gdl_err(-EPERM, "context inherited across fork");
	rc = gdl_rc_get(c->mr, c, &req, &r);
	if (!rc)
		*out = mr_of(r);
	return rc;
}

GDL_EXPORT int gdirect_mr_get_dmabuf(struct gdirect_ctx *c, struct ibv_pd *pd,
				     int fd, uint64_t offset, size_t len,
				     uint64_t iova, int access,
				     unsigned int flags,
				     struct gdirect_mr **out)
{
	struct mr_dmabuf_arg arg = { .fd = fd, .delta = iova - offset };
	struct gdl_rc_req req = {
		.dom = pd, .ptr = (const void *)(uintptr_t)offset, .len = len,
		.attr = access, .arg = &arg,
	};
	struct gdl_rc_region *r;
	uint64_t space[4];
	struct stat st;
	int rc;

	if (!c || !pd || !len || !out || offset + len < offset)
		return gdl_err(-EINVAL, "invalid argument");
	*out = NULL;
	if (flags)
		return gdl_err(-EINVAL, "unknown flags 0x%x", flags);
	if (gdl_inherited(c))
		return gdl_err(-EPERM, "context inherited across fork");
	if (fstat(fd, &st))
		return gdl_err(-errno, "fd %d: %s", fd, strerror(errno));
	/*
	 * The dma-buf's identity is its inode, which every descriptor of it
	 * shares (dup, another process's passed over a socket), and which
	 * stays its own while a registration of it holds it alive: a
	 * dma-buf's inode number comes from a 64-bit counter of its own in
	 * the kernels the tests boot (6.1, 6.12), but older ones took it from
	 * get_next_ino(), whose 32 bits wrap, so the size (st_size) is in the
	 * key too.  iova less offset is the rest.
	 */
	space[0] = (uint64_t)st.st_dev;
	space[1] = (uint64_t)st.st_ino;
	space[2] = arg.delta;
	space[3] = (uint64_t)st.st_size;
	req.space = space;
	req.space_size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
	rc = gdl_rc_get(c->mr, c, &req, &r);
	if (!rc)
		*out = mr_of(r);
	return rc;
}

GDL_EXPORT void gdirect_mr_put(struct gdirect_mr *m)
{
	if (m)
		gdl_rc_put(&m->r);
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
	info->base = m->r.base;
	info->length = m->r.len;
	info->iova = m->r.base + m->r.space[2];
	info->via = m->via;
	info->access = m->r.attr;
	info->valid = gdl_rc_valid(&m->r);
}

/*
 * gdirect_mr_info has two versions, because GDIRECT_0.3 appended valid to
 * struct gdirect_mr_info.  A program built against GDIRECT_0.2 passes the
 * smaller structure (everything before valid), and gdirect_mr_info@GDIRECT_0.2
 * writes only that much; programs built since bind to
 * gdirect_mr_info@@GDIRECT_0.3, which writes the whole structure.  GCC's
 * symver attribute survives link-time optimisation; compilers without it
 * (clang) take the assembler directive.
 */
#if defined(__has_attribute) && __has_attribute(symver)
#define GDL_SYMVER(name) __attribute__((symver(name)))
#else
#define GDL_SYMVER(name)
__asm__(".symver gdl_mr_info_v02, gdirect_mr_info@GDIRECT_0.2");
__asm__(".symver gdl_mr_info_v03, gdirect_mr_info@@GDIRECT_0.3");
#endif

GDL_EXPORT GDL_SYMVER("gdirect_mr_info@GDIRECT_0.2")
int gdl_mr_info_v02(const struct gdirect_mr *m, void *info)
{
	struct gdirect_mr_info all;

	if (!m || !info)
		return gdl_err(-EINVAL, "invalid argument");
	mr_fill_info(m, &all);
	memcpy(info, &all, GDL_MR_INFO_V02_SIZE);
	return 0;
}

GDL_EXPORT GDL_SYMVER("gdirect_mr_info@@GDIRECT_0.3")
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
	off = (uintptr_t)ptr - m->r.base;
	/* The iova is the base's address, or its offset in a caller's
	 * dma-buf plus the delta the caller's iova gave (space[2], 0 for
	 * virtual addresses): the registrations pass it so. */
	return off < m->r.len ? m->r.base + m->r.space[2] + off : 0;
}

GDL_EXPORT int gdirect_mr_flush(struct gdirect_ctx *c)
{
	if (!c)
		return gdl_err(-EINVAL, "invalid argument");
	if (gdl_inherited(c))
		return gdl_err(-EPERM, "context inherited across fork");
	return gdl_rc_flush(c->mr, NULL);
}

GDL_EXPORT int gdirect_mr_flush_pd(struct gdirect_ctx *c, struct ibv_pd *pd)
{
	if (!c || !pd)
		return gdl_err(-EINVAL, "invalid argument");
	if (gdl_inherited(c))
		return gdl_err(-EPERM, "context inherited across fork");
	return gdl_rc_flush(c->mr, pd);
}
