// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dmabuf.c - dma-buf export of GPU memory (cuMemGetHandleForAddressRange)
 *
 * Built in the open licence flavours only: dma_buf_export() is GPL-only,
 * so NVIDIA's proprietary driver cannot export dma-bufs either, and the
 * emulator's proprietary flavour answers the ioctl with -EOPNOTSUPP.
 *
 * A static exporter with the semantics of NVIDIA's (kernel-open/nvidia/
 * nv-dmabuf.c): attach, map, unmap, release and mmap, no pin or unpin and
 * no move_notify.  The memory never moves, so the dma-buf core treats
 * every importer's mapping as fixed: it maps once, bidirectionally, when a
 * dynamic importer attaches and keeps that table until it detaches, and
 * maps a static importer's when it asks.
 *
 * A dma-buf covers a range of one allocation, 4 KiB-aligned.  It holds a
 * reference of the allocation: cuMemFree of exported memory succeeds, and
 * the memory stays until the dma-buf goes (its fds closed, every CPU
 * mapping unmapped and every importer detached), as with a persistent pin.
 *
 * Who may attach, as NVIDIA's attach decides on a GPU that is not
 * coherent (ours): an export of the default mapping type takes static
 * importers and the dynamic ones that do peer to peer (BAR2 has no struct
 * pages); an export of the PCIe mapping type takes none, since NVIDIA
 * allows that type to be attached only on a coherent GPU.  Each mapping is
 * an sg table of DMA addresses alone (dma_map_resource() for the
 * importer's device, bidirectional whatever the importer asked), the range
 * cut into the importer's largest DMA segments.
 *
 * mmap is allowed for an export whose caller asked for it
 * (NVP2P_EMU_DMABUF_ALLOW_MMAP, NVIDIA's bAllowMmap, which sets its
 * can_mmap), whatever the mapping type: a write-combined mapping of the
 * range's BAR2 pages.  NVIDIA's export fails where mmap is asked for and
 * the memory cannot be mapped; BAR2 memory always can.  An export made
 * without the request is refused with -ENOTSUPP, logged at info level as
 * NVIDIA logs it.
 *
 * Each dma-buf holds the device, as NVIDIA's exporter holds the GPU (a
 * usage count its remove waits on): an importer may hold DMA addresses of
 * BAR2 for as long as its attachment lives, and a process its CPU mapping,
 * so an unbind waits in emu_remove() until the last dma-buf is released.
 *
 * A pending clear (the dmabuf_fence_ms knob, debug only): a dma-buf
 * exported while the knob is N > 0 gets a DMA_RESV_USAGE_KERNEL fence on
 * its reservation object, and its range is zeroed N ms later by a delayed
 * work, which then signals the fence.  It stands for what a real
 * exporter's pending migration or clear is (amdgpu clears VRAM under a
 * kernel fence): the range's bytes are final only once the fence has
 * signalled, so an importer that reads before waiting for kernel fences
 * sees the old bytes, and one that writes sees its data undone.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "emu.h"
#include "nvp2p_emu.h"

/* 6.13 took the namespace as a string; probed. */
#if defined(KC_CONFTEST) && !defined(KC_HAVE_MODULE_IMPORT_NS_STRING)
MODULE_IMPORT_NS(DMA_BUF);
#else
MODULE_IMPORT_NS("DMA_BUF");
#endif

#ifdef EMU_HAVE_VM_FLAGS_SET
#define emu_vm_flags_set(vma, f)	vm_flags_set(vma, f)
#else
#define emu_vm_flags_set(vma, f)	((vma)->vm_flags |= (f))
#endif

unsigned int emu_dmabuf_fence_ms;
module_param_named(dmabuf_fence_ms, emu_dmabuf_fence_ms, uint, 0644);
MODULE_PARM_DESC(dmabuf_fence_ms, "debug: a dma-buf exported while this is N > 0 gets a pending clear, its range zeroed N ms later under a kernel fence of its reservation object");

/*
 * The fence of a pending clear.  The lock lives in the fence's own
 * allocation, not in struct emu_dmabuf: the reservation object and its
 * waiters may hold the fence after the dma-buf's release has freed that.
 * base comes first: dma_fence_free() frees the struct through it.
 */
struct emu_dmabuf_fence {
	struct dma_fence base;
	spinlock_t lock;
};

