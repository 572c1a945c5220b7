// SPDX-License-Identifier: GPL-2.0
/*
 * The GDIRECT_IOC_* of /dev/gdirect (include/uapi/gdirect_ioctl.h)
 *
 * Every ioctl answers with one of the errnos listed in docs/driver.md:
 * EPERM (not the opening process), EFAULT, EINVAL, ENOENT (no such
 * handle), ENOTTY (unknown command), ENOSPC (out of slots or handles),
 * ENOMEM, or what the provider said (EINVAL, ENOMEM, EIO, EOPNOTSUPP,
 * EBUSY, ENODEV), EPROTO for a provider of an incompatible version,
 * EINTR for a pin whose process got a fatal signal while it waited, EDQUOT
 * at max_pins_per_file, max_pins_per_user or max_pinned_bytes_per_user,
 * and EBADF for PIN or UNPIN on a file not opened for writing.
 */
#include <linux/compat.h>
#include <linux/uaccess.h>

#include "gdirect_internal.h"

static int gd_ioc_info(void __user *arg)
{
	struct gdirect_info info = {
		.abi_version		= GDIRECT_ABI_VERSION,
		.provider		= GDIRECT_PROVIDER,
		.page_table_version	= NVIDIA_P2P_PAGE_TABLE_VERSION,
		.dma_mapping_version	= NVIDIA_P2P_DMA_MAPPING_VERSION,
		.default_persistent	= gd_use_persistent,
	};

	if (GD_HAVE_PERSISTENT)
		info.caps |= GDIRECT_CAP_PERSISTENT;
	if (IS_ENABLED(CONFIG_X86))
		info.caps |= GDIRECT_CAP_MMAP_WC;
	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

/*
 * The largest /dev/gdirect handle this call may take.  A 32-bit caller's
 * mmap2() reaches offsets below 2^44 only, so its handles stop where
 * their regions would become unreachable: at 4095 on a file a 32-bit
 * process opened, and at 15 on a file a 64-bit process opened (one then
 * used from 32-bit code after exec).  A pin beyond gets ENOSPC rather than
 * a handle it could never map.
 */
static u32 gd_max_handle(const struct gd_ctx *ctx)
{
	if (!in_compat_syscall())
		return GD_MAX_HANDLE;
	return min_t(u32, GD_MAX_HANDLE,
		     (1U << (GD_MMAP_COMPAT_BITS - ctx->mmap_shift)) - 1);
}

/* Reserve the next gdrdrv handle: spaced by @len's pages, never reused. */
static int gd_gdr_reserve(struct gd_ctx *ctx, u64 len, u64 *handle)
{
	u64 h, step = max_t(u64, 1, len >> PAGE_SHIFT);
	int ret;

	xa_lock(&ctx->regs);
	h = ctx->gdr_next;
	if (h > GD_GDR_MAX_HANDLE || step > GD_GDR_MAX_HANDLE + 1 - h) {
		xa_unlock(&ctx->regs);
		return -ENOMEM;		/* gdrdrv's answer to handle overflow */
	}
	ctx->gdr_next = h + step;
	ret = __xa_insert(&ctx->regs, h, NULL, GFP_KERNEL_ACCOUNT);
	xa_unlock(&ctx->regs);
	if (ret)
		return ret == -EBUSY ? -ENOSPC : ret;
	*handle = h;
	return 0;
}

/*
 * A failed pin gives its handle range back when no later pin took the
 * next one, so a stream of failing pins cannot use up the handle space
 * (gdrdrv hands out handles only on success).
 */
static void gd_gdr_unreserve(struct gd_ctx *ctx, u64 handle, u64 len)
{
	u64 step = max_t(u64, 1, len >> PAGE_SHIFT);

	xa_lock(&ctx->regs);
	if (ctx->gdr_next == handle + step)
		ctx->gdr_next = handle;
	xa_unlock(&ctx->regs);
}

/**
 * gd_ctx_pin() - pin a range for a user context and publish its handle
 * @ctx: the context (either personality)
 * @addr: start, any alignment
 * @size: bytes
 * @p2p_token: legacy token, or 0
 * @va_space: legacy token, or 0
 * @flags: GDIRECT_PIN_*
 * @out: what was published; out->r only for gd_ctx_unpublish()
 *
 * For both devices; the checks of the request and the choice of the
 * persistent API are gd_reg_setup()'s.  The handle is a /dev/gdirect
 * handle, whose mmap offset is handle << ctx->mmap_shift, or a gdrdrv
 * handle, whose mmap offset is handle << PAGE_SHIFT.
 *
 * Return: 0, or a negative errno with nothing left behind: -EINVAL also
 * for a region larger than its context's mmap window, -ENOSPC also when no
 * handle the caller could map is left (gd_max_handle()).
 */
int gd_ctx_pin(struct gd_ctx *ctx, u64 addr, u64 size, u64 p2p_token,
	       u32 va_space, u32 flags, struct gd_pinned *out)
{
	struct gd_pin_req req = {
		.addr		= addr,
		.size		= size,
		.p2p_token	= p2p_token,
		.va_space	= va_space,
		.persistent	= flags & GDIRECT_PIN_PERSISTENT,
	};
	struct gd_reg *r;
	u32 id32;
	int ret;
	u64 id;

	if (flags & ~GDIRECT_PIN_FLAGS_ALL)
		return -EINVAL;
	gd_owner_current(&req.owner);
	ret = gd_reg_setup(ctx, &req, &r);
	if (ret)
		return ret;
	/* A region must fit its mmap window, or part of it is unreachable. */
	if (!ctx->gdrdrv && r->size > BIT_ULL(ctx->mmap_shift)) {
		ret = -EINVAL;
		goto err_put;
	}

	ret = ida_alloc_max(&ctx->slots, GDIRECT_MAX_SLOTS - 1,
			    GFP_KERNEL_ACCOUNT);
	if (ret < 0) {
		if (ret != -ENOSPC)
			ret = -ENOMEM;
		goto err_put;
	}
	r->slot = ret;

	/* Reserve the handle first, so a callback's event carries it. */
	if (ctx->gdrdrv) {
		ret = gd_gdr_reserve(ctx, r->size, &id);
		if (ret < 0)
			goto err_put;
		r->mmap_base = id << PAGE_SHIFT;
	} else {
		ret = xa_alloc_cyclic(&ctx->regs, &id32, NULL,
				      XA_LIMIT(1, gd_max_handle(ctx)),
				      &ctx->next_handle, GFP_KERNEL_ACCOUNT);
		if (ret == -EBUSY)
			ret = -ENOSPC;
		if (ret < 0)
			goto err_put;
		id = id32;
		r->mmap_base = id << ctx->mmap_shift;
	}
	r->handle = id;
	/*
	 * Set before the region is published, so that every mmap() sees it:
	 * gdrdrv records the start's offset in its GPU page and never maps
	 * a pin whose offset is not 0 (gd_gdr_mmap()).
	 */
	r->gdr_unaligned = ctx->gdrdrv && (addr & (GD_PAGE_SIZE - 1));

	ret = gd_reg_pin(r);
	if (ret)
		goto err_unreserve;
	/* UNPIN sees a reservation as no entry, so it cannot be erased. */
	if (xa_is_err(xa_store(&ctx->regs, id, r, GFP_KERNEL_ACCOUNT))) {
		ret = -ENOMEM;
		goto err_release;
	}
	out->r = r;
	out->handle = id;
	out->start = r->addr;
	out->len = r->size;
	out->mmap_offset = r->mmap_base;
	out->slot = r->slot;
	return 0;

err_release:
	gd_reg_release(r);
err_unreserve:
	xa_release(&ctx->regs, id);
	if (ctx->gdrdrv)
		gd_gdr_unreserve(ctx, id, r->size);
err_put:
	gd_reg_put(r);	/* gives back the slot, and the caps' charge */
	return ret;
}

/**
 * gd_ctx_unpublish() - undo gd_ctx_pin() when its answer cannot be returned
 * @ctx: the context
 * @p: what gd_ctx_pin() published
 *
 * Unless a racing unpin got the handle first.
 */
void gd_ctx_unpublish(struct gd_ctx *ctx, const struct gd_pinned *p)
{
	if (xa_cmpxchg(&ctx->regs, p->handle, p->r, NULL, 0) == p->r) {
		gd_reg_release(p->r);
		gd_reg_put(p->r);
	}
}

/**
 * gd_ctx_unpin() - release a handle of a user context
 * @ctx: the context
 * @handle: as gd_ctx_pin() returned it
 *
 * Return: 0, or -ENOENT for no such handle.
 */
int gd_ctx_unpin(struct gd_ctx *ctx, u64 handle)
{
	struct gd_reg *r = NULL;

	if (handle &&
	    handle <= (ctx->gdrdrv ? GD_GDR_MAX_HANDLE : GD_MAX_HANDLE)) {
		xa_lock(&ctx->regs);
		r = xa_load(&ctx->regs, handle);
		if (r)
			__xa_erase(&ctx->regs, handle);
		xa_unlock(&ctx->regs);
	}
	if (!r)
		return -ENOENT;
	gd_reg_release(r);
	gd_reg_put(r);
	return 0;
}

static int gd_ioc_pin(struct gd_ctx *ctx, void __user *arg)
{
	struct gdirect_pin p;
	struct gd_pinned res;
	int ret;

	if (copy_from_user(&p, arg, sizeof(p)))
		return -EFAULT;
	if (p.reserved)
		return -EINVAL;
	ret = gd_ctx_pin(ctx, p.addr, p.size, p.p2p_token, p.va_space,
			 p.flags, &res);
	if (ret)
		return ret;
	p.handle = res.handle;
	p.pinned_addr = res.start;
	p.pinned_size = res.len;
	p.mmap_offset = res.mmap_offset;
	p.status_slot = res.slot;
	if (copy_to_user(arg, &p, sizeof(p))) {
		gd_ctx_unpublish(ctx, &res);
		return -EFAULT;
	}
	return 0;
}

static int gd_ioc_unpin(struct gd_ctx *ctx, void __user *arg)
{
	struct gdirect_unpin u;

	if (copy_from_user(&u, arg, sizeof(u)))
		return -EFAULT;
	return gd_ctx_unpin(ctx, u.handle);
}

static int gd_ioc_region_info(struct gd_ctx *ctx, void __user *arg)
{
	struct gdirect_region_info ri;
	struct gd_reg *r;

	if (copy_from_user(&ri, arg, sizeof(ri)))
		return -EFAULT;
	r = gd_ctx_lookup(ctx, ri.handle);
	if (!r)
		return -ENOENT;
	memset(&ri, 0, sizeof(ri));
	ri.handle = r->handle;
	ri.pinned_addr = r->addr;
	ri.pinned_size = r->size;
	ri.page_size = GD_PAGE_SIZE;
	ri.page_count = r->size >> GD_PAGE_SHIFT;
	ri.mapped_len = atomic64_read(&r->mapped_len);
	ri.flags = r->flags;
	ri.cpu_cacheable = r->cpu_cacheable;
	spin_lock(&r->lock);
	ri.status = r->revoked ? GDIRECT_STATUS_REVOKED : GDIRECT_STATUS_PINNED;
	ri.map_type = r->map_type;
	spin_unlock(&r->lock);
	gd_reg_put(r);
	return copy_to_user(arg, &ri, sizeof(ri)) ? -EFAULT : 0;
}

/*
 * How the region's later mappings are made.  Refused while it is mapped
 * (-EBUSY), so that its mappings share one type: mmap() reads the type
 * and counts itself in mapped_len in one section under r->lock, so a
 * mapping made while the type changes takes the old one (and this call
 * fails) or the new one.  Cached is for CPU-cacheable
 * memory only (-EOPNOTSUPP), as gdrdrv's CACHING.
 */
static int gd_ioc_map_type(struct gd_ctx *ctx, void __user *arg)
{
	struct gdirect_map_type mt;
	struct gd_reg *r;
	int ret = 0;

	if (copy_from_user(&mt, arg, sizeof(mt)))
		return -EFAULT;
	if (mt.reserved || mt.type > GDIRECT_MAP_CACHED)
		return -EINVAL;
	r = gd_ctx_lookup(ctx, mt.handle);
	if (!r)
		return -ENOENT;
	spin_lock(&r->lock);
	if (mt.type == GDIRECT_MAP_CACHED && !r->cpu_cacheable)
		ret = -EOPNOTSUPP;
	else if (atomic64_read(&r->mapped_len))
		ret = -EBUSY;
	else
		r->map_type = mt.type;
	spin_unlock(&r->lock);
	gd_reg_put(r);
	return ret;
}

long gd_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct gd_ctx *ctx = filp->private_data;
	void __user *uarg = (void __user *)arg;

	/* Handles belong to the opening process, its threads included. */
	if (!gd_is_owner(&ctx->owner))
		return -EPERM;

	/* What changes the context needs a file opened for writing. */
	if ((cmd == GDIRECT_IOC_PIN || cmd == GDIRECT_IOC_UNPIN ||
	     cmd == GDIRECT_IOC_MAP_TYPE) &&
	    !(filp->f_mode & FMODE_WRITE))
		return -EBADF;

	switch (cmd) {
	case GDIRECT_IOC_INFO:
		return gd_ioc_info(uarg);
	case GDIRECT_IOC_PIN:
		return gd_ioc_pin(ctx, uarg);
	case GDIRECT_IOC_UNPIN:
		return gd_ioc_unpin(ctx, uarg);
	case GDIRECT_IOC_REGION_INFO:
		return gd_ioc_region_info(ctx, uarg);
	case GDIRECT_IOC_MAP_TYPE:
		return gd_ioc_map_type(ctx, uarg);
	default:
		return -ENOTTY;
	}
}
