// SPDX-License-Identifier: GPL-2.0
/*
 * Soft-RoCE memory regions of GPU memory, for the emulated machine
 *
 * Added to the rdma_rxe of Linux 6.1 or 6.12 by the project's patch for
 * that series (emu/rxe/README.md).
 * Two ways in, both behind the standard verbs:
 *  - peer memory: ibv_reg_mr() of a CUDA device address pins it twice
 *    through gdirect's in-kernel API: once with the persistent API and
 *    DMA-mapped for the PCI function under rxe's netdev (the design of
 *    nvidia-peermem's default persistent client over nv-p2p), and once
 *    without a peer and with a free callback, which only marks the region
 *    stale when the owner frees the memory;
 *  - dma-buf: ibv_reg_dmabuf_mr() attaches to the exporter's dma-buf for
 *    that PCI function, pins and maps it.
 * Either way the NIC is the CPU: rxe copies through kernel mappings of the
 * pages' bus addresses, which are their physical addresses because the
 * function has no IOMMU (a device behind one is refused).  Each run of
 * contiguous addresses is mapped once: RAM through its struct pages
 * (vmap), device memory (a BAR) write-combining (memremap).  On 6.1 the
 * region's buffers (mr->map) point into the mappings and rxe copies
 * through them; 6.12 keeps a region's pages as an xarray of struct pages,
 * which device memory has none of, so there the region keeps its kernel
 * addresses here and its copies and atomics run here.  Every copy of
 * a region, atomics included, runs between rxe_gpu_begin() and
 * rxe_gpu_end(): for peer memory that is gdirect's DMA bracket on the
 * callback pin, for a dma-buf a count that move_notify waits for; so a
 * revocation waits for the copies in flight, and later ones fail.
 */

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/io.h>
#include <linux/iommu.h>
#include <linux/kernfs.h>
#include <linux/ioport.h>
#include <linux/kobject.h>
#include <linux/mm.h>
#include <linux/pci.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/swiotlb.h>
#include <linux/vmalloc.h>
#include <linux/wait_bit.h>

#include "rxe.h"
#include "rxe_loc.h"
#include "gdirect_kapi.h"

/*
 * What this file reaches differs by series (build.sh builds only 6.1 and
 * 6.12).  On 6.12 (RXE_GPU_612, which rxe-gpu-6.12.patch's Makefile
 * sets): the region keeps its kernel addresses and copies itself, where
 * 6.1's rxe copies through mr->map; the netdev is the ib core's (with a
 * reference), not rxe->ndev; the MR is allocated by the driver and added
 * to the pool; the core passes a uverbs_attr_bundle; mm_kobj is not
 * exported.
 */
#ifndef RXE_GPU_612
#define RXE_GPU_612		0
#endif
#if RXE_GPU_612
#define RXE_GPU_VERSION		"6.12-gdirect-gpu"
#else
#define RXE_GPU_VERSION		"6.1-gdirect-gpu"
#endif

/* The patched module, as against the kernel's own: tests read it. */
MODULE_VERSION(RXE_GPU_VERSION);
MODULE_INFO(gdirect_rxe, "peer-memory dma-buf");
MODULE_IMPORT_NS(DMA_BUF);

/* The GPU's page: one DMA address per 64 KiB from gdirect_pin(). */
#define RXE_GPU_PAGE_SHIFT	16

/**
 * struct rxe_gpu_map - one kernel mapping of a run of contiguous pages
 * @node: in rxe_gpu_mr.maps
 * @va: the mapping
 * @ram: @va is a vmap() of RAM pages, else a memremap() of device memory
 */
struct rxe_gpu_map {
	struct list_head node;
	void *va;
	bool ram;
};

/**
 * struct rxe_gpu_mr - what a memory region of GPU memory holds
 * @mr: the region
 * @region: peer memory: gdirect's persistent pin, DMA-mapped for rxe's
 *	PCI function, which keeps the memory until it is unpinned; or NULL
 * @watch: peer memory: gdirect's pin of the same range without a peer,
 *	whose free callback marks the region stale; or NULL
 * @attach: the dma-buf attachment (dma-buf), or NULL
 * @sgt: the attachment's mapping, or NULL
 * @pinned: dma_buf_pin() succeeded on @attach
 * @active: dma-buf only: copies in flight, which move_notify waits for
 * @revoked: the memory is gone (free callback or move_notify)
 * @maps: kernel mappings of the pages (struct rxe_gpu_map), to undo
 * @peer_bytes: peer memory: the bytes pinned, once registered (statistics)
 * @bufs: RXE_GPU_612: the kernel address of each buffer (a page of
 *	the region), in a mapping of @maps
 * @nbufs: the entries of @bufs
 * @buf_shift: log2 of the buffers' size
 * @offset: where the region starts in its first buffer
 */
