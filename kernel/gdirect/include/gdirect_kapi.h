/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In-kernel API of gdirect.ko for third-party DMA drivers
 *
 * A driver for a NIC, FPGA or capture card lets its user hand it a GPU
 * buffer; it pins the buffer here, gets one DMA address per 64 KiB GPU page
 * for its own PCI function, and brackets every DMA with gdirect_dma_begin()
 * and gdirect_dma_end().  If the NVIDIA driver revokes the pages (the
 * memory was freed, or its owner exited), gdirect waits for the bracketed
 * DMAs to end, calls the driver's invalidate callback, and from then on
 * gdirect_dma_begin() fails with -ESTALE.  The driver then drops the region
 * with gdirect_unpin() and pins again if it still needs the memory.
 *
 * Peer pins.  The pin gdirect maps for a peer (@peer set) is always made
 * with NVIDIA's persistent API, as nvidia-peermem's are by default
 * (persistent_api_support=1): NVIDIA's nvidia_p2p_dma_map_pages() reads a
 * table with a free callback before it takes the lock that callback runs
 * under, so a free of the memory during gdirect_pin() would be a
 * use-after-free in NVIDIA's driver that nobody can fence.  Without
 * GDIRECT_KPIN_PERSISTENT gdirect pins the same range a second time with
 * a free callback and never maps that pin; its callback is what makes the
 * region stale as described above.  The GPU memory of a stale region stays
 * allocated, and the peer's addresses valid, until gdirect_unpin(): unpin
 * a stale region soon.  With GDIRECT_KPIN_PERSISTENT there is no second
 * pin and no revocation at all.  Tokens, a provider without the
 * persistent API (Tegra, drivers before 525.105.17), and memory for which
 * the driver refuses it (vGPU, confidential computing, older MIG) leave
 * the mapped pin one with a callback: there the race stays NVIDIA's
 * (docs/driver.md, "Peer pins").
 *
 * Rules:
 *  - gdirect_pin() and gdirect_unpin() sleep.  With zero tokens they must
 *    run in the context of the process that owns the GPU memory (the
 *    nv-p2p rule); an unpin from any other context unmaps the region for
 *    the peer but leaves the pages to the NVIDIA driver's revocation and
 *    never calls put_pages there.
 *  - When the device goes away with regions still pinned (remove() with
 *    files open), call gdirect_dma_unmap() on each: no DMA mapping may
 *    outlive the device.  Later DMA brackets fail with -ENODEV.
 *  - gdirect_dma_begin(), gdirect_dma_end(), gdirect_region_dma_addrs()
 *    and gdirect_region_revoked() may be called from any context, hard
 *    interrupts included; none sleeps.  The others sleep.
 *  - Between gdirect_dma_begin() and gdirect_dma_end() do not call
 *    gdirect_pin() or gdirect_unpin(): a revocation waits for the DMA to
 *    end while the NVIDIA driver holds its lock, and those calls need it.
 *    Nor touch user memory there (copy_from_user() and the like): a page
 *    fault may wait on user space (userfaultfd, FUSE) or on the NVIDIA
 *    driver itself (CUDA managed memory), which would stall or deadlock
 *    the revocation.  Copy to or from a kernel buffer outside the bracket.
 *  - A pin made for a user (from an ioctl of that user's file) passes
 *    GDIRECT_KPIN_ACCOUNT, so that it counts against the user's pin cap
 *    and its memory against the user's memory cgroup, as the user's own
 *    /dev/gdirect pins do.  A pin the driver makes for itself counts
 *    nowhere.
 *  - The invalidate callback runs with the NVIDIA driver's lock held.  It
 *    must not sleep for long, must not pin or unpin, and must not take a
 *    lock that is held elsewhere around gdirect_pin() or gdirect_unpin().
 *    Mark the region stale there and unpin it later from process context:
 *    gdirect_unpin() of a revoked region waits until its callback is over,
 *    so the caller may then free the data the callback was given.
 */
#ifndef GDIRECT_KAPI_H
#define GDIRECT_KAPI_H

#include <linux/bits.h>
#include <linux/types.h>

struct pci_dev;
struct pid;
struct gdirect_region;

/* gdirect_pin_params.flags */
#define GDIRECT_KPIN_PERSISTENT	BIT(0)	/* no revocation; see above */
#define GDIRECT_KPIN_ACCOUNT	BIT(1)	/* charge the calling user; see docs */

/**
 * struct gdirect_pin_params - what to pin, for whom
 * @owner: the process (tgid) whose GPU memory this is; NULL for current.
 *	Without tokens it must be current's tgid.
 * @peer: PCI function that will DMA to the memory, or NULL for no DMA map
 * @addr: GPU virtual address, any alignment
 * @size: bytes, > 0; the range pinned is widened to 64 KiB boundaries
 * @p2p_token: legacy token (deprecated, chapter 11.6), or 0
 * @va_space: legacy token (deprecated), or 0
 * @flags: GDIRECT_KPIN_*: %GDIRECT_KPIN_PERSISTENT pins with the
 *	persistent API only, with no revocation (a pin with @peer is
 *	persistent either way; see "Peer pins"); %GDIRECT_KPIN_ACCOUNT
 *	charges current's user and memory cgroup (see gdirect_pin())
 * @invalidate: called once if the NVIDIA driver revokes the pages (with
 *	@peer: the pages of the region's callback pin), after in-flight DMA
 *	(gdirect_dma_begin/end) has ended; may be NULL
 * @data: passed to @invalidate
 */
struct gdirect_pin_params {
	struct pid *owner;
	struct pci_dev *peer;
	u64 addr;
	u64 size;
	u64 p2p_token;
	u32 va_space;
	u32 flags;
	void (*invalidate)(struct gdirect_region *region, void *data);
	void *data;
};

int gdirect_pin(const struct gdirect_pin_params *params,
		struct gdirect_region **region);
void gdirect_unpin(struct gdirect_region *region);

int gdirect_dma_begin(struct gdirect_region *region);
void gdirect_dma_end(struct gdirect_region *region);
void gdirect_dma_unmap(struct gdirect_region *region);

int gdirect_region_range(struct gdirect_region *region, u64 *addr, u64 *size);
int gdirect_region_dma_addrs(struct gdirect_region *region,
			     const u64 **dma_addrs, u32 *entries);
bool gdirect_region_revoked(struct gdirect_region *region);

#endif /* GDIRECT_KAPI_H */
