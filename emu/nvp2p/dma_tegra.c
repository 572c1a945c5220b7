// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dma_tegra.c - nvidia_p2p_dma_map_pages() of the Tegra interface (guide
 * 13.4, nvp2p_emu built with NVP2P_EMU_TEGRA)
 *
 * The peer is any struct device and the caller names the DMA direction.
 * As in L4T's driver, the table's pages go into a scatterlist that is
 * mapped with dma_map_sgtable(); each mapped segment is one entry of
 * hw_address/hw_len, so a peer sees contiguous runs, whose length the
 * dma_max_run_kb knob can cap (0: no cap) to give a driver many runs to
 * handle.  A peer whose DMA mask cannot reach BAR2, with no IOMMU to
 * translate, is refused rather than bounced through swiotlb.
 *
 * Mapping takes the API lock (emu->lock); unmapping and
 * nvidia_p2p_free_dma_mapping() take only the mapping-list lock
 * (emu->maps_lock), so the free callback, which runs under the API lock,
 * may call them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/export.h>
#include <linux/iommu.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "emu.h"

/*
 * 5.15: sg_alloc_table_from_pages_segment(), returning an int; before, the
 * same table from __sg_alloc_table_from_pages() (scripts/kconftest.sh).
 */
#if defined(KC_CONFTEST) && !defined(KC_HAVE_SG_ALLOC_TABLE_FROM_PAGES_SEGMENT)
static int sg_alloc_table_from_pages_segment(struct sg_table *sgt,
					     struct page **pages,
					     unsigned int n_pages,
					     unsigned int offset,
					     unsigned long size,
					     unsigned int max_segment,
					     gfp_t gfp_mask)
{
	return PTR_ERR_OR_ZERO(__sg_alloc_table_from_pages(sgt, pages, n_pages,
							   offset, size,
							   max_segment, NULL,
							   0, gfp_mask));
}
#endif

unsigned int emu_dma_max_run_kb;

static void emu_dma_map_free(struct emu_dma_map *m, bool mapped)
{
	struct nvidia_p2p_dma_mapping *map = &m->map;

	if (mapped)
		dma_unmap_sgtable(map->dev, map->sgt, map->direction, 0);
	if (map->sgt)
		sg_free_table(map->sgt);
	kfree(map->sgt);
	kvfree(map->hw_address);
	kvfree(map->hw_len);
	kfree(m);
}

void emu_dma_map_release(struct emu_dma_map *m)
{
	emu_dma_map_free(m, true);
}

/* Can @dev reach all of BAR2 without an IOMMU? */
static bool emu_dev_reaches_bar2(struct device *dev)
{
	u64 limit = min_not_zero(dma_get_mask(dev), dev->bus_dma_limit);

	return device_iommu_mapped(dev) ||
	       emu->mem_phys + emu->mem_size - 1 <= limit;
}

static int emu_dma_build(struct emu_dma_map *m, struct emu_pin *pin,
			 struct device *dev, enum dma_data_direction direction)
{
	struct nvidia_p2p_dma_mapping *map = &m->map;
	unsigned int seg = emu_dma_max_run_kb ?
		ALIGN(emu_dma_max_run_kb << 10, PAGE_SIZE) : UINT_MAX & PAGE_MASK;
	struct scatterlist *sg;
	int i, ret;

	map->sgt = kzalloc(sizeof(*map->sgt), GFP_KERNEL);
	if (!map->sgt)
		return -ENOMEM;
	ret = sg_alloc_table_from_pages_segment(map->sgt, pin->pt.pages,
						pin->pt.entries, 0, pin->len,
						seg, GFP_KERNEL);
	if (ret)
		return ret;
	ret = dma_map_sgtable(dev, map->sgt, direction, 0);
	if (ret)
		return -EIO;
	map->hw_address = kvcalloc(map->sgt->nents, sizeof(dma_addr_t),
				   GFP_KERNEL);
	map->hw_len = kvcalloc(map->sgt->nents, sizeof(u32), GFP_KERNEL);
	if (!map->hw_address || !map->hw_len) {
		dma_unmap_sgtable(dev, map->sgt, direction, 0);
		return -ENOMEM;
	}
	for_each_sgtable_dma_sg(map->sgt, sg, i) {
		map->hw_address[i] = sg_dma_address(sg);
		map->hw_len[i] = sg_dma_len(sg);
	}
	map->entries = map->sgt->nents;
	return 0;
}

