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
 *
 * Overlapping pins share the memtypes: the kernel keeps all of them in one
 * tree under one global lock, which every PFN fault of MMIO takes, and
 * each reservation (ioremap, remap_pfn_range, a pin) walks every entry
 * that overlaps its range with that lock held, so k pins of the same pages
 * must not make k entries.  gdirect reserves each BAR range once, as a
 * segment: the segments are disjoint, each holds one memtype of exactly
 * its range and counts the runs that meet it.  A run takes a count on each
 * segment it meets and reserves the gaps between them as new segments (or,
 * where a gap cannot be reserved, gives its counts back and holds nothing);
 * on release it drops a count on each segment it meets, and a segment
 * whose count falls to zero frees its memtype.  A segment lives while any
 * run meeting it does, so no segment is made inside a held run, and the
 * segments a run meets at release are those it counted in.  Each segment
 * contains a page of a held run, so there are at most as many segments as
 * distinct BAR pages pinned, and one per run where pins do not overlap.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/io.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "gdirect_internal.h"
#include "kcompat.h"

/* The maple tree came in 6.1; before, a sorted list (scripts/kconftest.sh). */
#if !defined(KC_CONFTEST) || defined(KC_HAVE_MAPLE_TREE)
#define GD_WC_MAPLE
#include <linux/maple_tree.h>
#endif

/* Segments are indexed by 4 KiB page, the smallest BAR page size. */
#define GD_WC_SHIFT	12

/* One memtype reservation shared by the runs that meet its range. */
struct gd_wc_seg {
	u64 start, end;			/* bytes, end exclusive */
	unsigned int users;		/* runs that meet it; under gd_wc_lock */
#ifndef GD_WC_MAPLE
	struct list_head node;		/* in gd_wc_list, by start */
#endif
};

/*
 * gd_wc_lock serialises every change of gd_wc_segs and of the counts, and
 * the memtype reservations made and freed for them, so that a segment
 * never exists without its memtype.  It is a mutex because reserving
 * allocates; it nests inside no gdirect lock (pin, release and the free
 * callback take it with none held).
 */
static DEFINE_MUTEX(gd_wc_lock);
#ifdef GD_WC_MAPLE
static DEFINE_MTREE(gd_wc_segs);

static unsigned long gd_wc_idx(u64 addr)
{
	return addr >> GD_WC_SHIFT;
}

/* The first segment that meets [pos, end), or NULL. */
static struct gd_wc_seg *gd_wc_next(u64 pos, u64 end)
{
	unsigned long idx = gd_wc_idx(pos);

	lockdep_assert_held(&gd_wc_lock);
	return mt_find(&gd_wc_segs, &idx, gd_wc_idx(end) - 1);
}

static void gd_wc_erase(struct gd_wc_seg *seg)
{
	mtree_erase(&gd_wc_segs, gd_wc_idx(seg->start));
}

/* Index @seg, which no segment meets; -ENOMEM and such on failure. */
static int gd_wc_insert(struct gd_wc_seg *seg)
{
	return mtree_insert_range(&gd_wc_segs, gd_wc_idx(seg->start),
				  gd_wc_idx(seg->end) - 1, seg,
				  GFP_KERNEL_ACCOUNT);
}

static bool gd_wc_empty_destroy(void)
{
	unsigned long idx = 0;
	bool empty = !mt_find(&gd_wc_segs, &idx, ULONG_MAX);

	mtree_destroy(&gd_wc_segs);
	return empty;
}
#else
/*
 * Without the maple tree the segments are a list sorted by start; a
 * lookup walks it, which costs one step per segment held.
 */
static LIST_HEAD(gd_wc_list);

static struct gd_wc_seg *gd_wc_next(u64 pos, u64 end)
{
	struct gd_wc_seg *seg;

	lockdep_assert_held(&gd_wc_lock);
	list_for_each_entry(seg, &gd_wc_list, node) {
		if (seg->start >= end)
			break;
		if (seg->end > pos)
			return seg;
	}
	return NULL;
}

static void gd_wc_erase(struct gd_wc_seg *seg)
{
	list_del(&seg->node);
}

static int gd_wc_insert(struct gd_wc_seg *seg)
{
	struct gd_wc_seg *at;

	list_for_each_entry(at, &gd_wc_list, node)
		if (at->start >= seg->start)
			break;
	if (&at->node != &gd_wc_list && at->start < seg->end)
		return -EEXIST;
	list_add_tail(&seg->node, &at->node);
	return 0;
}

