// SPDX-License-Identifier: GPL-2.0
/*
 * Observability: /proc/driver/gdirect/{stats,regions}, root only
 *
 * procfs rather than debugfs: every debugfs entry point is GPL-only, and
 * gdirect must load next to NVIDIA's proprietary driver (GD_EXPORT).
 *
 * stats: one "name value" line per counter.
 * regions: per process (owner tgid) a summary line
 *	"process TGID regions N bytes B callbacks C"
 * followed by one line per registration of that process:
 *	"  handle H addr A size S pages P state ST mode M mapped L phys X"
 * where X is the bus address of the first page (root-only file; tests use
 * it to find the region in the GPU's backing memory).  Kernel-API regions
 * have handle 0.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/proc_fs.h>
#include <linux/seq_file.h>

#include "gdirect_internal.h"

#define GD_PROC_DIR	"driver/gdirect"

static int gd_stats_show(struct seq_file *s, void *unused)
{
#define GD_STAT(n) seq_printf(s, #n " %lld\n", (long long)atomic64_read(&gd_stats.n))
	GD_STAT(pins);
	GD_STAT(pin_failures);
	GD_STAT(unpins);
	GD_STAT(callbacks);
	GD_STAT(orphaned);
	GD_STAT(persistent_pins);
	GD_STAT(version_mismatch);
	GD_STAT(live_regions);
	GD_STAT(live_bytes);
	GD_STAT(mmaps);
	GD_STAT(events);
	GD_STAT(put_errors);
	GD_STAT(dma_maps);
	GD_STAT(unmap_waits);
	GD_STAT(wc_conflicts);
#undef GD_STAT
	return 0;
}

static const char *const gd_state_names[] = {
	[GD_PINNING]	= "pinning",
	[GD_PINNED]	= "pinned",
	[GD_RELEASING]	= "releasing",
	[GD_REVOKED]	= "revoked",
	[GD_DEAD]	= "dead",
};

/* Is @owner's summary printed already (by an earlier registration)? */
static bool gd_owner_seen(struct gd_reg *upto, const struct gd_owner *owner)
{
	struct gd_reg *r;

	lockdep_assert_held(&gd_regs_lock);
	list_for_each_entry(r, &gd_regs, node) {
		if (r == upto)
			return false;
		if (gd_owner_eq(&r->owner, owner))
			return true;
	}
	return false;
}

static void gd_show_owner(struct seq_file *s, const struct gd_owner *owner)
{
	u64 n = 0, bytes = 0, callbacks = 0;
	struct nvidia_p2p_page_table *pt;
	struct gd_reg *r;
	u64 phys;

	lockdep_assert_held(&gd_regs_lock);
	list_for_each_entry(r, &gd_regs, node) {
		if (!gd_owner_eq(&r->owner, owner))
			continue;
		n++;
		bytes += r->size;
		callbacks += READ_ONCE(r->revoked);
	}
	seq_printf(s, "process %d regions %llu bytes %llu callbacks %llu\n",
		   owner->tgid, n, bytes, callbacks);
	list_for_each_entry(r, &gd_regs, node) {
		if (!gd_owner_eq(&r->owner, owner))
			continue;
		spin_lock(&r->lock);
		pt = r->pt;
		phys = pt && r->state == GD_PINNED ? gd_nv_page_phys(pt, 0) : 0;
		seq_printf(s, "  handle %llu addr %#llx size %#llx pages %llu state %s mode %s mapped %lld phys %#llx\n",
			   r->handle, r->addr, r->size, r->size >> GD_PAGE_SHIFT,
			   gd_state_names[r->state],
			   r->persistent ? "persistent" : "callback",
			   (long long)atomic64_read(&r->mapped_len), phys);
		spin_unlock(&r->lock);
	}
}

static int gd_regions_show(struct seq_file *s, void *unused)
{
	struct gd_reg *r;

	spin_lock(&gd_regs_lock);
	list_for_each_entry(r, &gd_regs, node)
		if (!gd_owner_seen(r, &r->owner))
			gd_show_owner(s, &r->owner);
	spin_unlock(&gd_regs_lock);
	return 0;
}

void gd_procfs_init(void)
{
	struct proc_dir_entry *d = proc_mkdir(GD_PROC_DIR, NULL);

	/* Observability only: gdirect works without it. */
	if (!d || !proc_create_single("stats", 0400, d, gd_stats_show) ||
	    !proc_create_single("regions", 0400, d, gd_regions_show))
		pr_warn("no /proc/%s: statistics unavailable\n", GD_PROC_DIR);
}

void gd_procfs_exit(void)
{
	remove_proc_subtree(GD_PROC_DIR, NULL);
}
