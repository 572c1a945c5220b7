/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * emu.h - internal state of nvp2p_emu.ko
 *
 * Two locks, as in the NVIDIA driver:
 *
 *  emu->lock       the resource manager's API lock: allocation, free,
 *                  get/put_pages and dma_map_pages take it, and the
 *                  third-party free callback runs with it held.  That is the
 *                  behaviour third-party drivers must survive (guide 11.3),
 *                  so the emulator reproduces it rather than something
 *                  gentler.
 *  emu->maps_lock  the DMA-mapping list lock (nv-p2p.c's per-table
 *                  dma_mapping_list.lock): the pin list and every pin's DMA
 *                  mappings.  nvidia_p2p_dma_unmap_pages() takes only this
 *                  one, so a free callback may wait for an unmap in flight,
 *                  which is how a third party fences the two.
 *
 * Order: emu->lock before emu->maps_lock.
 */
#ifndef NVP2P_EMU_H
#define NVP2P_EMU_H

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/genalloc.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/memremap.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/rwsem.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>

#include "nv-p2p.h"

/*
 * Interfaces that moved between kernels, as scripts/kconftest.sh found
 * them (KC_HAVE_*); without its header the newest kernel is assumed.
 * 5.11 brought lockdep_assert() and lockdep_is_held() without lockdep;
 * before, the check is lockdep's own or nothing.
 */
#if defined(KC_CONFTEST) && !defined(KC_HAVE_LOCKDEP_ASSERT)
#ifdef CONFIG_LOCKDEP
#define lockdep_assert(cond)	WARN_ON(debug_locks && !(cond))
#else
#define lockdep_assert(cond)	do { } while (0)
#endif
#endif

#define EMU_PAGE_SHIFT	16
#define EMU_PAGE_SIZE	BIT_ULL(EMU_PAGE_SHIFT)

/*
 * The attributes of every dma_map_resource() of BAR pages, and of its
 * unmap.  The CPU keeps no cache lines of MMIO, so there is nothing to
 * sync, and the same pages mapped twice for one device (two overlapping
 * memory regions of a NIC, as nvidia-peermem registers them) are no
 * conflict: DMA_ATTR_SKIP_CPU_SYNC says so to DMA_API_DEBUG, which
 * otherwise reports the second mapping ("cacheline tracking EEXIST,
 * overlapping mappings aren't supported").  dma-direct and dma-iommu map
 * a resource the same with or without it.
 */
#define EMU_DMA_RESOURCE_ATTRS	DMA_ATTR_SKIP_CPU_SYNC
#define EMU_UUID_LEN	16

/*
 * The Tegra flavour (NVP2P_EMU_TEGRA, guide 13.4) pins 4 KiB pages and
 * describes them with struct pages: BAR2 gets them from memremap_pages()
 * at probe, as an integrated GPU's memory has them.  There is no BAR1.
 */
#ifdef NVP2P_EMU_TEGRA
#define EMU_INTERFACE		"Tegra"
#define EMU_PERSISTENT_API	0
#else
#define EMU_INTERFACE		"desktop"
#define EMU_PERSISTENT_API	1
#endif

struct emu_file;

/* Fail the next @count calls with -@err. */
struct emu_fault {
	unsigned int count;
	int err;
};

/* One allocation of GPU memory, made by one process at one GPU VA. */
struct emu_alloc {
	struct list_head node;		/* emu_file->allocs, while not freed */
	struct kref ref;		/* owner + each persistent pin */
	struct emu_file *owner;		/* NULL once freed */
	pid_t tgid;
	u64 va;
	u64 size;
	u64 mem_offset;			/* offset in BAR2 */
	struct emu_user *user;		/* charged for size; NULL: import */
	struct list_head pins;		/* non-persistent emu_pins */
	struct list_head subs;		/* struct emu_sub, if shared */
	struct emu_export *export;	/* an import: of this export */
};

/* A CUDA allocation inside a shared emu_alloc (NVP2P_EMU_IOC_SUB_ADD). */
struct emu_sub {
	struct list_head node;		/* emu_alloc->subs, under emu->lock */
	u64 va;
	u64 size;
};