/* Fixed at export: the callbacks read it without a lock. */
struct emu_dmabuf {
	struct emu_dev *e;		/* its device, held until release */
	struct emu_alloc *alloc;	/* a reference */
	u64 offset;			/* of the range in the allocation */
	u64 size;
	bool pcie;			/* the PCIe mapping type: no importer */
	bool can_mmap;			/* asked for at export */
	/* A pending clear (dmabuf_fence_ms): our reference, or NULL. */
	struct emu_dmabuf_fence *fence;
	struct delayed_work clear;	/* zeroes the range, then signals */
};

static phys_addr_t emu_dmabuf_phys(const struct emu_dmabuf *b)
{
	return b->e->mem_phys + b->alloc->mem_offset + b->offset;
}

static const char *emu_dmabuf_fence_driver(struct dma_fence *fence)
{
	return KBUILD_MODNAME;
}

static const char *emu_dmabuf_fence_timeline(struct dma_fence *fence)
{
	return "dmabuf-clear";
}

static const struct dma_fence_ops emu_dmabuf_fence_ops = {
	.get_driver_name = emu_dmabuf_fence_driver,
	.get_timeline_name = emu_dmabuf_fence_timeline,
};

/*
 * The pending clear's work: zeroes the range, then signals its fence.  The
 * BAR mapping and the allocation stay while the dma-buf lives, and its
 * release cancels this work before it lets them go.
 */
static void emu_dmabuf_clear(struct work_struct *work)
{
	struct emu_dmabuf *b = container_of(to_delayed_work(work),
					    struct emu_dmabuf, clear);

	memset_io(b->e->mem + (emu_dmabuf_phys(b) - b->e->mem_phys), 0,
		  b->size);
	/* The zeroes reach the BAR before a waiter is told they are there. */
	wmb();
	dma_fence_signal(&b->fence->base);
}

/*
 * Adds a pending clear to dma-buf @buf of @b: a kernel fence on its
 * reservation object, signalled by the clear @ms ms from now.  Sleeps.
 * Return: 0, -ENOMEM, or the error of reserving a fence slot.
 */
#ifdef EMU_HAVE_DMA_RESV_USAGE
static int emu_dmabuf_fence_arm(struct dma_buf *buf, struct emu_dmabuf *b,
				unsigned int ms)
{
	struct emu_dmabuf_fence *f;
	int ret;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	spin_lock_init(&f->lock);
	dma_fence_init(&f->base, &emu_dmabuf_fence_ops, &f->lock,
		       dma_fence_context_alloc(1), 1);
	dma_resv_lock(buf->resv, NULL);
	ret = dma_resv_reserve_fences(buf->resv, 1);
	if (ret)
		goto err_unlock;
	/* The reservation object takes a reference of its own. */
	dma_resv_add_fence(buf->resv, &f->base, DMA_RESV_USAGE_KERNEL);
	dma_resv_unlock(buf->resv);
	b->fence = f;
	schedule_delayed_work(&b->clear, msecs_to_jiffies(ms));
	return 0;

err_unlock:
	dma_resv_unlock(buf->resv);
	/* Never published; signalled all the same, as every fence we make. */
	dma_fence_signal(&f->base);
	dma_fence_put(&f->base);
	return ret;
}
#else
/* Before 5.19 a reservation object's fences have no usage: no clear. */
static int emu_dmabuf_fence_arm(struct dma_buf *buf, struct emu_dmabuf *b,
				unsigned int ms)
{
	pr_info_ratelimited("dmabuf_fence_ms: this kernel has no DMA_RESV_USAGE_KERNEL\n");
	return -EOPNOTSUPP;
}
#endif

static int emu_dmabuf_attach(struct dma_buf *buf,
			     struct dma_buf_attachment *attach)
{
	struct emu_dmabuf *b = buf->priv;

	/*
	 * NVIDIA attaches the PCIe mapping type only on a coherent GPU, with
	 * the importer in the GPU's IOMMU group; ours is not coherent.
	 */
	if (b->pcie) {
		dev_dbg(attach->dev, "dma-buf attach failed: topology not supported for mapping type FORCE_PCIE\n");
		return -ENOTSUPP;
	}
	/* BAR memory: a dynamic importer must take addresses without pages. */
	if (attach->importer_ops && !attach->peer2peer) {
		dev_dbg(attach->dev, "dma-buf attach failed: importer unable to handle MMIO without struct page\n");
		return -ENOTSUPP;
	}
	return 0;
}

