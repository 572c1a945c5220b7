// SPDX-License-Identifier: GPL-2.0
/*
 * The module: parameters, /dev/gdirect, per-open contexts
 *
 * gdirect pins GPU memory through the NVIDIA driver's nv-p2p interface (or
 * nvp2p_emu.ko, which provides the same ABI) for user space and for other
 * kernel drivers.  See docs/driver.md.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/fadvise.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uidgid.h>
#include <linux/vmalloc.h>

#include "gdirect_internal.h"
#include "kcompat.h"

bool gd_use_persistent;
module_param_named(use_persistent, gd_use_persistent, bool, 0444);
MODULE_PARM_DESC(use_persistent,
		 "Pin token-less user requests with nvidia_p2p_get_pages_persistent (no revocation); falls back to get_pages with a free callback where the API is missing (default: N)");

bool gd_allow_tokens = true;
module_param_named(allow_tokens, gd_allow_tokens, bool, 0644);
MODULE_PARM_DESC(allow_tokens,
		 "Accept the deprecated p2p_token/va_space pinning path (default: Y)");

#ifdef GDIRECT_DEBUG_KNOBS
unsigned int gd_dbg_dma_end_delay_ms;
module_param_named(dbg_dma_end_delay_ms, gd_dbg_dma_end_delay_ms, uint, 0644);
MODULE_PARM_DESC(dbg_dma_end_delay_ms,
		 "Debug build: busy-wait this long in gdirect_dma_end() after the last bracket is counted out (default: 0)");

unsigned int gd_dbg_mmap_type_delay_ms;
module_param_named(dbg_mmap_type_delay_ms, gd_dbg_mmap_type_delay_ms, uint, 0644);
MODULE_PARM_DESC(dbg_mmap_type_delay_ms,
		 "Debug build: busy-wait this long in mmap() of /dev/gdirect before it reads the mapping type and claims the mapping (default: 0)");
#endif

unsigned int gd_max_pins_per_file = 16384;
module_param_named(max_pins_per_file, gd_max_pins_per_file, uint, 0644);
MODULE_PARM_DESC(max_pins_per_file,
		 "Live pins one open /dev/gdirect may hold; more fail with EDQUOT (0: only the 65536 status slots; default: 16384)");

unsigned int gd_max_pins_per_user = 65536;
module_param_named(max_pins_per_user, gd_max_pins_per_user, uint, 0644);
MODULE_PARM_DESC(max_pins_per_user,
		 "Live pins of one user over all open files and peer drivers' pins for it; more fail with EDQUOT (0: no limit; default: 65536)");

/*
 * A pin's cost to the kernel grows with its bytes, not its count: the
 * provider keeps a page-table entry and page object per 64 KiB page, which
 * no cgroup is charged for, and pinning the same memory again takes no
 * more BAR1.  4 TiB is more than the memory of eight 288 GB GPUs, so a
 * workload that pins its GPU memory once or twice stays below it, while
 * it bounds the provider's tables for one user to about 2.5 GiB (40 bytes
 * per 64 KiB page).
 */
unsigned long long gd_max_pinned_bytes_per_user = 4ULL << 40;

/*
 * A byte count in decimal and nothing else: the stock ullong parser would
 * also read "010" as 8.  kstrtoull() refuses what it does not understand
 * whole (EINVAL) and overflow (ERANGE); the old value then stays.
 */
static int gd_param_set_bytes(const char *val, const struct kernel_param *kp)
{
	unsigned long long v;
	int ret;

	ret = kstrtoull(val, 10, &v);
	if (ret)
		return ret;
	WRITE_ONCE(*(unsigned long long *)kp->arg, v);
	return 0;
}

static const struct kernel_param_ops gd_param_bytes_ops = {
	.set = gd_param_set_bytes,
	.get = param_get_ullong,
};

module_param_cb(max_pinned_bytes_per_user, &gd_param_bytes_ops,
		&gd_max_pinned_bytes_per_user, 0644);
MODULE_PARM_DESC(max_pinned_bytes_per_user,
		 "Bytes one user may have pinned over all open files, counted in 64 KiB pages; a pin past it fails with EDQUOT (0: no limit; default: 4 TiB)");

unsigned short gd_dev_mode = 0660;
module_param_named(dev_mode, gd_dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode, "Permissions of /dev/gdirect and /dev/gdrdrv (default: 0660)");

struct gd_stats gd_stats;
/*
 * Every registration, user and kernel, for /proc, by an id given at pin
 * time in increasing order (cyclic past U32_MAX): a reader can resume its
 * walk at an id after dropping the lock (procfs.c).  Its xa_lock is taken
 * before gd_reg.lock.
 */
DEFINE_XARRAY_ALLOC1(gd_regs);
/* Every open context, for /proc. */
DEFINE_MUTEX(gd_ctxs_lock);
LIST_HEAD(gd_ctxs);

/*
 * Live user pins and their bytes per user, for max_pins_per_user and
 * max_pinned_bytes_per_user; under gd_users_lock, a leaf lock.
 */
