/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place that knows the kernel differences gdirect builds across
 *
 * Each entry names the kernel version that changed the interface; Kbuild
 * defines the GD_HAVE_* macros by looking at the target kernel's headers,
 * so a distribution kernel with a backport is handled as well.  The nv-p2p
 * side is in nvp2p_compat.h.
 */
#ifndef GDIRECT_KCOMPAT_H
#define GDIRECT_KCOMPAT_H

#include <linux/mm.h>
#include <asm/pgtable.h>

/*
 * Where the entry says "probed", scripts/kconftest.sh compiled a use of the
 * interface against the target kernel and defined KC_HAVE_* where it
 * built (KC_CONFTEST says its header was passed); without that header the
 * newest kernel is assumed.
 */

/* 5.11 renamed vm_operations_struct.split may_split; probed. */
#if defined(KC_CONFTEST) && !defined(KC_HAVE_VM_OPS_MAY_SPLIT)
#define GD_VM_OPS_MAY_SPLIT	split
#else
#define GD_VM_OPS_MAY_SPLIT	may_split
#endif

/* 5.15 added address_space.invalidate_lock; probed. */
#if defined(KC_CONFTEST) && !defined(KC_HAVE_MAPPING_INVALIDATE_LOCK)
#define gd_mapping_init_invalidate_lock(m)	do { } while (0)
#else
#define gd_mapping_init_invalidate_lock(m)	init_rwsem(&(m)->invalidate_lock)
#endif

/* 6.3: vma->vm_flags became read-only, written with vm_flags_set/clear. */
#ifdef GD_HAVE_VM_FLAGS_SET
#define gd_vm_flags_set(vma, f)		vm_flags_set(vma, f)
#define gd_vm_flags_clear(vma, f)	vm_flags_clear(vma, f)
#else
#define gd_vm_flags_set(vma, f)		((vma)->vm_flags |= (f))
#define gd_vm_flags_clear(vma, f)	((vma)->vm_flags &= ~(f))
#endif

/*
 * 7.x: a mapping is described before its VMA exists, in a vm_area_desc
 * (file_operations.mmap_prepare), and counted once the VMA is established
 * (vm_operations_struct.mapped); probed.  gdirect maps that way where it
 * can, because there vm_flags_set() write-locks the VMA through
 * __vma_start_write(), a GPL-only export that a module next to NVIDIA's
 * proprietary driver may not import (gdrcopy#335), while the descriptor's
 * flags are plain bits.
 */
#if !defined(KC_CONFTEST) || defined(KC_HAVE_MMAP_PREPARE_MAPPED)
#define GD_MMAP_PREPARE
#endif

/*
 * 6.12: no_llseek is gone.  It was NULL since 6.0, and a NULL .llseek has
 * always meant -ESPIPE, so file_operations leave .llseek unset instead.
 */

/*
 * Write-combining protection for a BAR mapping.  x86's
 * pgprot_writecombine() is an EXPORT_SYMBOL_GPL function, which a module
 * next to NVIDIA's proprietary driver may not call; it only ORs in the PAT
 * bits of the WC cache mode, and cachemode2protval() (a plain export since
 * 4.2) gives those.  Without PAT (nopat, or a CPU without it) the kernel's
 * table maps WC to UC-, so the mapping is uncached: WC is impossible there
 * for any driver.  Other architectures define pgprot_writecombine() as a
 * macro, which uses no symbol.
 */
#ifdef CONFIG_X86
static inline pgprot_t gd_pgprot_writecombine(pgprot_t prot)
{
	return __pgprot(pgprot_val(prot) |
			cachemode2protval(_PAGE_CACHE_MODE_WC));
}
#else
#define gd_pgprot_writecombine(prot)	pgprot_writecombine(prot)
#endif

#endif /* GDIRECT_KCOMPAT_H */
