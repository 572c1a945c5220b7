// SPDX-License-Identifier: GPL-2.0
/*
 * In-kernel API for third-party DMA drivers (gdirect_kapi.h)
 *
 * A struct gdirect_region is a struct gd_reg with no user context: the same
 * state machine, callback and release rules as user pins (pin.c;
 * docs/driver.md, "Locking and teardown"), plus a DMA mapping for the
 * caller's PCI function and the DMA brackets that the free callback waits
 * for.
 */
#include <linux/export.h>
#include <linux/pci.h>
#include <linux/sched.h>

#include "gdirect_internal.h"

static struct gd_reg *to_reg(struct gdirect_region *region)
{
	return (struct gd_reg *)region;
}

/*
 * Peer pins.  A table gdirect maps for a peer must be a persistent pin's:
 * NVIDIA's nvidia_p2p_dma_map_pages() reads a callback pin's table before
 * it takes the lock the free callback runs under, and NVIDIA frees the
 * table as soon as the callback returns, so a free of the memory while
 * gdirect_pin() maps it is a use-after-free inside NVIDIA's driver that no
 * caller can fence (docs/driver.md, "Peer pins").  A persistent pin holds
 * a duplicate of the memory's handle: a free leaves its table, its
 * mappings and the memory alone until the pin is put.  nvidia-peermem
 * does the same by default (persistent_api_support=1).
 *
 * Revocation is kept by a second pin of the same range with a free
 * callback, never mapped: its callback (gd_stale_callback(), as that
 * pin's invalidate) marks the mapped region stale, refuses its DMA
 * brackets, waits for those open and calls the caller's invalidate.  The
 * GPU memory then stays allocated, and reachable by the peer, until
 * gdirect_unpin() puts the persistent pin.
 */

/* The callback pin of @data's range was revoked: @data is stale. */
static void gd_stale_callback(struct gdirect_region *cb_region, void *data)
{
	struct gd_reg *r = data;
	bool notify;

	spin_lock(&r->lock);
	notify = r->state == GD_PINNED && !r->stale;
	WRITE_ONCE(r->stale, true);
	if (notify)
		gd_reg_dma_refuse(r, -ESTALE);
	spin_unlock(&r->lock);
	/* Before PINNED, gd_reg_pin() refuses the brackets for us. */
	if (!notify)
		return;
	wait_event(r->wait, gd_reg_no_dma(r));
	atomic64_inc(&gd_stats.stale_peer_pins);
	if (r->invalidate)
		r->invalidate((struct gdirect_region *)r, r->inv_data);
}

/*
 * Pin @req's range again with a free callback, unmapped and uncharged
 * (the pin the caller asked for is @r, charged as asked), as @r's
 * companion.  Returns 0 or the pin's error.
 */
static int gd_pin_companion(struct gd_reg *r, const struct gd_pin_req *req)
{
	struct gd_pin_req cb_req = *req;
	struct gd_reg *c;
	int ret;

	cb_req.persistent = false;
	cb_req.account = false;
	ret = gd_reg_setup(NULL, &cb_req, &c);
	if (ret)
		return ret;
	c->invalidate = gd_stale_callback;
	c->inv_data = r;
	gd_reg_get(r);			/* dropped when c is freed */
	c->stale_target = r;
	ret = gd_reg_pin(c);
	if (ret) {
		gd_reg_put(c);
		return ret;
	}
	r->companion = c;
	return 0;
}

/*
 * Release @r's callback pin first: its callback then no longer comes.
 * Outside the owner's context the release leaves that pin registered with
 * NVIDIA until the owner frees the memory or exits (the nv-p2p rule); it
 * is releasing, so its callback then does nothing.
 */
static void gd_unpin_companion(struct gd_reg *r)
{
	struct gd_reg *c = r->companion;

	if (!c)
		return;
	r->companion = NULL;
	gd_reg_release(c);
	gd_reg_put(c);
}

