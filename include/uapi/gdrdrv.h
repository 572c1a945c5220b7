/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * gdrdrv.h - the gdrcopy 2.6 kernel interface (/dev/gdrdrv) as gdirect.ko
 * implements it
 *
 * gdrcopy's library (libgdrapi) talks to its kernel module through a misc
 * device, ioctls of magic 0xDA and mmap() of offset handle << PAGE_SHIFT.
 * gdirect.ko provides the same interface over its own registrations so that
 * any libgdrapi 2.x works unchanged; this header declares that interface.
 * The request numbers, version constants, field order and sizes are those
 * of gdrcopy 2.6 and must not change: the unit test
 * tests/unit/gdirect/gdrdrv-peer.sh compares them with the header in
 * gdrcopy's release tarball.
 *
 * Ioctl encodings.  Each request number carries the argument size that
 * gdrcopy's own header declares for it, because a library sends exactly
 * that number and the kernel dispatches on it.  PIN_BUFFER (1) and
 * PIN_BUFFER_V2 (7) encode the size of their structure (40 and 32 bytes).
 * Every other request encodes the size of a pointer to its structure (8
 * bytes on LP64), because gdrcopy declares them with a pointer type.  The
 * kernel copies sizeof(struct) bytes in every case.  Earlier versions of
 * this header declared PIN_BUFFER_V2 with a pointer type (0xC008DA07),
 * which no gdrcopy release sends.  gdirect.ko still accepts that number so
 * that libraries built from those versions keep working
 * (kernel/gdirect/gdrdrv.c), but this header declares only gdrcopy's.
 *
 * Semantics, and where gdirect differs from gdrcopy's own module, are
 * described in docs/driver.md ("The /dev/gdrdrv personality").
 */
#ifndef _UAPI_GDRDRV_H
#define _UAPI_GDRDRV_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Versions are packed as major << 16 | minor. */
#define GDRDRV_MAJOR_VERSION_SHIFT	16
#define GDRDRV_MAJOR_VERSION		2
#define GDRDRV_MINOR_VERSION		6
#define GDRDRV_VERSION	((GDRDRV_MAJOR_VERSION << GDRDRV_MAJOR_VERSION_SHIFT) | \
			 GDRDRV_MINOR_VERSION)

/* Oldest library the driver accepts (GET_VERSION reports it). */
#define MINIMUM_GDR_API_MAJOR_VERSION	2
#define MINIMUM_GDR_API_MINOR_VERSION	0
#define MINIMUM_GDR_API_VERSION	((MINIMUM_GDR_API_MAJOR_VERSION << 16) | \
				 MINIMUM_GDR_API_MINOR_VERSION)

/*
 * Driver versions from which the library sends the newer requests.  The
 * values are gdrcopy's (2.4 for GET_INFO_V2, 2.5 for the rest), because a
 * library gates on them against any gdrdrv, NVIDIA's included.
 */
#define GDRDRV_MINIMUM_VERSION_WITH_GET_INFO_V2	\
	((2 << GDRDRV_MAJOR_VERSION_SHIFT) | 4)
#define GDRDRV_MINIMUM_VERSION_WITH_GET_ATTR	\
	((2 << GDRDRV_MAJOR_VERSION_SHIFT) | 5)
#define GDRDRV_MINIMUM_VERSION_WITH_PIN_BUFFER_V2	\
	((2 << GDRDRV_MAJOR_VERSION_SHIFT) | 5)
#define GDRDRV_MINIMUM_VERSION_WITH_REQ_MAPPING_TYPE	\
	((2 << GDRDRV_MAJOR_VERSION_SHIFT) | 5)

#define GDRDRV_IOCTL	0xDA

/* CPU mapping types (GET_INFO_V2 mapping_type, REQ_MAPPING_TYPE). */
typedef enum {
	GDR_MR_NONE	= 0,	/* not mapped; for REQ: let the driver pick */
	GDR_MR_WC	= 1,	/* write-combining */
	GDR_MR_CACHING	= 2,	/* CPU-cached (coherent platforms) */
	GDR_MR_DEVICE	= 3,	/* device memory (some ARM64 systems) */
} gdr_mr_type_t;

/* GET_ATTR attribute ids. */
typedef enum {
	GDRDRV_ATTR_USE_PERSISTENT_MAPPING	= 1,
	GDRDRV_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE	= 2,
	GDRDRV_ATTR_MAX
} gdrdrv_attr_t;

/* PIN_BUFFER_V2 flags. */
#define GDRDRV_PIN_BUFFER_FLAG_DEFAULT		0
#define GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE	1

/* A pinned region's handle; mmap() it at offset handle << PAGE_SHIFT. */
typedef __u64 gdr_hnd_t;