/**
 * nvidia_p2p_dma_map_pages() - map pinned pages for DMA by a peer (Tegra)
 * @dev: the third-party device
 * @page_table: a live page table from get_pages
 * @map: receives the mapping: hw_address[i], hw_len[i] per contiguous run
 * @direction: the DMA direction of the transfers to come
 *
 * May sleep.
 *
 * Return: 0, -EINVAL (bad argument or direction, a table not live),
 * -ENOMEM, -EIO (the device cannot reach the memory, or the mapping
 * failed), or an injected error.
 */
int nvidia_p2p_dma_map_pages(struct device *dev,
			     struct nvidia_p2p_page_table *page_table,
			     struct nvidia_p2p_dma_mapping **map,
			     enum dma_data_direction direction)
{
	struct emu_dma_map *m;
	struct emu_pin *pin;
	int ret;

	if (!dev || !page_table || !map || !emu ||
	    !valid_dma_direction(direction))
		return -EINVAL;

	mutex_lock(&emu->lock);
	ret = emu->gone ? -ENODEV : emu_fault_inject(&emu->fail_dma);
	if (ret)
		goto out_unlock;
	pin = emu_pin_find(page_table);
	if (!pin) {
		ret = -EINVAL;
		goto out_unlock;
	}
	if (!emu_dev_reaches_bar2(dev)) {
		dev_err_ratelimited(dev, "nvp2p_emu: DMA mask cannot reach the GPU memory\n");
		ret = -EIO;
		goto out_unlock;
	}
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	m->map.version = NVIDIA_P2P_DMA_MAPPING_VERSION;
	m->map.dev = dev;
	m->map.page_table = page_table;
	m->map.direction = direction;
	ret = emu_dma_build(m, pin, dev, direction);
	if (ret) {
		emu_dma_map_free(m, false);
		goto out_unlock;
	}
	mutex_lock(&emu->maps_lock);
	list_add_tail(&m->node, &pin->dma_maps);
	emu->nr_dma_maps++;
	pin->pt.mapped |= NVIDIA_P2P_MAPPED;
	mutex_unlock(&emu->maps_lock);
	*map = &m->map;
out_unlock:
	mutex_unlock(&emu->lock);
	if (!ret)
		emu_map_return_window();
	return ret;
}
NVP2P_EXPORT(nvidia_p2p_dma_map_pages);

/*
 * Unmap and free @map if it is a mapping of a live pin, or of one whose
 * callback is running; a mapping of neither is not touched.
 */
static int emu_dma_unmap(struct nvidia_p2p_dma_mapping *map, const char *fn)
{
	struct emu_dma_map *m;
	struct emu_pin *pin;
	int ret = -EINVAL;

	if (!map || !emu)
		return -EINVAL;
	atomic_inc(&emu->unmaps_in_flight);
	emu_hold(&emu_unmap_delay_ms);
	mutex_lock(&emu->maps_lock);
	list_for_each_entry(pin, &emu->pins, node) {
		list_for_each_entry(m, &pin->dma_maps, node) {
			if (&m->map != map)
				continue;
			emu_dma_map_remove(m);
			if (list_empty(&pin->dma_maps))
				pin->pt.mapped &= ~NVIDIA_P2P_MAPPED;
			ret = 0;
			goto out;
		}
	}
	/* Already freed with its table: the L4T driver would use freed memory. */
	emu->nr_stale_unmaps++;
	emu_misuse(fn, "a mapping no longer live", map, sizeof(*map));
out:
	mutex_unlock(&emu->maps_lock);
	atomic_dec(&emu->unmaps_in_flight);
	return ret;
}

/**
 * nvidia_p2p_dma_unmap_pages() - undo nvidia_p2p_dma_map_pages() (Tegra)
 * @map: the mapping
 *
 * Takes only the mapping-list lock.  May sleep.
 *
 * Return: 0, or -EINVAL for NULL or a mapping no longer live (counted in
 * stale_unmaps and misuse, and a WARN: emu_misuse()).
 */
int nvidia_p2p_dma_unmap_pages(struct nvidia_p2p_dma_mapping *map)
{
	return emu_dma_unmap(map, "dma_unmap_pages");
}
NVP2P_EXPORT(nvidia_p2p_dma_unmap_pages);

/**
 * nvidia_p2p_free_dma_mapping() - unmap and free a mapping from the callback
 * @dma_mapping: a mapping of the table whose free callback is running
 *
 * On Tegra this unmaps (the desktop driver frees mappings itself after the
 * callback).  Takes only the mapping-list lock.  May sleep.
 *
 * Return: as nvidia_p2p_dma_unmap_pages().
 */
int nvidia_p2p_free_dma_mapping(struct nvidia_p2p_dma_mapping *dma_mapping)
{
	return emu_dma_unmap(dma_mapping, "free_dma_mapping");
}
NVP2P_EXPORT(nvidia_p2p_free_dma_mapping);
