// SPDX-License-Identifier: GPL-2.0
/*
 * Soft-RoCE memory regions of GPU memory, for the emulated machine
 *
 * Added to Linux 6.1's rdma_rxe by the project's patch (emu/rxe/README.md).
 * Two ways in, both behind the standard verbs:
 *  - peer memory: ibv_reg_mr() of a CUDA device address pins it through
 *    gdirect's in-kernel API for the PCI function under rxe's netdev (the
 *    design of nvidia-peermem over nv-p2p), and the free callback
 *    invalidates the region;
 *  - dma-buf: ibv_reg_dmabuf_mr() attaches to the exporter's dma-buf for
 *    that PCI function, pins and maps it.
 * Either way the NIC is the CPU: rxe copies through kernel mappings of the
 * pages' bus addresses, which are their physical addresses because the
 * function has no IOMMU (a device behind one is refused).  Every copy of a
 * region, atomics included, runs between rxe_gpu_begin() and
 * rxe_gpu_end(): for peer memory that is gdirect's DMA bracket, for a
 * dma-buf a count that move_notify waits for; so a revocation waits for
 * the copies in flight, and later ones fail.
 */

#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/io.h>
#include <linux/iommu.h>
#include <linux/kobject.h>
#include <linux/pci.h>
#include <linux/sizes.h>
#include <linux/wait_bit.h>

#include "rxe.h"
#include "rxe_loc.h"
#include "gdirect_kapi.h"

/* The patched module, as against the kernel's own: tests read it. */
MODULE_VERSION("6.1-gdirect-gpu");
MODULE_INFO(gdirect_rxe, "peer-memory dma-buf");
MODULE_IMPORT_NS(DMA_BUF);

/* The GPU's page: one DMA address per 64 KiB from gdirect_pin(). */
#define RXE_GPU_PAGE_SHIFT	16

/**
 * struct rxe_gpu_mr - what a memory region of GPU memory holds
 * @mr: the region
 * @region: gdirect's pin (peer memory), or NULL
 * @attach: the dma-buf attachment (dma-buf), or NULL
 * @sgt: the attachment's mapping, or NULL
 * @pinned: dma_buf_pin() succeeded on @attach
 * @active: dma-buf only: copies in flight, which move_notify waits for
 * @revoked: the memory is gone (free callback or move_notify)
 * @maps: kernel mappings of the pages, to memunmap()
 * @nmaps: entries of @maps in use
 * @peer_bytes: peer memory: the bytes pinned, once registered (statistics)
 */
struct rxe_gpu_mr {
	struct rxe_mr *mr;
	struct gdirect_region *region;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	bool pinned;
	atomic_t active;
	bool revoked;
	void **maps;
	unsigned int nmaps;
	u64 peer_bytes;
};

/*
 * The peer-memory client's directory, /sys/kernel/mm/memory_peers/nv_mem/,
 * with the files MLNX_OFED's ib_core publishes for nvidia-peermem there:
 * UCX (1.13 looks for nv_mem/version), NCCL and Open MPI take its presence
 * for "this NIC registers GPU memory".  Here the client is gdirect's
 * kernel API, and the counters count this module's peer-memory regions:
 * regions made and released, their pages (PAGE_SIZE) and bytes, and free
 * callbacks.  The dma-buf path is not counted: it is no peer client's.
 */
static struct {
	atomic64_t alloc_mrs, dealloc_mrs;
	atomic64_t reg_pages, dereg_pages;
	atomic64_t reg_bytes, dereg_bytes;
	atomic64_t free_callbacks;
} rxe_gpu_stats;

static struct kobject *rxe_gpu_peers_kobj;
static struct kobject *rxe_gpu_client_kobj;

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "6.1-gdirect-gpu\n");
}

#define RXE_GPU_STAT(name, field)					\
static ssize_t name##_show(struct kobject *kobj,			\
			   struct kobj_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%lld\n",				\
			  (long long)atomic64_read(&rxe_gpu_stats.field)); \
}									\
static struct kobj_attribute name##_attr = __ATTR_RO(name)

static struct kobj_attribute version_attr = __ATTR_RO(version);
RXE_GPU_STAT(num_alloc_mrs, alloc_mrs);
RXE_GPU_STAT(num_dealloc_mrs, dealloc_mrs);
RXE_GPU_STAT(num_reg_pages, reg_pages);
RXE_GPU_STAT(num_dereg_pages, dereg_pages);
RXE_GPU_STAT(num_reg_bytes, reg_bytes);
RXE_GPU_STAT(num_dereg_bytes, dereg_bytes);
RXE_GPU_STAT(num_free_callbacks, free_callbacks);

