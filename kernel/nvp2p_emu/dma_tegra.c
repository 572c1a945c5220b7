// SPDX-License-Identifier: GPL-2.0
/*
 * dma_tegra.c - nvidia_p2p_dma_map_pages() of the Tegra interface (guide
 * 13.4, nvp2p_emu built with NVP2P_EMU_TEGRA)
 *
 * The peer is any struct device and the caller names the DMA direction.
 * Each 4 KiB page is mapped with dma_map_page() (the pages are real struct
 * pages here); pages whose bus addresses follow each other are reported as
 * one entry of hw_address/hw_len, as a mapped scatterlist would be.
 *
 * Mapping takes the API lock (emu->lock); unmapping and
 * nvidia_p2p_free_dma_mapping() take only the mapping-list lock
 * (emu->maps_lock), so the free callback, which runs under the API lock,
 * may call them.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/export.h>
#include <linux/slab.h>

#include "emu.h"

/* Undo the first @pages page mappings of @m, then free it. */
static void emu_dma_map_free(struct emu_dma_map *m, u64 pages)
{
	struct nvidia_p2p_dma_mapping *map = &m->map;
	u32 e;

	for (e = 0; e < map->entries && pages; e++) {
		u32 off;

		for (off = 0; off < map->hw_len[e] && pages; off += PAGE_SIZE) {
			dma_unmap_page(map->dev, map->hw_address[e] + off,
				       PAGE_SIZE, map->direction);
			pages--;
		}
	}
	kvfree(map->hw_address);
	kvfree(map->hw_len);
	kfree(m);
}

static u64 emu_dma_map_pages_of(struct emu_dma_map *m)
{
	u64 n = 0;
	u32 e;

	for (e = 0; e < m->map.entries; e++)
		n += m->map.hw_len[e] >> PAGE_SHIFT;
	return n;
}

/* Tear down every DMA mapping of a pin that is going away. */
void emu_dma_unmap_all(struct emu_pin *pin)
{
	struct emu_dma_map *m, *tmp;

	lockdep_assert_held(&emu->maps_lock);
	list_for_each_entry_safe(m, tmp, &pin->dma_maps, node) {
		list_del(&m->node);
		emu->nr_dma_maps--;
		emu_dma_map_free(m, emu_dma_map_pages_of(m));
	}
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
 * -ENOMEM, -EIO (dma_map_page failed), or an injected error.
 */
int nvidia_p2p_dma_map_pages(struct device *dev,
			     struct nvidia_p2p_page_table *page_table,
			     struct nvidia_p2p_dma_mapping **map,
			     enum dma_data_direction direction)
{
	struct emu_dma_map *m;
	struct emu_pin *pin;
	u32 i, e = 0;
	int ret;

	if (!dev || !page_table || !map || !emu ||
	    !valid_dma_direction(direction))
		return -EINVAL;

	mutex_lock(&emu->lock);
	ret = emu_fault_inject(&emu->fail_dma);
	if (ret)
		goto out_unlock;
	pin = emu_pin_find(page_table);
	if (!pin) {
		ret = -EINVAL;
		goto out_unlock;
	}
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	m->map.hw_address = kvcalloc(pin->pt.entries, sizeof(dma_addr_t),
				     GFP_KERNEL);
	m->map.hw_len = kvcalloc(pin->pt.entries, sizeof(u32), GFP_KERNEL);
	if (!m->map.hw_address || !m->map.hw_len) {
		emu_dma_map_free(m, 0);
		ret = -ENOMEM;
		goto out_unlock;
	}
	m->map.version = NVIDIA_P2P_DMA_MAPPING_VERSION;
	m->map.dev = dev;
	m->map.page_table = page_table;
	m->map.direction = direction;

	for (i = 0; i < pin->pt.entries; i++) {
		dma_addr_t addr = dma_map_page(dev, pin->pt.pages[i], 0,
					       PAGE_SIZE, direction);

		if (dma_mapping_error(dev, addr)) {
			emu_dma_map_free(m, i);
			ret = -EIO;
			goto out_unlock;
		}
		/* A run goes on while the addresses follow each other. */
		if (m->map.entries &&
		    m->map.hw_address[e] + m->map.hw_len[e] == addr &&
		    m->map.hw_len[e] <= U32_MAX - PAGE_SIZE) {
			m->map.hw_len[e] += PAGE_SIZE;
			continue;
		}
		e = m->map.entries++;
		m->map.hw_address[e] = addr;
		m->map.hw_len[e] = PAGE_SIZE;
	}
	mutex_lock(&emu->maps_lock);
	list_add_tail(&m->node, &pin->dma_maps);
	emu->nr_dma_maps++;
	pin->pt.mapped |= NVIDIA_P2P_MAPPED;
	mutex_unlock(&emu->maps_lock);
	*map = &m->map;
out_unlock:
	mutex_unlock(&emu->lock);
	return ret;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_dma_map_pages);

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
	if (emu_unmap_delay_ms)
		msleep(emu_unmap_delay_ms);
	mutex_lock(&emu->maps_lock);
	list_for_each_entry(pin, &emu->pins, node) {
		list_for_each_entry(m, &pin->dma_maps, node) {
			if (&m->map != map)
				continue;
			list_del(&m->node);
			emu->nr_dma_maps--;
			emu_dma_map_free(m, emu_dma_map_pages_of(m));
			if (list_empty(&pin->dma_maps))
				pin->pt.mapped &= ~NVIDIA_P2P_MAPPED;
			ret = 0;
			goto out;
		}
	}
	/* Already freed with its table: the L4T driver would use freed memory. */
	emu->nr_stale_unmaps++;
	pr_err_ratelimited("nvp2p_emu: %s of a mapping that is no longer live (a use-after-free with the NVIDIA driver)\n",
			   fn);
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
 * stale_unmaps and logged).
 */
int nvidia_p2p_dma_unmap_pages(struct nvidia_p2p_dma_mapping *map)
{
	return emu_dma_unmap(map, "dma_unmap_pages");
}
EXPORT_SYMBOL_GPL(nvidia_p2p_dma_unmap_pages);

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
EXPORT_SYMBOL_GPL(nvidia_p2p_free_dma_mapping);
