// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/gdrdrv: gdrcopy's kernel interface over gdirect's registrations
 *
 * NVIDIA's libgdrapi (any 2.x) drives its own module, gdrdrv, through the
 * ioctls of include/uapi/gdrdrv.h and mmap() at offset handle << PAGE_SHIFT.
 * This file answers them with the contexts and registrations of
 * /dev/gdirect: an open /dev/gdrdrv is a struct gd_ctx marked gdrdrv, a
 * pin is gd_ctx_pin(), an unpin gd_ctx_unpin(), a mapping
 * gd_mmap_region(); the free callback, the zap of revoked mappings, the
 * fault handler and release() are gdirect's.  What differs is only the
 * interface: handle numbering, errnos, the info layouts and the mapping
 * type bookkeeping.  Where gdrdrv and gdirect disagree on a rule, the
 * stricter one applies (docs/driver.md, "The /dev/gdrdrv personality").
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/uaccess.h>

#include "gdrdrv.h"
#include "gdirect_internal.h"

/*
 * PIN_BUFFER_V2 as gdirect's own gdrdrv.h declared it before it was made
 * to match gdrcopy's: request 7 encoding the size of a pointer (0xC008DA07
 * on LP64) instead of the structure's 32 bytes (0xC020DA07).  The driver
 * accepts both, because libgdrapi builds from that header send this one;
 * the argument is the same structure either way.
 */
#define GD_GDR_IOC_PIN_BUFFER_V2_PTR	\
	_IOWR(GDRDRV_IOCTL, 7, struct GDRDRV_IOC_PIN_BUFFER_V2_PARAMS *)
static_assert(GD_GDR_IOC_PIN_BUFFER_V2_PTR != GDRDRV_IOC_PIN_BUFFER_V2);

static bool gd_gdrdrv_enable = true;
module_param_named(gdrdrv, gd_gdrdrv_enable, bool, 0444);
MODULE_PARM_DESC(gdrdrv,
		 "Offer gdrcopy's kernel interface as /dev/gdrdrv, for libgdrapi (default: Y)");

static int gd_gdr_pin(struct gd_ctx *ctx, void __user *arg, bool v2)
{
	struct GDRDRV_IOC_PIN_BUFFER_PARAMS p1;
	struct GDRDRV_IOC_PIN_BUFFER_V2_PARAMS p2;
	struct gd_pinned res;
	int ret;

	if (v2) {
		if (copy_from_user(&p2, arg, sizeof(p2)))
			return -EFAULT;
		/* FORCE_PCIE (coherent platforms only) is not offered. */
		if (p2.flags)
			return -EINVAL;
		ret = gd_ctx_pin(ctx, p2.addr, p2.size, 0, 0, 0, &res);
		if (ret)
			return ret;
		p2.handle = res.handle;
		if (copy_to_user(arg, &p2, sizeof(p2)))
			goto fault;
		return 0;
	}
	if (copy_from_user(&p1, arg, sizeof(p1)))
		return -EFAULT;
	/* As gdrdrv: the persistent API has no tokens. */
	if ((p1.p2p_token || p1.va_space) && gd_use_persistent)
		return -EINVAL;
	ret = gd_ctx_pin(ctx, p1.addr, p1.size, p1.p2p_token, p1.va_space, 0,
			 &res);
	if (ret)
		return ret;
	p1.handle = res.handle;
	if (copy_to_user(arg, &p1, sizeof(p1)))
		goto fault;
	return 0;
fault:
	gd_ctx_unpublish(ctx, &res);
	return -EFAULT;
}

static int gd_gdr_unpin(struct gd_ctx *ctx, void __user *arg)
{
	struct GDRDRV_IOC_UNPIN_BUFFER_PARAMS p;
	int ret;

	if (copy_from_user(&p, arg, sizeof(p)))
		return -EFAULT;
	ret = gd_ctx_unpin(ctx, p.handle);
	/* gdrdrv answers EINVAL where gdirect says there is no such handle. */
	return ret == -ENOENT ? -EINVAL : ret;
}