static struct attribute *rxe_gpu_peer_attrs[] = {
	&version_attr.attr,
	&num_alloc_mrs_attr.attr,
	&num_dealloc_mrs_attr.attr,
	&num_reg_pages_attr.attr,
	&num_dereg_pages_attr.attr,
	&num_reg_bytes_attr.attr,
	&num_dereg_bytes_attr.attr,
	&num_free_callbacks_attr.attr,
	NULL,
};

static const struct attribute_group rxe_gpu_peer_group = {
	.attrs = rxe_gpu_peer_attrs,
};

/**
 * rxe_gpu_init() - publish the peer-memory client's sysfs directory
 *
 * Process context (module load); sleeps.  Where memory_peers exists
 * already (another module, MLNX_OFED's ib_core, owns it) the module loads
 * without the directory and says so: the GPU regions work either way.
 *
 * Return: 0, or -ENOMEM.
 */
int rxe_gpu_init(void)
{
	int err;

	rxe_gpu_peers_kobj = kobject_create_and_add("memory_peers", mm_kobj);
	if (!rxe_gpu_peers_kobj) {
		pr_warn("rdma_rxe: no /sys/kernel/mm/memory_peers/nv_mem (another module owns memory_peers?)\n");
		return 0;
	}
	rxe_gpu_client_kobj = kobject_create_and_add("nv_mem",
						     rxe_gpu_peers_kobj);
	if (!rxe_gpu_client_kobj) {
		err = -ENOMEM;
		goto err_peers;
	}
	err = sysfs_create_group(rxe_gpu_client_kobj, &rxe_gpu_peer_group);
	if (err)
		goto err_client;
	return 0;

err_client:
	kobject_put(rxe_gpu_client_kobj);
err_peers:
	kobject_put(rxe_gpu_peers_kobj);
	rxe_gpu_peers_kobj = NULL;
	return err;
}

/**
 * rxe_gpu_exit() - remove the peer-memory client's sysfs directory
 *
 * Process context (module unload); sleeps.
 */
void rxe_gpu_exit(void)
{
	if (!rxe_gpu_peers_kobj)
		return;
	sysfs_remove_group(rxe_gpu_client_kobj, &rxe_gpu_peer_group);
	kobject_put(rxe_gpu_client_kobj);
	kobject_put(rxe_gpu_peers_kobj);
}

/*
 * The device that DMAs for rxe0: the PCI function under its netdev.  Its
 * bus addresses are used as physical addresses, which holds only without
 * an IOMMU translating for it.
 */
static struct device *rxe_gpu_dma_dev(struct rxe_dev *rxe)
{
	struct device *dev = rxe->ndev->dev.parent;

	if (!dev || !dev_is_pci(dev))
		return NULL;
	if (device_iommu_mapped(dev)) {
		dev_warn_once(dev, "rxe: GPU memory regions need a device without an IOMMU\n");
		return NULL;
	}
	return dev;
}

/*
 * Marks the region stale; copies that begin afterwards fail.  The state
 * store comes after the flag, so that a registration finishing at the same
 * time (rxe_gpu_mr_valid()) cannot leave the region valid.
 */
static void rxe_gpu_revoke(struct rxe_gpu_mr *gpu)
{
	WRITE_ONCE(gpu->revoked, true);
	/* the flag before the state; pairs with rxe_gpu_mr_valid() */
	smp_mb();
	WRITE_ONCE(gpu->mr->state, RXE_MR_STATE_INVALID);
}

static void rxe_gpu_mr_valid(struct rxe_gpu_mr *gpu)
{
	WRITE_ONCE(gpu->mr->state, RXE_MR_STATE_VALID);
	/* the state before the flag; pairs with rxe_gpu_revoke() */
	smp_mb();
	if (READ_ONCE(gpu->revoked))
		WRITE_ONCE(gpu->mr->state, RXE_MR_STATE_INVALID);
}

/* gdirect's free callback: after in-flight copies ended; must not sleep. */
static void rxe_gpu_invalidate(struct gdirect_region *region, void *data)
{
	atomic64_inc(&rxe_gpu_stats.free_callbacks);
	rxe_gpu_revoke(data);
}

