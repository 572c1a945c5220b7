// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * p2p.c - nvidia_p2p_get_pages() and friends, with the NVIDIA driver's rules
 *
 * What a third-party driver must be able to rely on, and must survive, is
 * reproduced here (see docs/emulator.md for the list and its sources):
 *  - address and length aligned to 64 KiB, else -EINVAL;
 *  - get_pages with a NULL free callback is -EINVAL (driver 535 and later);
 *  - with zero tokens only the process that owns the memory may pin it;
 *  - the range must lie inside one allocation;
 *  - BAR1 is a budget with a reserved part: -ENOMEM when it would be
 *    exceeded.  Overlapping pins share BAR1 pages (CUDA 7.0 and later);
 *  - the free callback runs synchronously with emu->lock held, and the BAR1
 *    pages and the page table are released only after it returns;
 *  - put_pages of a revoked page table returns 0 without touching it, and
 *    waits on emu->lock while a callback is in flight;
 *  - dma_unmap_pages does not take emu->lock (only emu->maps_lock), so it
 *    runs while a callback is in flight and the callback may wait for it;
 *  - persistent pins never see a callback and keep the memory alive;
 *  - on a coherent platform (the coherent knob) page tables are
 *    CPU-cacheable, as NVIDIA's driver reports GPU memory reached over
 *    C2C or NVLink; a persistent pin with NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING
 *    takes the PCIe BAR1 path instead, whose table is not cacheable, and
 *    may be mapped by the CPU only: dma_map_pages of it is -ENOTSUPP.  A
 *    GPU behind PCIe refuses FORCE_BAR1_MAPPING with -ENOTSUPP;
 *  - a call on a table put or revoked, or put_pages_persistent of a table
 *    that is not persistent, reads freed or absent state in NVIDIA's
 *    driver: here it fails, and emu_misuse() makes it loud.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/export.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "emu.h"

/* BAR1 pages a new pin needs; U64_MAX if a page has all the pins it can. */
static u64 bar1_pages_needed(u64 first, u64 count)
{
	u64 i, n = 0;

	lockdep_assert_held(&emu->lock);
	for (i = 0; i < count; i++) {
		if (emu->bar1_refs[first + i] == U32_MAX)
			return U64_MAX;
		if (!emu->bar1_refs[first + i])
			n++;
	}
	return n;
}

static void bar1_map(u64 first, u64 count)
{
	u64 i;

	lockdep_assert_held(&emu->lock);
	for (i = 0; i < count; i++)
		if (emu->bar1_refs[first + i]++ == 0)
			emu->bar1_used += EMU_PAGE_SIZE;
}

static void bar1_unmap(u64 first, u64 count)
{
	u64 i;

	lockdep_assert_held(&emu->lock);
	for (i = 0; i < count; i++)
		if (--emu->bar1_refs[first + i] == 0)
			emu->bar1_used -= EMU_PAGE_SIZE;
}

static u64 pin_first_page(struct emu_pin *pin)
{
	return (pin->alloc->mem_offset + (pin->va - pin->alloc->va)) >>
		EMU_PAGE_SHIFT;
}

/* Unlink and free a pin whose callback (if any) has already run. */
static void emu_pin_destroy(struct emu_pin *pin)
{
	lockdep_assert_held(&emu->lock);
	mutex_lock(&emu->maps_lock);
	emu_dma_unmap_all(pin);
	list_del(&pin->node);
	mutex_unlock(&emu->maps_lock);
	bar1_unmap(pin_first_page(pin), pin->pt.entries);
	if (!pin->persistent)
		list_del(&pin->alloc_node);
	emu->nr_pins--;
	kvfree(pin->pt.pages);
	kvfree(pin->page_structs);
	kfree(pin);
}

/*
 * Revoke every non-persistent pin of @a that covers a byte of [va, va +
 * size): the user freed the memory (or one allocation in a shared page),
 * or the process that owns it went away.
 */