struct rxe_gpu_mr {
	struct rxe_mr *mr;
	struct gdirect_region *region;
	struct gdirect_region *watch;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	bool pinned;
	atomic_t active;
	bool revoked;
	struct list_head maps;
	u64 peer_bytes;
	void **bufs;
	u32 nbufs;
	unsigned int buf_shift;
	u64 offset;
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
	return sysfs_emit(buf, RXE_GPU_VERSION "\n");
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

/*
 * /sys/kernel/mm's kobject.  6.12 no longer exports mm_kobj: its sysfs
 * directory's kernfs node carries it (a kobject's directory keeps the
 * kobject in ->priv), and mm_kobj is never released.
 */
static struct kobject *rxe_gpu_mm_kobj(void)
{
#if RXE_GPU_612
	struct kernfs_node *kn = kernfs_find_and_get(kernel_kobj->sd, "mm");
	struct kobject *kobj;

	if (!kn)
		return NULL;
	kobj = kn->priv;
	kernfs_put(kn);
	return kobj;
#else
	return mm_kobj;
#endif
}

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
	struct kobject *mm = rxe_gpu_mm_kobj();
	int err;

	rxe_gpu_peers_kobj = mm ? kobject_create_and_add("memory_peers", mm) :
				  NULL;
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
	struct device *dev;
#if RXE_GPU_612
	struct net_device *ndev = rxe_ib_device_get_netdev(&rxe->ib_dev);