static int gd_gdr_cb_flag(struct gd_ctx *ctx, void __user *arg)
{
	struct GDRDRV_IOC_GET_CB_FLAG_PARAMS p;
	struct gd_reg *r;

	if (copy_from_user(&p, arg, sizeof(p)))
		return -EFAULT;
	r = gd_ctx_lookup(ctx, p.handle);
	if (!r)
		return -EINVAL;
	spin_lock(&r->lock);
	p.flag = r->revoked;
	spin_unlock(&r->lock);
	gd_reg_put(r);
	return copy_to_user(arg, &p, sizeof(p)) ? -EFAULT : 0;
}

/*
 * The type of @r's live mapping, GDR_MR_NONE when it has none.  mmap()
 * claims mapped_len and sets the type in one step under r->lock, so a
 * mapped region never reads as NONE here.
 */
static u32 gd_gdr_mapped_type(struct gd_reg *r)
{
	u32 type = GDR_MR_NONE;

	spin_lock(&r->lock);
	if (atomic64_read(&r->mapped_len))
		type = r->gdr_map_type;
	spin_unlock(&r->lock);
	return type;
}

static int gd_gdr_info(struct gd_ctx *ctx, void __user *arg, bool v2)
{
	struct GDRDRV_IOC_GET_INFO_V2_PARAMS i2;
	struct GDRDRV_IOC_GET_INFO_PARAMS i1;
	struct gd_reg *r;
	u32 type;

	/* Both layouts start with the handle. */
	if (copy_from_user(&i1.handle, arg, sizeof(i1.handle)))
		return -EFAULT;
	r = gd_ctx_lookup(ctx, i1.handle);
	if (!r)
		return -EINVAL;
	type = gd_gdr_mapped_type(r);
	if (v2) {
		memset(&i2, 0, sizeof(i2));
		i2.handle = r->handle;
		i2.va = r->addr;
		i2.mapped_size = r->size;
		i2.page_size = GD_PAGE_SIZE;
		i2.mapping_type = type;
	} else {
		memset(&i1, 0, sizeof(i1));
		i1.handle = r->handle;
		i1.va = r->addr;
		i1.mapped_size = r->size;
		i1.page_size = GD_PAGE_SIZE;
		i1.mapped = type != GDR_MR_NONE;
		i1.wc_mapping = type == GDR_MR_WC;
	}
	gd_reg_put(r);
	if (v2)
		return copy_to_user(arg, &i2, sizeof(i2)) ? -EFAULT : 0;
	return copy_to_user(arg, &i1, sizeof(i1)) ? -EFAULT : 0;
}

static int gd_gdr_attr(void __user *arg)
{
	struct GDRDRV_IOC_GET_ATTR_PARAMS p;

	if (copy_from_user(&p, arg, sizeof(p)))
		return -EFAULT;
	switch (p.attr) {
	case GDRDRV_ATTR_USE_PERSISTENT_MAPPING:
		p.val = gd_use_persistent;
		break;
	case GDRDRV_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE:
		p.val = 0;
		break;
	default:
		return -EINVAL;
	}
	return copy_to_user(arg, &p, sizeof(p)) ? -EFAULT : 0;
}

/*
 * 0 if @r can be mapped with @type, else -EOPNOTSUPP.  gdrdrv 2.6 refuses
 * at REQ_MAPPING_TYPE a type its platform cannot give: CACHING unless the
 * pages are CPU-cacheable, DEVICE unless the CPU must map GPU memory as
 * device memory, WC when it must.  gdirect never makes device mappings, so
 * WC and NONE (the region's own type) are always possible and DEVICE never.
 */
static int gd_gdr_type_ok(struct gd_reg *r, u32 type)
{
	switch (type) {
	case GDR_MR_NONE:
	case GDR_MR_WC:
		return 0;
	case GDR_MR_CACHING:
		return r->cpu_cacheable ? 0 : -EOPNOTSUPP;
	default:
		return -EOPNOTSUPP;
	}
}

