// SPDX-License-Identifier: GPL-2.0
/*
 * DMA mappings of kernel registrations for their peer device
 *
 * gdirect_pin() with a peer maps the pinned pages for it with
 * nvidia_p2p_dma_map_pages(); the mapping ends in the "fenced unmap"
 * (docs/driver.md, "Locking and teardown"), from a release or from
 * gdirect_dma_unmap(), unless the free callback revoked the pages first.
 * DMA brackets (gdirect_dma_begin()/_end()) keep the addresses valid and
 * are what a revocation and a release wait for.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "gdirect_internal.h"

/* No DMA bracket is open on @r: what revocation and release wait for. */
bool gd_reg_no_dma(struct gd_reg *r)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&r->dma_lock, flags);
	ret = r->dma_users == 0;
	spin_unlock_irqrestore(&r->dma_lock, flags);
	return ret;
}

/*
 * Open @r's brackets (@err 0) or refuse new ones with @err.  A revocation,
 * a release or gdirect_dma_unmap() refuses, then waits for gd_reg_no_dma():
 * a bracket opened before the refusal is seen by that wait, and none opens
 * after it.  -ENODEV (the peer is gone) does not replace -ESTALE.
 */
void gd_reg_dma_refuse(struct gd_reg *r, int err)
{
	unsigned long flags;

	lockdep_assert_held(&r->lock);
	spin_lock_irqsave(&r->dma_lock, flags);
	if (err != -ENODEV || !r->dma_refuse)
		r->dma_refuse = err;
	spin_unlock_irqrestore(&r->dma_lock, flags);
}

static bool gd_reg_no_unmap(struct gd_reg *r)
{
	bool ret;

	spin_lock(&r->lock);
	ret = !r->unmapping;
	spin_unlock(&r->lock);
	return ret;
}

/* Wait for an unmap in flight by another thread; counted in unmap_waits. */
void gd_reg_wait_unmap(struct gd_reg *r)
{
	if (gd_reg_no_unmap(r))
		return;
	atomic64_inc(&gd_stats.unmap_waits);
	wait_event(r->wait, gd_reg_no_unmap(r));
}

/*
 * Unmap r's DMA mapping for its peer, unless the callback got there first
 * ("fenced unmap"); if another thread claimed it first, wait for that unmap, so
 * that none is in flight on return.  Any process; sleeps; the caller has
 * stopped new DMA and waited for what was in flight.
 */
void gd_reg_dma_unmap(struct gd_reg *r)
{
	struct nvidia_p2p_dma_mapping *dma;
	struct nvidia_p2p_page_table *pt;
	int ret;

	/*
	 * Claim the mapping: a second unmapper (a release racing
	 * gdirect_dma_unmap()) then finds nothing, and only the claimant
	 * ever sets or clears "unmapping".
	 */
	spin_lock(&r->lock);
	dma = r->revoked ? NULL : r->dma;
	pt = r->pt;
	if (dma) {
		r->dma = NULL;
		r->unmapping = true;
	}
	spin_unlock(&r->lock);
	if (!dma) {
		gd_reg_wait_unmap(r);
		return;
	}

	/* Our waker's wake_up_all() must not outlive a put by the waiter. */
	gd_reg_get(r);
	ret = gd_nv_dma_unmap(r->peer, pt, dma);
	spin_lock(&r->lock);
	if (ret) {
		/*
		 * Still the provider's: put_pages or the revocation frees it
		 * (on Tegra through our callback's free_dma_mapping, so give
		 * it back).
		 */
		r->dma = dma;
	}
	r->unmapping = false;
	spin_unlock(&r->lock);
	wake_up_all(&r->wait);
	if (ret)
		pr_warn_ratelimited("dma_unmap_pages of %#llx+%#llx failed: %d\n",
				    r->addr, r->size, ret);
	gd_reg_put(r);
}

/**
 * gd_reg_dma_map() - map a pinned registration for its peer device
 * @r: a PINNED registration with r->peer set
 *
 * A revocation before the call or after it is seen here, and the mapping
 * is then left for the provider to free.  One that completes while the
 * provider maps cannot be fenced: NVIDIA's dma_map_pages reads the table
 * before it takes the API lock the callback runs under, the callback
 * cannot wait for a call that may be waiting for that lock, and NVIDIA
 * frees the table itself once the callback returns (its
 * nvidia_p2p_free_page_table() is a no-op), so nothing the callback leaves
 * to us keeps it alive.  That is why gdirect_pin() maps persistent pins,
 * which have no callback; the window stays only where it maps a callback
 * pin (tokens, Tegra, a driver refusing the persistent API: kapi.c, "Peer
 * pins"; docs/driver.md, "no get_pages beside put_pages").
 *
 * The mapping is not read until it is published under a DMA bracket: the
 * provider frees it right after a free callback, which may come as soon as
 * dma_map_pages has returned, and the callback waits for brackets.
 *
 * Return: 0, -ESTALE if revoked, -EPROTO (mapping version) or -EIO (not
 * one bus address per 64 KiB page) with the mapping undone, or the
 * provider's error.
 */