static bool gd_wc_empty_destroy(void)
{
	return list_empty(&gd_wc_list);
}
#endif

/* Drop the count of each segment that meets [start, end). */
static void gd_wc_put_range(u64 start, u64 end)
{
	struct gd_wc_seg *seg;
	u64 pos = start;

	lockdep_assert_held(&gd_wc_lock);
	while (pos < end && (seg = gd_wc_next(pos, end))) {
		pos = seg->end;
		if (--seg->users)
			continue;
		gd_wc_erase(seg);
		arch_io_free_memtype_wc(seg->start, seg->end - seg->start);
		kfree(seg);
	}
}

/* Reserve [start, end), which no segment meets, as a new segment. */
static int gd_wc_new_seg(u64 start, u64 end)
{
	struct gd_wc_seg *seg;
	int ret;

	lockdep_assert_held(&gd_wc_lock);
	seg = kmalloc(sizeof(*seg), GFP_KERNEL_ACCOUNT);
	if (!seg)
		return -ENOMEM;
	seg->start = start;
	seg->end = end;
	seg->users = 1;
	/*
	 * 0 also when the range already had an uncached type, which it then
	 * keeps: the memtype API tells a module no more.
	 */
	ret = arch_io_reserve_memtype_wc(start, end - start);
	if (ret) {
		kfree(seg);
		return -EBUSY;
	}
	ret = gd_wc_insert(seg);
	if (ret) {
		arch_io_free_memtype_wc(start, end - start);
		kfree(seg);
	}
	return ret;
}

/*
 * Count [start, end) in the segments that meet it and reserve the gaps
 * between them: all of it or, on failure, none.
 */
static int gd_wc_get_range(u64 start, u64 end)
{
	struct gd_wc_seg *seg;
	u64 pos = start;
	int ret;

	lockdep_assert_held(&gd_wc_lock);
	while (pos < end) {
		seg = gd_wc_next(pos, end);
		if (!seg || seg->start > pos) {
			ret = gd_wc_new_seg(pos, seg ? seg->start : end);
			if (ret) {
				gd_wc_put_range(start, pos);
				return ret;
			}
		}
		if (!seg)
			break;
		seg->users++;
		pos = seg->end;
	}
	return 0;
}

/**
 * gd_reserve_wc() - hold write-combining memtypes for r's BAR pages
 * @r: a user registration, before it is published as PINNED
 * @pt: its page table, version-checked
 *
 * Best effort: a run that cannot be reserved keeps its existing type.
 * Runs that overlap another registration's share its memtypes.
 *
 * Context: process; sleeps (takes gd_wc_lock and allocates).
 */
void gd_reserve_wc(struct gd_reg *r, struct nvidia_p2p_page_table *pt)
{
	u64 pb = gd_nv_page_bytes(pt), start, len;
	struct gd_wc_run *runs;
	u32 i, n = 0, nruns = 0;
	int ret;

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
	mutex_lock(&gd_wc_lock);
	while (i < pt->entries) {
		start = gd_nv_page_phys(pt, i);
		len = pb;
		while (++i < pt->entries && gd_nv_page_phys(pt, i) == start + len)
			len += pb;
		ret = gd_wc_get_range(start, start + len);
		if (ret == -EBUSY) {
			atomic64_inc(&gd_stats.wc_conflicts);
			pr_info_ratelimited("BAR pages %#llx+%#llx already have a conflicting memory type; CPU mappings keep it\n",
					    start, len);
		}
		if (ret)
			continue;
		runs[n].start = start;
		runs[n++].len = len;
	}
	mutex_unlock(&gd_wc_lock);
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
 * A shared memtype is freed with its last user.
 *
 * Context: process, no gdirect lock held; sleeps when r holds memtypes.
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
	if (!n)
		return;
	mutex_lock(&gd_wc_lock);
	for (i = 0; i < n; i++)
		gd_wc_put_range(runs[i].start, runs[i].start + runs[i].len);
	mutex_unlock(&gd_wc_lock);
	kvfree(runs);
}

/**
 * gd_wc_exit() - free the segment index at module unload
 *
 * Every registration has released its memtypes by then: a registration
 * still pinned holds the module.  Context: process; sleeps.
 */
void gd_wc_exit(void)
{
	mutex_lock(&gd_wc_lock);
	WARN_ON_ONCE(!gd_wc_empty_destroy());
	mutex_unlock(&gd_wc_lock);
}