	/*
	 * The netdev's reference is dropped at once, as 6.1 keeps none: the
	 * function outlives the regions because the cluster never removes
	 * its NICs (README.md, "Not handled").
	 */
	if (!ndev)
		return NULL;
	dev = ndev->dev.parent;
	dev_put(ndev);
#else
	dev = rxe->ndev->dev.parent;
#endif

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

/*
 * The watch pin's free callback: the owner freed the memory (or exited).
 * It runs after the copies in flight ended (their brackets are on the
 * watch pin) and must not sleep.  The memory itself stays allocated, held
 * by the persistent pin until deregistration; the region only goes stale.
 */
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

/*
 * Undoes the kernel mappings.  No copy may run: the caller revoked the
 * region and waited for the copies in flight.
 */
static void rxe_gpu_unmap_all(struct rxe_gpu_mr *gpu)
{
	struct rxe_gpu_map *m, *tmp;

	list_for_each_entry_safe(m, tmp, &gpu->maps, node) {
		if (m->ram)
			vunmap(m->va);
		else
			memunmap(m->va);
		list_del(&m->node);
		kfree(m);
	}
}

/*
 * Releases what a region holds, in this order: the region is marked stale
 * and the copies in flight end (so no work request runs on it), the
 * callback pin goes (gdirect_unpin() waits for its brackets and for a
 * callback under way, which uses gpu), the kernel mappings go, and only
 * then the persistent pin, which holds the memory they map: after its
 * unpin the memory may belong to another allocation.  A dma-buf is
 * unmapped and detached after its kernel mappings are gone, for the same
 * reason.
 */
static void rxe_gpu_free(struct rxe_gpu_mr *gpu)
{
	struct dma_buf *dmabuf;

	rxe_gpu_revoke(gpu);
	if (gpu->watch)
		gdirect_unpin(gpu->watch);
	else if (gpu->attach)
		wait_var_event(&gpu->active, !atomic_read(&gpu->active));
	rxe_gpu_unmap_all(gpu);
	if (gpu->peer_bytes) {
		atomic64_inc(&rxe_gpu_stats.dealloc_mrs);
		atomic64_add(gpu->peer_bytes >> PAGE_SHIFT,
			     &rxe_gpu_stats.dereg_pages);
		atomic64_add(gpu->peer_bytes, &rxe_gpu_stats.dereg_bytes);
	}
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
	kvfree(gpu->bufs);
	kfree(gpu);
}

/* Room for @n buffers of BIT(@shift) bytes: rxe's (6.1) or the region's. */
static int rxe_gpu_alloc_bufs(struct rxe_gpu_mr *gpu, u32 n, unsigned int shift)
{
	gpu->buf_shift = shift;
#if RXE_GPU_612
	gpu->bufs = kvcalloc(n, sizeof(*gpu->bufs), GFP_KERNEL);
	if (!gpu->bufs)
		return -ENOMEM;
	gpu->nbufs = n;
	gpu->mr->num_buf = n;
	return 0;
#else
	return rxe_mr_alloc(gpu->mr, n);
#endif
}

/* Points buffer @n of the region at @va. */
static void rxe_gpu_set_buf(struct rxe_gpu_mr *gpu, unsigned int n, void *va)
{
#if RXE_GPU_612
	gpu->bufs[n] = va;
#else
	struct rxe_mr *mr = gpu->mr;
	struct rxe_phys_buf *buf;

	buf = &mr->map[n / RXE_BUF_PER_MAP]->buf[n % RXE_BUF_PER_MAP];
	buf->addr = (uintptr_t)va;
	buf->size = BIT(gpu->buf_shift);
#endif
}

/*
 * The region's layout in rxe's terms: buffers of BIT(gpu->buf_shift)
 * bytes, the region starting @offset bytes into the first.
 */
static void rxe_gpu_mr_layout(struct rxe_gpu_mr *gpu, u64 offset, int access)
{
	struct rxe_mr *mr = gpu->mr;
	unsigned int shift = gpu->buf_shift;

	gpu->offset = offset;
	mr->page_shift = shift;
	mr->access = access;
#if RXE_GPU_612
	mr->ibmr.page_size = BIT(shift);
	mr->page_mask = ~(BIT_ULL(shift) - 1);
	mr->page_offset = offset;
	mr->ibmr.type = IB_MR_TYPE_USER;
#else
	mr->page_mask = BIT(shift) - 1;
	mr->offset = offset;
	mr->type = IB_MR_TYPE_USER;
#endif
	mr->gpu = gpu;
}

/*
 * GPU memory is not persistent memory: a region that asks for persistent
 * flushes is refused, as 6.12's rxe refuses any page outside pmem.
 */
static bool rxe_gpu_access_ok(int access)
{
#if RXE_GPU_612
	return !(access & IB_ACCESS_FLUSH_PERSISTENT);
#else
	return true;
#endif
}

/*
 * A run of physically contiguous pages being gathered for one mapping:
 * @len bytes from @start, which fill the region's buffers from @first on,
 * @buf_size bytes each.
 */
struct rxe_gpu_run {
	phys_addr_t start;
	u64 len;
	unsigned int first;
	unsigned int buf_size;
};

/* A kernel mapping of RAM pages, through their struct pages. */
static void *rxe_gpu_vmap_ram(phys_addr_t start, u64 len)
{
	unsigned long n = len >> PAGE_SHIFT, i;
	struct page **pages;
	void *va;

	pages = kvmalloc_array(n, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		if (!pfn_valid(PHYS_PFN(start) + i)) {
			kvfree(pages);
			return NULL;
		}
		pages[i] = pfn_to_page(PHYS_PFN(start) + i);
	}
	va = vmap(pages, n, VM_MAP, PAGE_KERNEL);
	kvfree(pages);
	return va;
}

/*
 * Maps @run once and points its buffers into the mapping.  RAM (system
 * memory: a RAM-backed dma-buf, or the peer memory of a coherent GPU,
 * which the CPU caches) is mapped cacheable through its struct pages, as
 * memremap() refuses RAM for any type but write-back; device memory (a GPU
 * BAR) is mapped write-combining, the type gdirect gives every mapping of
 * BAR pages, so that a user's mapping of the same pages does not conflict
 * with it.  A run that is partly RAM is refused.
 */
static int rxe_gpu_map_run(struct rxe_gpu_mr *gpu, const struct rxe_gpu_run *run)
{
	struct rxe_gpu_map *m;
	u64 off;

	if (!run->len)
		return 0;
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	switch (region_intersects(run->start, run->len, IORESOURCE_SYSTEM_RAM,
				  IORES_DESC_NONE)) {
	case REGION_INTERSECTS:
		/*
		 * The exporter maps a dma-buf's RAM for the e1000 with the
		 * DMA API, which bounces pages beyond the device's DMA mask
		 * (or all of them, where bouncing is forced): the addresses
		 * would then be bounce buffers, not the pages.
		 */
		if (gpu->attach && (dma_addressing_limited(gpu->attach->dev) ||
				    is_swiotlb_force_bounce(gpu->attach->dev))) {
			kfree(m);
			return -EOPNOTSUPP;
		}
		m->ram = true;
		m->va = rxe_gpu_vmap_ram(run->start, run->len);
		break;
	case REGION_DISJOINT:
		m->va = memremap(run->start, run->len, MEMREMAP_WC);
		break;
	default:
		kfree(m);
		return -EINVAL;
	}
	if (!m->va) {
		kfree(m);
		return -ENOMEM;
	}
	list_add_tail(&m->node, &gpu->maps);
	for (off = 0; off < run->len; off += run->buf_size)
		rxe_gpu_set_buf(gpu, run->first + off / run->buf_size,
				m->va + off);
	return 0;
}

/*
 * Adds buffer @n at @addr to @run, mapping the run so far first where
 * @addr does not continue it.
 */
static int rxe_gpu_run_add(struct rxe_gpu_mr *gpu, struct rxe_gpu_run *run,
			   unsigned int n, phys_addr_t addr)
{
	int err;

	if (run->len && addr == run->start + run->len) {
		run->len += run->buf_size;
		return 0;
	}
	err = rxe_gpu_map_run(gpu, run);
	if (err)
		return err;
	run->start = addr;
	run->len = run->buf_size;
	run->first = n;
	return 0;
}

/*
 * Copies the persistent pin's DMA addresses into @dma (@n entries, the
 * pages of the pinned range).  The kapi lets the provider's array be read
 * only inside a DMA bracket; the copy is made there, and the mappings,
 * which sleep, are made from the copy outside it.  The addresses stay
 * valid after the bracket because the pin is persistent: no free callback
 * revokes it, and rxe never calls gdirect_dma_unmap(), so the mapping
 * lives until gdirect_unpin().
 */
static int rxe_gpu_peer_addrs(struct rxe_gpu_mr *gpu, u64 *dma, u32 n)
{
	const u64 *addrs;
	u32 entries;
	int err;

	err = gdirect_dma_begin(gpu->region);
	if (err)
		return err;
	err = gdirect_region_dma_addrs(gpu->region, &addrs, &entries);
	if (!err && entries != n)
		err = -EIO;
	if (!err)
		memcpy(dma, addrs, n * sizeof(*dma));
	gdirect_dma_end(gpu->region);
	return err;
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
 * range.  Pins it through gdirect twice: first without a peer and with a
 * free callback (the watch pin: when the owner frees the memory the
 * callback marks the region stale, after the copies in flight end), then
 * with the persistent API for rxe's PCI function (no callback, so no
 * revocation can race the provider's DMA mapping; the memory stays
 * allocated until deregistration).  Maps the pages' bus addresses into
 * the kernel for rxe's copies, one mapping per contiguous run.
 *
 * Return: 0; -ENOENT when the range is not GPU memory that gdirect knows
 * (the caller then reports its own error); -EFAULT when the memory was
 * freed during the registration; else gdirect's or a mapping's error.
 */
int rxe_gpu_mr_init_peer(struct rxe_dev *rxe, u64 start, u64 length,
			 int access, struct rxe_mr *mr)
{
	struct gdirect_pin_params params = { };
	struct rxe_gpu_run run = { .buf_size = BIT(RXE_GPU_PAGE_SHIFT) };
	struct rxe_gpu_mr *gpu;
	struct device *dev;
	u64 base, size;
	u64 *dma = NULL;
	u32 n, i;
	int err;

	dev = rxe_gpu_dma_dev(rxe);
	if (!dev || !length)
		return -ENOENT;
	gpu = kzalloc(sizeof(*gpu), GFP_KERNEL);
	if (!gpu)
		return -ENOMEM;
	gpu->mr = mr;
	INIT_LIST_HEAD(&gpu->maps);

	params.addr = start;
	params.size = length;
	params.flags = GDIRECT_KPIN_ACCOUNT;
	params.invalidate = rxe_gpu_invalidate;
	params.data = gpu;
	err = gdirect_pin(&params, &gpu->watch);
	if (err) {
		/* -EINVAL: not GPU memory (or no range gdirect accepts) */
		if (err == -EINVAL)
			err = -ENOENT;
		goto err_free;
	}
	if (!rxe_gpu_access_ok(access)) {
		err = -EINVAL;
		goto err_free;
	}
	params.peer = to_pci_dev(dev);
	params.flags = GDIRECT_KPIN_PERSISTENT | GDIRECT_KPIN_ACCOUNT;
	params.invalidate = NULL;
	params.data = NULL;
	err = gdirect_pin(&params, &gpu->region);
	if (err) {
		/* the memory was freed since the first pin */
		if (err == -EINVAL)
			err = -EFAULT;
		goto err_free;
	}
	err = gdirect_region_range(gpu->region, &base, &size);
	if (err)
		goto err_free;
	n = size >> RXE_GPU_PAGE_SHIFT;
	dma = kvmalloc_array(n, sizeof(*dma), GFP_KERNEL);
	if (!dma) {
		err = -ENOMEM;
		goto err_free;
	}
	err = rxe_gpu_peer_addrs(gpu, dma, n);
	if (err)
		goto err_free;

	rxe_mr_init(access, mr);
	err = rxe_gpu_alloc_bufs(gpu, n, RXE_GPU_PAGE_SHIFT);
	if (err)
		goto err_free;
	for (i = 0; i < n; i++) {
		err = rxe_gpu_run_add(gpu, &run, i, dma[i]);
		if (err)
			goto err_free;
	}
	err = rxe_gpu_map_run(gpu, &run);
	if (err)
		goto err_free;
	kvfree(dma);

	rxe_gpu_mr_layout(gpu, start - base, access);
	gpu->peer_bytes = size;
	atomic64_inc(&rxe_gpu_stats.alloc_mrs);
	atomic64_add(size >> PAGE_SHIFT, &rxe_gpu_stats.reg_pages);
	atomic64_add(size, &rxe_gpu_stats.reg_bytes);
	rxe_gpu_mr_valid(gpu);
	return 0;

err_free:
	kvfree(dma);
	rxe_gpu_free(gpu);
	return err;
}

/*
 * Maps the dma-buf's pages of [offset, offset + length) into the region,
 * PAGE_SIZE buffers, each run of contiguous DMA addresses once.
 */
static int rxe_gpu_map_dmabuf(struct rxe_gpu_mr *gpu, u64 offset, u64 length)
{
	struct rxe_gpu_run run = { .buf_size = PAGE_SIZE };
	u64 first = offset >> PAGE_SHIFT;
	u64 last = (offset + length - 1) >> PAGE_SHIFT;
	struct scatterlist *sg;
	u64 pos = 0, p, filled = 0;
	unsigned int i;
	int err;

	for_each_sgtable_dma_sg(gpu->sgt, sg, i) {
		dma_addr_t dma = sg_dma_address(sg);
		unsigned int len = sg_dma_len(sg);
		u64 s = pos;

		pos += len;
		if (pos <= first << PAGE_SHIFT || s > last << PAGE_SHIFT)
			continue;
		if (!PAGE_ALIGNED(dma) || !PAGE_ALIGNED(len))
			return -EINVAL;
		for (p = s; p < pos; p += PAGE_SIZE) {
			u64 pg = p >> PAGE_SHIFT;

			if (pg < first || pg > last)
				continue;
			err = rxe_gpu_run_add(gpu, &run, pg - first,
					      dma + (p - s));
			if (err)
				return err;
			filled++;
		}
	}
	err = rxe_gpu_map_run(gpu, &run);
	if (err)
		return err;
	return filled == last - first + 1 ? 0 : -EINVAL;
}
/* Waits for the dma-buf's kernel fences; the reservation lock is held. */
static int rxe_gpu_wait_kernel_fences(struct dma_buf *dmabuf)
{
	long ret;

	dma_resv_assert_held(dmabuf->resv);
	ret = dma_resv_wait_timeout(dmabuf->resv, DMA_RESV_USAGE_KERNEL, false,
				    MAX_SCHEDULE_TIMEOUT);
	if (ret < 0)
		return ret;
	return ret ? 0 : -ETIMEDOUT;
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
	if (!rxe_gpu_access_ok(access))
		return -EINVAL;
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
	INIT_LIST_HEAD(&gpu->maps);

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
	 * exporter that moves or revokes pinned memory.  The pages' contents
	 * are the exporter's only once its kernel fences (a migration, a
	 * clear) have signalled: wait for them after mapping, as
	 * ib_umem_dmabuf_map_pages() does.
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
	if (!err)
		err = rxe_gpu_wait_kernel_fences(dmabuf);
	dma_resv_unlock(dmabuf->resv);
	if (err)
		goto err_free;

