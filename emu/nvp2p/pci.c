// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pci.c - nvp2p_emu.ko: an emulated NVIDIA GPU on qemu's ivshmem device
 *
 * qemu's ivshmem-plain device (1af4:1110) has a prefetchable memory BAR 2
 * backed by a host file.  We use it as the GPU's memory and as its BAR1
 * aperture at once: the physical addresses in page tables are real BAR
 * addresses, so peers can DMA to them and gdirect can map them
 * write-combined, as with a GPU.  The host sees every byte in the file.
 *
 * Built with NVP2P_EMU_TEGRA, BAR2 also gets struct pages (ZONE_DEVICE),
 * since Tegra page tables are made of them (guide 13.4).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include "emu.h"
#include "nvp2p_emu.h"

#define IVSHMEM_VENDOR	0x1af4
#define IVSHMEM_DEVICE	0x1110
#define IVSHMEM_MEM_BAR	2

struct emu_dev *emu;
/* Writes of emu; emu_open() reads it under it.  Also emu_zombies. */
DEFINE_MUTEX(emu_bind_lock);
/* Unbound devices replaced by a later bind; freed at module unload. */
static LIST_HEAD(emu_zombies);

static unsigned int bar1_size_mb;
module_param(bar1_size_mb, uint, 0444);
MODULE_PARM_DESC(bar1_size_mb, "BAR1 aperture in MiB (0: the whole BAR2)");

static unsigned int bar1_reserve_mb = 16;
module_param(bar1_reserve_mb, uint, 0444);
MODULE_PARM_DESC(bar1_reserve_mb, "BAR1 MiB reserved for internal use, never given to peers");

unsigned int emu_max_mem_per_user_mb;
module_param_named(max_mem_per_user_mb, emu_max_mem_per_user_mb, uint, 0644);
MODULE_PARM_DESC(max_mem_per_user_mb,
		 "GPU memory one user may hold allocated, in MiB; more fails with ENOMEM (0: no limit, as the NVIDIA driver)");

unsigned short emu_dev_mode = 0660;
module_param_named(dev_mode, emu_dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode, "Permissions of /dev/nvp2p_emu (default: 0660; the NVIDIA driver's nodes default to 0666)");

unsigned int emu_pin_latency_us;
module_param_named(pin_latency_us, emu_pin_latency_us, uint, 0644);
MODULE_PARM_DESC(pin_latency_us, "extra time each get_pages takes, in microseconds");

unsigned int emu_callback_delay_ms;
module_param_named(callback_delay_ms, emu_callback_delay_ms, uint, 0644);
MODULE_PARM_DESC(callback_delay_ms, "delay before each free callback, with the lock held, in ms");

unsigned int emu_unmap_delay_ms;
module_param_named(unmap_delay_ms, emu_unmap_delay_ms, uint, 0644);
MODULE_PARM_DESC(unmap_delay_ms, "delay at the start of each dma_unmap_pages, no lock held, in ms");

unsigned int emu_map_return_delay_ms;
module_param_named(map_return_delay_ms, emu_map_return_delay_ms, uint, 0644);
MODULE_PARM_DESC(map_return_delay_ms, "delay before each successful dma_map_pages returns, no lock held, in ms");

/*
 * Written through emu_cuda_version_set() alone, so it holds one of the two
 * values libcuda knows; libcuda reads it (NVP2P_EMU_IOC_INFO) in cuInit.
 */
unsigned int emu_cuda_version = NVP2P_EMU_CUDA_13_0;

/**
 * emu_cuda_version_set() - choose the CUDA driver API version libcuda emulates
 * @v: NVP2P_EMU_CUDA_13_0 or NVP2P_EMU_CUDA_13_3
 *
 * Does not sleep.  Processes that have run cuInit keep the version they read.
 *
 * Return: 0, or -EINVAL for any other value.
 */
int emu_cuda_version_set(unsigned int v)
{
	if (v != NVP2P_EMU_CUDA_13_0 && v != NVP2P_EMU_CUDA_13_3)
		return -EINVAL;
	WRITE_ONCE(emu_cuda_version, v);
	return 0;
}

static int emu_cuda_version_param_set(const char *val,
				      const struct kernel_param *kp)
{
	unsigned int v;
	int ret = kstrtouint(val, 10, &v);

	return ret ? ret : emu_cuda_version_set(v);
}

static const struct kernel_param_ops emu_cuda_version_ops = {
	.set = emu_cuda_version_param_set,
	.get = param_get_uint,
};

module_param_cb(cuda_version, &emu_cuda_version_ops, &emu_cuda_version, 0644);
MODULE_PARM_DESC(cuda_version,
		 "CUDA driver API version libcuda emulates: 13000 (default, the PCIe mapping type of dma-bufs refused) or 13030 (allowed)");