/**
 * gdirect_pin() - pin GPU memory of a process for a peer device
 * @params: what to pin and for whom; see struct gdirect_pin_params
 * @region: out: the registration, to be released with gdirect_unpin()
 *
 * Widens the range to 64 KiB boundaries and pins it.  Without a peer it
 * pins with nvidia_p2p_get_pages() and a free callback (or the persistent
 * API with %GDIRECT_KPIN_PERSISTENT).  With @params->peer set, the pin
 * that is mapped for that device (nvidia_p2p_dma_map_pages()) is always a
 * persistent one, which a free of the memory cannot race; unless
 * %GDIRECT_KPIN_PERSISTENT is passed, a second pin of the same range with
 * a free callback, never mapped, keeps the revocation: when the owner
 * frees the memory, gdirect refuses new DMA brackets (-ESTALE), waits for
 * those open and calls @params->invalidate, while the persistent pin
 * keeps the memory allocated until gdirect_unpin().  Two exceptions keep
 * a mapped pin with a callback, as the persistent API allows no other:
 * tokens, and a provider without the persistent API (Tegra); there a free
 * racing the mapping stays NVIDIA's use-after-free (docs/driver.md, "Peer
 * pins").  Sleeps.  Without tokens it must be called in the context of
 * @params->owner.
 *
 * With %GDIRECT_KPIN_ACCOUNT the pin is made on behalf of the calling
 * process, whose file the caller serves: it counts against
 * max_pins_per_user for current's user, together with that user's
 * /dev/gdirect and /dev/gdrdrv pins, until gdirect_unpin() (from any
 * context), and gdirect's memory for it is charged to current's memory
 * cgroup.  The callback pin of a peer pin counts as part of it.  Without
 * the flag the pin counts against no cap and no cgroup: that is for pins
 * a driver makes for itself, never for a user's request.
 *
 * Return: 0; -EINVAL for NULL arguments, unknown flags, a zero, overflowing
 * or over-1-TiB range, tokens with %GDIRECT_KPIN_PERSISTENT, or memory the
 * provider does not know; -EPERM for another process's memory without
 * tokens, or tokens when the allow_tokens parameter is off; -EOPNOTSUPP
 * when the persistent API or the mapping is not supported; -ENOMEM (also
 * BAR1 exhausted); -EDQUOT at the user's pin cap (%GDIRECT_KPIN_ACCOUNT);
 * -EIO; -EPROTO for a provider of an incompatible version; -ESTALE if the
 * pages were revoked (or the memory freed) before they could be mapped;
 * -EINTR if the caller got a fatal signal while waiting for gdirect's pin
 * locks.
 */
int gdirect_pin(const struct gdirect_pin_params *params,
		struct gdirect_region **region)
{
	struct gd_pin_req req;
	bool pair, refused = false, unpaired = false;
	struct gd_reg *r;
	int ret;

	if (!params || !region)
		return -EINVAL;
	*region = NULL;
	if (params->flags & ~(GDIRECT_KPIN_PERSISTENT | GDIRECT_KPIN_ACCOUNT))
		return -EINVAL;
	req = (struct gd_pin_req) {
		.addr		= params->addr,
		.size		= params->size,
		.p2p_token	= params->p2p_token,
		.va_space	= params->va_space,
		.persistent	= params->flags & GDIRECT_KPIN_PERSISTENT,
		.account	= params->flags & GDIRECT_KPIN_ACCOUNT,
	};
	if (params->owner)
		gd_owner_of_pid(params->owner, &req.owner);
	else
		gd_owner_current(&req.owner);
	/* Peer pins: mapped persistent, revoked through a callback pin. */
	pair = params->peer && GD_HAVE_PERSISTENT && !req.persistent &&
	       !req.p2p_token && !req.va_space;
	if (pair)
		req.persistent = true;
again:
	ret = gd_reg_setup(NULL, &req, &r);
	if (ret)
		return ret;
	r->invalidate = params->invalidate;
	r->inv_data = params->data;
	r->peer = pci_dev_get(params->peer);

	/* The callback pin first: a free from here on marks r stale. */
	if (pair) {
		ret = gd_pin_companion(r, &req);
		if (ret)
			goto err_put;
	}
	ret = gd_reg_pin(r);
	/* Only the persistent pin's own refusal falls back (below). */
	refused = pair && ret == -EOPNOTSUPP;
	if (ret)
		goto err_companion;
	if (r->peer) {
		ret = gd_reg_dma_map(r);
		if (ret)
			goto err_release;
	}
	if (unpaired)
		atomic64_inc(&gd_stats.peer_pins_unpaired);
	*region = (struct gdirect_region *)r;
	return 0;

err_release:
	gd_reg_release(r);
err_companion:
	gd_unpin_companion(r);
err_put:
	gd_reg_put(r);
	/*
	 * The persistent API is declared but refused for this memory (vGPU,
	 * confidential computing, MIG before 555): map a callback pin, as
	 * before the pair existed, and count it, since a free racing its
	 * mapping is then NVIDIA's use-after-free again ("Peer pins").
	 */
	if (refused) {
		pair = false;
		refused = false;
		unpaired = true;
		req.persistent = false;
		goto again;
	}
	return ret;
}
GD_EXPORT(gdirect_pin);

/**
 * gdirect_unpin() - release a region from gdirect_pin()
 * @region: the region, or NULL
 *
 * Unmaps the region for its peer and puts the pages, unless the NVIDIA
 * driver already revoked them.  Sleeps.  Must not be called between
 * gdirect_dma_begin() and gdirect_dma_end() on the same region.  Called
 * outside the owner's context, a token-less pin with a free callback is
 * still unmapped, but its pages are left to revocation; a persistent pin
 * (a peer pin's mapped pin among them) is put from any context.  If the
 * region was revoked or marked stale, waits until its invalidate callback
 * has returned.  Must not be called from that callback.
 */