	rxe_mr_init(access, mr);
	err = rxe_gpu_alloc_bufs(gpu, ((offset + length - 1) >> PAGE_SHIFT) -
				 (offset >> PAGE_SHIFT) + 1, PAGE_SHIFT);
	if (err)
		goto err_free;
	err = rxe_gpu_map_dmabuf(gpu, offset, length);
	if (err)
		goto err_free;

	rxe_gpu_mr_layout(gpu, offset_in_page(offset), access);
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
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
 * @attrs: user data (unused): struct ib_udata on 6.1, struct
 *	uverbs_attr_bundle on 6.12
 *
 * Allocates the region as rxe_reg_user_mr() of the series does.
 *
 * Return: the region, or ERR_PTR(): -EBADF for an fd that is not a dma-buf
 * (fd -1 is the capability probe of NCCL, UCX and libfabric), -EINVAL for
 * a range outside it, -EOPNOTSUPP without a PCI function free of an IOMMU
 * under rxe's netdev (or, on 6.12, for access flags rxe does not support),
 * or the exporter's error.
 */
#if RXE_GPU_612
struct ib_mr *rxe_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				     u64 length, u64 iova, int fd, int access,
				     struct uverbs_attr_bundle *attrs)
{
	struct rxe_dev *rxe = to_rdev(ibpd->device);
	struct rxe_pd *pd = to_rpd(ibpd);
	struct rxe_mr *mr;
	int err;

