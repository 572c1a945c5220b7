/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * gdirect_ioctl.h - user-space interface of gdirect.ko (/dev/gdirect)
 *
 * One open file is one pinning context.  It belongs to the process that
 * opened it: ioctls and mmaps from any other process (an fd passed over a
 * unix socket, or inherited across fork) fail with -EPERM.
 *
 * Registrations.  GDIRECT_IOC_PIN pins a range of GPU virtual memory through
 * nvidia_p2p_get_pages() (or the persistent variant) and returns a handle.
 * The range is widened to 64 KiB boundaries as chapter 12.2 of the guide
 * requires.  GDIRECT_IOC_UNPIN releases it.
 *
 * Revocation.  When the NVIDIA driver revokes a registration (the memory was
 * freed, or its owner exited) the driver tears down every CPU mapping of it,
 * marks its status word GDIRECT_STATUS_REVOKED and queues a struct
 * gdirect_event.  User space learns of it without a system call per use:
 *   - mmap(GDIRECT_STATUS_OFFSET, GDIRECT_STATUS_BYTES) maps a read-only
 *     array of __u32 status words, one per slot; a registration's slot is
 *     gdirect_pin.status_slot.  Check it with an acquire load.
 *   - the fd is pollable: POLLIN while events are queued; read() returns
 *     whole struct gdirect_event records.
 * A revoked registration still needs GDIRECT_IOC_UNPIN to free its handle
 * and slot; unpinning it does not call nvidia_p2p_put_pages().
 *
 * CPU mappings.  mmap(gdirect_pin.mmap_offset, len) maps the pinned range
 * (from its 64 KiB-aligned start) into the caller, write-combined on x86, or
 * cached where the page table says the memory is CPU-cacheable.  Mappings are
 * not inherited across fork (VM_DONTCOPY).  mmap_offset is handle << 40, or
 * handle << 32 on a file opened by a 32-bit process, so that its mmap2()
 * reaches every region (docs/driver.md); take it from the PIN answer.
 * GDIRECT_IOC_MAP_TYPE chooses, while the region is not mapped, how its
 * later mappings are made: the page table's way (the default), or
 * write-combined although the memory is CPU-cacheable (gdrcopy's
 * GDR_MAP_FLAG_REQ_WC_MAPPING on a coherent platform), or cached.
 */
#ifndef _UAPI_GDIRECT_H
#define _UAPI_GDIRECT_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define GDIRECT_ABI_VERSION	1

#define GDIRECT_GPU_PAGE_SHIFT	16
#define GDIRECT_GPU_PAGE_SIZE	(1ULL << GDIRECT_GPU_PAGE_SHIFT)

/* Status area: at mmap offset 0, GDIRECT_MAX_SLOTS words of 32 bits. */
#define GDIRECT_MAX_SLOTS	65536
#define GDIRECT_STATUS_OFFSET	0ULL
#define GDIRECT_STATUS_BYTES	(GDIRECT_MAX_SLOTS * 4)

/* Values of a status word. */
#define GDIRECT_STATUS_FREE	0	/* slot not in use */
#define GDIRECT_STATUS_PINNED	1	/* registration valid */
#define GDIRECT_STATUS_REVOKED	2	/* free callback ran; pages gone */

/* gdirect_pin.flags */
#define GDIRECT_PIN_PERSISTENT	(1U << 0) /* nvidia_p2p_get_pages_persistent */
#define GDIRECT_PIN_FLAGS_ALL	GDIRECT_PIN_PERSISTENT

/* gdirect_info.provider */
#define GDIRECT_PROVIDER_EMULATOR	1	/* nvp2p_emu.ko */
#define GDIRECT_PROVIDER_NVIDIA		2	/* nvidia.ko */

/* gdirect_info.caps */
#define GDIRECT_CAP_PERSISTENT	(1U << 0) /* persistent API available */
#define GDIRECT_CAP_MMAP_WC	(1U << 1) /* CPU mappings are write-combined */

struct gdirect_info {
	__u32 abi_version;		/* out: GDIRECT_ABI_VERSION */
	__u32 provider;			/* out: GDIRECT_PROVIDER_* */
	__u32 page_table_version;	/* out: NVIDIA_P2P_PAGE_TABLE_VERSION */
	__u32 dma_mapping_version;	/* out: NVIDIA_P2P_DMA_MAPPING_VERSION */
	__u32 caps;			/* out: GDIRECT_CAP_* */
	__u32 default_persistent;	/* out: module parameter use_persistent */
	__u64 reserved[4];
};

struct gdirect_pin {
	__u64 addr;		/* in: GPU virtual address, any alignment */
	__u64 size;		/* in: bytes, > 0 */
	__u64 p2p_token;	/* in: legacy token (deprecated), or 0 */
	__u32 va_space;		/* in: legacy token (deprecated), or 0 */
	__u32 flags;		/* in: GDIRECT_PIN_* */
	__u64 handle;		/* out: nonzero registration handle */
	__u64 pinned_addr;	/* out: 64 KiB-aligned start actually pinned */
	__u64 pinned_size;	/* out: bytes actually pinned */
	__u64 mmap_offset;	/* out: offset for mmap() of this region */
	__u32 status_slot;	/* out: index into the status area */
	__u32 reserved;
};

struct gdirect_unpin {
	__u64 handle;		/* in */
};

struct gdirect_region_info {
	__u64 handle;		/* in */
	__u64 pinned_addr;	/* out */
	__u64 pinned_size;	/* out */
	__u32 page_size;	/* out: bytes per GPU page (65536) */
	__u32 page_count;	/* out: entries in the page table */
	__u64 mapped_len;	/* out: bytes currently mmapped by this process */
	__u32 status;		/* out: GDIRECT_STATUS_* */
	__u32 flags;		/* out: GDIRECT_PIN_* it was pinned with */
	__u32 cpu_cacheable;	/* out: page table flags say CPU-cacheable */
	__u32 map_type;		/* out: GDIRECT_MAP_* of later mappings */
};

/* gdirect_map_type.type: how a region's later mappings are made */
#define GDIRECT_MAP_NATURAL	0	/* cached if CPU-cacheable, else WC */
#define GDIRECT_MAP_WC		1	/* write-combined, cacheable memory too */
#define GDIRECT_MAP_CACHED	2	/* cached: CPU-cacheable memory only */

struct gdirect_map_type {
	__u64 handle;		/* in */
	__u32 type;		/* in: GDIRECT_MAP_* */
	__u32 reserved;		/* in: 0 */
};

/* Causes in gdirect_event.cause */
#define GDIRECT_EVENT_REVOKED	1	/* NVIDIA free callback ran */

struct gdirect_event {
	__u64 handle;
	__u64 pinned_addr;
	__u64 pinned_size;
	__u32 status_slot;
	__u32 cause;
};

#define GDIRECT_IOC_MAGIC	'G'
#define GDIRECT_IOC_INFO	_IOR(GDIRECT_IOC_MAGIC, 0x00, struct gdirect_info)
#define GDIRECT_IOC_PIN		_IOWR(GDIRECT_IOC_MAGIC, 0x01, struct gdirect_pin)
#define GDIRECT_IOC_UNPIN	_IOW(GDIRECT_IOC_MAGIC, 0x02, struct gdirect_unpin)
#define GDIRECT_IOC_REGION_INFO	\
	_IOWR(GDIRECT_IOC_MAGIC, 0x03, struct gdirect_region_info)
#define GDIRECT_IOC_MAP_TYPE	\
	_IOW(GDIRECT_IOC_MAGIC, 0x04, struct gdirect_map_type)

#endif /* _UAPI_GDIRECT_H */
