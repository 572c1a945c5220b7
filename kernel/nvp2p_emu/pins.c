// SPDX-License-Identifier: GPL-2.0
/*
 * pins.c - what both nv-p2p flavours (p2p.c, p2p_tegra.c) share: finding a
 * live pin by its page table, and fault injection.
 */
#include "emu.h"

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