void emu_revoke_pins(struct emu_alloc *a, u64 va, u64 size)
{
	struct emu_pin *pin, *tmp;

	lockdep_assert_held(&emu->lock);
	list_for_each_entry_safe(pin, tmp, &a->pins, alloc_node) {
		if (pin->va >= va + size || va >= pin->va + pin->len)
			continue;
		/* A delay here widens the window third parties must handle. */
		atomic_inc(&emu->callbacks_in_flight);
		emu_hold(&emu_callback_delay_ms);
		emu->nr_callbacks++;
		pin->free_callback(pin->data);
		atomic_dec(&emu->callbacks_in_flight);
		/* Only now: BAR1 pages, DMA mappings and the table go away. */
		emu_pin_destroy(pin);
	}
}

static int emu_get_pages(u64 p2p_token, u32 va_space, u64 va, u64 len,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data,
			 bool persistent, bool force_bar1)
{
	struct emu_pin *pin = NULL;
	struct emu_alloc *a;
	u64 entries, first, i, need;
	int ret;

	if (!emu)
		return -ENODEV;
	ret = emu_pin_range(va, len, EMU_PAGE_SHIFT, &entries);
	if (ret)
		return ret;
	/*
	 * As RmP2PGetPagesPersistent(): the forced PCIe path is an
	 * alternative to a coherent link, so a GPU behind PCIe, which has
	 * only that path, refuses the request.
	 */
	if (force_bar1 && !READ_ONCE(emu_coherent))
		return -ENOTSUPP;

	/* Pinning is slow on real GPUs (about a millisecond): so is ours. */
	if (emu_pin_latency_us)
		fsleep(emu_pin_latency_us);

	mutex_lock(&emu->lock);
	ret = emu->gone ? -ENODEV : emu_fault_inject(&emu->fail_pin);
	if (ret)
		goto out_unlock;

	if (p2p_token || va_space) {
		/* Legacy tokens name a VA space, whatever the caller. */
		struct emu_file *f = emu_file_by_token(p2p_token, va_space);

		a = f ? emu_alloc_find(f->tgid, va, len) : NULL;
		if (a && a->owner != f)
			a = NULL;
	} else {
		/* Zero tokens: only the owning process may pin. */
		a = emu_alloc_find(current->tgid, va, len);
	}
	if (!a) {
		ret = -EINVAL;
		goto out_unlock;
	}

	first = (a->mem_offset + (va - a->va)) >> EMU_PAGE_SHIFT;
	need = bar1_pages_needed(first, entries);
	if (need == U64_MAX ||
	    emu->bar1_used + (need << EMU_PAGE_SHIFT) + emu->bar1_reserved >
	    emu->bar1_size) {
		ret = -ENOMEM;
		goto out_unlock;
	}

	/*
	 * Sized only now: the range lies in a real allocation, so a caller's
	 * absurd length cannot make us allocate absurd tables.
	 */
	pin = kzalloc(sizeof(*pin), GFP_KERNEL);
	if (pin) {
		pin->page_structs = kvcalloc(entries, sizeof(*pin->page_structs),
					     GFP_KERNEL);
		pin->pt.pages = kvcalloc(entries, sizeof(*pin->pt.pages),
					 GFP_KERNEL);
	}
	if (!pin || !pin->page_structs || !pin->pt.pages) {
		ret = -ENOMEM;
		goto out_unlock;
	}

	pin->alloc = a;
	pin->tgid = a->tgid;
	pin->va = va;
	pin->len = len;
	pin->persistent = persistent;
	pin->force_bar1 = force_bar1;
	pin->free_callback = free_callback;
	pin->data = data;
	INIT_LIST_HEAD(&pin->dma_maps);
	memcpy(pin->uuid, emu->uuid, sizeof(pin->uuid));

	pin->pt.version = NVIDIA_P2P_PAGE_TABLE_VERSION;
	pin->pt.page_size = NVIDIA_P2P_PAGE_SIZE_64KB;
	pin->pt.entries = entries;
	pin->pt.gpu_uuid = pin->uuid;
#ifndef NVP2P_EMU_PAGE_TABLE_V1
	/*
	 * As rm_p2p_get_pages*(): memory reached over a coherent link is
	 * CPU-cacheable, BAR1 pages (any GPU behind PCIe, or the forced
	 * PCIe path) are not.  The addresses stay BAR2's either way, the
	 * only ones that reach the emulated GPU's memory.
	 */
	pin->pt.flags = READ_ONCE(emu_coherent) && !force_bar1 ?
			NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE : 0;
#endif
	for (i = 0; i < entries; i++) {
		pin->page_structs[i].physical_address =
			emu->mem_phys + ((first + i) << EMU_PAGE_SHIFT);
		pin->pt.pages[i] = &pin->page_structs[i];
	}

	bar1_map(first, entries);
	mutex_lock(&emu->maps_lock);
	list_add_tail(&pin->node, &emu->pins);
	mutex_unlock(&emu->maps_lock);
	if (persistent)
		kref_get(&a->ref);
	else
		list_add_tail(&pin->alloc_node, &a->pins);
	emu->nr_pins++;
	*page_table = &pin->pt;
	mutex_unlock(&emu->lock);
	return 0;

out_unlock:
	mutex_unlock(&emu->lock);
	if (pin) {
		kvfree(pin->pt.pages);
		kvfree(pin->page_structs);
		kfree(pin);
	}
	return ret;
}

