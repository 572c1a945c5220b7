/* SPDX-License-Identifier: MIT */
/*
 * nv-p2p-tegra.h - the Tegra (Jetson, DRIVE) nv-p2p kernel API, as exported
 * by nvp2p_emu.ko built with NVP2P_EMU_TEGRA
 *
 * The interface of guide 13.4.2: no tokens, page tables of struct pages,
 * a struct device and a DMA direction for dma_map_pages, one-argument put
 * and unmap, and put_pages that always runs the free callback.  The struct
 * layouts are those of the L4T driver's <linux/nv-p2p.h> (the mmu_notifier,
 * mutex and sg_table members included, so every later offset matches); a
 * third-party driver builds unchanged against either.
 *
 * Included by nv-p2p.h when NVP2P_EMU_TEGRA is defined.  The typedefs are
 * part of that ABI, as in nv-p2p.h.
 */
#ifndef _NV_P2P_TEGRA_H_
#define _NV_P2P_TEGRA_H_

#include <linux/dma-mapping.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/types.h>

/* page_table->mapped */
#define NVIDIA_P2P_UNINITIALIZED	0x0
#define NVIDIA_P2P_PINNED		0x1U
#define NVIDIA_P2P_MAPPED		0x2U

/* Version words: major in the high 16 bits, minor in the low 16 bits. */
#define NVIDIA_P2P_MAJOR_VERSION_MASK	0xffff0000
#define NVIDIA_P2P_MINOR_VERSION_MASK	0x0000ffff

#define NVIDIA_P2P_MAJOR_VERSION(v) \
	(((v) & NVIDIA_P2P_MAJOR_VERSION_MASK) >> 16)
#define NVIDIA_P2P_MINOR_VERSION(v) \
	(((v) & NVIDIA_P2P_MINOR_VERSION_MASK))

#define NVIDIA_P2P_MAJOR_VERSION_MATCHES(p, v) \
	(NVIDIA_P2P_MAJOR_VERSION((p)->version) == NVIDIA_P2P_MAJOR_VERSION(v))

#define NVIDIA_P2P_VERSION_COMPATIBLE(p, v) \
	(NVIDIA_P2P_MAJOR_VERSION_MATCHES(p, v) && \
	 (NVIDIA_P2P_MINOR_VERSION((p)->version) >= \
	  (NVIDIA_P2P_MINOR_VERSION(v))))

enum nvidia_p2p_page_size_type {
	NVIDIA_P2P_PAGE_SIZE_4KB = 0,
	NVIDIA_P2P_PAGE_SIZE_64KB,
	NVIDIA_P2P_PAGE_SIZE_128KB,
	NVIDIA_P2P_PAGE_SIZE_COUNT
};

typedef struct nvidia_p2p_page_table {
	u32 version;
	u32 page_size;		/* enum nvidia_p2p_page_size_type */
	u64 size;		/* bytes pinned */
	u32 entries;
	struct page **pages;	/* one per page_size page */

	u64 vaddr;
	u32 mapped;		/* NVIDIA_P2P_PINNED, NVIDIA_P2P_MAPPED */

	struct mm_struct *mm;
	struct mmu_notifier mn;	/* the provider's; unused by the emulator */
	struct mutex lock;	/* the provider's; unused by the emulator */
	void (*free_callback)(void *data);
	void *data;
} nvidia_p2p_page_table_t;

#define NVIDIA_P2P_PAGE_TABLE_VERSION	0x00010000

#define NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(p) \
	NVIDIA_P2P_VERSION_COMPATIBLE(p, NVIDIA_P2P_PAGE_TABLE_VERSION)

typedef struct nvidia_p2p_dma_mapping {
	u32 version;
	dma_addr_t *hw_address;	/* one per contiguous run */
	u32 *hw_len;		/* its length in bytes */
	u32 entries;

	struct sg_table *sgt;
	struct device *dev;
	struct nvidia_p2p_page_table *page_table;
	enum dma_data_direction direction;
} nvidia_p2p_dma_mapping_t;

#define NVIDIA_P2P_DMA_MAPPING_VERSION	0x00010000

#define NVIDIA_P2P_DMA_MAPPING_VERSION_COMPATIBLE(p) \
	NVIDIA_P2P_VERSION_COMPATIBLE(p, NVIDIA_P2P_DMA_MAPPING_VERSION)

int nvidia_p2p_get_pages(u64 vaddr, u64 size,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data);

int nvidia_p2p_put_pages(struct nvidia_p2p_page_table *page_table);

int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table);

int nvidia_p2p_dma_map_pages(struct device *dev,
			     struct nvidia_p2p_page_table *page_table,
			     struct nvidia_p2p_dma_mapping **map,
			     enum dma_data_direction direction);

int nvidia_p2p_dma_unmap_pages(struct nvidia_p2p_dma_mapping *map);

int nvidia_p2p_free_dma_mapping(struct nvidia_p2p_dma_mapping *dma_mapping);

#endif /* _NV_P2P_TEGRA_H_ */
