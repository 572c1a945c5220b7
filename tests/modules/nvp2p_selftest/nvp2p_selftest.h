/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * nvp2p_selftest.h - test interface of nvp2p_selftest.ko
 *
 * A minimal third-party driver for qemu's edu device that calls the nv-p2p
 * API exactly as user space asks, so the guest tests can check every
 * behaviour and every error return of the provider from the kernel side.
 * Each ioctl returns 0 and puts the nv-p2p call's own result in .ret.
 */
#ifndef NVP2P_SELFTEST_H
#define NVP2P_SELFTEST_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define ST_SLOTS 16

/* st_pin.mode */
#define ST_PIN_CALLBACK		0	/* get_pages with a free callback */
#define ST_PIN_PERSISTENT	1	/* get_pages_persistent(flags) */
#define ST_PIN_NULL_CALLBACK	2	/* get_pages with a NULL callback */
#define ST_PIN_NULL_TABLE	3	/* get_pages with page_table == NULL */

struct st_pin {
	__u32 slot;
	__u32 mode;
	__u64 va;
	__u64 len;
	__u64 p2p_token;
	__u32 va_space;
	__u32 flags;
	__s32 ret;
	__u32 pad;
};

/* st_put.mode */
#define ST_PUT_NORMAL		0	/* put_pages */
#define ST_PUT_PERSISTENT	1	/* put_pages_persistent(flags) */
/* put_pages_persistent of the slot's last table put or revoked */
#define ST_PUT_DEAD_PERSISTENT	2

struct st_put {
	__u32 slot;
	__u32 mode;
	__u64 va;
	__u64 p2p_token;
	__u32 va_space;
	__u32 flags;
	__s32 ret;
	__u32 pad;
};

struct st_slot_info {
	__u32 slot;
	__u32 live;		/* holds a page table */
	__u32 callbacks;	/* free callbacks seen */
	__u32 version;
	__u32 page_size;
	__u32 entries;
	__u64 phys0;		/* physical address of the first page */
	__u64 phys_last;
	__u32 uuid_set;
	__u32 flags;		/* page-table flags (version 2 only) */
	__u32 compatible;	/* PAGE_TABLE_VERSION_COMPATIBLE() */
	__u32 dma_live;
	__u32 dma_version;
	__u32 dma_entries;
	__u64 dma0;		/* first DMA address for edu */
};

/* st_dma.mode */
#define ST_DMA_EDU		0	/* map/unmap for the edu device */
#define ST_DMA_NULL_PEER	1	/* peer == NULL */
#define ST_DMA_WRONG_PEER	2	/* unmap naming another device */
#define ST_DMA_BOGUS_MAPPING	3	/* unmap a mapping never made */
/* map (or unmap) the slot's last table put or revoked (and its mapping) */
#define ST_DMA_DEAD		4

struct st_dma {
	__u32 slot;
	__u32 mode;
	__s32 ret;
	__u32 pad;
};

/* Have edu write a pattern into the slot's pinned GPU memory. */
struct st_edu {
	__u32 slot;
	__u32 len;		/* bytes, chunked under edu's 4 KiB window */
	__u64 offset;		/* from the start of the pinned range */
	__u32 seed;		/* pattern: see st_pattern() in the test */
	__s32 ret;
};

/* st_misc.which */
#define ST_MISC_INIT_MAPPING	0
#define ST_MISC_DESTROY_MAPPING	1
#define ST_MISC_FREE_TABLE_NULL	2
#define ST_MISC_FREE_DMA_NULL	3

struct st_misc {
	__u32 which;
	__s32 ret;
};

#define ST_IOC_MAGIC	'S'
#define ST_IOC_PIN	_IOWR(ST_IOC_MAGIC, 0, struct st_pin)
#define ST_IOC_PUT	_IOWR(ST_IOC_MAGIC, 1, struct st_put)
#define ST_IOC_INFO	_IOWR(ST_IOC_MAGIC, 2, struct st_slot_info)
#define ST_IOC_DMA_MAP	_IOWR(ST_IOC_MAGIC, 3, struct st_dma)
#define ST_IOC_DMA_UNMAP _IOWR(ST_IOC_MAGIC, 4, struct st_dma)
#define ST_IOC_EDU	_IOWR(ST_IOC_MAGIC, 5, struct st_edu)
#define ST_IOC_MISC	_IOWR(ST_IOC_MAGIC, 6, struct st_misc)

/* The pattern edu writes: byte i of a transfer with seed s. */
static inline __u8 st_pattern(__u32 seed, __u64 i)
{
	__u32 x = seed ^ (__u32)(i * 2654435761u);

	x ^= x >> 13;
	x *= 0x5bd1e995u;
	return (__u8)(x ^ (x >> 15));
}

#endif /* NVP2P_SELFTEST_H */