/**
 * nvidia_p2p_get_pages() - pin GPU memory for a third-party device
 * @p2p_token: legacy token of the VA space (deprecated), or 0
 * @va_space: legacy VA space token (deprecated), or 0
 * @virtual_address: GPU virtual address, 64 KiB aligned
 * @length: bytes, a multiple of 64 KiB
 * @page_table: receives the page table
 * @free_callback: called, synchronously, if the mapping is revoked
 * @data: passed to @free_callback
 *
 * With zero tokens, only the process owning the memory may pin it.  May
 * sleep.
 *
 * Return: 0, -EINVAL (bad argument, not owner, not one allocation, NULL
 * callback), -ENOMEM (no memory, or BAR1 exhausted), or an injected error.
 */
int nvidia_p2p_get_pages(uint64_t p2p_token, uint32_t va_space,
			 uint64_t virtual_address, uint64_t length,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data)
{
	if (!page_table || !free_callback)
		return -EINVAL;
	return emu_get_pages(p2p_token, va_space, virtual_address, length,
			     page_table, free_callback, data, false, false);
}
NVP2P_EXPORT(nvidia_p2p_get_pages);

/**
 * nvidia_p2p_get_pages_persistent() - pin GPU memory until explicitly put
 * @virtual_address: GPU virtual address, 64 KiB aligned
 * @length: bytes, a multiple of 64 KiB
 * @page_table: receives the page table
 * @flags: NVIDIA_P2P_FLAGS_DEFAULT or NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING
 *
 * The pin keeps the memory alive even after the owner frees it; no callback
 * is ever invoked.  NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING, on a coherent
 * platform only, pins through PCIe BAR1: the table is not CPU-cacheable and
 * is for CPU mappings only, as in NVIDIA's driver (nvidia_p2p_dma_map_pages()
 * of it is -ENOTSUPP).  May sleep.
 *
 * Return: as nvidia_p2p_get_pages(); also -ENOTSUPP for
 * NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING on a GPU that is not coherent.
 */
int nvidia_p2p_get_pages_persistent(uint64_t virtual_address, uint64_t length,
				    struct nvidia_p2p_page_table **page_table,
				    uint32_t flags)
{
	if (!page_table || flags > NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING)
		return -EINVAL;
	return emu_get_pages(0, 0, virtual_address, length, page_table,
			     NULL, NULL, true,
			     flags == NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING);
}
NVP2P_EXPORT(nvidia_p2p_get_pages_persistent);

/**
 * nvidia_p2p_put_pages() - release pages pinned by nvidia_p2p_get_pages()
 * @p2p_token: token given to get_pages, or 0
 * @va_space: token given to get_pages, or 0
 * @virtual_address: address given to get_pages
 * @page_table: the page table get_pages returned
 *
 * Must be called from the process that pinned (with zero tokens); a call
 * from another process is ignored, as by the NVIDIA driver, which looks
 * only among the calling process's tables (before any other check).  If
 * the mapping was already revoked, returns 0 without touching @page_table;
 * if its free callback is running, waits for it first.  May sleep.
 *
 * Return: 0, or -EINVAL for a persistent table or a wrong address.
 */
