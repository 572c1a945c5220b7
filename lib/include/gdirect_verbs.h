/* SPDX-License-Identifier: MIT */
/*
 * gdirect_verbs.h - libgdirect's verbs registration cache: GPU (and host)
 * memory registered with an RDMA NIC as verbs memory regions, cached.
 *
 * This header is installed, and the functions below exist in
 * libgdirect.so.0 (symbol node GDIRECT_0.2), only when libgdirect was built
 * with libibverbs (rdma-core; meson option verbs).  A library built without
 * it has neither, and this header then is not there to include: a program
 * that needs the API fails to build, or, built elsewhere, to load.
 * GDIRECT_VERBS is defined here for programs that test for it.
 *
 * GPU memory is registered in one of two ways, chosen by
 * gdirect_params.mr_path (GDIRECT_MR_PATH_*, environment GDIRECT_MR_PATH=
 * auto|dmabuf|peer, parsed strictly): dma-buf, the field's first path
 * (cuMemGetHandleForAddressRange(CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD) and
 * ibv_reg_dmabuf_mr(), when the NIC's provider answers the probe
 * ibv_reg_dmabuf_mr(fd -1) with EBADF), and peer memory, the fallback
 * (ibv_reg_mr() on the device address, which a peer-memory client such as
 * nvidia-peermem pins in the kernel).  Host memory is registered with
 * ibv_reg_mr().
 *
 * A region covers the whole allocation holding the request (up to
 * gdirect_params.whole_alloc_max; above it, the request rounded out to
 * 64 KiB), so one registration serves every buffer in it.  Its iova (the
 * address work requests name) is the address of its first byte: the
 * address of a pointer p in a work request (an SGE's addr, a remote
 * address) is gdirect_mr_addr(mr, p), that is info.iova + (p - info.base).
 * See gdirect_mr_get(3) and docs/libgdirect.md.
 */
#ifndef GDIRECT_VERBS_H
#define GDIRECT_VERBS_H

#include <infiniband/verbs.h>

#include "gdirect.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GDIRECT_VERBS 1

struct gdirect_mr;	/* a counted reference to one cached memory region */

/* How a region was registered. */
enum gdirect_mr_via {
	GDIRECT_MR_VIA_HOST = 1,	/* ibv_reg_mr() of host memory */
	GDIRECT_MR_VIA_DMABUF = 2,	/* ibv_reg_dmabuf_mr(), a CUDA dma-buf */
	GDIRECT_MR_VIA_PEER = 3,	/* ibv_reg_mr() of GPU memory */
};

struct gdirect_mr_info {
	struct ibv_mr *mr;	/* the verbs memory region itself */
	uint32_t lkey, rkey;
	uint64_t base;		/* first registered byte (its VA) */
	uint64_t length;	/* registered bytes */
	uint64_t iova;		/* the address of base in work requests */
	enum gdirect_mr_via via;
	int access;		/* IBV_ACCESS_* it was registered with */
	/* 1 while the region may be used: it was not killed (its memory
	 * reported freed, evicted, flushed) and, for GPU memory, its
	 * allocation's BUFFER_ID is still the one it was registered for;
	 * 0 when work requests through it would reach freed memory. */
	int valid;
};

/*
 * Get a memory region of protection domain pd covering [ptr, ptr+len)
 * with at least the access flags access (IBV_ACCESS_*), registering it on
 * a miss.  GPU memory must lie in one allocation.  Host memory is cached
 * only with GDIRECT_CTX_CACHE_HOST (libgdirect cannot see it freed
 * otherwise); without it each get registers and the last put deregisters.
 * When the NIC refuses a registration for lack of resources (ENOMEM,
 * ENOSPC), unused regions of that NIC are deregistered, least recently
 * used first, and the registration retried; unused regions above
 * gdirect_params.max_regions or max_bytes are deregistered the same way.
 * A GPU allocation gets CU_POINTER_ATTRIBUTE_SYNC_MEMOPS before its first
 * registration (VMM memory, which the driver refuses it, goes without),
 * and every get checks its BUFFER_ID against the region's, so that a
 * free the hooks did not see never yields a region of freed memory.
 * flags must be 0.
 * Errors: -EINVAL (a NULL argument, len 0, flags, a range across
 * allocations), -EOPNOTSUPP (managed memory; mr_path DMABUF on a NIC
 * without dma-buf support), -ENOMEM (refused with nothing left to evict),
 * -EPERM (context inherited across fork), -EAGAIN (its memory was freed
 * or reallocated during each of 8 tries), or the negative errno of the
 * registration.
 */
int gdirect_mr_get(struct gdirect_ctx *ctx, struct ibv_pd *pd,
		   const void *ptr, size_t len, int access, unsigned int flags,
		   struct gdirect_mr **mr);

/*
 * Get a memory region of protection domain pd covering bytes [offset,
 * offset+len) of the caller's dma-buf fd, with at least the access flags
 * access, registering it with ibv_reg_dmabuf_mr() on a miss; iova is the
 * address of byte offset in work requests, as ibv_reg_dmabuf_mr() takes
 * it (gdirect_mr_addr(mr, (void *)(uintptr_t)o) gives that of byte o).
 * Regions are keyed by the dma-buf itself (its inode), not by fd: the same
 * buffer through a dup() or a descriptor passed from another process is
 * the same region.  The range is widened to whole 4 KiB pages inside the
 * buffer, so neighbouring requests share a region; info.base and
 * info.length are then offsets in the buffer.  A region holds the dma-buf
 * (and its memory) alive until it is evicted, flushed or the context
 * destroyed; frees of CUDA allocations do not concern it.  flags must be
 * 0.  Errors: those of gdirect_mr_get(), -EBADF (fd), -EINVAL (a range
 * past the buffer's end) (symbol node GDIRECT_0.4).
 */
int gdirect_mr_get_dmabuf(struct gdirect_ctx *ctx, struct ibv_pd *pd, int fd,
			  uint64_t offset, size_t len, uint64_t iova,
			  int access, unsigned int flags,
			  struct gdirect_mr **mr);

/*
 * Drop a reference.  The region stays registered (cached) until it is
 * evicted, its memory is freed or the context is destroyed.  Keep the
 * reference while work requests through the region are outstanding.
 */
void gdirect_mr_put(struct gdirect_mr *mr);

int gdirect_mr_info(const struct gdirect_mr *mr, struct gdirect_mr_info *info);

/*
 * The address of ptr (which must lie in the region; for a region of a
 * caller's dma-buf, an offset in the buffer cast to a pointer) in a work
 * request through mr: its iova plus ptr's offset from the region's base.
 * 0 when ptr is outside the region.
 */
uint64_t gdirect_mr_addr(const struct gdirect_mr *mr, const void *ptr);

/* Deregister every unused region.  Returns how many it deregistered. */
int gdirect_mr_flush(struct gdirect_ctx *ctx);

/*
 * Deregister the unused regions of protection domain pd, so that
 * ibv_dealloc_pd(pd) can succeed (symbol node GDIRECT_0.3).  Returns how
 * many it deregistered, or -EBUSY when regions of pd are still held
 * (their references not put), which ibv_dealloc_pd would refuse too.
 */
int gdirect_mr_flush_pd(struct gdirect_ctx *ctx, struct ibv_pd *pd);

#ifdef __cplusplus
}
#endif

#endif /* GDIRECT_VERBS_H */