	if (access & ~RXE_ACCESS_SUPPORTED_MR)
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	/* rxe_mr_cleanup() destroys it, also after a failure below */
	xa_init(&mr->page_list);
	err = rxe_add_to_pool(&rxe->mr_pool, mr);
	if (err)
		goto err_free;
	rxe_get(pd);
	mr->ibmr.pd = ibpd;
	mr->ibmr.device = ibpd->device;

	err = rxe_gpu_mr_init_dmabuf(rxe, offset, length, iova, fd, access,
				     mr);
	if (err) {
		if (rxe_cleanup(mr))
			rxe_err_mr(mr, "cleanup failed\n");
		goto err_free;
	}
	rxe_finalize(mr);
	return &mr->ibmr;

err_free:
	kfree(mr);
	return ERR_PTR(err);
}
#else
struct ib_mr *rxe_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				     u64 length, u64 iova, int fd, int access,
				     struct ib_udata *attrs)
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
#endif

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

	if (gpu->watch)
		return gdirect_dma_begin(gpu->watch);
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

	if (gpu->watch)
		gdirect_dma_end(gpu->watch);
	else if (atomic_dec_and_test(&gpu->active))
		wake_up_var(&gpu->active);
}

#if RXE_GPU_612
/*
 * The kernel address of byte @off of the region (counted from the start
 * of its first buffer), and in @room the bytes from there to the end of
 * its buffer; NULL past the region.
 */
