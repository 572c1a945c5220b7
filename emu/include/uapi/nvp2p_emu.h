/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * nvp2p_emu.h - control device of the emulated GPU (/dev/nvp2p_emu)
 *
 * This is the emulator's stand-in for the NVIDIA driver's own user interface,
 * used by cuda_emu's libcuda.so.1.  A process reserves GPU virtual addresses
 * itself (an inaccessible PROT_NONE mapping, as the CUDA driver does), then
 * asks the emulator to back a range of them with GPU memory.  That memory is
 * not CPU-accessible through the VA; it is read and written with the copy
 * ioctls, and by peers through nvidia_p2p_get_pages().
 *
 * Every allocation belongs to the open file that made it, and so to its
 * process.  Closing the file frees them all, firing the free callbacks of any
 * third-party pins, exactly as the NVIDIA driver does when its fd is closed.
 */
#ifndef _UAPI_NVP2P_EMU_H
#define _UAPI_NVP2P_EMU_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define NVP2P_EMU_DEVICE	"/dev/nvp2p_emu"
#define NVP2P_EMU_ABI_VERSION	1
#define NVP2P_EMU_PAGE_SIZE	(64ULL << 10)	/* GPU page: 64 KiB */

struct nvp2p_emu_info {
	__u32 abi_version;
	__u32 page_table_version;	/* NVIDIA_P2P_PAGE_TABLE_VERSION */
	__u32 dma_mapping_version;	/* NVIDIA_P2P_DMA_MAPPING_VERSION */
	__u32 persistent_api;		/* 1: get/put_pages_persistent */
	__u64 mem_size;			/* GPU memory (BAR2) bytes */
	__u64 mem_used;			/* bytes allocated */
	__u64 bar1_size;		/* BAR1 aperture bytes */
	__u64 bar1_reserved;		/* reserved for internal use */
	__u64 bar1_used;		/* bytes mapped for peers */
	__u32 pci_domain;
	__u32 pci_bus;
	__u32 pci_devfn;
	__u32 caps;			/* NVP2P_EMU_CAP_* */
	__u8  gpu_uuid[16];
	__u32 cuda_version;		/* NVP2P_EMU_CUDA_* (0: a module before it) */
	__u32 pad;
	__u64 reserved[3];
};

/* nvp2p_emu_info.caps */
#define NVP2P_EMU_CAP_DMABUF	(1U << 0)	/* NVP2P_EMU_IOC_DMABUF works */
/* a coherent platform's GPU (the coherent knob, as the INFO call found it) */
#define NVP2P_EMU_CAP_COHERENT	(1U << 1)

/*
 * nvp2p_emu_info.cuda_version: the CUDA driver API version libcuda
 * emulates, the module parameter and knob cuda_version.  13.0 is what the
 * H100s and H200s measured here report: the PCIe mapping type of a dma-buf
 * is refused.  13.3 is the first driver that gdrcopy 2.6's dma-buf mmap
 * backend accepts: the PCIe mapping type is allowed.
 */
#define NVP2P_EMU_CUDA_13_0	13000
#define NVP2P_EMU_CUDA_13_3	13030

/* Back [va, va + size) with GPU memory. */
struct nvp2p_emu_alloc {
	__u64 va;		/* in: 64 KiB-aligned, in a PROT_NONE mapping */
	__u64 size;		/* in: multiple of 64 KiB, > 0 */
	__u64 mem_offset;	/* out: offset of the memory in BAR2 */
};

struct nvp2p_emu_free {
	__u64 va;		/* in: start of an allocation */
};

/*
 * A CUDA allocation inside an allocation of ours that several share (a
 * page of packed small allocations).  Once one is added, get_pages on
 * that allocation must lie within the 64 KiB pages of one of them, and
 * NVP2P_EMU_IOC_SUB_DEL revokes the non-persistent pins that cover the
 * removed one's bytes, as a free does.
 */
struct nvp2p_emu_sub {
	__u64 va;		/* in: start, inside an allocation */
	__u64 size;		/* in: bytes, > 0, inside it (SUB_ADD only) */
};

/* Directions of nvp2p_emu_copy */
#define NVP2P_EMU_HTOD	1	/* user buffer -> GPU */
#define NVP2P_EMU_DTOH	2	/* GPU -> user buffer */
#define NVP2P_EMU_DTOD	3	/* GPU -> GPU */
#define NVP2P_EMU_MEMSET 4	/* fill GPU memory with the low byte of src */

struct nvp2p_emu_copy {
	__u64 dst;		/* GPU VA, or user pointer for DTOH */
	__u64 src;		/* GPU VA, or user pointer for HTOD */
	__u64 size;
	__u32 dir;		/* NVP2P_EMU_* */
	__u32 reserved;
};

/* Look up the allocation containing va (any of the caller's own). */
struct nvp2p_emu_query {
	__u64 va;		/* in */
	__u64 base;		/* out: allocation start */
	__u64 size;		/* out: allocation size */
	__u64 mem_offset;	/* out: offset in BAR2 */
};