static int gd_gdr_req_type(struct gd_ctx *ctx, void __user *arg)
{
	struct GDRDRV_IOC_REQ_MAPPING_TYPE_PARAMS p;
	struct gd_reg *r;
	int ret;

	if (copy_from_user(&p, arg, sizeof(p)))
		return -EFAULT;
	/* gdrdrv's order: unknown type, unknown handle, mapped, unsupported. */
	if (p.mapping_type > GDR_MR_DEVICE)
		return -EINVAL;
	r = gd_ctx_lookup(ctx, p.handle);
	if (!r)
		return -EINVAL;
	/* mmap() decides and claims under the same lock: no request is lost. */
	spin_lock(&r->lock);
	if (atomic64_read(&r->mapped_len)) {
		ret = -EBUSY;
		goto unlock;
	}
	ret = gd_gdr_type_ok(r, p.mapping_type);
	if (ret)
		goto unlock;
	r->gdr_req_type = p.mapping_type;
unlock:
	spin_unlock(&r->lock);
	gd_reg_put(r);
	return ret;
}

static int gd_gdr_version(void __user *arg)
{
	struct GDRDRV_IOC_GET_VERSION_PARAMS p = {
		.gdrdrv_version = GDRDRV_VERSION,
		.minimum_gdr_api_version = MINIMUM_GDR_API_VERSION,
	};

	return copy_to_user(arg, &p, sizeof(p)) ? -EFAULT : 0;
}

static long gd_gdr_ioctl(struct file *filp, unsigned int cmd,
			 unsigned long arg)
{
	struct gd_ctx *ctx = filp->private_data;
	void __user *uarg = (void __user *)arg;

	if (_IOC_TYPE(cmd) != GDRDRV_IOCTL)
		return -EINVAL;
	/* Handles belong to the opening process, its threads included. */
	if (!gd_is_owner(&ctx->owner))
		return -EACCES;
	/* As on /dev/gdirect: what changes the context needs FMODE_WRITE. */
	if ((cmd == GDRDRV_IOC_PIN_BUFFER || cmd == GDRDRV_IOC_PIN_BUFFER_V2 ||
	     cmd == GD_GDR_IOC_PIN_BUFFER_V2_PTR ||
	     cmd == GDRDRV_IOC_UNPIN_BUFFER ||
	     cmd == GDRDRV_IOC_REQ_MAPPING_TYPE) &&
	    !(filp->f_mode & FMODE_WRITE))
		return -EBADF;

	switch (cmd) {
	case GDRDRV_IOC_PIN_BUFFER:
		return gd_gdr_pin(ctx, uarg, false);
	case GDRDRV_IOC_PIN_BUFFER_V2:
	case GD_GDR_IOC_PIN_BUFFER_V2_PTR:
		return gd_gdr_pin(ctx, uarg, true);
	case GDRDRV_IOC_UNPIN_BUFFER:
		return gd_gdr_unpin(ctx, uarg);
	case GDRDRV_IOC_GET_CB_FLAG:
		return gd_gdr_cb_flag(ctx, uarg);
	case GDRDRV_IOC_GET_INFO:
		return gd_gdr_info(ctx, uarg, false);
	case GDRDRV_IOC_GET_INFO_V2:
		return gd_gdr_info(ctx, uarg, true);
	case GDRDRV_IOC_GET_ATTR:
		return gd_gdr_attr(uarg);
	case GDRDRV_IOC_REQ_MAPPING_TYPE:
		return gd_gdr_req_type(ctx, uarg);
	case GDRDRV_IOC_GET_VERSION:
		return gd_gdr_version(uarg);
	default:
		return -ENOTTY;
	}
}

/*
 * The mapping's type from the last request, decided with the claim of the
 * region under r->lock (gd_mmap_region()), so that REQ_MAPPING_TYPE is
 * either seen by this mapping or refused with EBUSY, and GET_INFO sees the
 * region unmapped or mapped with its type, never in between.
 */
int gd_gdr_claim(struct gd_reg *r, bool *wc)
{
	u32 type = r->gdr_req_type;

	lockdep_assert_held(&r->lock);
	if (type == GDR_MR_NONE)
		type = r->cpu_cacheable ? GDR_MR_CACHING : GDR_MR_WC;
	/*
	 * REQ_MAPPING_TYPE accepts only types gd_gdr_type_ok() allows; the
	 * check stays here so that no path maps a region with a type its
	 * pages cannot take.
	 */
	if (gd_gdr_type_ok(r, type))
		return -EINVAL;
	r->gdr_map_type = type;
	*wc = type == GDR_MR_WC;
	return 0;
}