static void *rxe_gpu_addr(struct rxe_gpu_mr *gpu, u64 off, unsigned int *room)
{
	u64 n = off >> gpu->buf_shift;
	unsigned int in = off & (BIT(gpu->buf_shift) - 1);

	if (n >= gpu->nbufs || !gpu->bufs[n])
		return NULL;
	*room = BIT(gpu->buf_shift) - in;
	return gpu->bufs[n] + in;
}

/* The offset of @iova from the start of the region's first buffer. */
static u64 rxe_gpu_off(struct rxe_mr *mr, u64 iova)
{
	return iova - mr->ibmr.iova + mr->gpu->offset;
}

/**
 * rxe_gpu_copy() - rxe_mr_copy() of a GPU memory region
 * @mr: the region (mr->gpu set)
 * @iova: where in the region, checked by the caller (mr_check_range())
 * @addr: the other side of the copy
 * @length: bytes
 * @dir: RXE_TO_MR_OBJ (into the region) or RXE_FROM_MR_OBJ
 *
 * Any context, softirq included; does not sleep.  Copies through the
 * region's kernel mappings inside rxe_gpu_begin() and rxe_gpu_end().
 *
 * Return: 0, or -EFAULT when the memory is revoked.
 */
int rxe_gpu_copy(struct rxe_mr *mr, u64 iova, void *addr,
		 unsigned int length, enum rxe_mr_copy_dir dir)
{
	u64 off = rxe_gpu_off(mr, iova);
	unsigned int bytes, room;
	int err = 0;
	void *va;

	if (rxe_gpu_begin(mr))
		return -EFAULT;
	while (length) {
		va = rxe_gpu_addr(mr->gpu, off, &room);
		if (!va) {
			err = -EFAULT;
			break;
		}
		bytes = min(length, room);
		if (dir == RXE_FROM_MR_OBJ)
			memcpy(addr, va, bytes);
		else
			memcpy(va, addr, bytes);
		off += bytes;
		addr += bytes;
		length -= bytes;
	}
	rxe_gpu_end(mr);
	return err;
}