/*
 * A range of an allocation exported for IPC (cuIpcGetMemHandle names one
 * cuMemAlloc allocation, which may share its pages with others).  It holds
 * a reference of the allocation; it can be imported while its owner has
 * neither freed the allocation nor withdrawn it, and while an import of it
 * is left.  On emu->exports, under emu->lock.
 */
/*
 * Distinct ranges of one allocation exported at once (cuda_emu exports
 * whole allocations: one).
 */
#define EMU_MAX_EXPORTS_PER_ALLOC	16

struct emu_export {
	struct list_head node;
	struct emu_alloc *alloc;
	u64 handle;			/* unguessable, never 0 */
	u64 offset;			/* of the range in the allocation */
	u64 size;
	unsigned int imports;		/* live imports */
	bool withdrawn;			/* freed or withdrawn by its owner */
};

/* One nvidia_p2p_get_pages{,_persistent}() result. */
struct emu_pin {
	struct nvidia_p2p_page_table pt; /* handed out; found by container_of */
	struct list_head node;		 /* emu->pins */
	struct list_head alloc_node;	 /* alloc->pins (non-persistent) */
	struct emu_alloc *alloc;
	pid_t tgid;
	u64 va;
	u64 len;
	bool persistent;
	bool force_bar1;		 /* NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING */
	void (*free_callback)(void *data);
	void *data;
	struct list_head dma_maps;	 /* struct emu_dma_map */
#ifdef NVP2P_EMU_TEGRA
	bool in_callback;		 /* its free callback is running */
	bool table_freed;		 /* nvidia_p2p_free_page_table() seen */
#else
	struct nvidia_p2p_page *page_structs;
	u8 uuid[NVIDIA_P2P_GPU_UUID_LEN];
#endif
};

struct emu_dma_map {
	struct nvidia_p2p_dma_mapping map; /* handed out */
	struct list_head node;		   /* emu_pin->dma_maps */
};

/* GPU memory allocated by one user, for max_mem_per_user_mb. */
struct emu_user {
	struct list_head node;		/* emu->users */
	kuid_t uid;
	u64 bytes;
	unsigned int files;		/* open files of this user */
};

/* One open file of the control device: a process's GPU VA space. */
struct emu_file {
	struct list_head allocs;
	struct emu_user *user;
	pid_t tgid;
	u64 p2p_token;
	u32 va_space;
	struct list_head node;		/* emu->files */
};

struct emu_dev {
	struct pci_dev *pdev;
	phys_addr_t mem_phys;		/* BAR2 start */
	u64 mem_size;
	void __iomem *mem;		/* BAR2, write-combined */
	struct gen_pool *pool;		/* BAR2 allocator, 64 KiB granules */
#ifdef NVP2P_EMU_TEGRA
	struct dev_pagemap *pgmap;	/* struct pages of BAR2 (devm) */
	struct list_head revoked;	/* pins whose table is not yet freed */
#endif

	/*
	 * Unbound (sysfs unbind) while files or pins were left: the
	 * device's memory is revoked, new work fails with -ENODEV, what is
	 * left ends normally, and the struct lives until module unload.
	 */
	bool gone;			/* under lock, and active written */
	struct rw_semaphore active;	/* control ioctls hold it for read */
	struct list_head zombie_node;	/* emu_zombies, once replaced */

	struct mutex lock;		/* the "RM API lock"; see above */
	struct mutex maps_lock;		/* pins, pin->dma_maps, nr_dma_maps */
	struct list_head pins;
	struct list_head files;
	struct list_head users;		/* struct emu_user, under lock */
	struct list_head exports;	/* struct emu_export, under lock */
	u32 *bar1_refs;			/* per 64 KiB page: pins mapping it */
	u64 bar1_size;
	u64 bar1_reserved;
	u64 bar1_used;
	u64 mem_used;			/* BAR2 bytes allocated, under lock */
	u8 uuid[EMU_UUID_LEN];

