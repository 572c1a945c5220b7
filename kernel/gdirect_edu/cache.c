// SPDX-License-Identifier: GPL-2.0
/*
 * Lazily unpinned GPU ranges, and transfers through them
 *
 * The guide's flow (chapters 2-3, 11.1): pin on first use, keep the pin for
 * the next transfer, drop it only when the NVIDIA driver revokes it, when
 * the cache is full, or when the file closes.  The invalidate callback only
 * marks the entry stale (it runs under the NVIDIA driver's lock, and we pin
 * with our file lock held); the next lookup unpins stale entries, and
 * gdirect_unpin() of a revoked region waits for its callback to be over,
 * so the entry can be freed right after.
 *
 * Every pin here has a peer (edu) and, unless the user asked for
 * GDEDU_PIN_PERSISTENT, no GDIRECT_KPIN_PERSISTENT: gdirect then maps a
 * persistent pin for edu, which a free of the memory cannot race, and
 * pairs it with an unmapped pin with a free callback, whose callback
 * makes the region stale and calls ours (gdirect_kapi.h, "peer pins").
 * A free thus marks the entry stale as before, while the GPU memory stays
 * allocated until the entry is dropped; a stale entry is dropped at the
 * next lookup of any range, so the memory goes back to the owner with
 * the file's next transfer, flush or close.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "gdedu_internal.h"

static void gdedu_invalidate(struct gdirect_region *region, void *data)
{
	struct gdedu_entry *e = data;

	WRITE_ONCE(e->stale, true);
	atomic64_inc(&e->file->invalidations);
}

void gdedu_drop(struct gdedu_file *f, struct gdedu_entry *e)
{
	lockdep_assert_held(&f->lock);
	list_del(&e->lru);
	f->cached--;
	gdirect_unpin(e->region);
	kfree(e);
}

void gdedu_flush(struct gdedu_file *f)
{
	struct gdedu_entry *e, *tmp;

	lockdep_assert_held(&f->lock);
	list_for_each_entry_safe(e, tmp, &f->cache, lru)
		gdedu_drop(f, e);
}

/*
 * The device is going away under this open file: no DMA mapping of it may
 * outlive it.  The pins stay, to be put from the owner's close.
 */
void gdedu_unmap_all(struct gdedu_file *f)
{
	struct gdedu_entry *e;

	lockdep_assert_held(&f->lock);
	list_for_each_entry(e, &f->cache, lru)
		gdirect_dma_unmap(e->region);
}

int gdedu_pin(struct gdedu_file *f, const struct gdirect_pin_params *p,
	      struct gdedu_entry **out)
{
	struct gdirect_pin_params params = *p;
	struct gdedu_entry *e, *lru;
	int ret;

	lockdep_assert_held(&f->lock);
	/* Made for the caller: charged to it, as the pin itself is. */
	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e)
		return -ENOMEM;
	e->file = f;
	params.flags |= GDIRECT_KPIN_ACCOUNT;
	params.peer = f->edu->pdev;
	params.invalidate = gdedu_invalidate;
	params.data = e;
	ret = gdirect_pin(&params, &e->region);
	if (ret) {
		kfree(e);
		return ret;
	}
	gdirect_region_range(e->region, &e->start, &e->size);
	list_add(&e->lru, &f->cache);
	f->cached++;
	f->stats.pins++;
	while (f->cached > max(gdedu_max_pins, 1U)) {
		lru = list_last_entry(&f->cache, struct gdedu_entry, lru);
		gdedu_drop(f, lru);
		f->stats.evictions++;
	}
	*out = e;
	return 0;
}

/* A live cached pin covering [addr, addr + len); reaps stale ones. */
struct gdedu_entry *gdedu_lookup(struct gdedu_file *f, u64 addr, u64 len)
{
	struct gdedu_entry *e, *tmp, *hit = NULL;

	lockdep_assert_held(&f->lock);
	list_for_each_entry_safe(e, tmp, &f->cache, lru) {
		/* The flag is ours; revoked() catches a callback in flight. */
		if (READ_ONCE(e->stale) || gdirect_region_revoked(e->region)) {
			gdedu_drop(f, e);
			continue;
		}
		if (!hit && addr >= e->start && addr + len <= e->start + e->size)
			hit = e;
	}
	if (hit)
		list_move(&hit->lru, &f->cache);
	return hit;
}

/*
 * One chunk within one 64 KiB GPU page, under a DMA bracket.  The user
 * copies stay outside the bracket: a revocation waits for the bracket
 * with the NVIDIA driver's lock held, and a page fault of the user buffer
 * may wait on user space (userfaultfd, FUSE) or on that lock (managed
 * memory).
 */
static int gdedu_chunk(struct gdedu_file *f, struct gdedu_entry *e, u64 gpu,
		       u64 ubuf, u32 len, u32 dir, void *kbuf)
{
	const u64 *dma;
	u64 off = gpu - e->start;
	u32 entries;
	int ret;

	if (dir == GDEDU_TO_GPU &&
	    copy_from_user(kbuf, u64_to_user_ptr(ubuf), len))
		return -EFAULT;
	ret = gdirect_dma_begin(e->region);
	if (ret)
		return ret;
	ret = gdirect_region_dma_addrs(e->region, &dma, &entries);
	if (!ret && (off >> 16) >= entries)
		ret = -EIO;
	if (!ret) {
		u64 bus = dma[off >> 16] + (off & 0xffff);

		if (dir == GDEDU_TO_GPU)
			ret = edu_dma_to_gpu(f->edu, bus, kbuf, len);
		else
			ret = edu_dma_from_gpu(f->edu, bus, kbuf, len);
	}
	gdirect_dma_end(e->region);
	if (!ret && dir != GDEDU_TO_GPU &&
	    copy_to_user(u64_to_user_ptr(ubuf), kbuf, len))
		ret = -EFAULT;
	if (!ret)
		f->stats.chunks++;
	return ret;
}

int gdedu_xfer(struct gdedu_file *f, const struct gdedu_xfer *x)
{
	struct gdirect_pin_params p = { 0 };
	struct gdedu_entry *e;
	u64 done = 0, gpu;
	bool repinned = false;
	void *kbuf;
	u32 len;
	int ret;

	lockdep_assert_held(&f->lock);
	kbuf = kmalloc(EDU_CHUNK, GFP_KERNEL);
	if (!kbuf)
		return -ENOMEM;
	e = gdedu_lookup(f, x->gpu_addr, x->size);
	if (e) {
		f->stats.hits++;
	} else {
		p.addr = x->gpu_addr;
		p.size = x->size;
		ret = gdedu_pin(f, &p, &e);
		if (ret)
			goto out;
		repinned = true;
	}

	ret = 0;
	while (done < x->size) {
		gpu = x->gpu_addr + done;
		len = min_t(u64, x->size - done, EDU_CHUNK);
		len = min_t(u64, len, SZ_64K - (gpu & (SZ_64K - 1)));
		ret = gdedu_chunk(f, e, gpu, x->buf + done, len, x->dir, kbuf);
		if (ret == -ESTALE && !repinned) {
			/* Revoked under us: pin again, once. */
			gdedu_drop(f, e);
			p.addr = x->gpu_addr;
			p.size = x->size;
			ret = gdedu_pin(f, &p, &e);
			repinned = true;
			if (!ret)
				continue;
		}
		if (ret)
			break;
		done += len;
	}
out:
	kfree(kbuf);
	return ret;
}
