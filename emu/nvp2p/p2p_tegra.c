// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * p2p_tegra.c - nvidia_p2p_get_pages() and friends of the Tegra interface
 * (guide 13.4, nvp2p_emu built with NVP2P_EMU_TEGRA)
 *
 * What differs from the desktop interface (p2p.c), and what a third-party
 * driver ported to Tegra must handle:
 *  - no tokens; address and length aligned to 4 KiB, else -EINVAL;
 *  - the page table holds struct pages, one per 4 KiB page;
 *  - put_pages always runs the free callback (13.4.3), synchronously, with
 *    emu->lock held, as a revocation does;
 *  - the driver frees the table with nvidia_p2p_free_page_table(), from
 *    the callback or later: it stays valid until then, and a table never
 *    freed is reported when the emulator goes away;
 *  - no persistent pins and no BAR1: an integrated GPU's memory is system
 *    memory.
 * The rest is shared with the desktop flavour: only the owning process may
 * pin, the range must lie in one allocation, freeing the memory or exiting
 * revokes its pins.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/export.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "emu.h"

static void emu_pin_free(struct emu_pin *pin)
{
	kvfree(pin->pt.pages);
	kfree(pin);
}

/*
 * Run the free callback of a live pin and unlink it.  Its table stays
 * valid until the driver frees it: here, if the callback did, or later
 * through nvidia_p2p_free_page_table() (the pin waits on emu->revoked).
 */
static void emu_pin_end(struct emu_pin *pin)
{
	lockdep_assert_held(&emu->lock);
	atomic_inc(&emu->callbacks_in_flight);
	emu_hold(&emu_callback_delay_ms);
	mutex_lock(&emu->maps_lock);
	pin->in_callback = true;
	mutex_unlock(&emu->maps_lock);

	emu->nr_callbacks++;
	pin->free_callback(pin->data);
	atomic_dec(&emu->callbacks_in_flight);

	mutex_lock(&emu->maps_lock);
	pin->in_callback = false;
	/* The driver should have freed them (free_dma_mapping): count it. */
	if (!list_empty(&pin->dma_maps)) {
		emu->nr_leftover_dma_maps++;
		pr_err_ratelimited("a free callback returned with DMA mappings of its table left (L4T would leak them)\n");
	}
	emu_dma_unmap_all(pin);
	list_del(&pin->node);
	list_del(&pin->alloc_node);
	emu->nr_pins--;
	pin->pt.mapped = NVIDIA_P2P_UNINITIALIZED;
	if (pin->table_freed) {
		emu_pin_free(pin);
	} else {
		list_add_tail(&pin->node, &emu->revoked);
		emu->nr_unfreed_tables++;
	}
	mutex_unlock(&emu->maps_lock);
}

/*
 * The user freed the memory (or one allocation in a shared page, covering
 * [va, va + size)), or the process that owns it went away.
 */
void emu_revoke_pins(struct emu_alloc *a, u64 va, u64 size)
{
	struct emu_pin *pin, *tmp;

	lockdep_assert_held(&emu->lock);
	list_for_each_entry_safe(pin, tmp, &a->pins, alloc_node)
		if (pin->va < va + size && va < pin->va + pin->len)
			emu_pin_end(pin);
}

/**
 * nvidia_p2p_get_pages() - pin GPU memory for a third-party device (Tegra)
 * @vaddr: GPU virtual address, 4 KiB aligned
 * @size: bytes, a multiple of 4 KiB
 * @page_table: receives the page table
 * @free_callback: called, synchronously, when the pages go away: on
 *	revocation and on nvidia_p2p_put_pages()
 * @data: passed to @free_callback; not NULL
 *
 * Only the process owning the memory may pin it.  May sleep.
 *
 * Return: 0, -EINVAL (bad argument, not owner, not one allocation), -ENOMEM,
 * or an injected error.
 */