/*
 * The region a mapping at @pgoff (its handle) names, with a reference, or
 * NULL.  A pin whose start is not 64 KiB-aligned is never mapped, as
 * gdrdrv 2.6 refuses it ("offset != 0 is not supported"): the mapping
 * would begin before the pinned bytes, and gdrcopy's own tests expect the
 * refusal.
 */
struct gd_reg *gd_gdr_find(struct gd_ctx *ctx, unsigned long pgoff)
{
	struct gd_reg *r = gd_ctx_lookup(ctx, pgoff);

	if (r && r->gdr_unaligned) {
		gd_reg_put(r);
		return NULL;
	}
	return r;
}

/*
 * One mapping per handle, from its start (offset handle << PAGE_SHIFT
 * exactly), of the requested type or the region's natural one; as gdrdrv,
 * EINVAL for anything else, a second mapping or a revoked region included.
 */
#ifdef GD_MMAP_PREPARE
static int gd_gdr_mmap_prepare(struct vm_area_desc *desc)
{
	struct gd_ctx *ctx = desc->file->private_data;
	struct gd_reg *r;
	int ret;

	if (!gd_is_owner(&ctx->owner))
		return -EACCES;
	r = gd_gdr_find(ctx, desc->pgoff);
	if (!r)
		return -EINVAL;
	ret = gd_mmap_region_prepare(r, desc, 0, gd_gdr_claim);
	/* The mapping takes its own reference once established. */
	gd_reg_put(r);
	return ret == -EBUSY || ret == -ESTALE ? -EINVAL : ret;
}
#else
static int gd_gdr_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct gd_ctx *ctx = filp->private_data;
	struct gd_reg *r;
	int ret;

	if (!gd_is_owner(&ctx->owner))
		return -EACCES;
	r = gd_gdr_find(ctx, vma->vm_pgoff);
	if (!r)
		return -EINVAL;
	/* The lookup's reference goes to the VMA. */
	ret = gd_mmap_region(r, vma, 0, gd_gdr_claim);
	if (!ret)
		return 0;
	gd_reg_put(r);
	return ret == -EBUSY || ret == -ESTALE ? -EINVAL : ret;
}
#endif

static int gd_gdr_open(struct inode *inode, struct file *filp)
{
	return gd_ctx_open(inode, filp, true);
}

static const struct file_operations gd_gdr_fops = {
	.owner		= THIS_MODULE,
	.open		= gd_gdr_open,
	.release	= gd_ctx_release,
	.unlocked_ioctl	= gd_gdr_ioctl,
#ifdef GD_MMAP_PREPARE
	.mmap_prepare	= gd_gdr_mmap_prepare,
#else
	.mmap		= gd_gdr_mmap,
#endif
	.fadvise	= gd_fadvise,
};

static struct miscdevice gd_gdr_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "gdrdrv",
	.fops	= &gd_gdr_fops,
};

static bool gd_gdr_registered;

/**
 * gd_gdrdrv_init() - register /dev/gdrdrv unless the gdrdrv parameter is N
 *
 * Return: 0, or misc_register()'s error (-EBUSY where gdrcopy's own
 * module already owns the name).
 */
int gd_gdrdrv_init(void)
{
	int ret;

	if (!gd_gdrdrv_enable)
		return 0;
	gd_gdr_misc.mode = gd_dev_mode & 0666;
	ret = misc_register(&gd_gdr_misc);
	if (ret) {
		pr_err("cannot register /dev/gdrdrv (%d); load with gdrdrv=0 next to gdrcopy's gdrdrv.ko\n",
		       ret);
		return ret;
	}
	gd_gdr_registered = true;
	return 0;
}

/**
 * gd_gdrdrv_exit() - unregister /dev/gdrdrv if gd_gdrdrv_init() did
 */
void gd_gdrdrv_exit(void)
{
	if (gd_gdr_registered)
		misc_deregister(&gd_gdr_misc);
	gd_gdr_registered = false;
}
