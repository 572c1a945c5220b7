/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * User interface of gdirect_edu.ko (/dev/gdirect_edu), the example
 * third-party driver: qemu's edu device DMAs user data into and out of GPU
 * memory, peer to peer, through gdirect's in-kernel API.
 *
 * An open file keeps a cache of pinned GPU ranges (lazy unpinning, guide
 * 11.1): a transfer reuses a cached pin that covers it, or pins the
 * 64 KiB-aligned range it touches.  Pins are dropped when the NVIDIA driver
 * revokes them, when the cache is full (least recently used first), on
 * GDEDU_IOC_FLUSH, and when the file is closed.  The file belongs to the
 * process that opened it; other processes get EPERM.
 */
#ifndef _UAPI_GDIRECT_EDU_H
#define _UAPI_GDIRECT_EDU_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define GDEDU_DEVICE		"/dev/gdirect_edu"

/* gdedu_xfer.dir */
#define GDEDU_TO_GPU		1	/* user buffer -> GPU memory */
#define GDEDU_FROM_GPU		2	/* GPU memory -> user buffer */

#define GDEDU_MAX_XFER		(16U << 20)

struct gdedu_xfer {
	__u64 gpu_addr;		/* GPU virtual address, any alignment */
	__u64 buf;		/* user buffer */
	__u64 size;		/* bytes, 1 .. GDEDU_MAX_XFER */
	__u32 dir;		/* GDEDU_TO_GPU or GDEDU_FROM_GPU */
	__u32 flags;		/* 0 */
};

/*
 * gdedu_pin.flags: GDEDU_PIN_PERSISTENT is gdirect_pin()'s
 * GDIRECT_KPIN_PERSISTENT; any other bit fails with EINVAL.  Every pin,
 * through PIN or XFER, counts against the caller's max_pins_per_user of
 * gdirect.ko (EDQUOT at the cap) and is charged to its memory cgroup.
 */
#define GDEDU_PIN_PERSISTENT	(1U << 0)

/* Pin eagerly into the cache: the in-kernel API, call by call. */
struct gdedu_pin {
	__u64 gpu_addr;		/* in */
	__u64 size;		/* in */
	__u64 p2p_token;	/* in: deprecated legacy token, or 0 */
	__u32 va_space;		/* in: deprecated legacy token, or 0 */
	__u32 flags;		/* in: GDEDU_PIN_* */
	__s32 owner_pid;	/* in: process owning the memory; 0: caller */
	__u32 entries;		/* out: DMA addresses (64 KiB pages) */
	__u64 pinned_addr;	/* out */
	__u64 pinned_size;	/* out */
};

/* Drop the cached pin containing gpu_addr. */
struct gdedu_unpin {
	__u64 gpu_addr;
};

struct gdedu_stats {
	__u64 pins;		/* gdirect_pin() calls that succeeded */
	__u64 hits;		/* transfers served by a cached pin */
	__u64 invalidations;	/* invalidate callbacks received */
	__u64 evictions;	/* pins dropped because the cache was full */
	__u64 chunks;		/* edu DMA transfers to or from GPU memory */
	__u64 cached;		/* pins in the cache now */
};

/*
 * dma-bufs (cuMemGetHandleForAddressRange's DMA_BUF_FD): ATTACH imports
 * the exporter's fd for edu, peer to peer, pinned and mapped at once;
 * XFER DMAs through its sg table; DETACH (or closing this file) unmaps and
 * lets it go.  The fd itself may be closed once attached.  Not in the
 * build for NVIDIA's proprietary driver (the dma-buf API is GPL-only):
 * there, EOPNOTSUPP.
 */
#define GDEDU_MAX_DMABUFS	16	/* attached per open file */

struct gdedu_dmabuf_attach {
	__s32 fd;		/* in: a dma-buf */
	__u32 id;		/* out: names it in XFER and DETACH */
	__u64 size;		/* out: bytes */
	__u64 dma0;		/* out: DMA address of its first byte */
	__u32 nents;		/* out: entries of its sg table */
	__u32 flags;		/* out: GDEDU_DMABUF_* */
};

/*
 * gdedu_dmabuf_attach.flags: the exporter is static (no pin and no move,
 * as NVIDIA's): the dma-buf core mapped the dma-buf for edu when it was
 * attached, and the later map returned that table.
 */
#define GDEDU_DMABUF_MAPPED_AT_ATTACH	(1U << 0)
/*
 * The kernel's dma-buf core makes no table at attach (6.18 on, whose
 * dma_buf_attachment has no sgt): GDEDU_DMABUF_MAPPED_AT_ATTACH is never
 * set there, and the exporter maps at the first map instead.
 */
#define GDEDU_DMABUF_NO_ATTACH_MAP	(1U << 1)

struct gdedu_dmabuf_xfer {
	__u32 id;
	__u32 dir;		/* GDEDU_TO_GPU or GDEDU_FROM_GPU */
	__u64 offset;		/* into the dma-buf */
	__u64 buf;		/* user buffer */
	__u64 size;		/* bytes, 1 .. GDEDU_MAX_XFER */
};

struct gdedu_dmabuf_detach {
	__u32 id;
	__u32 pad;
};

#define GDEDU_IOC_MAGIC		'e'
#define GDEDU_IOC_XFER		_IOW(GDEDU_IOC_MAGIC, 0, struct gdedu_xfer)
#define GDEDU_IOC_PIN		_IOWR(GDEDU_IOC_MAGIC, 1, struct gdedu_pin)
#define GDEDU_IOC_UNPIN		_IOW(GDEDU_IOC_MAGIC, 2, struct gdedu_unpin)
#define GDEDU_IOC_FLUSH		_IO(GDEDU_IOC_MAGIC, 3)
#define GDEDU_IOC_STATS		_IOR(GDEDU_IOC_MAGIC, 4, struct gdedu_stats)
#define GDEDU_IOC_DMABUF_ATTACH	_IOWR(GDEDU_IOC_MAGIC, 5, struct gdedu_dmabuf_attach)
#define GDEDU_IOC_DMABUF_XFER	_IOW(GDEDU_IOC_MAGIC, 6, struct gdedu_dmabuf_xfer)
#define GDEDU_IOC_DMABUF_DETACH	_IOW(GDEDU_IOC_MAGIC, 7, struct gdedu_dmabuf_detach)

#endif /* _UAPI_GDIRECT_EDU_H */
