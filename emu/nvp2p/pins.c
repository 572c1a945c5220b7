// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pins.c - what both nv-p2p flavours (p2p.c and dma.c, p2p_tegra.c and
 * dma_tegra.c) share: checking a range, finding a live pin by its page
 * table, tearing down a pin's DMA mappings, and fault injection.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kasan-checks.h>

#include "emu.h"

/**
 * emu_misuse() - a call that NVIDIA's driver would turn into memory misuse
 * @call: the nv-p2p function
 * @what: what it was given, e.g. "a page table no longer live"
 * @freed: memory NVIDIA's driver would read and that is freed here (the
 *	stale table or mapping), or NULL
 * @size: bytes of @freed
 *
 * NVIDIA's driver trusts the table or mapping it is given: it reads it,
 * reaches the structure it is embedded in and may write there, so one
 * that was put or revoked is a use-after-free, and a live table of the
 * other kind reaches state that does not exist.  Here the call fails
 * cleanly, so the caller's bug is made loud instead: it is counted in
 * "misuse" and is a WARN, which the guest harness reports as a kernel
 * problem, unless a test announced it by raising "expect_misuse".
 * @freed is also checked by KASAN as the read NVIDIA's driver makes, so
 * the debug-kernel lane names its allocation and its free.
 */
void emu_misuse(const char *call, const char *what, const void *freed,
		size_t size)
{
	unsigned int n = READ_ONCE(emu_expect_misuse);

	atomic_inc(&emu->nr_misuse);
	while (n) {
		if (try_cmpxchg(&emu_expect_misuse, &n, n - 1)) {
			pr_info("%s of %s, as the test expects\n", call, what);
			return;
		}
	}
	if (freed)
		kasan_check_read(freed, size);
	WARN_RATELIMIT(1, KBUILD_MODNAME ": %s of %s: memory misuse with NVIDIA's driver\n",
		       call, what);
}

/* Return the injected error for this call, if one is armed. */
int emu_fault_inject(struct emu_fault *f)
{
	lockdep_assert_held(&emu->lock);
	if (!f->count)
		return 0;
	f->count--;
	return -f->err;
}

/*
 * The live pin whose page table is @pt; never dereferences @pt itself.
 * The pin list changes under both locks, so either one keeps it still.
 */
struct emu_pin *emu_pin_find(struct nvidia_p2p_page_table *pt)
{
	struct emu_pin *pin;

	lockdep_assert(lockdep_is_held(&emu->lock) ||
		       lockdep_is_held(&emu->maps_lock));
	list_for_each_entry(pin, &emu->pins, node)
		if (&pin->pt == pt)
			return pin;
	return NULL;
}

/**
 * emu_pin_range() - check the range of a get_pages call
 * @va: start
 * @len: bytes
 * @shift: log2 of the page size the range must be aligned to
 * @entries: out: number of pages
 *
 * Return: 0, or -EINVAL for a misaligned, empty or wrapping range, or one
 * of more than U32_MAX pages.
 */
int emu_pin_range(u64 va, u64 len, unsigned int shift, u64 *entries)
{
	if (!IS_ALIGNED(va | len, BIT_ULL(shift))) {
		pr_err_ratelimited("get_pages: address or length are not %llu KiB aligned\n",
				   BIT_ULL(shift) >> 10);
		return -EINVAL;
	}
	if (!len || va + len < va || len >> shift > U32_MAX)
		return -EINVAL;
	*entries = len >> shift;
	return 0;
}

/* Take a DMA mapping off its pin's list, unmap and free it. */
void emu_dma_map_remove(struct emu_dma_map *m)
{
	lockdep_assert_held(&emu->maps_lock);
	list_del(&m->node);
	emu->nr_dma_maps--;
	emu_dma_map_release(m);
}

/* Tear down every DMA mapping of a pin that is going away. */
void emu_dma_unmap_all(struct emu_pin *pin)
{
	struct emu_dma_map *m, *tmp;

	lockdep_assert_held(&emu->maps_lock);
	list_for_each_entry_safe(m, tmp, &pin->dma_maps, node)
		emu_dma_map_remove(m);
}