#ifndef NVP2P_EMU_TEGRA
/*
 * Read by each get_pages: pins made while it is set get the page tables of
 * a coherent platform (p2p.c), pins made before keep theirs.  1 by default
 * in the coherent flavour (NVP2P_EMU_COHERENT), so that every load of the
 * module in a guest booted with it is a coherent platform's.
 */
#ifdef NVP2P_EMU_COHERENT
bool emu_coherent = true;
#else
bool emu_coherent;
#endif
module_param_named(coherent, emu_coherent, bool, 0644);
MODULE_PARM_DESC(coherent, "1: page tables as on a coherent platform (Grace Hopper, Grace Blackwell): CPU-cacheable, FORCE_BAR1_MAPPING allowed; 0: a GPU behind PCIe (default but in the coherent flavour)");
#endif

unsigned int emu_map_entry_delay_ms;
module_param_named(map_entry_delay_ms, emu_map_entry_delay_ms, uint, 0644);
MODULE_PARM_DESC(map_entry_delay_ms, "delay at the start of each dma_map_pages, before the API lock, in ms");

unsigned int emu_expect_misuse;
module_param_named(expect_misuse, emu_expect_misuse, uint, 0644);
MODULE_PARM_DESC(expect_misuse, "calls on a dead or wrong-kind page table a test makes on purpose: counted and logged without a WARN");

#ifdef NVP2P_EMU_TEGRA
/*
 * struct pages for BAR2, of the generic device type: never given to the
 * page allocator, and the direct map they get keeps BAR2's write-combined
 * memory type.  devm, so they go after emu_remove(), with no pin left.
 */
static int emu_mem_pages_init(struct emu_dev *e)
{
	struct device *dev = &e->pdev->dev;
	void *va;

	INIT_LIST_HEAD(&e->revoked);
	if (!IS_ENABLED(CONFIG_ZONE_DEVICE)) {
		dev_err(dev, "the Tegra flavour needs CONFIG_ZONE_DEVICE for struct pages of BAR2\n");
		return -EOPNOTSUPP;
	}
	/* Memory hotplug's unit for device memory: 2 MiB sub-sections. */
	if (!IS_ALIGNED(e->mem_phys | e->mem_size, SZ_2M)) {
		dev_err(dev, "the Tegra flavour needs BAR2 in whole 2 MiB units\n");
		return -EINVAL;
	}
	e->pgmap = devm_kzalloc(dev, sizeof(*e->pgmap), GFP_KERNEL);
	if (!e->pgmap)
		return -ENOMEM;
	e->pgmap->type = MEMORY_DEVICE_GENERIC;
	e->pgmap->range.start = e->mem_phys;
	e->pgmap->range.end = e->mem_phys + e->mem_size - 1;
	e->pgmap->nr_range = 1;
	va = devm_memremap_pages(dev, e->pgmap);
	if (IS_ERR(va)) {
		dev_err(dev, "no struct pages for BAR2: %ld\n", PTR_ERR(va));
		return PTR_ERR(va);
	}
	return 0;
}

/* Tables a driver never freed with nvidia_p2p_free_page_table(). */
static void emu_free_revoked(struct emu_dev *e)
{
	struct emu_pin *pin, *tmp;
	unsigned int n = 0;

	mutex_lock(&e->maps_lock);
	list_for_each_entry_safe(pin, tmp, &e->revoked, node) {
		list_del(&pin->node);
		kvfree(pin->pt.pages);
		kfree(pin);
		n++;
	}
	mutex_unlock(&e->maps_lock);
	if (n)
		dev_err(&e->pdev->dev, "%u page tables never freed by a third-party driver\n",
			n);
}
#else
static int emu_mem_pages_init(struct emu_dev *e)
{
	return 0;
}

static void emu_free_revoked(struct emu_dev *e)
{
}
#endif

/* Free what an unbound device still holds; nothing may use it any more. */
static void emu_dev_free(struct emu_dev *e)
{
	emu_free_revoked(e);
	if (!list_empty(&e->pins))
		pr_err("%llu pins leaked by a third-party driver\n",
		       e->nr_pins);
	else
		gen_pool_destroy(e->pool);
	kvfree(e->bar1_refs);
	kfree(e);
}

/*
 * Open files, pins, dma-bufs, or (Tegra) revoked tables a third party has
 * yet to free: what still reaches the device through emu.
 */
static bool emu_dev_busy(struct emu_dev *e)
{
	bool used;

	lockdep_assert_held(&e->lock);
	mutex_lock(&e->maps_lock);
	used = !list_empty(&e->files) || !list_empty(&e->pins) ||
	       e->nr_dmabufs;
#ifdef NVP2P_EMU_TEGRA
	used = used || !list_empty(&e->revoked);
#endif
	mutex_unlock(&e->maps_lock);
	return used;
}

