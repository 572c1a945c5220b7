// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dma.c - nvidia_p2p_dma_map_pages(): BAR pages as DMA addresses of a peer
 *
 * Each 64 KiB page is mapped for the peer with dma_map_resource(), as the
 * NVIDIA driver does where the platform supports it, so the addresses are
 * right with or without an IOMMU.  A page table may have one mapping per
 * peer; all are torn down with the table (put_pages or revocation).
 *
 * Mapping takes the API lock (emu->lock), as the NVIDIA driver's does;
 * unmapping takes only the mapping-list lock (emu->maps_lock), so it can
 * run while a free callback is in flight (see emu.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/export.h>
#include <linux/slab.h>

#include "emu.h"

static void emu_dma_map_free(struct emu_dma_map *m, u32 mapped)
{
	u32 i;

	for (i = 0; i < mapped; i++)
		dma_unmap_resource(&m->map.pci_dev->dev,
				   m->map.dma_addresses[i], EMU_PAGE_SIZE,
				   DMA_BIDIRECTIONAL,
				   EMU_DMA_RESOURCE_ATTRS);
	kvfree(m->map.dma_addresses);
	kfree(m);
}

void emu_dma_map_release(struct emu_dma_map *m)
{
	emu_dma_map_free(m, m->map.entries);
}

/**
 * nvidia_p2p_dma_map_pages() - map pinned pages for DMA by a peer device
 * @peer: the third-party PCI device
 * @page_table: a live page table from get_pages
 * @dma_mapping: receives the mapping, one address per 64 KiB page
 *
 * A table put or revoked already is a use-after-free in NVIDIA's driver
 * and here an emu_misuse() WARN.  May sleep.
 *
 * Return: 0, -EINVAL (bad argument, or a table not live), -ENOTSUPP (a
 * persistent table pinned with NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING, for
 * CPU mappings only, as in NVIDIA's driver), -ENOMEM, -EIO
 * (dma_map_resource failed), or an injected error.
 */
int nvidia_p2p_dma_map_pages(struct pci_dev *peer,
			     struct nvidia_p2p_page_table *page_table,
			     struct nvidia_p2p_dma_mapping **dma_mapping)
{
	struct emu_dma_map *m;
	struct emu_pin *pin;
	u32 i = 0;
	int ret;

	if (!peer || !page_table || !dma_mapping || !emu)
		return -EINVAL;

	emu_map_entry_window();
	mutex_lock(&emu->lock);
	ret = emu->gone ? -ENODEV : emu_fault_inject(&emu->fail_dma);
	if (ret)
		goto out_unlock;
	pin = emu_pin_find(page_table);
	if (!pin) {
		atomic_inc(&emu->nr_map_misuse);
		emu_misuse("dma_map_pages",
			   "a page table no longer live (put or revoked)",
			   page_table, sizeof(*page_table));
		ret = -EINVAL;
		goto out_unlock;
	}
	if (pin->force_bar1) {
		ret = -ENOTSUPP;
		goto out_unlock;
	}
	if (pin->pt.page_size != NVIDIA_P2P_PAGE_SIZE_64KB) {
		ret = -EINVAL;
		goto out_unlock;
	}

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	m->map.dma_addresses = kvcalloc(pin->pt.entries, sizeof(u64),
					GFP_KERNEL);
	if (!m->map.dma_addresses) {
		kfree(m);
		ret = -ENOMEM;
		goto out_unlock;
	}
	m->map.version = NVIDIA_P2P_DMA_MAPPING_VERSION;
	m->map.page_size_type = pin->pt.page_size;
	m->map.entries = pin->pt.entries;
	m->map.pci_dev = peer;
	m->map.private = m;

	for (i = 0; i < pin->pt.entries; i++) {
		dma_addr_t addr;

		addr = dma_map_resource(&peer->dev,
					pin->pt.pages[i]->physical_address,
					EMU_PAGE_SIZE, DMA_BIDIRECTIONAL,
					EMU_DMA_RESOURCE_ATTRS);
		if (dma_mapping_error(&peer->dev, addr)) {
			emu_dma_map_free(m, i);
			ret = -EIO;
			goto out_unlock;
		}
		m->map.dma_addresses[i] = addr;
	}
	mutex_lock(&emu->maps_lock);
	list_add_tail(&m->node, &pin->dma_maps);
	emu->nr_dma_maps++;
	mutex_unlock(&emu->maps_lock);
	*dma_mapping = &m->map;
out_unlock:
	mutex_unlock(&emu->lock);
	if (!ret)
		emu_map_return_window();
	return ret;
}
NVP2P_EXPORT(nvidia_p2p_dma_map_pages);

/**
 * nvidia_p2p_dma_unmap_pages() - undo nvidia_p2p_dma_map_pages()
 * @peer: the device the mapping was made for
 * @page_table: the page table it was made from
 * @dma_mapping: the mapping
 *
 * An unknown mapping of a live table is not an error: returns 0 without
 * touching it.  A table that is no longer live (revoked or put) also
 * returns 0, but is counted in stale_unmaps and is an emu_misuse() WARN:
 * the NVIDIA driver would dereference it after it was freed.  Takes only the mapping-list
 * lock, never the API lock, so it may run while a free callback of the
 * same table is in flight (and the callback may wait for it).  May sleep.
 *
 * Return: 0, or -EINVAL for NULL arguments or a peer that does not match.
 */
int nvidia_p2p_dma_unmap_pages(struct pci_dev *peer,
			       struct nvidia_p2p_page_table *page_table,
			       struct nvidia_p2p_dma_mapping *dma_mapping)
{
	struct emu_dma_map *m;
	struct emu_pin *pin;
	int ret = 0;

	if (!peer || !page_table || !dma_mapping || !emu)
		return -EINVAL;

	/* Widens the window in which a free callback can race the unmap. */
	atomic_inc(&emu->unmaps_in_flight);
	emu_hold(&emu_unmap_delay_ms);

	mutex_lock(&emu->maps_lock);
	pin = emu_pin_find(page_table);
	if (!pin) {
		/*
		 * The NVIDIA driver would take container_of() of a freed
		 * table here: a use-after-free in the caller's unmap path.
		 */
		emu->nr_stale_unmaps++;
		emu_misuse("dma_unmap_pages",
			   "a page table no longer live (put or revoked)",
			   page_table, sizeof(*page_table));
		goto out;
	}
	list_for_each_entry(m, &pin->dma_maps, node) {
		if (&m->map != dma_mapping)
			continue;
		if (m->map.pci_dev != peer) {
			pr_err_ratelimited("dma_unmap_pages: wrong peer\n");
			ret = -EINVAL;
			goto out;
		}
		emu_dma_map_remove(m);
		break;
	}
out:
	mutex_unlock(&emu->maps_lock);
	atomic_dec(&emu->unmaps_in_flight);
	return ret;
}
NVP2P_EXPORT(nvidia_p2p_dma_unmap_pages);

/**
 * nvidia_p2p_free_dma_mapping() - free a DMA mapping from the free callback
 * @dma_mapping: the mapping of a revoked page table
 *
 * A no-op, as in the NVIDIA driver: mappings are freed with the table,
 * after the callback returns.
 *
 * Return: 0.
 */
int nvidia_p2p_free_dma_mapping(struct nvidia_p2p_dma_mapping *dma_mapping)
{
	return 0;
}
NVP2P_EXPORT(nvidia_p2p_free_dma_mapping);
