// SPDX-License-Identifier: GPL-2.0
/*
 * Write-combining memtypes for the BAR pages of user registrations
 *
 * On x86 with PAT, vmf_insert_pfn_prot() takes the cache mode of a PFN
 * from its memtype reservation and, for MMIO that nobody reserved, falls
 * back to UC- whatever the VMA asked for; CPU copies
 * through an uncached BAR are an order of magnitude slower.  (mmap-time
 * io_remap_pfn_range(), as gdrdrv uses, reserves as it maps.)  So a pinned
 * region that is not CPU-cacheable holds a write-combining memtype for
 * each run of contiguous BAR pages, from pin until its pages are put or
 * revoked.  Where the range already has another type, the mapping keeps
 * it: silently if that type is uncached (the reservation then succeeds
 * with it, and the memtype API tells a module nothing more), with a
 * wc_conflict counted in the statistics if it is one WC cannot share (WB, or
 * several types over the run).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/io.h>
#include <linux/slab.h>

#include "gdirect_internal.h"

/**
 * gd_reserve_wc() - hold write-combining memtypes for r's BAR pages
 * @r: a user registration, before it is published as PINNED
 * @pt: its page table, version-checked
 *
 * Best effort: a run that cannot be reserved keeps its existing type.
 */
void gd_reserve_wc(struct gd_reg *r, struct nvidia_p2p_page_table *pt)
{
	u64 pb = gd_nv_page_bytes(pt), start, len;
	struct gd_wc_run *runs;
	u32 i, n = 0, nruns = 0;

	if (!r->ctx || r->cpu_cacheable || !pt->entries)
		return;
	/* Count the runs first: usually one, whatever the size. */
	for (i = 0; i < pt->entries; i++)
		if (!i || gd_nv_page_phys(pt, i) != gd_nv_page_phys(pt, i - 1) + pb)
			nruns++;
	runs = kvcalloc(nruns, sizeof(*runs), GFP_KERNEL_ACCOUNT);
	if (!runs)
		return;
	i = 0;
	while (i < pt->entries) {
		start = gd_nv_page_phys(pt, i);
		len = pb;
		while (++i < pt->entries && gd_nv_page_phys(pt, i) == start + len)
			len += pb;
		/*
		 * 0 also when the range already had an uncached type, which
		 * it then keeps: the memtype API tells a module no more.
		 */
		if (arch_io_reserve_memtype_wc(start, len)) {
			atomic64_inc(&gd_stats.wc_conflicts);
			pr_info_ratelimited("BAR pages %#llx+%#llx already have a conflicting memory type; CPU mappings keep it\n",
					    start, len);
			continue;
		}
		runs[n].start = start;
		runs[n++].len = len;
	}
	if (!n) {
		kvfree(runs);
		return;
	}
	spin_lock(&r->lock);
	r->wc_runs = runs;
	r->nr_wc_runs = n;
	spin_unlock(&r->lock);
}

/**
 * gd_release_wc() - drop what gd_reserve_wc() holds
 * @r: the registration, whose pages are being put or revoked
 *
 * Once only, whichever of release and callback comes; safe in the callback.
 */
void gd_release_wc(struct gd_reg *r)
{
	struct gd_wc_run *runs;
	u32 i, n;

	spin_lock(&r->lock);
	runs = r->wc_runs;
	n = r->nr_wc_runs;
	r->wc_runs = NULL;
	r->nr_wc_runs = 0;
	spin_unlock(&r->lock);
	for (i = 0; i < n; i++)
		arch_io_free_memtype_wc(runs[i].start, runs[i].len);
	kvfree(runs);
}