static bool emu_dev_in_use(struct emu_dev *e)
{
	bool used;

	mutex_lock(&e->lock);
	used = emu_dev_busy(e);
	mutex_unlock(&e->lock);
	return used;
}

/*
 * Before a bind: an unbound device still in use (open files, pins) keeps
 * its place, as its files and pins reach it through emu; an unused one is
 * set aside until module unload, since a provider call that read emu
 * before may still be looking at it (and finds it gone).
 */
static int emu_retire_unbound(struct device *dev)
{
	int ret = 0;

	mutex_lock(&emu_bind_lock);
	if (emu && !emu->gone) {
		dev_info(dev, "only one emulated GPU is supported\n");
		ret = -EBUSY;
	} else if (emu && emu_dev_in_use(emu)) {
		dev_info(dev, "the previously unbound emulated GPU still has open files or pins\n");
		ret = -EBUSY;
	} else if (emu) {
		list_add_tail(&emu->zombie_node, &emu_zombies);
		emu = NULL;
	}
	mutex_unlock(&emu_bind_lock);
	return ret;
}

static int emu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct emu_dev *e;
	u64 pages;
	int ret;

	ret = emu_retire_unbound(&pdev->dev);
	if (ret)
		return ret;
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->pdev = pdev;
	init_rwsem(&e->active);
	INIT_LIST_HEAD(&e->zombie_node);
	mutex_init(&e->lock);
	mutex_init(&e->maps_lock);
	INIT_LIST_HEAD(&e->pins);
	INIT_LIST_HEAD(&e->files);
	INIT_LIST_HEAD(&e->users);
	INIT_LIST_HEAD(&e->exports);
	init_waitqueue_head(&e->dmabufs_gone);

	ret = pcim_enable_device(pdev);
	if (ret)
		goto err_free;
	e->mem_phys = pci_resource_start(pdev, IVSHMEM_MEM_BAR);
	e->mem_size = pci_resource_len(pdev, IVSHMEM_MEM_BAR);
	if (e->mem_size < 4 * EMU_PAGE_SIZE ||
	    !IS_ALIGNED(e->mem_phys, EMU_PAGE_SIZE)) {
		dev_err(&pdev->dev, "BAR2 unusable: %llu bytes at %pa\n",
			e->mem_size, &e->mem_phys);
		ret = -ENODEV;
		goto err_free;
	}
	/*
	 * BAR2 is claimed without being mapped, so that its only mapping is
	 * the write-combining one below: an uncached mapping made first (by
	 * pcim_iomap_regions()) holds an uncached-minus memtype, which 6.12
	 * and 7.2 keep after pcim_iounmap(), and the later mapping inherits it.
	 */
	if (!devm_request_mem_region(&pdev->dev, e->mem_phys, e->mem_size,
				     "nvp2p_emu")) {
		ret = -EBUSY;
		goto err_free;
	}
	e->mem = devm_ioremap_wc(&pdev->dev, e->mem_phys, e->mem_size);
	if (!e->mem) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = emu_mem_pages_init(e);
	if (ret)
		goto err_free;

	e->bar1_size = bar1_size_mb ? (u64)bar1_size_mb << 20 : e->mem_size;
	e->bar1_reserved = (u64)bar1_reserve_mb << 20;
	if (e->bar1_reserved >= e->bar1_size) {
		dev_err(&pdev->dev, "bar1_reserve_mb leaves no BAR1 for peers\n");
		ret = -EINVAL;
		goto err_free;
	}
	pages = e->mem_size >> EMU_PAGE_SHIFT;
	e->bar1_refs = kvcalloc(pages, sizeof(*e->bar1_refs), GFP_KERNEL);
	e->pool = gen_pool_create(EMU_PAGE_SHIFT, -1);
	if (!e->bar1_refs || !e->pool) {
		ret = -ENOMEM;
		goto err_pool;
	}
	ret = gen_pool_add(e->pool, e->mem_phys, e->mem_size, -1);
	if (ret)
		goto err_pool;

	/* A stable UUID per device: "nvp2p_emu" and the PCI address. */
	memcpy(e->uuid, "nvp2p_emu", 9);
	e->uuid[12] = pci_domain_nr(pdev->bus) >> 8;
	e->uuid[13] = pci_domain_nr(pdev->bus);
	e->uuid[14] = pdev->bus->number;
	e->uuid[15] = pdev->devfn;

	pci_set_drvdata(pdev, e);
	mutex_lock(&emu_bind_lock);
	emu = e;
	mutex_unlock(&emu_bind_lock);
	ret = emu_ctl_register();
	if (ret) {
		mutex_lock(&emu_bind_lock);
		emu = NULL;
		mutex_unlock(&emu_bind_lock);
		goto err_pool;
	}
	emu_debugfs_init(e);
	dev_info(&pdev->dev, "emulated GPU: %llu MiB memory, BAR1 %llu MiB (%llu reserved), %s interface, page table 0x%08x\n",
		 e->mem_size >> 20, e->bar1_size >> 20, e->bar1_reserved >> 20,
		 EMU_INTERFACE, NVIDIA_P2P_PAGE_TABLE_VERSION);
	return 0;