static void emu_dmabuf_unmap_sgt(struct dma_buf_attachment *attach,
				 struct sg_table *sgt, unsigned int mapped)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (i == mapped)
			break;
		dma_unmap_resource(attach->dev, sg_dma_address(sg),
				   sg_dma_len(sg), DMA_BIDIRECTIONAL,
				   EMU_DMA_RESOURCE_ATTRS);
	}
	sg_free_table(sgt);
	kfree(sgt);
}

/*
 * Called by the dma-buf core with the reservation lock held for a dynamic
 * importer (at its attach) and, on kernels before 6.2, without it for a
 * static one: nothing here needs it, the dma-buf being fixed at export.
 */
static struct sg_table *emu_dmabuf_map(struct dma_buf_attachment *attach,
				       enum dma_data_direction dir)
{
	struct emu_dmabuf *b = attach->dmabuf->priv;
	unsigned int seg, n, i = 0;
	u64 phys, end, at, len;
	struct scatterlist *sg;
	struct sg_table *sgt;
	dma_addr_t dma;
	int ret;

	/* Being unbound: no new mappings, while the old ones drain. */
	if (READ_ONCE(b->e->gone))
		return ERR_PTR(-ENODEV);
	seg = ALIGN_DOWN(dma_get_max_seg_size(attach->dev), PAGE_SIZE);
	if (!seg)
		return ERR_PTR(-EINVAL);
	phys = emu_dmabuf_phys(b);
	end = phys + b->size;
	n = DIV_ROUND_UP_ULL(b->size, seg);
	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	ret = sg_alloc_table(sgt, n, GFP_KERNEL);
	if (ret)
		goto err_free;
	/* DMA addresses only: there are no struct pages behind BAR2 */
	for (sg = sgt->sgl, at = phys; at < end; at += len, sg = sg_next(sg)) {
		len = min_t(u64, end - at, seg);
		dma = dma_map_resource(attach->dev, at, len, DMA_BIDIRECTIONAL,
				       EMU_DMA_RESOURCE_ATTRS);
		if (dma_mapping_error(attach->dev, dma)) {
			emu_dmabuf_unmap_sgt(attach, sgt, i);
			return ERR_PTR(-EIO);
		}
		sg_dma_address(sg) = dma;
		sg_dma_len(sg) = len;
		i++;
	}
	atomic_inc(&b->e->nr_dmabuf_maps);
	return sgt;

err_free:
	kfree(sgt);
	return ERR_PTR(ret);
}

static void emu_dmabuf_unmap(struct dma_buf_attachment *attach,
			     struct sg_table *sgt, enum dma_data_direction dir)
{
	struct emu_dmabuf *b = attach->dmabuf->priv;

	emu_dmabuf_unmap_sgt(attach, sgt, sgt->orig_nents);
	atomic_dec(&b->e->nr_dmabuf_maps);
}

/*
 * A CPU mapping of the range, for an export that asked for mmap.  The
 * dma-buf core has checked that the mapping lies inside the dma-buf; the
 * vma holds the dma-buf's file, so the memory stays until it is unmapped.
 */
static int emu_dmabuf_mmap(struct dma_buf *buf, struct vm_area_struct *vma)
{
	struct emu_dmabuf *b = buf->priv;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 len = vma->vm_end - vma->vm_start;

	if (!b->can_mmap) {
		pr_info_ratelimited("nv_dma_buf_mmap: mmap is not allowed can_mmap[0]\n");
		return -ENOTSUPP;
	}
	if (off + len < off)
		return -EOVERFLOW;
	if (off + len > b->size)
		return -EINVAL;
	if (READ_ONCE(b->e->gone))
		return -ENODEV;
	vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
	emu_vm_flags_set(vma, VM_SHARED | VM_DONTEXPAND | VM_DONTDUMP);
	return io_remap_pfn_range(vma, vma->vm_start,
				  (emu_dmabuf_phys(b) + off) >> PAGE_SHIFT, len,
				  vma->vm_page_prot);
}

/*
 * The last reference went: the fds are closed, no CPU mapping and no
 * importer is left.  The device lets an unbind waiting for it go on; its
 * struct stays until module unload, which this dma-buf's module reference
 * holds off.
 */
static void emu_dmabuf_release(struct dma_buf *buf)
{
	struct emu_dmabuf *b = buf->priv;
	struct emu_dev *e = b->e;
	bool last;

	/*
	 * A clear not yet done is dropped, its fence signalled: no importer
	 * is left to read the range through this dma-buf, and a fence must
	 * not be freed unsignalled (its waiters would wait forever).
	 */
	if (b->fence) {
		cancel_delayed_work_sync(&b->clear);
		dma_fence_signal(&b->fence->base);
		dma_fence_put(&b->fence->base);
	}
	mutex_lock(&e->lock);
	emu_alloc_put(b->alloc);
	last = !--e->nr_dmabufs;
	mutex_unlock(&e->lock);
	kfree(b);
	if (last)
		wake_up_all(&e->dmabufs_gone);
}