int gd_reg_dma_map(struct gd_reg *r)
{
	struct nvidia_p2p_dma_mapping *dma = NULL;
	struct nvidia_p2p_page_table *pt;
	u64 *bus;
	int ret;

	down_read(&gd_excl);
	spin_lock(&r->lock);
	pt = r->state == GD_PINNED ? r->pt : NULL;
	spin_unlock(&r->lock);
	ret = pt ? gd_nv_dma_map(r->peer, pt, &dma) : -ESTALE;
	up_read(&gd_excl);
	if (ret)
		return gd_errno(ret);

	/*
	 * Still PINNED: the callback has not marked it revoked, so the
	 * provider has not freed the mapping; it is published, so that the
	 * release (or the callback, which waits for our bracket) unmaps or
	 * frees it.  Revoked meanwhile: the mapping may be gone already and
	 * is not touched; the provider frees it (on Tegra it may leak; "no
	 * get_pages beside put_pages").  A persistent pin is never revoked,
	 * but a stale one (its callback pin's callback came) refuses the
	 * bracket: its mapping is published and left to the release.
	 */
	spin_lock(&r->lock);
	if (r->state == GD_PINNED) {
		r->dma = dma;
		ret = gd_reg_dma_begin(r);
	} else {
		ret = -ESTALE;
	}
	spin_unlock(&r->lock);
	if (ret)
		return ret;

	if (!NVIDIA_P2P_DMA_MAPPING_VERSION_COMPATIBLE(dma)) {
		atomic64_inc(&gd_stats.version_mismatch);
		pr_err_ratelimited("nv-p2p DMA mapping version %#x is incompatible with %#x; rebuild gdirect against the running NVIDIA driver\n",
				   dma->version, NVIDIA_P2P_DMA_MAPPING_VERSION);
		ret = -EPROTO;
	} else {
		/* Our in-kernel API hands out one address per 64 KiB page. */
		/* Charged to the user the pin is charged to, if any. */
		bus = gd_nv_dma_pages(dma, r->size, r->charged ?
				      GFP_KERNEL_ACCOUNT : GFP_KERNEL);
		ret = PTR_ERR_OR_ZERO(bus);
		if (ret == -EIO)
			pr_err_ratelimited("DMA mapping of %#llx+%#llx is not one address per 64 KiB page\n",
					   r->addr, r->size);
		if (!ret) {
			unsigned long flags;

			spin_lock(&r->lock);
			r->bus = bus;
			spin_lock_irqsave(&r->dma_lock, flags);
			r->dma_addrs = bus ? bus : gd_nv_dma_addrs(dma);
			spin_unlock_irqrestore(&r->dma_lock, flags);
			spin_unlock(&r->lock);
		}
	}
	gd_reg_dma_end(r);
	/*
	 * A mapping we cannot use is unmapped by the fenced path ("fenced
	 * unmap"), never behind a callback's back.
	 */
	if (ret) {
		gd_reg_dma_unmap(r);
		return ret;
	}
	atomic64_inc(&gd_stats.dma_maps);
	return 0;
}

/*
 * DMA brackets for kernel users; the callback waits for them.  Any
 * context: drivers open them in their submission path and close them in
 * their NAPI poll or completion interrupt.
 */
int gd_reg_dma_begin(struct gd_reg *r)
{
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&r->dma_lock, flags);
	ret = r->dma_refuse;
	if (!ret)
		r->dma_users++;
	spin_unlock_irqrestore(&r->dma_lock, flags);
	return ret;
}

void gd_reg_dma_end(struct gd_reg *r)
{
	unsigned long flags;
	bool last;

	/*
	 * The wake-up is made under dma_lock: a release or a callback that
	 * waits for the brackets reads dma_users under that lock, so it
	 * cannot see the last one end, return and let the region be freed
	 * before the wake-up has touched r->wait.
	 */
	spin_lock_irqsave(&r->dma_lock, flags);
	last = !--r->dma_users;
	if (last) {
#ifdef GDIRECT_DEBUG_KNOBS
		if (READ_ONCE(r->dbg_magic) != GD_REG_LIVE)
			atomic64_inc(&gd_stats.dbg_freed_wakes);
#endif
		wake_up_all(&r->wait);
	}
	spin_unlock_irqrestore(&r->dma_lock, flags);
	/* r may be gone from here on. */
	if (last)
		gd_dbg_delay(&gd_dbg_dma_end_delay_ms);
}

/**
 * gd_reg_unmap_peer() - the peer is going away: drop its DMA mapping now
 * @r: a kernel registration
 *
 * Refuses new DMA brackets (-ENODEV), waits for those in flight and unmaps,
 * keeping the pin itself until the handle is released.  Sleeps.
 */
void gd_reg_unmap_peer(struct gd_reg *r)
{
	/* A release racing us may drop the handle's reference meanwhile. */
	gd_reg_get(r);
	spin_lock(&r->lock);
	gd_reg_dma_refuse(r, -ENODEV);
	spin_unlock(&r->lock);
	wait_event(r->wait, gd_reg_no_dma(r));
	gd_reg_dma_unmap(r);	/* or waits for the release's */
	gd_reg_put(r);
}