/*
 * The exporter moves or revokes the memory (with the reservation lock
 * held, so it may sleep): no copy may use the old pages once it returns.
 */
static void rxe_gpu_move_notify(struct dma_buf_attachment *attach)
{
	struct rxe_gpu_mr *gpu = attach->importer_priv;

	rxe_gpu_revoke(gpu);
	wait_var_event(&gpu->active, !atomic_read(&gpu->active));
}

static const struct dma_buf_attach_ops rxe_gpu_attach_ops = {
	.allow_peer2peer = true,
	.move_notify = rxe_gpu_move_notify,
};

static void rxe_gpu_free(struct rxe_gpu_mr *gpu)
{
	struct dma_buf *dmabuf;
	unsigned int i;

	for (i = 0; i < gpu->nmaps; i++)
		memunmap(gpu->maps[i]);
	if (gpu->peer_bytes) {
		atomic64_inc(&rxe_gpu_stats.dealloc_mrs);
		atomic64_add(gpu->peer_bytes >> PAGE_SHIFT,
			     &rxe_gpu_stats.dereg_pages);
		atomic64_add(gpu->peer_bytes, &rxe_gpu_stats.dereg_bytes);
	}
	/* Waits for a running free callback, which uses gpu. */
	if (gpu->region)
		gdirect_unpin(gpu->region);
	if (gpu->attach) {
		dmabuf = gpu->attach->dmabuf;
		if (gpu->sgt || gpu->pinned) {
			dma_resv_lock(dmabuf->resv, NULL);
			if (gpu->sgt)
				dma_buf_unmap_attachment(gpu->attach, gpu->sgt,
							 DMA_BIDIRECTIONAL);
			if (gpu->pinned)
				dma_buf_unpin(gpu->attach);
			dma_resv_unlock(dmabuf->resv);
		}
		dma_buf_detach(dmabuf, gpu->attach);
		dma_buf_put(dmabuf);
	}
	kfree(gpu->maps);
	kfree(gpu);
}

static struct rxe_phys_buf *rxe_gpu_buf(struct rxe_mr *mr, unsigned int n)
{
	return &mr->map[n / RXE_BUF_PER_MAP]->buf[n % RXE_BUF_PER_MAP];
}

/**
 * rxe_gpu_mr_init_peer() - a user memory region of GPU memory, pinned
 * @rxe: the device
 * @start: the CUDA device address
 * @length: bytes
 * @access: IB access flags
 * @mr: the region, allocated
 *
 * Called in the registering process after ib_umem_get() refused the
 * range.  Pins it through gdirect for rxe's PCI function and maps the 64 KiB
 * pages' bus addresses into the kernel for rxe's copies.
 *
 * Return: 0; -ENOENT when the range is not GPU memory that gdirect knows
 * (the caller then reports its own error); else gdirect's or a mapping's
 * error.
 */
int rxe_gpu_mr_init_peer(struct rxe_dev *rxe, u64 start, u64 length,
			 int access, struct rxe_mr *mr)
{
	struct gdirect_pin_params params = { };
	struct rxe_gpu_mr *gpu;
	struct device *dev;
	const u64 *dma;
	u64 base, size;
	u32 n, i;
	void *va;
	int err;

	dev = rxe_gpu_dma_dev(rxe);
	if (!dev || !length)
		return -ENOENT;
	gpu = kzalloc(sizeof(*gpu), GFP_KERNEL);
	if (!gpu)
		return -ENOMEM;
	gpu->mr = mr;

	params.peer = to_pci_dev(dev);
	params.addr = start;
	params.size = length;
	params.flags = GDIRECT_KPIN_ACCOUNT;
	params.invalidate = rxe_gpu_invalidate;
	params.data = gpu;
	err = gdirect_pin(&params, &gpu->region);
	if (err) {
		/* -EINVAL: not GPU memory (or no range gdirect accepts) */
		if (err == -EINVAL)
			err = -ENOENT;
		goto err_free;
	}
	err = gdirect_region_range(gpu->region, &base, &size);
	if (!err)
		err = gdirect_region_dma_addrs(gpu->region, &dma, &n);
	if (err)
		goto err_free;

	rxe_mr_init(access, mr);
	err = rxe_mr_alloc(mr, n);
	if (err)
		goto err_free;
	gpu->maps = kcalloc(n, sizeof(*gpu->maps), GFP_KERNEL);
	if (!gpu->maps) {
		err = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < n; i++) {
		va = memremap(dma[i], BIT(RXE_GPU_PAGE_SHIFT), MEMREMAP_WC);
		if (!va) {
			err = -ENOMEM;
			goto err_free;
		}
		gpu->maps[gpu->nmaps++] = va;
		rxe_gpu_buf(mr, i)->addr = (uintptr_t)va;
		rxe_gpu_buf(mr, i)->size = BIT(RXE_GPU_PAGE_SHIFT);
	}

	mr->page_shift = RXE_GPU_PAGE_SHIFT;
	mr->page_mask = BIT(RXE_GPU_PAGE_SHIFT) - 1;
	mr->offset = start - base;
	mr->access = access;
	mr->type = IB_MR_TYPE_USER;
	mr->gpu = gpu;
	gpu->peer_bytes = size;
	atomic64_inc(&rxe_gpu_stats.alloc_mrs);
	atomic64_add(size >> PAGE_SHIFT, &rxe_gpu_stats.reg_pages);
	atomic64_add(size, &rxe_gpu_stats.reg_bytes);
	rxe_gpu_mr_valid(gpu);
	return 0;

err_free:
	rxe_gpu_free(gpu);
	return err;
}