	/* counters, read through debugfs */
	u64 nr_allocs;
	u64 nr_imports;		/* live IPC imports */
	u64 nr_imports_total;	/* IPC imports made since load */
	u64 nr_pins;
	u64 nr_dmabufs;			/* exported, under lock */
	atomic_t nr_dmabuf_maps;	/* sg tables the exporter made, live */
	wait_queue_head_t dmabufs_gone;	/* nr_dmabufs reached 0 */
	u64 nr_dma_maps;
	u64 nr_callbacks;
	atomic_t unmaps_in_flight;	/* inside dma_unmap_pages() */
	atomic_t callbacks_in_flight;	/* a free callback's delay or call */
	atomic_t maps_returning;	/* dma_map_pages() past its lock */
	atomic_t maps_entering;		/* dma_map_pages() before its lock */
	u64 nr_stale_unmaps;		/* dma_unmap_pages() of a dead table */
	atomic_t nr_misuse;		/* see emu_misuse() */
	atomic_t nr_map_misuse;		/* of them, dma_map_pages on a dead table */
	u64 nr_unfreed_tables;		/* Tegra: on emu->revoked */
	u64 nr_leftover_dma_maps;	/* Tegra: left mapped past a callback */
	atomic64_t htod_bytes;		/* NVP2P_EMU_IOC_COPY from host memory */
	atomic64_t dtoh_bytes;		/* NVP2P_EMU_IOC_COPY to host memory */

	/* fault injection: the next calls of each kind fail */
	struct emu_fault fail_pin;	/* get_pages, get_pages_persistent */
	struct emu_fault fail_dma;	/* dma_map_pages */

	struct dentry *debugfs;
};

/*
 * The licence flavour (docs/emulator.md): NVIDIA's open driver is
 * "Dual MIT/GPL" and exports nv-p2p GPL-only; its proprietary driver is
 * licensed "NVIDIA", taints the kernel and exports them as plain symbols.
 */
#ifdef NVP2P_EMU_PROPRIETARY
#define NVP2P_EXPORT(sym)	EXPORT_SYMBOL(sym)
#define NVP2P_EMU_LICENSE	"NVIDIA"
#else
#define NVP2P_EXPORT(sym)	EXPORT_SYMBOL_GPL(sym)
#define NVP2P_EMU_LICENSE	"Dual MIT/GPL"
#endif

/*
 * The bound device; after an unbind, the unbound one until another binds
 * (which it may only once nothing uses the old one); NULL if none ever
 * bound.  Written under emu_bind_lock; never freed before module unload.
 */
extern struct emu_dev *emu;
extern struct mutex emu_bind_lock;
extern unsigned int emu_pin_latency_us;
extern unsigned int emu_callback_delay_ms;
extern unsigned int emu_unmap_delay_ms;
extern unsigned int emu_map_return_delay_ms;
extern unsigned int emu_map_entry_delay_ms;
extern unsigned int emu_expect_misuse;
extern unsigned int emu_cuda_version;
int emu_cuda_version_set(unsigned int v);
extern unsigned int emu_max_mem_per_user_mb;
extern unsigned short emu_dev_mode;
#ifdef NVP2P_EMU_TEGRA
extern unsigned int emu_dma_max_run_kb;
#else
extern bool emu_coherent;
#endif

/* mem.c */
struct emu_alloc *emu_alloc_find(pid_t tgid, u64 va, u64 len);
int emu_sub_add(struct emu_file *f, u64 va, u64 size);
int emu_sub_del(struct emu_file *f, u64 va);
int emu_alloc_create(struct emu_file *f, u64 va, u64 size,
		     struct emu_alloc **out);
void emu_alloc_free(struct emu_alloc *a);
void emu_alloc_put(struct emu_alloc *a);
int emu_export_create(struct emu_file *f, u64 va, u64 size, u64 *handle,
		      u64 *base, u64 *alloc_size);
int emu_export_withdraw(struct emu_file *f, u64 handle);
int emu_import_create(struct emu_file *f, u64 handle, u64 va, u64 size,
		      struct emu_alloc **out, u64 *offset, u64 *range);
struct emu_file *emu_file_by_token(u64 p2p_token, u32 va_space);
struct emu_user *emu_user_get(kuid_t uid);
void emu_user_put(struct emu_user *u);

/* pins.c */
int emu_pin_range(u64 va, u64 len, unsigned int shift, u64 *entries);
struct emu_pin *emu_pin_find(struct nvidia_p2p_page_table *pt);
void emu_misuse(const char *call, const char *what, const void *freed,
		size_t size);
void emu_dma_map_remove(struct emu_dma_map *m);
void emu_dma_unmap_all(struct emu_pin *pin);
int emu_fault_inject(struct emu_fault *f);