struct gd_user {
	struct hlist_node node;
	kuid_t uid;
	unsigned int pins;
	u64 bytes;
};

static DEFINE_SPINLOCK(gd_users_lock);
static DEFINE_HASHTABLE(gd_users, 6);

static struct gd_user *gd_user_find(kuid_t uid)
{
	struct gd_user *u;

	lockdep_assert_held(&gd_users_lock);
	hash_for_each_possible(gd_users, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/**
 * gd_reg_charge() - count a new registration against the pin caps
 * @r: a registration not yet pinned, of r->ctx or of a kernel caller,
 *	with r->size set
 *
 * Charges r->ctx, if any (max_pins_per_file), and the calling user
 * (max_pins_per_user, and r->size against max_pinned_bytes_per_user);
 * gd_reg_uncharge(), from the registration's last put, gives all back.
 *
 * Return: 0, -EDQUOT at any cap, or -ENOMEM.
 */
int gd_reg_charge(struct gd_reg *r)
{
	unsigned int file_cap = READ_ONCE(gd_max_pins_per_file);
	unsigned int user_cap = READ_ONCE(gd_max_pins_per_user);
	u64 byte_cap = READ_ONCE(gd_max_pinned_bytes_per_user);
	struct gd_user *u, *fresh = NULL;
	kuid_t uid = current_uid();
	int ret = 0;

	/* Counted before the check, so racing pins cannot all pass it. */
	if (r->ctx && atomic_inc_return(&r->ctx->nr_pins) > file_cap &&
	    file_cap) {
		ret = -EDQUOT;
		goto err_file;
	}
	for (;;) {
		spin_lock(&gd_users_lock);
		u = gd_user_find(uid);
		if (u || fresh)
			break;
		spin_unlock(&gd_users_lock);
		fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
		if (!fresh) {
			ret = -ENOMEM;
			goto err_file;
		}
		fresh->uid = uid;
	}
	if (!u) {
		u = fresh;
		fresh = NULL;
		hash_add(gd_users, &u->node, __kuid_val(uid));
	}
	/* Compared without a sum, which could wrap with the caps off. */
	if ((user_cap && u->pins >= user_cap) ||
	    (byte_cap && (u->bytes >= byte_cap ||
			  r->size > byte_cap - u->bytes))) {
		ret = -EDQUOT;
		if (!u->pins) {
			hash_del(&u->node);
			fresh = u;
		}
	} else {
		u->pins++;
		u->bytes += r->size;
	}
	spin_unlock(&gd_users_lock);
	kfree(fresh);
	if (ret)
		goto err_file;
	r->uid = uid;
	r->charged = true;
	return 0;

err_file:
	if (r->ctx)
		atomic_dec(&r->ctx->nr_pins);
	return ret;
}

/* Give back what gd_reg_charge() took; from the last put of @r. */
void gd_reg_uncharge(struct gd_reg *r)
{
	struct gd_user *u;

	if (!r->charged)
		return;
	r->charged = false;
	if (r->ctx)
		atomic_dec(&r->ctx->nr_pins);
	spin_lock(&gd_users_lock);
	u = gd_user_find(r->uid);
	if (u)
		u->bytes -= r->size;
	if (u && !--u->pins)
		hash_del(&u->node);
	else
		u = NULL;
	spin_unlock(&gd_users_lock);
	kfree(u);
}

/*
 * The status area: pages charged to the opener's memory cgroup, mapped
 * for remap_vmalloc_range() (vmalloc_user() cannot be charged).
 */
static int gd_status_alloc(struct gd_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < GD_STATUS_PAGES; i++) {
		ctx->status_pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!ctx->status_pages[i])
			goto err;
	}
	ctx->status = vmap(ctx->status_pages, GD_STATUS_PAGES,
			   VM_MAP | VM_USERMAP, PAGE_KERNEL);
	if (ctx->status)
		return 0;
err:
	while (i--)
		__free_page(ctx->status_pages[i]);
	return -ENOMEM;
}

static void gd_status_free(struct gd_ctx *ctx)
{
	unsigned int i;

	vunmap(ctx->status);
	for (i = 0; i < GD_STATUS_PAGES; i++)
		__free_page(ctx->status_pages[i]);
}

void gd_ctx_get(struct gd_ctx *ctx)
{
	kref_get(&ctx->ref);
}

static void gd_ctx_free(struct kref *kref)
{
	struct gd_ctx *ctx = container_of(kref, struct gd_ctx, ref);

	xa_destroy(&ctx->regs);
	ida_destroy(&ctx->slots);
	gd_status_free(ctx);
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

	if (!handle || handle > (ctx->gdrdrv ? GD_GDR_MAX_HANDLE : GD_MAX_HANDLE))
		return NULL;
	xa_lock(&ctx->regs);
	r = xa_load(&ctx->regs, handle);
	if (r)
		gd_reg_get(r);
	xa_unlock(&ctx->regs);
	return r;
}

/**
 * gd_ctx_open() - open a pinning context on /dev/gdirect or /dev/gdrdrv
 * @inode: the device node
 * @filp: the new file
 * @gdrdrv: speak gdrcopy's interface (handles spaced by the pin's pages)
 *
 * Return: 0 or -ENOMEM.
 */
