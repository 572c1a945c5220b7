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

/**
 * gdirect_pin() - pin GPU memory of a process for a peer device
 * @params: what to pin and for whom; see struct gdirect_pin_params
 * @region: out: the registration, to be released with gdirect_unpin()
 *
 * Widens the range to 64 KiB boundaries, pins it with
 * nvidia_p2p_get_pages() and a free callback (or the persistent API with
 * %GDIRECT_KPIN_PERSISTENT), and, if @params->peer is set, maps it for that
 * device with nvidia_p2p_dma_map_pages().  Sleeps.  Without tokens it must
 * be called in the context of @params->owner.
 *
 * With %GDIRECT_KPIN_ACCOUNT the pin is made on behalf of the calling
 * process, whose file the caller serves: it counts against
 * max_pins_per_user for current's user, together with that user's
 * /dev/gdirect and /dev/gdrdrv pins, until gdirect_unpin() (from any
 * context), and gdirect's memory for it is charged to current's memory
 * cgroup.  Without the flag the pin counts against no cap and no cgroup:
 * that is for pins a driver makes for itself, never for a user's request.
 *
 * Return: 0; -EINVAL for NULL arguments, unknown flags, a zero, overflowing
 * or over-1-TiB range, tokens with %GDIRECT_KPIN_PERSISTENT, or memory the
 * provider does not know; -EPERM for another process's memory without
 * tokens, or tokens when the allow_tokens parameter is off; -EOPNOTSUPP
 * when the persistent API or the mapping is not supported; -ENOMEM (also
 * BAR1 exhausted); -EDQUOT at the user's pin cap (%GDIRECT_KPIN_ACCOUNT);
 * -EIO; -EPROTO for a provider of an incompatible version; -ESTALE if the
 * pages were revoked before they could be mapped; -EINTR if the caller got
 * a fatal signal while waiting for gdirect's pin locks.
 */
int gdirect_pin(const struct gdirect_pin_params *params,
		struct gdirect_region **region)
{
	struct gd_pin_req req;
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
	ret = gd_reg_setup(NULL, &req, &r);
	if (ret)
		return ret;
	r->invalidate = params->invalidate;
	r->inv_data = params->data;
	r->peer = pci_dev_get(params->peer);

	ret = gd_reg_pin(r);
	if (ret)
		goto err_put;
	if (r->peer) {
		ret = gd_reg_dma_map(r);
		if (ret)
			goto err_release;
	}
	*region = (struct gdirect_region *)r;
	return 0;

err_release:
	gd_reg_release(r);
err_put:
	gd_reg_put(r);
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
 * outside the owner's context, a token-less non-persistent region is still
 * unmapped, but its pages are left to revocation.  If the region was
 * revoked, waits until its invalidate callback has returned.  Must not be
 * called from that callback.
 */
void gdirect_unpin(struct gdirect_region *region)
{
	struct gd_reg *r = to_reg(region);

	if (!r)
		return;
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
 * Return: true once the free callback has started for it.
 */
bool gdirect_region_revoked(struct gdirect_region *region)
{
	struct gd_reg *r = to_reg(region);

	return READ_ONCE(r->revoked);
}
GD_EXPORT(gdirect_region_revoked);