/* p2p.c (p2p_tegra.c) */
void emu_revoke_pins(struct emu_alloc *a, u64 va, u64 size);

/* dma.c (dma_tegra.c): unmap and free a mapping taken off its list */
void emu_dma_map_release(struct emu_dma_map *m);

/*
 * dmabuf.c, in the open licence flavours of the desktop interface only:
 * dma_buf_export() is GPL-only (the Tegra flavour does not export either);
 * and only on a kernel with the dma-buf core (CONFIG_DMA_SHARED_BUFFER):
 * without it the emulated GPU answers as the proprietary flavour does.
 */
#if !defined(NVP2P_EMU_PROPRIETARY) && !defined(NVP2P_EMU_TEGRA) && \
	IS_ENABLED(CONFIG_DMA_SHARED_BUFFER)
#define EMU_DMABUF 1
struct dma_buf;
int emu_dmabuf_export(struct emu_file *f, u64 va, u64 size, u32 flags,
		      struct dma_buf **buf, int *fd);
void emu_dmabuf_install(struct dma_buf *buf, int fd);
void emu_dmabuf_abort(struct dma_buf *buf, int fd);
extern unsigned int emu_dmabuf_fence_ms;
#endif

/* ctl.c */
int emu_ctl_register(void);
void emu_ctl_unregister(void);

/* knobs.c: the counters and knobs, one table for both front-ends */
struct emu_knob;
struct seq_file;
const struct emu_knob *emu_knob_at(size_t i);
const char *emu_knob_name(const struct emu_knob *k);
bool emu_knob_writable(const struct emu_knob *k);
int emu_knob_show(struct seq_file *m, void *v);
ssize_t emu_knob_write(const struct emu_knob *k, const char __user *ubuf,
		       size_t len);

/*
 * debugfs.c, or procfs.c in the proprietary flavour (a module licensed
 * "NVIDIA" may use no GPL-only symbol, and debugfs is GPL-only): knobs.c's
 * table under /sys/kernel/debug/nvp2p_emu/ or /proc/driver/nvp2p_emu/.
 */
void emu_debugfs_init(struct emu_dev *e);
void emu_debugfs_exit(struct emu_dev *e);

/*
 * emu_hold() - the delay a *_delay_ms knob asks for, the knob read again
 * every 10 ms: a test holds a window open with a long delay and ends it
 * by writing 0 once it has seen what it must see inside, so that no check
 * depends on a fixed delay being long enough.  jiffies and msleep, not
 * ktime: the proprietary flavour may use no GPL-only symbol.
 */
static inline void emu_hold(const unsigned int *knob)
{
	unsigned long start = jiffies;
	unsigned int ms, left;

	for (;;) {
		ms = READ_ONCE(*knob);
		left = ms - min(ms, jiffies_to_msecs(jiffies - start));
		if (!left)
			return;
		msleep(min(left, 10U));
	}
}

/*
 * emu_window() - a window a test holds open: while @knob asks for a delay,
 * the caller waits in emu_hold() counted in @inside, so that the test sees
 * when a call is inside.  The counter is the device's at entry (the
 * caller takes its address once): another device may bind meanwhile.
 */
static inline void emu_window(const unsigned int *knob, atomic_t *inside)
{
	if (!READ_ONCE(*knob))
		return;
	atomic_inc(inside);
	emu_hold(knob);
	atomic_dec(inside);
}

/*
 * A dma_map_pages() that made a mapping, after it dropped the API lock and
 * before it returns: a caller may be preempted there on any driver, and a
 * free callback may then run and the mapping be freed before the caller
 * sees it.  map_return_delay_ms holds the window open for tests.
 */
static inline void emu_map_return_window(void)
{
	emu_window(&emu_map_return_delay_ms, &emu->maps_returning);
}

/*
 * A dma_map_pages() on its way in, before it takes the API lock: NVIDIA's
 * reads the table's pages and GPU UUID there, and after the lock links the
 * mapping into the table, so a free callback that runs and returns
 * meanwhile leaves it using a freed table.  Here the table is looked up
 * only under the lock, where that shows as a misuse.  map_entry_delay_ms
 * holds the window open for tests.
 */
static inline void emu_map_entry_window(void)
{
	emu_window(&emu_map_entry_delay_ms, &emu->maps_entering);
}

#endif /* NVP2P_EMU_H */