err_pool:
	if (e->pool)
		gen_pool_destroy(e->pool);
	kvfree(e->bar1_refs);
err_free:
	kfree(e);
	return ret;
}

static u64 emu_nr_dmabufs(struct emu_dev *e)
{
	u64 n;

	mutex_lock(&e->lock);
	n = e->nr_dmabufs;
	mutex_unlock(&e->lock);
	return n;
}

/*
 * Unbind (sysfs, or the module going): as the NVIDIA driver does at
 * teardown, revoke every pin that has a free callback, by freeing each
 * open file's memory.  Control files left open then fail with -ENODEV
 * until closed; persistent pins keep their memory until put, and
 * put_pages and dma_unmap_pages keep working for what is left.
 *
 * Exported dma-bufs hold the device, as NVIDIA's exporter holds the GPU
 * and its remove waits for the GPU's last user: their importers may hold
 * DMA addresses of BAR2, which stays ours (enabled, mapped) until this
 * returns.  So the unbind waits, with no lock held, until the last
 * dma-buf is released (its fds closed and every importer detached); new
 * exports and new importer mappings fail with -ENODEV meanwhile.  The wait
 * does not end on a signal: the BAR must not go under an importer.  The
 * module cannot go meanwhile: each dma-buf holds a reference on it.
 */
static void emu_remove(struct pci_dev *pdev)
{
	struct emu_dev *e = pci_get_drvdata(pdev);
	struct emu_alloc *a, *tmp;
	struct emu_file *f;
	bool used;
	u64 n;

	emu_debugfs_exit(e);
	/* No open in flight once this returns (misc_open holds misc_mtx). */
	emu_ctl_unregister();

	/* Waits for control ioctls in flight: they may touch e->mem. */
	down_write(&e->active);
	mutex_lock(&e->lock);
	e->gone = true;
	list_for_each_entry(f, &e->files, node)
		list_for_each_entry_safe(a, tmp, &f->allocs, node)
			emu_alloc_free(a);
	mutex_unlock(&e->lock);
	up_write(&e->active);

	n = emu_nr_dmabufs(e);
	if (n) {
		dev_info(&pdev->dev, "unbind waits for %llu exported dma-bufs to be released\n",
			 n);
		/*
		 * The condition must not sleep (it runs with the task no
		 * longer TASK_RUNNING), so it reads the count without e->lock;
		 * the release that brings it to 0 wakes the queue after
		 * unlocking, and wait_event's barriers make the store seen.
		 */
		wait_event_idle(e->dmabufs_gone, !READ_ONCE(e->nr_dmabufs));
		dev_info(&pdev->dev, "the last dma-buf is released; unbind goes on\n");
	}

	used = emu_dev_in_use(e);
	if (used) {
		dev_info(&pdev->dev, "unbound with files or persistent pins left; they end as usual, new requests fail with ENODEV\n");
		return;
	}
	/* emu stays: a provider call may have read it; freed at unload. */
	mutex_lock(&emu_bind_lock);
	if (emu == e) {
		list_add_tail(&e->zombie_node, &emu_zombies);
		emu = NULL;
	}
	mutex_unlock(&emu_bind_lock);
}

static const struct pci_device_id emu_ids[] = {
	{ PCI_DEVICE(IVSHMEM_VENDOR, IVSHMEM_DEVICE) },
	{ }
};
MODULE_DEVICE_TABLE(pci, emu_ids);

static struct pci_driver emu_driver = {
	.name = "nvp2p_emu",
	.id_table = emu_ids,
	.probe = emu_probe,
	.remove = emu_remove,
};

static int __init emu_init(void)
{
	return pci_register_driver(&emu_driver);
}

static void __exit emu_exit(void)
{
	struct emu_dev *e, *tmp;

	pci_unregister_driver(&emu_driver);
	/* No file is open and no third-party module is left by now. */
	if (emu)
		list_add_tail(&emu->zombie_node, &emu_zombies);
	emu = NULL;
	list_for_each_entry_safe(e, tmp, &emu_zombies, zombie_node) {
		list_del(&e->zombie_node);
		emu_dev_free(e);
	}
}

module_init(emu_init);
module_exit(emu_exit);

MODULE_DESCRIPTION("Emulated NVIDIA GPU exporting the nv-p2p kernel API");
MODULE_LICENSE(NVP2P_EMU_LICENSE);
