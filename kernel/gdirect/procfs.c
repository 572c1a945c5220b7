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
 * have handle 0.  Processes come in the order of their first registration,
 * each one's registrations in the order they were made.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/sort.h>

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
	GD_STAT(stale_peer_pins);
	GD_STAT(peer_pins_unpaired);
#ifdef GDIRECT_DEBUG_KNOBS
	GD_STAT(dbg_freed_wakes);
	GD_STAT(dbg_map_type_mismatch);
#endif
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

/*
 * regions is formatted from a snapshot taken at open(): the registrations
 * are copied in id order, GD_PROC_BATCH at a time under gd_regs' lock,
 * which is dropped between batches; each copy is made under the
 * registration's own lock.  The copies are then grouped by owner (two
 * sorts, O(N log N), no lock held) and printed record by record through a
 * seq_file iterator, so a full buffer costs one record again, not the
 * whole file.  The lock is never held for more than a batch, whatever N.
 */
#define GD_PROC_BATCH	256

/* One registration as it was when copied. */
struct gd_proc_reg {
	struct gd_owner owner;
	u32 id;			/* in gd_regs: the order of registration */
	u32 key;		/* the id of its owner's first registration */
	u64 handle, addr, size, phys;
	s64 mapped;
	enum gd_state state;
	bool persistent, revoked;
};

/* One process's summary: its registrations are regs[first, first + n). */
struct gd_proc_owner {
	u32 first, n;
	u64 bytes, callbacks;
};

/*
 * What one open file of regions shows.  Record p of the file is owner k's
 * summary when p == k + owners[k].first, else one of its registrations.
 */
struct gd_proc_snap {
	struct gd_proc_reg *regs;
	struct gd_proc_owner *owners;
	u32 nregs, nowners;
	u32 cur_owner, cur_reg;	/* the record start()/next() chose */
	bool cur_summary;
};

static void gd_proc_copy(struct gd_proc_reg *c, struct gd_reg *r)
{
	struct nvidia_p2p_page_table *pt;

	lockdep_assert_held(&gd_regs.xa_lock);
	c->owner = r->owner;
	c->id = r->proc_id;
	c->handle = r->handle;
	c->addr = r->addr;
	c->size = r->size;
	c->persistent = r->persistent;
	spin_lock(&r->lock);
	c->mapped = atomic64_read(&r->mapped_len);
	pt = r->pt;
	c->state = r->state;
	c->revoked = r->revoked;
	c->phys = pt && r->state == GD_PINNED && r->table_ok ?
		  gd_nv_page_phys(pt, 0) : 0;
	spin_unlock(&r->lock);
}

/* Copy every listed registration into s->regs; 0 or -ENOMEM, -EINTR. */
static int gd_proc_collect(struct gd_proc_snap *s)
{
	u32 cap = 0, n = 0, batch;
	unsigned long id = 0;
	struct gd_proc_reg *regs = NULL, *grown;
	struct gd_reg *r;

	do {
		/* Room for a whole batch, allocated with no lock held. */
		if (cap - n < GD_PROC_BATCH) {
			if (cap > U32_MAX / 2 - GD_PROC_BATCH)
				goto err_nomem;
			cap = max_t(u32, cap * 2, 4 * GD_PROC_BATCH);
			grown = kvmalloc_array(cap, sizeof(*grown),
					       GFP_KERNEL_ACCOUNT);
			if (!grown)
				goto err_nomem;
			if (n)
				memcpy(grown, regs, n * sizeof(*regs));
			kvfree(regs);
			regs = grown;
		}
		batch = 0;
		xa_lock(&gd_regs);
		xa_for_each_start(&gd_regs, id, r, id) {
			gd_proc_copy(&regs[n++], r);
			if (++batch == GD_PROC_BATCH)
				break;
		}
		xa_unlock(&gd_regs);
		/* Next time, start after the last id copied. */
		id++;
		if (fatal_signal_pending(current)) {
			kvfree(regs);
			return -EINTR;
		}
		cond_resched();
	} while (batch == GD_PROC_BATCH && id);
	s->regs = regs;
	s->nregs = n;
	return 0;

err_nomem:
	kvfree(regs);
	return -ENOMEM;
}

static int gd_proc_cmp_u64(u64 a, u64 b)
{
	return a < b ? -1 : a > b;
}

/* By owner, then by id. */
static int gd_proc_by_owner(const void *a, const void *b)
{
	const struct gd_proc_reg *x = a, *y = b;

	if (x->owner.tgid != y->owner.tgid)
		return x->owner.tgid < y->owner.tgid ? -1 : 1;
	if (x->owner.start_time != y->owner.start_time)
		return gd_proc_cmp_u64(x->owner.start_time,
				       y->owner.start_time);
	return gd_proc_cmp_u64(x->id, y->id);
}

/* By the owner's first registration, then by id. */
static int gd_proc_by_key(const void *a, const void *b)
{
	const struct gd_proc_reg *x = a, *y = b;

	if (x->key != y->key)
		return gd_proc_cmp_u64(x->key, y->key);
	return gd_proc_cmp_u64(x->id, y->id);
}