int nvidia_p2p_put_pages(uint64_t p2p_token, uint32_t va_space,
			 uint64_t virtual_address,
			 struct nvidia_p2p_page_table *page_table)
{
	struct emu_pin *pin;
	int ret = 0;

	if (!page_table || !emu)
		return 0;
	mutex_lock(&emu->lock);
	pin = emu_pin_find(page_table);
	if (!pin)
		goto out;		/* revoked already: not an error */
	/*
	 * Without tokens NVIDIA's driver looks the table up among the calling
	 * process's registrations only: another's, even one at the address a
	 * stale pointer names, is not found, and the put returns 0.
	 */
	if (!p2p_token && !va_space && pin->tgid != current->tgid) {
		pr_warn_ratelimited("put_pages from process %d, pinned by %d: ignored\n",
				    current->tgid, pin->tgid);
		goto out;
	}
	if (pin->persistent || pin->va != virtual_address) {
		ret = -EINVAL;
		goto out;
	}
	emu_pin_destroy(pin);
out:
	mutex_unlock(&emu->lock);
	return ret;
}
NVP2P_EXPORT(nvidia_p2p_put_pages);

/**
 * nvidia_p2p_put_pages_persistent() - release a persistent pin
 * @virtual_address: address given to get_pages_persistent
 * @page_table: the page table it returned
 * @flags: must be 0
 *
 * May be called from any process.  A table put or revoked already, or one
 * from nvidia_p2p_get_pages(), is memory misuse in NVIDIA's driver and
 * here an emu_misuse() WARN.  May sleep.
 *
 * Return: 0 (also for a NULL table), or -EINVAL for bad flags, an unknown
 * or non-persistent table or a wrong address.
 */
int nvidia_p2p_put_pages_persistent(uint64_t virtual_address,
				    struct nvidia_p2p_page_table *page_table,
				    uint32_t flags)
{
	struct emu_pin *pin;
	struct emu_alloc *a;
	int ret = -EINVAL;

	if (flags)
		return -EINVAL;
	/* As NVIDIA's driver: nothing to put is success. */
	if (!page_table)
		return 0;
	if (!emu)
		return -EINVAL;
	mutex_lock(&emu->lock);
	pin = emu_pin_find(page_table);
	if (!pin)
		emu_misuse("put_pages_persistent",
			   "a page table no longer live (put or revoked)",
			   page_table, sizeof(*page_table));
	else if (!pin->persistent)
		emu_misuse("put_pages_persistent",
			   "a page table from get_pages (not persistent)",
			   NULL, 0);
	else if (pin->va == virtual_address) {
		a = pin->alloc;
		emu_pin_destroy(pin);
		emu_alloc_put(a);
		ret = 0;
	}
	mutex_unlock(&emu->lock);
	return ret;
}
NVP2P_EXPORT(nvidia_p2p_put_pages_persistent);

/**
 * nvidia_p2p_free_page_table() - free a page table from the free callback
 * @page_table: the revoked page table
 *
 * A no-op, as in the NVIDIA driver: the table is freed after the callback
 * returns.
 *
 * Return: 0.
 */
int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table)
{
	return 0;
}
NVP2P_EXPORT(nvidia_p2p_free_page_table);

/**
 * nvidia_p2p_init_mapping() - obsolete mailbox interface
 * @p2p_token: unused
 * @params: unused
 * @destroy_callback: unused
 * @data: unused
 *
 * Return: -ENOTSUPP, as in the NVIDIA driver.
 */
int nvidia_p2p_init_mapping(uint64_t p2p_token,
			    struct nvidia_p2p_params *params,
			    void (*destroy_callback)(void *data), void *data)
{
	return -ENOTSUPP;
}
NVP2P_EXPORT(nvidia_p2p_init_mapping);

/**
 * nvidia_p2p_destroy_mapping() - obsolete mailbox interface
 * @p2p_token: unused
 *
 * Return: -ENOTSUPP, as in the NVIDIA driver.
 */
int nvidia_p2p_destroy_mapping(uint64_t p2p_token)
{
	return -ENOTSUPP;
}
NVP2P_EXPORT(nvidia_p2p_destroy_mapping);