/*
 * IPC (cuIpcGetMemHandle): EXPORT names a range of one of the caller's
 * allocations (a cuMemAlloc allocation inside the pages it shares with
 * others) with a handle, an unguessable number, the same while the range
 * stays exported.  Any process with this device open may IMPORT it: the
 * whole allocation is mapped at a VA of the importer's (reserved as for
 * ALLOC), sharing the memory.  The memory lives while its owner has not
 * freed it or an import of it is left; a handle can be imported while its
 * owner has neither freed the allocation nor WITHDRAWn the range (its
 * cuMemFree of a range that shares its pages), and while an import of it
 * is left.  Imports are not charged to the importer, cannot be exported
 * again, and the exporting process cannot import its own memory.
 * Errors of IMPORT: ENOENT (nothing to import), ELOOP (the caller's own
 * memory), EINVAL (size differs, bad VA), EEXIST (VA in use).
 */
struct nvp2p_emu_export {
	__u64 va;		/* in: start of the range */
	__u64 size;		/* in: its size; inside one allocation */
	__u64 handle;		/* out */
	__u64 base;		/* out: the allocation's start */
	__u64 alloc_size;	/* out: the allocation's size */
};

struct nvp2p_emu_withdraw {
	__u64 handle;		/* in: an export of the caller's */
};

struct nvp2p_emu_import {
	__u64 handle;		/* in: from EXPORT */
	__u64 va;		/* in: 64 KiB-aligned, in a PROT_NONE mapping */
	__u64 size;		/* in: the exported allocation's size */
	__u64 mem_offset;	/* out: offset of the memory in BAR2 */
	__u64 offset;		/* out: of the exported range in it */
	__u64 range_size;	/* out: the exported range's size */
};

/*
 * A dma-buf of [va, va + size), a range of one of the caller's allocations
 * (cuMemGetHandleForAddressRange): both 4 KiB-aligned.  The dma-buf keeps
 * the memory until it is released.  A static exporter, as NVIDIA's: static
 * importers, and dynamic ones that do peer to peer.  Flags, as the CUDA
 * driver library passes them to NVIDIA's export (nv-dmabuf.c):
 * NVP2P_EMU_DMABUF_PCIE asks for the PCIe mapping type, which no importer
 * can attach (a GPU that is not coherent); NVP2P_EMU_DMABUF_ALLOW_MMAP
 * (NVIDIA's bAllowMmap) lets the fd be mmapped, a write-combined BAR
 * mapping of the range, whatever the mapping type.  Without it mmap fails
 * with ENOTSUPP (524).  Other flags: EINVAL.  The flags went into the
 * existing field: the struct's size and the ioctl's number are unchanged.
 * Only the open licence flavours export (NVP2P_EMU_CAP_DMABUF); the others
 * answer EOPNOTSUPP.
 */
#define NVP2P_EMU_DMABUF_PCIE		(1U << 0)
#define NVP2P_EMU_DMABUF_ALLOW_MMAP	(1U << 1)

struct nvp2p_emu_dmabuf {
	__u64 va;		/* in */
	__u64 size;		/* in */
	__u32 flags;		/* in: NVP2P_EMU_DMABUF_* */
	__s32 fd;		/* out: O_CLOEXEC */
};

/* Legacy p2p tokens of this file's VA space (deprecated, guide 11.6). */
struct nvp2p_emu_tokens {
	__u64 p2p_token;
	__u32 va_space;
	__u32 reserved;
};

#define NVP2P_EMU_IOC_MAGIC	'E'
#define NVP2P_EMU_IOC_INFO	_IOR(NVP2P_EMU_IOC_MAGIC, 0, struct nvp2p_emu_info)
#define NVP2P_EMU_IOC_ALLOC	_IOWR(NVP2P_EMU_IOC_MAGIC, 1, struct nvp2p_emu_alloc)
#define NVP2P_EMU_IOC_FREE	_IOW(NVP2P_EMU_IOC_MAGIC, 2, struct nvp2p_emu_free)
#define NVP2P_EMU_IOC_COPY	_IOW(NVP2P_EMU_IOC_MAGIC, 3, struct nvp2p_emu_copy)
#define NVP2P_EMU_IOC_QUERY	_IOWR(NVP2P_EMU_IOC_MAGIC, 4, struct nvp2p_emu_query)
#define NVP2P_EMU_IOC_TOKENS	_IOR(NVP2P_EMU_IOC_MAGIC, 5, struct nvp2p_emu_tokens)
#define NVP2P_EMU_IOC_EXPORT	_IOWR(NVP2P_EMU_IOC_MAGIC, 6, struct nvp2p_emu_export)
#define NVP2P_EMU_IOC_IMPORT	_IOWR(NVP2P_EMU_IOC_MAGIC, 7, struct nvp2p_emu_import)
#define NVP2P_EMU_IOC_WITHDRAW	_IOW(NVP2P_EMU_IOC_MAGIC, 8, struct nvp2p_emu_withdraw)
#define NVP2P_EMU_IOC_DMABUF	_IOWR(NVP2P_EMU_IOC_MAGIC, 9, struct nvp2p_emu_dmabuf)
#define NVP2P_EMU_IOC_SUB_ADD	_IOW(NVP2P_EMU_IOC_MAGIC, 10, struct nvp2p_emu_sub)
#define NVP2P_EMU_IOC_SUB_DEL	_IOW(NVP2P_EMU_IOC_MAGIC, 11, struct nvp2p_emu_sub)

#endif /* _UAPI_NVP2P_EMU_H */