void gdirect_unpin(struct gdirect_region *region)
{
	struct gd_reg *r = to_reg(region);

	if (!r)
		return;
	gd_unpin_companion(r);
	gd_reg_release(r);
	gd_reg_put(r);
}
GD_EXPORT(gdirect_unpin);

/**
 * gdirect_dma_begin() - announce DMA to or from a region
 * @region: the region
 *
 * Until the matching gdirect_dma_end() a revocation waits before the pages
 * go away, and the DMA addresses stay valid.  Does not sleep; any context,
 * hard interrupts included.
 *
 * Return: 0; -ESTALE if the region was revoked or is being released;
 * -ENODEV after gdirect_dma_unmap().
 */
int gdirect_dma_begin(struct gdirect_region *region)
{
	return gd_reg_dma_begin(to_reg(region));
}
GD_EXPORT(gdirect_dma_begin);

/**
 * gdirect_dma_end() - the DMA announced by gdirect_dma_begin() is over
 * @region: the region
 *
 * Call only once the device can no longer touch the memory.  Does not
 * sleep; any context, hard interrupts included.
 */
void gdirect_dma_end(struct gdirect_region *region)
{
	gd_reg_dma_end(to_reg(region));
}
GD_EXPORT(gdirect_dma_end);

/**
 * gdirect_dma_unmap() - drop a region's DMA mapping before its peer goes
 * @region: a region pinned with a peer
 *
 * For a driver whose device is being removed while regions are still
 * pinned (an unbind with files open): unmaps the region for the peer with
 * nvidia_p2p_dma_unmap_pages(), from any process, so no mapping outlives
 * the device.  From then on gdirect_dma_begin() fails with -ENODEV; the pin
 * stays until gdirect_unpin().  Waits for DMA brackets in flight, so it
 * must not be called inside one, nor from the invalidate callback.  A
 * revoked region needs nothing: the NVIDIA driver freed its mapping.
 * Sleeps.
 */
void gdirect_dma_unmap(struct gdirect_region *region)
{
	struct gd_reg *r = to_reg(region);

	if (r && r->peer)
		gd_reg_unmap_peer(r);
}
GD_EXPORT(gdirect_dma_unmap);

/**
 * gdirect_region_range() - the GPU range actually pinned
 * @region: the region
 * @addr: out: 64 KiB-aligned start
 * @size: out: bytes
 *
 * Return: 0, or -EINVAL for NULL arguments.
 */
int gdirect_region_range(struct gdirect_region *region, u64 *addr, u64 *size)
{
	struct gd_reg *r = to_reg(region);

	if (!r || !addr || !size)
		return -EINVAL;
	*addr = r->addr;
	*size = r->size;
	return 0;
}
GD_EXPORT(gdirect_region_range);

/**
 * gdirect_region_dma_addrs() - DMA addresses of a region for its peer
 * @region: a region pinned with a peer
 * @dma_addrs: out: one bus address per 64 KiB GPU page
 * @entries: out: number of addresses
 *
 * The array may be used only between gdirect_dma_begin() and
 * gdirect_dma_end(); a revocation, a release or gdirect_dma_unmap() frees
 * it once no bracket is open.  Does not sleep; any context, hard
 * interrupts included, as the brackets (it takes only their IRQ-safe
 * lock).
 *
 * Return: 0; -EINVAL for NULL arguments or a region without a peer;
 * -ESTALE if revoked, stale, being released or unmapped.
 */
int gdirect_region_dma_addrs(struct gdirect_region *region,
			     const u64 **dma_addrs, u32 *entries)
{
	struct gd_reg *r = to_reg(region);
	unsigned long flags;
	int ret = 0;

	if (!r || !dma_addrs || !entries || !r->peer)
		return -EINVAL;
	spin_lock_irqsave(&r->dma_lock, flags);
	*dma_addrs = r->dma_refuse ? NULL : r->dma_addrs;
	if (*dma_addrs)
		*entries = r->size >> GD_PAGE_SHIFT;
	else
		ret = -ESTALE;
	spin_unlock_irqrestore(&r->dma_lock, flags);
	return ret;
}
GD_EXPORT(gdirect_region_dma_addrs);

/**
 * gdirect_region_revoked() - has the NVIDIA driver revoked the region?
 * @region: the region
 *
 * A snapshot: the answer may turn true right after the call.  Does not
 * sleep and takes no lock; any context, hard interrupts included.
 *
 * Return: true once the free callback has started for it (for a peer pin
 * made persistent, its callback pin's: the region is stale).
 */
bool gdirect_region_revoked(struct gdirect_region *region)
{
	struct gd_reg *r = to_reg(region);

	return READ_ONCE(r->revoked) || READ_ONCE(r->stale);
}
GD_EXPORT(gdirect_region_revoked);