/* Maps the dma-buf's pages of [offset, offset + length) into the region. */
static int rxe_gpu_map_dmabuf(struct rxe_gpu_mr *gpu, u64 offset, u64 length)
{
	struct rxe_mr *mr = gpu->mr;
	u64 first = offset >> PAGE_SHIFT;
	u64 last = (offset + length - 1) >> PAGE_SHIFT;
	struct scatterlist *sg;
	u64 pos = 0, p, filled = 0;
	unsigned int i;
	void *va;

	gpu->maps = kcalloc(gpu->sgt->nents, sizeof(*gpu->maps), GFP_KERNEL);
	if (!gpu->maps)
		return -ENOMEM;
	for_each_sgtable_dma_sg(gpu->sgt, sg, i) {
		dma_addr_t dma = sg_dma_address(sg);
		unsigned int len = sg_dma_len(sg);
		u64 s = pos;

		pos += len;
		if (pos <= first << PAGE_SHIFT || s > last << PAGE_SHIFT)
			continue;
		if (!PAGE_ALIGNED(dma) || !PAGE_ALIGNED(len))
			return -EINVAL;
		va = memremap(dma, len, MEMREMAP_WC);
		if (!va)
			return -ENOMEM;
		gpu->maps[gpu->nmaps++] = va;
		for (p = s; p < pos; p += PAGE_SIZE) {
			u64 pg = p >> PAGE_SHIFT;

			if (pg < first || pg > last)
				continue;
			rxe_gpu_buf(mr, pg - first)->addr = (uintptr_t)va + (p - s);
			rxe_gpu_buf(mr, pg - first)->size = PAGE_SIZE;
			filled++;
		}
	}
	return filled == last - first + 1 ? 0 : -EINVAL;
}

static int rxe_gpu_mr_init_dmabuf(struct rxe_dev *rxe, u64 offset,
				  u64 length, u64 iova, int fd, int access,
				  struct rxe_mr *mr)
{
	struct dma_buf_attachment *attach;
	struct rxe_gpu_mr *gpu;
	struct dma_buf *dmabuf;
	struct sg_table *sgt;
	struct device *dev;
	int err;

	dev = rxe_gpu_dma_dev(rxe);
	if (!dev)
		return -EOPNOTSUPP;
	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	if (!length || offset + length < offset ||
	    offset + length > dmabuf->size) {
		dma_buf_put(dmabuf);
		return -EINVAL;
	}
	gpu = kzalloc(sizeof(*gpu), GFP_KERNEL);
	if (!gpu) {
		dma_buf_put(dmabuf);
		return -ENOMEM;
	}
	gpu->mr = mr;

	attach = dma_buf_dynamic_attach(dmabuf, dev, &rxe_gpu_attach_ops, gpu);
	if (IS_ERR(attach)) {
		kfree(gpu);
		dma_buf_put(dmabuf);
		return PTR_ERR(attach);
	}
	gpu->attach = attach;