/* 1: pin [addr, addr + size), with the deprecated token pair or zeros. */
struct GDRDRV_IOC_PIN_BUFFER_PARAMS {
	__u64 addr;		/* in */
	__u64 size;		/* in */
	__u64 p2p_token;	/* in */
	__u32 va_space;		/* in; 4 bytes of padding follow */
	gdr_hnd_t handle;	/* out */
};

#define GDRDRV_IOC_PIN_BUFFER	\
	_IOWR(GDRDRV_IOCTL, 1, struct GDRDRV_IOC_PIN_BUFFER_PARAMS)

/* 2: release a handle. */
struct GDRDRV_IOC_UNPIN_BUFFER_PARAMS {
	gdr_hnd_t handle;	/* in */
};

#define GDRDRV_IOC_UNPIN_BUFFER	\
	_IOWR(GDRDRV_IOCTL, 2, struct GDRDRV_IOC_UNPIN_BUFFER_PARAMS *)

/* 3: did the free callback run (the memory was freed)? */
struct GDRDRV_IOC_GET_CB_FLAG_PARAMS {
	gdr_hnd_t handle;	/* in */
	__u32 flag;		/* out: 1 once revoked */
};

#define GDRDRV_IOC_GET_CB_FLAG	\
	_IOWR(GDRDRV_IOCTL, 3, struct GDRDRV_IOC_GET_CB_FLAG_PARAMS *)

/* 4: the original (v1) region query. */
struct GDRDRV_IOC_GET_INFO_PARAMS {
	gdr_hnd_t handle;	/* in */
	__u64 va;		/* out: 64 KiB-aligned start of the pin */
	__u64 mapped_size;	/* out: bytes pinned, a multiple of 64 KiB */
	__u32 page_size;	/* out: 65536 */
	__u32 tsc_khz;		/* out: deprecated, 0 */
	__u64 tm_cycles;	/* out: deprecated, 0 */
	__u32 mapped;		/* out: 1 while mmapped */
	__u32 wc_mapping;	/* out: 1 while mmapped write-combining */
};

#define GDRDRV_IOC_GET_INFO	\
	_IOWR(GDRDRV_IOCTL, 4, struct GDRDRV_IOC_GET_INFO_PARAMS *)

/* 5: as 4, with the mapping type in place of mapped/wc_mapping. */
struct GDRDRV_IOC_GET_INFO_V2_PARAMS {
	gdr_hnd_t handle;	/* in */
	__u64 va;		/* out */
	__u64 mapped_size;	/* out */
	__u32 page_size;	/* out */
	__u32 tsc_khz;		/* out: deprecated, 0 */
	__u64 tm_cycles;	/* out: deprecated, 0 */
	__u32 mapping_type;	/* out: gdr_mr_type_t; 4 bytes of padding */
};

#define GDRDRV_IOC_GET_INFO_V2	\
	_IOWR(GDRDRV_IOCTL, 5, struct GDRDRV_IOC_GET_INFO_V2_PARAMS *)

/* 6: a driver-wide attribute. */
struct GDRDRV_IOC_GET_ATTR_PARAMS {
	__u32 attr;		/* in: gdrdrv_attr_t */
	__u32 val;		/* out */
};

#define GDRDRV_IOC_GET_ATTR	\
	_IOWR(GDRDRV_IOCTL, 6, struct GDRDRV_IOC_GET_ATTR_PARAMS *)

/* 7: pin without tokens, with GDRDRV_PIN_BUFFER_FLAG_* flags. */
struct GDRDRV_IOC_PIN_BUFFER_V2_PARAMS {
	__u64 addr;		/* in */
	__u64 size;		/* in */
	__u32 flags;		/* in */
	__u32 pad;		/* in: 0 */
	gdr_hnd_t handle;	/* out */
};

#define GDRDRV_IOC_PIN_BUFFER_V2	\
	_IOWR(GDRDRV_IOCTL, 7, struct GDRDRV_IOC_PIN_BUFFER_V2_PARAMS)


/* 8: choose the CPU mapping type of the next mmap() of a handle. */
struct GDRDRV_IOC_REQ_MAPPING_TYPE_PARAMS {
	gdr_hnd_t handle;	/* in */
	__u32 mapping_type;	/* in: gdr_mr_type_t; 4 bytes of padding */
};

#define GDRDRV_IOC_REQ_MAPPING_TYPE	\
	_IOWR(GDRDRV_IOCTL, 8, struct GDRDRV_IOC_REQ_MAPPING_TYPE_PARAMS *)

/* 255: driver version and the oldest library it accepts. */
struct GDRDRV_IOC_GET_VERSION_PARAMS {
	__u32 gdrdrv_version;		/* out: GDRDRV_VERSION */
	__u32 minimum_gdr_api_version;	/* out: MINIMUM_GDR_API_VERSION */
};

#define GDRDRV_IOC_GET_VERSION	\
	_IOWR(GDRDRV_IOCTL, 255, struct GDRDRV_IOC_GET_VERSION_PARAMS *)

#endif /* _UAPI_GDRDRV_H */