/*
 * Group s->regs by owner, owners in the order of their first registration
 * and each owner's registrations in theirs, and sum each owner's.
 */
static int gd_proc_group(struct gd_proc_snap *s)
{
	struct gd_proc_owner *o;
	u32 i, j, m = 0;

	sort(s->regs, s->nregs, sizeof(*s->regs), gd_proc_by_owner, NULL);
	for (i = 0; i < s->nregs; i = j) {
		for (j = i; j < s->nregs &&
		     gd_owner_eq(&s->regs[j].owner, &s->regs[i].owner); j++)
			s->regs[j].key = s->regs[i].id;
		m++;
	}
	sort(s->regs, s->nregs, sizeof(*s->regs), gd_proc_by_key, NULL);

	s->owners = kvcalloc(max(m, 1U), sizeof(*s->owners),
			     GFP_KERNEL_ACCOUNT);
	if (!s->owners)
		return -ENOMEM;
	for (i = 0, o = s->owners - 1; i < s->nregs; i++) {
		if (!i || s->regs[i].key != s->regs[i - 1].key) {
			o++;
			o->first = i;
		}
		o->n++;
		o->bytes += s->regs[i].size;
		o->callbacks += s->regs[i].revoked;
	}
	s->nowners = m;
	return 0;
}

/* Point s at record @pos of the file; false past its end. */
static bool gd_proc_seek(struct gd_proc_snap *s, loff_t pos)
{
	u32 lo = 0, hi = s->nowners, k;

	if (pos < 0 || pos >= (loff_t)s->nowners + s->nregs)
		return false;
	/* The last owner whose summary is at or before pos. */
	while (hi - lo > 1) {
		k = lo + (hi - lo) / 2;
		if ((loff_t)k + s->owners[k].first <= pos)
			lo = k;
		else
			hi = k;
	}
	s->cur_owner = lo;
	s->cur_summary = pos == (loff_t)lo + s->owners[lo].first;
	s->cur_reg = pos - lo - 1;
	return true;
}

static void *gd_regions_start(struct seq_file *m, loff_t *pos)
{
	struct gd_proc_snap *s = m->private;

	return gd_proc_seek(s, *pos) ? s : NULL;
}

static void *gd_regions_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return gd_regions_start(m, pos);
}

static void gd_regions_stop(struct seq_file *m, void *v)
{
}

static int gd_regions_show(struct seq_file *m, void *v)
{
	struct gd_proc_snap *s = v;
	const struct gd_proc_owner *o = &s->owners[s->cur_owner];
	const struct gd_proc_reg *c;

	if (s->cur_summary) {
		c = &s->regs[o->first];
		seq_printf(m, "process %d regions %u bytes %llu callbacks %llu\n",
			   c->owner.tgid, o->n, o->bytes, o->callbacks);
		return 0;
	}
	c = &s->regs[s->cur_reg];
	seq_printf(m, "  handle %llu addr %#llx size %#llx pages %llu state %s mode %s mapped %lld phys %#llx\n",
		   c->handle, c->addr, c->size, c->size >> GD_PAGE_SHIFT,
		   gd_state_names[c->state],
		   c->persistent ? "persistent" : "callback",
		   (long long)c->mapped, c->phys);
	return 0;
}

static const struct seq_operations gd_regions_seq_ops = {
	.start	= gd_regions_start,
	.next	= gd_regions_next,
	.stop	= gd_regions_stop,
	.show	= gd_regions_show,
};

static void gd_proc_snap_free(struct gd_proc_snap *s)
{
	kvfree(s->regs);
	kvfree(s->owners);
}

static int gd_regions_open(struct inode *inode, struct file *file)
{
	struct gd_proc_snap *s;
	int ret;

	s = __seq_open_private(file, &gd_regions_seq_ops, sizeof(*s));
	if (!s)
		return -ENOMEM;
	ret = gd_proc_collect(s);
	if (!ret)
		ret = gd_proc_group(s);
	if (ret) {
		gd_proc_snap_free(s);
		seq_release_private(inode, file);
	}
	return ret;
}

static int gd_regions_release(struct inode *inode, struct file *file)
{
	struct seq_file *m = file->private_data;

	gd_proc_snap_free(m->private);
	return seq_release_private(inode, file);
}

static const struct proc_ops gd_regions_ops = {
	.proc_open	= gd_regions_open,
	.proc_read	= seq_read,
	.proc_lseek	= seq_lseek,
	.proc_release	= gd_regions_release,
};

void gd_procfs_init(void)
{
	struct proc_dir_entry *d = proc_mkdir(GD_PROC_DIR, NULL);

	/* Observability only: gdirect works without it. */
	if (!d || !proc_create_single("stats", 0400, d, gd_stats_show) ||
	    !proc_create("regions", 0400, d, &gd_regions_ops))
		pr_warn("no /proc/%s: statistics unavailable\n", GD_PROC_DIR);
}

void gd_procfs_exit(void)
{
	remove_proc_subtree(GD_PROC_DIR, NULL);
}
