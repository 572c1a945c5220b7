/* SPDX-License-Identifier: GPL-2.0 */
/*
 * State shared by the files of gdirect_edu.ko
 *
 * Locks: edu_dev.gone_sem (shared by ioctls, exclusive in remove) before
 * edu_dev.files_lock before gdedu_file.lock (one transfer or cache change
 * per file at a time) before edu_dev.dma_lock (the device has one DMA
 * engine).
 * Neither is ever taken by the invalidate callback, which only marks an
 * entry stale: the callback runs under the NVIDIA driver's lock, and
 * gdirect_pin()/gdirect_unpin() are called with gdedu_file.lock held.
 */
#ifndef GDEDU_INTERNAL_H
#define GDEDU_INTERNAL_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/rwsem.h>

#include "gdirect_kapi.h"
#include "gdirect_edu.h"

/* edu's DMA buffer, seen from the device side */
#define EDU_BUF_ADDR		0x40000
/* qemu 7.2 rejects a 4096-byte transfer (off by one): stay well below */
#define EDU_CHUNK		2048

struct edu_dev {
	struct kref ref;		/* probe, and each open file */
	struct rw_semaphore gone_sem;	/* ioctls vs remove */
	bool gone;			/* removed: no device access */
	struct mutex files_lock;	/* files */
	struct list_head files;		/* open gdedu_files, for remove */
	struct pci_dev *pdev;
	void __iomem *mmio;
	struct mutex dma_lock;		/* the single DMA engine */
	void *bounce;			/* EDU_CHUNK of coherent RAM */
	dma_addr_t bounce_dma;
	struct miscdevice misc;
};

struct gdedu_entry {
	struct gdirect_region *region;
	u64 start, size;		/* range actually pinned */
	bool stale;			/* set by the invalidate callback */
	struct gdedu_file *file;
	struct list_head lru;		/* most recently used first */
};

struct gdedu_file {
	struct edu_dev *edu;
	struct list_head node;		/* edu->files */
	pid_t owner_tgid;		/* the opener: tgid and start time */
	u64 owner_start;
	struct mutex lock;		/* cache and transfers of this file */
	struct list_head cache;
	unsigned int cached;
	struct gdedu_stats stats;
	atomic64_t invalidations;
	struct list_head dmabufs;	/* struct gdedu_dmabuf */
	unsigned int nr_dmabufs;
	u32 next_dmabuf_id;
};

/* An attached dma-buf (dmabuf.c), under its file's lock. */
struct gdedu_dmabuf {
	struct list_head node;		/* gdedu_file->dmabufs */
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;		/* NULL once the device went */
	u64 size;
	u32 id;
	bool moved;			/* move_notify came (never, pinned) */
};

extern unsigned int gdedu_max_pins;

/* engine.c */
int edu_engine_init(struct edu_dev *edu);
void edu_engine_exit(struct edu_dev *edu);
int edu_dma_to_gpu(struct edu_dev *edu, u64 gpu_dma, const void *src, u32 len);
int edu_dma_from_gpu(struct edu_dev *edu, u64 gpu_dma, void *dst, u32 len);

/* cache.c */
int gdedu_pin(struct gdedu_file *f, const struct gdirect_pin_params *p,
	      struct gdedu_entry **out);
struct gdedu_entry *gdedu_lookup(struct gdedu_file *f, u64 addr, u64 len);
void gdedu_drop(struct gdedu_file *f, struct gdedu_entry *e);
void gdedu_flush(struct gdedu_file *f);
void gdedu_unmap_all(struct gdedu_file *f);
int gdedu_xfer(struct gdedu_file *f, const struct gdedu_xfer *x);

/*
 * dmabuf.c: not built for NVIDIA's proprietary driver, where no GPL-only
 * symbol may be used (the dma-buf API is GPL-only), nor for a kernel
 * without the dma-buf core (CONFIG_DMA_SHARED_BUFFER, which only drivers
 * select): the import ioctls then answer EOPNOTSUPP.
 */
#if !defined(GDIRECT_PROPRIETARY) && IS_ENABLED(CONFIG_DMA_SHARED_BUFFER)
#define GDEDU_DMABUF 1
int gdedu_dmabuf_attach(struct gdedu_file *f, struct gdedu_dmabuf_attach *a);
int gdedu_dmabuf_detach(struct gdedu_file *f, u32 id);
int gdedu_dmabuf_xfer(struct gdedu_file *f, const struct gdedu_dmabuf_xfer *x);
void gdedu_dmabuf_detach_all(struct gdedu_file *f);
void gdedu_dmabuf_unmap_all(struct gdedu_file *f);
#else
static inline void gdedu_dmabuf_detach_all(struct gdedu_file *f) { }
static inline void gdedu_dmabuf_unmap_all(struct gdedu_file *f) { }
#endif

#endif /* GDEDU_INTERNAL_H */
