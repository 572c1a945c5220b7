// SPDX-License-Identifier: GPL-2.0
/*
 * The module: parameters, /dev/gdirect, per-open contexts
 *
 * gdirect pins GPU memory through the NVIDIA driver's nv-p2p interface (or
 * nvp2p_emu.ko, which provides the same ABI) for user space and for other
 * kernel drivers.  See docs/driver.md.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "gdirect_internal.h"

bool gd_use_persistent;
module_param_named(use_persistent, gd_use_persistent, bool, 0444);
MODULE_PARM_DESC(use_persistent,
		 "Pin token-less user requests with nvidia_p2p_get_pages_persistent (no revocation); falls back to get_pages with a free callback where the API is missing (default: N)");

bool gd_allow_tokens = true;
module_param_named(allow_tokens, gd_allow_tokens, bool, 0644);
MODULE_PARM_DESC(allow_tokens,
		 "Accept the deprecated p2p_token/va_space pinning path (default: Y)");

static unsigned short gd_dev_mode = 0660;
module_param_named(dev_mode, gd_dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode, "Permissions of /dev/gdirect (default: 0660)");

struct gd_stats gd_stats;
/* Every registration, user and kernel, for /proc; a leaf lock. */
DEFINE_SPINLOCK(gd_regs_lock);
LIST_HEAD(gd_regs);
/* Every open context, for /proc. */
DEFINE_MUTEX(gd_ctxs_lock);
LIST_HEAD(gd_ctxs);

void gd_ctx_get(struct gd_ctx *ctx)
{
	kref_get(&ctx->ref);
}

static void gd_ctx_free(struct kref *kref)
{
	struct gd_ctx *ctx = container_of(kref, struct gd_ctx, ref);

	xa_destroy(&ctx->regs);
	ida_destroy(&ctx->slots);
	vfree(ctx->status);
	kfree(ctx);
}

void gd_ctx_put(struct gd_ctx *ctx)
{
	kref_put(&ctx->ref, gd_ctx_free);
}

/* The registration behind @handle, with a reference, or NULL. */
struct gd_reg *gd_ctx_lookup(struct gd_ctx *ctx, u64 handle)
{
	struct gd_reg *r;

	if (!handle || handle > GD_MAX_HANDLE)
		return NULL;
	xa_lock(&ctx->regs);
	r = xa_load(&ctx->regs, handle);
	if (r)
		gd_reg_get(r);
	xa_unlock(&ctx->regs);
	return r;
}

static int gd_open(struct inode *inode, struct file *filp)
{
	struct gd_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->status = vmalloc_user(GDIRECT_STATUS_BYTES);
	if (!ctx->status) {
		kfree(ctx);
		return -ENOMEM;
	}
	kref_init(&ctx->ref);
	gd_owner_current(&ctx->owner);
	xa_init_flags(&ctx->regs, XA_FLAGS_ALLOC1);
	ida_init(&ctx->slots);
	spin_lock_init(&ctx->ev_lock);
	INIT_LIST_HEAD(&ctx->events);
	init_waitqueue_head(&ctx->ev_wait);
	atomic64_set(&ctx->callbacks, 0);

	/*
	 * A private address space per open file: unmap_mapping_range() on it
	 * reaches exactly this file's VMAs, which lets a revocation zap them
	 * even after release() (by then there are none).
	 */
	address_space_init_once(&ctx->mapping);
	ctx->mapping.host = inode;
	filp->f_mapping = &ctx->mapping;
	filp->private_data = ctx;

	mutex_lock(&gd_ctxs_lock);
	list_add_tail(&ctx->node, &gd_ctxs);
	mutex_unlock(&gd_ctxs_lock);
	return stream_open(inode, filp);
}

/*
 * The last reference to the file is gone: release every registration.  In
 * the owner's context (close, or process exit in either order against the
 * NVIDIA fd) this puts the pages; elsewhere, see pin.c rule 5.  The context
 * itself lives on while late callbacks hold references to it.
 */
static int gd_release(struct inode *inode, struct file *filp)
{
	struct gd_ctx *ctx = filp->private_data;
	struct gd_reg *r;
	unsigned long idx;

	xa_for_each(&ctx->regs, idx, r) {
		if (xa_erase(&ctx->regs, idx) != r)
			continue;
		gd_reg_release(r);
		gd_reg_put(r);
	}
	gd_events_drain(ctx);

	mutex_lock(&gd_ctxs_lock);
	list_del(&ctx->node);
	mutex_unlock(&gd_ctxs_lock);
	gd_ctx_put(ctx);
	return 0;
}

static const struct file_operations gd_fops = {
	.owner		= THIS_MODULE,
	.open		= gd_open,
	.release	= gd_release,
	.unlocked_ioctl	= gd_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.mmap		= gd_mmap,
	.read		= gd_read,
	.poll		= gd_poll,
	/* no .llseek: the file does not seek (kcompat.h, 6.12) */
};

static struct miscdevice gd_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "gdirect",
	.fops	= &gd_fops,
};

#if GDIRECT_PROVIDER == GDIRECT_PROVIDER_NVIDIA
static const char gd_provider_name[] = "NVIDIA";
#else
static const char gd_provider_name[] = "emulated";
#endif

static int __init gd_init(void)
{
	int ret;

	if (gd_use_persistent && !GD_HAVE_PERSISTENT) {
		pr_info("gdirect: nv-p2p has no persistent API; use_persistent ignored, pinning with free callbacks\n");
		gd_use_persistent = false;
	}
	gd_misc.mode = gd_dev_mode & 0666;
	ret = misc_register(&gd_misc);
	if (ret)
		return ret;
	gd_debugfs_init();
	pr_info("gdirect: ABI %u, %s provider, page table %#x, DMA mapping %#x, persistent API %s%s\n",
		GDIRECT_ABI_VERSION,
		gd_provider_name,
		NVIDIA_P2P_PAGE_TABLE_VERSION, NVIDIA_P2P_DMA_MAPPING_VERSION,
		GD_HAVE_PERSISTENT ? "available" : "absent",
		gd_use_persistent ? " (default)" : "");
	return 0;
}

static void __exit gd_exit(void)
{
	/*
	 * Open files pin the module through fops; registrations whose
	 * callback may still come pin it through their nv reference.
	 */
	gd_debugfs_exit();
	misc_deregister(&gd_misc);
}

module_init(gd_init);
module_exit(gd_exit);

MODULE_DESCRIPTION("GPUDirect RDMA pinning driver over nv-p2p");
MODULE_LICENSE("GPL");
MODULE_VERSION("0.1");
