/* SPDX-License-Identifier: MIT */
/*
 * The Tegra (Jetson, DRIVE) nv-p2p interface, chapter 13.4
 *
 * Used only when gdirect is built with GDIRECT_TEGRA=1.  On a Tegra board
 * the platform's own nv-p2p.h takes precedence: put its directory first on
 * the include path and define GDIRECT_TEGRA_SYSTEM_HEADER.  The declarations
 * below follow the 13.4.2 table: no tokens, a struct device and a DMA
 * direction for dma_map, and one-argument put and unmap.
 */
#ifndef GDIRECT_NVP2P_TEGRA_H
#define GDIRECT_NVP2P_TEGRA_H

#ifdef GDIRECT_TEGRA_SYSTEM_HEADER
#include <linux/nv-p2p.h>
#else

#include <linux/dma-direction.h>
#include <linux/mm_types.h>
#include <linux/types.h>

struct device;

#define NVIDIA_P2P_MAJOR_VERSION_MASK	0xffff0000
#define NVIDIA_P2P_MINOR_VERSION_MASK	0x0000ffff
#define NVIDIA_P2P_MAJOR_VERSION(v) \
	(((v) & NVIDIA_P2P_MAJOR_VERSION_MASK) >> 16)
#define NVIDIA_P2P_MINOR_VERSION(v) ((v) & NVIDIA_P2P_MINOR_VERSION_MASK)
static inline bool nvidia_p2p_tegra_version_ok(u32 have, u32 want)
{
	return NVIDIA_P2P_MAJOR_VERSION(have) == NVIDIA_P2P_MAJOR_VERSION(want) &&
	       NVIDIA_P2P_MINOR_VERSION(have) >= NVIDIA_P2P_MINOR_VERSION(want);
}

#define NVIDIA_P2P_VERSION_COMPATIBLE(p, v) \
	nvidia_p2p_tegra_version_ok((p)->version, v)

#define NVIDIA_P2P_PAGE_TABLE_VERSION	0x00010000
#define NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(p) \
	NVIDIA_P2P_VERSION_COMPATIBLE(p, NVIDIA_P2P_PAGE_TABLE_VERSION)
#define NVIDIA_P2P_DMA_MAPPING_VERSION	0x00010000
#define NVIDIA_P2P_DMA_MAPPING_VERSION_COMPATIBLE(p) \
	NVIDIA_P2P_VERSION_COMPATIBLE(p, NVIDIA_P2P_DMA_MAPPING_VERSION)

enum nvidia_p2p_page_size_type {
	NVIDIA_P2P_PAGE_SIZE_4KB = 0,
	NVIDIA_P2P_PAGE_SIZE_64KB,
	NVIDIA_P2P_PAGE_SIZE_128KB,
	NVIDIA_P2P_PAGE_SIZE_COUNT
};

struct nvidia_p2p_page_table {
	u32 version;
	u32 page_size;
	u64 size;
	u32 entries;
	struct page **pages;
	u64 vaddr;
	u32 mapped;
	struct mm_struct *mm;
	void (*free_callback)(void *data);
	void *data;
};

struct nvidia_p2p_dma_mapping {
	u32 version;
	dma_addr_t *hw_address;
	u32 *hw_len;
	u32 entries;
	u64 page_size;
	struct nvidia_p2p_page_table *page_table;
	struct device *dev;
	enum dma_data_direction direction;
};

int nvidia_p2p_get_pages(u64 virtual_address, u64 length,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data);
int nvidia_p2p_put_pages(struct nvidia_p2p_page_table *page_table);
int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table);
int nvidia_p2p_dma_map_pages(struct device *dev,
			     struct nvidia_p2p_page_table *page_table,
			     struct nvidia_p2p_dma_mapping **dma_mapping,
			     enum dma_data_direction direction);
int nvidia_p2p_dma_unmap_pages(struct nvidia_p2p_dma_mapping *dma_mapping);
int nvidia_p2p_free_dma_mapping(struct nvidia_p2p_dma_mapping *dma_mapping);

#endif /* GDIRECT_TEGRA_SYSTEM_HEADER */
#endif /* GDIRECT_NVP2P_TEGRA_H */