/*
 * The 8-byte word at @iova of a valid region, or NULL with @err the
 * responder's state: out of range, or misaligned in memory.
 */
static u64 *rxe_gpu_word(struct rxe_mr *mr, u64 iova, int *err)
{
	unsigned int room;
	void *va;

	*err = RESPST_ERR_RKEY_VIOLATION;
	if (mr_check_range(mr, iova, sizeof(u64)))
		return NULL;
	va = rxe_gpu_addr(mr->gpu, rxe_gpu_off(mr, iova), &room);
	if (!va)
		return NULL;
	if (!IS_ALIGNED((uintptr_t)va, sizeof(u64))) {
		*err = RESPST_ERR_MISALIGNED_ATOMIC;
		return NULL;
	}
	return va;
}

/**
 * rxe_gpu_do_atomic_op() - rxe_mr_do_atomic_op() of a GPU memory region
 * @mr: the region (mr->gpu set), valid
 * @iova: the 8-byte word
 * @opcode: IB_OPCODE_RC_COMPARE_SWAP, or a fetch-and-add
 * @compare: compare-and-swap's comparand
 * @swap_add: the value swapped in, or added
 * @orig_val: the word before the operation
 * @lock: rxe's atomic lock, which every rxe atomic holds
 *
 * Softirq context; does not sleep.  The read-modify-write runs inside
 * rxe_gpu_begin() and rxe_gpu_end(), under @lock.
 *
 * Return: 0, or the responder's error state (RESPST_ERR_RKEY_VIOLATION
 * also when the memory is revoked).
 */
int rxe_gpu_do_atomic_op(struct rxe_mr *mr, u64 iova, int opcode,
			 u64 compare, u64 swap_add, u64 *orig_val,
			 spinlock_t *lock)
{
	u64 *va, value;
	int err;

	va = rxe_gpu_word(mr, iova, &err);
	if (!va)
		return err;
	if (rxe_gpu_begin(mr))
		return RESPST_ERR_RKEY_VIOLATION;
	spin_lock_bh(lock);
	value = *va;
	*orig_val = value;
	if (opcode == IB_OPCODE_RC_COMPARE_SWAP) {
		if (value == compare)
			*va = swap_add;
	} else {
		*va = value + swap_add;
	}
	spin_unlock_bh(lock);
	rxe_gpu_end(mr);
	return 0;
}

/**
 * rxe_gpu_do_atomic_write() - rxe_mr_do_atomic_write() of a GPU region
 * @mr: the region (mr->gpu set), valid
 * @iova: the 8-byte word
 * @value: what is written
 *
 * Softirq context; does not sleep.  The store comes after every earlier
 * store of the CPU (wmb(): device memory is mapped write-combining, whose
 * stores a release barrier alone does not order), inside the bracket.
 *
 * Return: 0, or the responder's error state.
 */
int rxe_gpu_do_atomic_write(struct rxe_mr *mr, u64 iova, u64 value)
{
	u64 *va;
	int err;

	va = rxe_gpu_word(mr, iova, &err);
	if (!va)
		return err;
	if (rxe_gpu_begin(mr))
		return RESPST_ERR_RKEY_VIOLATION;
	/* every earlier store first, write-combined ones included */
	wmb();
	WRITE_ONCE(*va, value);
	rxe_gpu_end(mr);
	return 0;
}
#endif

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