int gd_ctx_open(struct inode *inode, struct file *filp, bool gdrdrv)
{
	struct gd_ctx *ctx;

	/* Charged to the opener's memory cgroup, as its pins are. */
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	if (gd_status_alloc(ctx)) {
		kfree(ctx);
		return -ENOMEM;
	}
	atomic_set(&ctx->nr_pins, 0);
	kref_init(&ctx->ref);
	gd_owner_current(&ctx->owner);
	ctx->gdrdrv = gdrdrv;
	ctx->gdr_next = 1;
	/* Decided once: a handle's offset never changes after PIN answered. */
	ctx->mmap_shift = in_compat_syscall() ? GD_MMAP_COMPAT_SHIFT :
						GD_MMAP_REGION_SHIFT;
	/*
	 * /dev/gdrdrv has no read(): its users learn of a revocation through
	 * GET_CB_FLAG.  A queued event would hold the registration, with its
	 * cap charge and status slot, until close.
	 */
	ctx->ev_closed = gdrdrv;
	xa_init_flags(&ctx->regs, XA_FLAGS_ALLOC1);
	ida_init(&ctx->slots);
	spin_lock_init(&ctx->ev_lock);
	INIT_LIST_HEAD(&ctx->events);
	init_waitqueue_head(&ctx->ev_wait);
	atomic64_set(&ctx->callbacks, 0);

	/*
	 * A private address space per open file: unmap_mapping_range() on it
	 * reaches exactly this file's VMAs, which lets a revocation zap them
	 * even after release() (by then there are none).  It never holds
	 * page cache; the empty operations and an initialised invalidate_lock
	 * (which address_space_init_once() leaves alone) keep any generic
	 * page-cache path that reaches it harmless, as for the inode's own
	 * mapping.
	 */
	address_space_init_once(&ctx->mapping);
	gd_mapping_init_invalidate_lock(&ctx->mapping);
	ctx->mapping.a_ops = &empty_aops;
	ctx->mapping.host = inode;
	filp->f_mapping = &ctx->mapping;
	filp->private_data = ctx;

	mutex_lock(&gd_ctxs_lock);
	list_add_tail(&ctx->node, &gd_ctxs);
	mutex_unlock(&gd_ctxs_lock);
	return stream_open(inode, filp);
}

static int gd_open(struct inode *inode, struct file *filp)
{
	return gd_ctx_open(inode, filp, false);
}

/*
 * posix_fadvise() and madvise(MADV_WILLNEED): the file has no page cache,
 * so valid advice is accepted and ignored, as generic_fadvise() does where
 * the backing device has no page cache.  generic_fadvise() itself is not
 * safe here: on a device node made on a disk file system (mknod in a
 * chroot or container image) it reads ahead through the file's mapping.
 */
int gd_fadvise(struct file *filp, loff_t offset, loff_t len, int advice)
{
	if (len < 0)
		return -EINVAL;
	switch (advice) {
	case POSIX_FADV_NORMAL:
	case POSIX_FADV_RANDOM:
	case POSIX_FADV_SEQUENTIAL:
	case POSIX_FADV_WILLNEED:
	case POSIX_FADV_NOREUSE:
	case POSIX_FADV_DONTNEED:
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * The last reference to the file is gone: release every registration.  In
 * the owner's context (close, or process exit in either order against the
 * NVIDIA fd) this puts the pages; elsewhere, see "owner-only put" in
 * docs/driver.md.  The context itself lives on while late callbacks hold
 * references to it.
 */
int gd_ctx_release(struct inode *inode, struct file *filp)
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
	.release	= gd_ctx_release,
	.unlocked_ioctl	= gd_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
#ifdef GD_MMAP_PREPARE
	.mmap_prepare	= gd_mmap_prepare,
#else
	.mmap		= gd_mmap,
#endif
	.read		= gd_read,
	.poll		= gd_poll,
	.fadvise	= gd_fadvise,
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
		pr_info("nv-p2p has no persistent API; use_persistent ignored, pinning with free callbacks\n");
		gd_use_persistent = false;
	}
	gd_misc.mode = gd_dev_mode & 0666;
	ret = misc_register(&gd_misc);
	if (ret)
		return ret;
	ret = gd_gdrdrv_init();
	if (ret) {
		misc_deregister(&gd_misc);
		return ret;
	}
	gd_procfs_init();
	pr_info("ABI %u, %s provider, page table %#x, DMA mapping %#x, persistent API %s%s\n",
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
	 * callback may still come pin it through their nv reference.  The
	 * callback that dropped the last of those may still be returning.
	 */
	gd_procfs_exit();
	gd_gdrdrv_exit();
	misc_deregister(&gd_misc);
	gd_callbacks_quiesce();
	gd_wc_exit();
}

module_init(gd_init);
module_exit(gd_exit);

MODULE_DESCRIPTION("GPUDirect RDMA pinning driver over nv-p2p");
MODULE_LICENSE("GPL");
MODULE_VERSION("0.1");
