// SPDX-License-Identifier: GPL-2.0
/*
 * The GDIRECT_IOC_* of /dev/gdirect (include/uapi/gdirect.h)
 *
 * Every ioctl answers with one of the errnos listed in docs/driver.md:
 * EPERM (not the opening process), EFAULT, EINVAL, ENOENT (no such
 * handle), ENOTTY (unknown command), ENOSPC (out of slots or handles),
 * ENOMEM, or what the provider said (EINVAL, ENOMEM, EIO, EOPNOTSUPP,
 * EBUSY, ENODEV), and EPROTO for a provider of an incompatible version.
 */
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

static int gd_ioc_pin(struct gd_ctx *ctx, void __user *arg)
{
	struct gdirect_pin p;
	struct gd_reg *r;
	bool tokens, persistent;
	u64 start, len;
	u32 id;
	int ret, slot;

	if (copy_from_user(&p, arg, sizeof(p)))
		return -EFAULT;
	if ((p.flags & ~GDIRECT_PIN_FLAGS_ALL) || p.reserved)
		return -EINVAL;
	ret = gd_range(p.addr, p.size, &start, &len);
	if (ret)
		return ret;
	tokens = p.p2p_token || p.va_space;
	if (tokens && !gd_allow_tokens)
		return -EPERM;
	persistent = p.flags & GDIRECT_PIN_PERSISTENT;
	if (persistent && !GD_HAVE_PERSISTENT)
		return -EOPNOTSUPP;
	if (persistent && tokens)
		return -EINVAL;		/* the persistent API has no tokens */
	if (tokens)
		pr_warn_once("gdirect: process %d pins with p2p tokens; tokens are deprecated since CUDA 6.0 (guide 11.6)\n",
			     task_tgid_nr(current));
	else if (gd_use_persistent)
		persistent = true;

	r = gd_reg_alloc(ctx, GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->addr = start;
	r->size = len;
	r->p2p_token = p.p2p_token;
	r->va_space = p.va_space;
	r->persistent = persistent;
	r->flags = persistent ? GDIRECT_PIN_PERSISTENT : 0;

	slot = ida_alloc_max(&ctx->slots, GDIRECT_MAX_SLOTS - 1, GFP_KERNEL);
	if (slot < 0) {
		gd_reg_put(r);
		return slot == -ENOSPC ? -ENOSPC : -ENOMEM;
	}
	r->slot = slot;

	/* Reserve the handle first, so a callback's event carries it. */
	ret = xa_alloc_cyclic(&ctx->regs, &id, NULL, XA_LIMIT(1, GD_MAX_HANDLE),
			      &ctx->next_handle, GFP_KERNEL);
	if (ret < 0) {
		gd_reg_put(r);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	r->handle = id;

	ret = gd_reg_pin(r);
	if (ret) {
		xa_release(&ctx->regs, id);
		gd_reg_put(r);
		return ret;
	}
	/* UNPIN sees a reservation as no entry, so it cannot be erased. */
	if (xa_is_err(xa_store(&ctx->regs, id, r, GFP_KERNEL))) {
		xa_release(&ctx->regs, id);
		gd_reg_release(r);
		gd_reg_put(r);
		return -ENOMEM;
	}

	p.handle = id;
	p.pinned_addr = start;
	p.pinned_size = len;
	p.mmap_offset = (u64)id << GD_MMAP_REGION_SHIFT;
	p.status_slot = slot;
	if (copy_to_user(arg, &p, sizeof(p))) {
		if (xa_cmpxchg(&ctx->regs, id, r, NULL, 0) == r) {
			gd_reg_release(r);
			gd_reg_put(r);
		}
		return -EFAULT;	/* unless a racing UNPIN got it first */
	}
	return 0;
}

static int gd_ioc_unpin(struct gd_ctx *ctx, void __user *arg)
{
	struct gdirect_unpin u;
	struct gd_reg *r = NULL;

	if (copy_from_user(&u, arg, sizeof(u)))
		return -EFAULT;
	if (u.handle && u.handle <= GD_MAX_HANDLE) {
		xa_lock(&ctx->regs);
		r = xa_load(&ctx->regs, u.handle);
		if (r)
			__xa_erase(&ctx->regs, u.handle);
		xa_unlock(&ctx->regs);
	}
	if (!r)
		return -ENOENT;
	gd_reg_release(r);
	gd_reg_put(r);
	return 0;
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
	spin_unlock(&r->lock);
	gd_reg_put(r);
	return copy_to_user(arg, &ri, sizeof(ri)) ? -EFAULT : 0;
}

long gd_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct gd_ctx *ctx = filp->private_data;
	void __user *uarg = (void __user *)arg;

	/* Handles belong to the opening process, its threads included. */
	if (!gd_is_owner(&ctx->owner))
		return -EPERM;

	switch (cmd) {
	case GDIRECT_IOC_INFO:
		return gd_ioc_info(uarg);
	case GDIRECT_IOC_PIN:
		return gd_ioc_pin(ctx, uarg);
	case GDIRECT_IOC_UNPIN:
		return gd_ioc_unpin(ctx, uarg);
	case GDIRECT_IOC_REGION_INFO:
		return gd_ioc_region_info(ctx, uarg);
	default:
		return -ENOTTY;
	}
}