static const struct dma_buf_ops emu_dmabuf_ops = {
	.attach = emu_dmabuf_attach,
	.map_dma_buf = emu_dmabuf_map,
	.unmap_dma_buf = emu_dmabuf_unmap,
	.release = emu_dmabuf_release,
	.mmap = emu_dmabuf_mmap,
};

/**
 * emu_dmabuf_export() - a dma-buf for a range of the caller's memory
 * @f: the caller's open file
 * @va: start of the range, 4 KiB-aligned
 * @size: bytes, 4 KiB-aligned, > 0, inside the allocation holding @va
 * @flags: NVP2P_EMU_DMABUF_PCIE, NVP2P_EMU_DMABUF_ALLOW_MMAP, both or 0
 * @buf: out: the dma-buf
 * @fd: out: a file descriptor reserved for it, not yet installed
 *
 * The caller tells user space the fd, then installs it with
 * emu_dmabuf_install(), or gives both back with emu_dmabuf_abort(): an fd
 * installed before user space could learn its number would leak.  With
 * the dmabuf_fence_ms knob set, the dma-buf has a pending clear (above).
 * Sleeps.
 *
 * Return: 0; -EINVAL for a range outside the caller's allocations or not
 * aligned; -ENOMEM; the error of dma_buf_export(), of reserving a fence
 * slot or of getting an fd.
 */
int emu_dmabuf_export(struct emu_file *f, u64 va, u64 size, u32 flags,
		      struct dma_buf **buf, int *fd)
{
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct emu_alloc *a, *found = NULL;
	unsigned int fence_ms = READ_ONCE(emu_dmabuf_fence_ms);
	struct emu_dmabuf *b;
	int ret;

	if (!size || !IS_ALIGNED(va | size, SZ_4K) || va + size < va)
		return -EINVAL;
	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return -ENOMEM;
	mutex_lock(&emu->lock);
	list_for_each_entry(a, &f->allocs, node) {
		if (va >= a->va && size <= a->size && va - a->va <= a->size - size) {
			kref_get(&a->ref);
			emu->nr_dmabufs++;
			found = a;
			break;
		}
	}
	mutex_unlock(&emu->lock);
	if (!found) {
		kfree(b);
		return -EINVAL;
	}
	b->e = emu;
	b->alloc = found;
	b->offset = va - found->va;
	b->size = size;
	b->pcie = flags & NVP2P_EMU_DMABUF_PCIE;
	b->can_mmap = flags & NVP2P_EMU_DMABUF_ALLOW_MMAP;
	INIT_DELAYED_WORK(&b->clear, emu_dmabuf_clear);

	info.ops = &emu_dmabuf_ops;
	info.size = size;
	info.flags = O_RDWR | O_CLOEXEC;
	info.priv = b;
	info.exp_name = "nv_dmabuf";	/* the name NVIDIA's exporter gives */
	*buf = dma_buf_export(&info);
	if (IS_ERR(*buf)) {
		ret = PTR_ERR(*buf);
		goto err_put;
	}
	/* From here on, dma_buf_put() releases b and its reference. */
	if (fence_ms) {
		ret = emu_dmabuf_fence_arm(*buf, b, fence_ms);
		if (ret)
			goto err_buf;
	}
	ret = get_unused_fd_flags(O_CLOEXEC);
	if (ret < 0)
		goto err_buf;
	*fd = ret;
	return 0;

err_buf:
	dma_buf_put(*buf);
	return ret;

err_put:
	mutex_lock(&emu->lock);
	emu_alloc_put(found);
	emu->nr_dmabufs--;
	mutex_unlock(&emu->lock);
	kfree(b);
	return ret;
}

/* Publish the fd emu_dmabuf_export() reserved: it owns the dma-buf now. */
void emu_dmabuf_install(struct dma_buf *buf, int fd)
{
	fd_install(fd, buf->file);
}

/* Give back what emu_dmabuf_export() returned, when user space was not told. */
void emu_dmabuf_abort(struct dma_buf *buf, int fd)
{
	put_unused_fd(fd);
	dma_buf_put(buf);
}