	/*
	 * Pinned, as ib_umem_dmabuf_get_pinned() does: rxe keeps kernel
	 * mappings of the pages, which a moving exporter would invalidate
	 * under a copy.  move_notify still revokes the region for an
	 * exporter that moves or revokes pinned memory.
	 */
	dma_resv_lock(dmabuf->resv, NULL);
	err = dma_buf_pin(attach);
	if (!err) {
		gpu->pinned = true;
		sgt = dma_buf_map_attachment(attach, DMA_BIDIRECTIONAL);
		if (IS_ERR(sgt))
			err = PTR_ERR(sgt);
		else
			gpu->sgt = sgt;
	}
	dma_resv_unlock(dmabuf->resv);
	if (err)
		goto err_free;

	rxe_mr_init(access, mr);
	err = rxe_mr_alloc(mr, ((offset + length - 1) >> PAGE_SHIFT) -
			   (offset >> PAGE_SHIFT) + 1);
	if (err)
		goto err_free;
	err = rxe_gpu_map_dmabuf(gpu, offset, length);
	if (err)
		goto err_free;

	mr->page_shift = PAGE_SHIFT;
	mr->page_mask = PAGE_SIZE - 1;
	mr->offset = offset_in_page(offset);
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->access = access;
	mr->type = IB_MR_TYPE_USER;
	mr->gpu = gpu;
	rxe_gpu_mr_valid(gpu);
	return 0;

err_free:
	rxe_gpu_free(gpu);
	return err;
}

/**
 * rxe_reg_user_mr_dmabuf() - ib_device_ops.reg_user_mr_dmabuf of rxe
 * @ibpd: protection domain
 * @offset: where in the dma-buf the region starts
 * @length: bytes
 * @iova: the region's address in work requests
 * @fd: the dma-buf's file descriptor
 * @access: IB access flags
 * @udata: user data (unused)
 *
 * Return: the region, or ERR_PTR(): -EBADF for an fd that is not a dma-buf
 * (fd -1 is the capability probe of NCCL, UCX and libfabric), -EINVAL for
 * a range outside it, -EOPNOTSUPP without a PCI function free of an IOMMU
 * under rxe's netdev, or the exporter's error.
 */
struct ib_mr *rxe_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				     u64 length, u64 iova, int fd, int access,
				     struct ib_udata *udata)
{
	struct rxe_dev *rxe = to_rdev(ibpd->device);
	struct rxe_pd *pd = to_rpd(ibpd);
	struct rxe_mr *mr;
	int err;

	mr = rxe_alloc(&rxe->mr_pool);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	rxe_get(pd);
	mr->ibmr.pd = ibpd;

	err = rxe_gpu_mr_init_dmabuf(rxe, offset, length, iova, fd, access,
				     mr);
	if (err) {
		rxe_cleanup(mr);
		return ERR_PTR(err);
	}
	rxe_finalize(mr);
	return &mr->ibmr;
}

/**
 * rxe_gpu_begin() - open a copy of a GPU memory region
 * @mr: the region (mr->gpu set)
 *
 * Any context, softirq included; does not sleep.  Pair with rxe_gpu_end().
 *
 * Return: 0, or -ESTALE (or gdirect's error) when the memory is revoked.
 */
int rxe_gpu_begin(struct rxe_mr *mr)
{
	struct rxe_gpu_mr *gpu = mr->gpu;

	if (gpu->region)
		return gdirect_dma_begin(gpu->region);
	atomic_inc(&gpu->active);
	/* counted before the flag is read; pairs with rxe_gpu_revoke() */
	smp_mb__after_atomic();
	if (READ_ONCE(gpu->revoked)) {
		rxe_gpu_end(mr);
		return -ESTALE;
	}
	return 0;
}

/**
 * rxe_gpu_end() - close a copy opened by rxe_gpu_begin()
 * @mr: the region
 */
void rxe_gpu_end(struct rxe_mr *mr)
{
	struct rxe_gpu_mr *gpu = mr->gpu;

	if (gpu->region)
		gdirect_dma_end(gpu->region);
	else if (atomic_dec_and_test(&gpu->active))
		wake_up_var(&gpu->active);
}

/**
 * rxe_gpu_mr_cleanup() - release the GPU memory of a region, if any
 * @mr: the region, no longer used by any work request
 *
 * Process context (deregistration, or the cleanup of a failed
 * registration): unmaps, unpins or detaches.
 */
void rxe_gpu_mr_cleanup(struct rxe_mr *mr)
{
	if (!mr->gpu)
		return;
	rxe_gpu_free(mr->gpu);
	mr->gpu = NULL;
}