int nvidia_p2p_get_pages(u64 vaddr, u64 size,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data)
{
	struct emu_pin *pin = NULL;
	struct emu_alloc *a;
	unsigned long pfn;
	u64 entries, i;
	int ret;

	if (!emu)
		return -ENODEV;
	if (!page_table || !free_callback || !data)
		return -EINVAL;
	ret = emu_pin_range(vaddr, size, PAGE_SHIFT, &entries);
	if (ret)
		return ret;

	if (emu_pin_latency_us)
		fsleep(emu_pin_latency_us);

	mutex_lock(&emu->lock);
	ret = emu->gone ? -ENODEV : emu_fault_inject(&emu->fail_pin);
	if (ret)
		goto out_unlock;
	a = emu_alloc_find(current->tgid, vaddr, size);
	if (!a) {
		ret = -EINVAL;
		goto out_unlock;
	}
	/* Sized only once the range is known to lie in an allocation. */
	pin = kzalloc(sizeof(*pin), GFP_KERNEL);
	if (pin)
		pin->pt.pages = kvcalloc(entries, sizeof(*pin->pt.pages),
					 GFP_KERNEL);
	if (!pin || !pin->pt.pages) {
		ret = -ENOMEM;
		goto out_unlock;
	}

	pin->alloc = a;
	pin->tgid = a->tgid;
	pin->va = vaddr;
	pin->len = size;
	pin->free_callback = free_callback;
	pin->data = data;
	INIT_LIST_HEAD(&pin->dma_maps);

	pin->pt.version = NVIDIA_P2P_PAGE_TABLE_VERSION;
	pin->pt.page_size = NVIDIA_P2P_PAGE_SIZE_4KB;
	pin->pt.size = size;
	pin->pt.entries = entries;
	pin->pt.vaddr = vaddr;
	pin->pt.mapped = NVIDIA_P2P_PINNED;
	pin->pt.mm = current->mm;
	mutex_init(&pin->pt.lock);
	pin->pt.free_callback = free_callback;
	pin->pt.data = data;
	pfn = PHYS_PFN(emu->mem_phys + a->mem_offset + (vaddr - a->va));
	for (i = 0; i < entries; i++)
		pin->pt.pages[i] = pfn_to_page(pfn + i);

	mutex_lock(&emu->maps_lock);
	list_add_tail(&pin->node, &emu->pins);
	mutex_unlock(&emu->maps_lock);
	list_add_tail(&pin->alloc_node, &a->pins);
	emu->nr_pins++;
	*page_table = &pin->pt;
	mutex_unlock(&emu->lock);
	return 0;

out_unlock:
	mutex_unlock(&emu->lock);
	if (pin)
		emu_pin_free(pin);
	return ret;
}
NVP2P_EXPORT(nvidia_p2p_get_pages);

/**
 * nvidia_p2p_put_pages() - release pages pinned by nvidia_p2p_get_pages()
 * @page_table: the page table get_pages returned
 *
 * Runs the free callback, synchronously, before it returns (13.4.3); the
 * table stays valid until nvidia_p2p_free_page_table().  A table already
 * revoked is left alone.  May sleep.
 *
 * Return: 0, or -EINVAL for a NULL table.
 */
int nvidia_p2p_put_pages(struct nvidia_p2p_page_table *page_table)
{
	struct emu_pin *pin;

	if (!page_table)
		return -EINVAL;
	if (!emu)
		return 0;
	mutex_lock(&emu->lock);
	pin = emu_pin_find(page_table);
	if (pin)
		emu_pin_end(pin);
	mutex_unlock(&emu->lock);
	return 0;
}
NVP2P_EXPORT(nvidia_p2p_put_pages);

/**
 * nvidia_p2p_free_page_table() - free a page table after its callback
 * @page_table: a table whose free callback has run or is running
 *
 * Called from the free callback, or after it.  Takes only the mapping
 * lock, so it is safe from a callback that runs under the API lock.
 *
 * Return: 0, or -EINVAL for a table that is unknown or still pinned (put
 * it first).
 */
int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table)
{
	struct emu_pin *pin;
	int ret = -EINVAL;

	if (!page_table || !emu)
		return -EINVAL;
	mutex_lock(&emu->maps_lock);
	pin = emu_pin_find(page_table);
	if (pin) {
		if (pin->in_callback && !pin->table_freed) {
			pin->table_freed = true;	/* emu_pin_end frees it */
			ret = 0;
		}
		goto out;
	}
	list_for_each_entry(pin, &emu->revoked, node) {
		if (&pin->pt == page_table) {
			list_del(&pin->node);
			emu->nr_unfreed_tables--;
			emu_pin_free(pin);
			ret = 0;
			break;
		}
	}
out:
	mutex_unlock(&emu->maps_lock);
	if (ret)
		pr_err_ratelimited("free_page_table of a table that is unknown or still pinned\n");
	return ret;
}
NVP2P_EXPORT(nvidia_p2p_free_page_table);
