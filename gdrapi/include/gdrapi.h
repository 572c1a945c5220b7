/* SPDX-License-Identifier: MIT */
/*
 * gdrapi.h - gdirect's libgdrapi: the gdrcopy 2.x library interface.
 *
 * The declarations, types, enum values and macros are those of gdrcopy 2.6's
 * <gdrapi.h> (an interface fact, matched exactly so that programs built
 * against either header run on either library); the text is gdirect's own.
 * The library (libgdrapi.so.2) works over /dev/gdirect (gdirect.ko's own
 * interface, preferred) or /dev/gdrdrv (the gdrdrv ioctl interface, served
 * by gdirect.ko or by gdrcopy's gdrdrv.ko), or, with no kernel driver,
 * over the CUDA driver's dma-bufs (gdrcopy 2.6's dma-buf mmap backend,
 * CUDA 13.3 or later).  See docs/gdrcopy.md.
 *
 * Conventions, as gdrcopy's: functions returning int return 0 or a
 * positive errno value; gdr_open() returns NULL on failure.
 *
 * Environment:
 *   GDIRECT_GDRAPI_BACKEND  "gdirect", "gdrdrv", "dmabuf" or "auto" (unset
 *                           or empty: /dev/gdirect if it exists, else
 *                           /dev/gdrdrv, and the dma-buf backend when that
 *                           cannot be opened); any other value makes
 *                           gdr_open() fail (EINVAL).
 *   GDRCOPY_USE_DMABUF_MMAP "1": the dma-buf backend only; unset, empty or
 *                           "0": the order above; any other value makes
 *                           gdr_open() fail (EINVAL).
 *   GDRCOPY_ENABLE_LOGGING  when set, errors are printed on stderr.
 *
 * Threads: one gdr_t may be used by several threads at once; its list of
 * handles is protected by a lock.  A handle must not be unpinned by one
 * thread while another still uses it (as with gdrcopy).
 */
#ifndef __GDRAPI_H__
#define __GDRAPI_H__

/* gdrcopy's header includes these three, and programs may rely on that. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define MAJOR_VERSION_SHIFT	16
#define MINOR_VERSION_MASK	(((uint32_t)1 << MAJOR_VERSION_SHIFT) - 1)

#define GDR_API_MAJOR_VERSION	2
#define GDR_API_MINOR_VERSION	6
#define GDR_API_VERSION		((GDR_API_MAJOR_VERSION << MAJOR_VERSION_SHIFT) | GDR_API_MINOR_VERSION)

#define MINIMUM_GDRDRV_MAJOR_VERSION	2
#define MINIMUM_GDRDRV_MINOR_VERSION	0
#define MINIMUM_GDRDRV_VERSION	((MINIMUM_GDRDRV_MAJOR_VERSION << MAJOR_VERSION_SHIFT) | MINIMUM_GDRDRV_MINOR_VERSION)

/* GPU pages are 64 KiB: pins cover whole pages. */
#define GPU_PAGE_SHIFT	16
#define GPU_PAGE_SIZE	(1UL << GPU_PAGE_SHIFT)
#define GPU_PAGE_OFFSET	(GPU_PAGE_SIZE - 1)
#define GPU_PAGE_MASK	(~GPU_PAGE_OFFSET)

#ifdef __cplusplus
extern "C" {
#endif

/* The library's state: one open device file and its pins. */
struct gdr;
typedef struct gdr *gdr_t;

/* Open the device (see above).  NULL on failure. */
gdr_t gdr_open(void);

/* Unpin everything still pinned through G (unmap first), close, free G. */
int gdr_close(gdr_t g);

/* A pinned buffer. */
typedef struct gdr_mh_s {
	unsigned long h;
} gdr_mh_t;

/*
 * Pin [addr, addr + size) of GPU memory (widened to 64 KiB pages) and
 * return its handle.  Not yet mapped.  Tokens are deprecated: pass 0, 0.
 */
int gdr_pin_buffer(gdr_t g, unsigned long addr, size_t size,
		   uint64_t p2p_token, uint32_t va_space, gdr_mh_t *handle);

/* Release a pin (gdr_unmap() its mapping first). */
int gdr_unpin_buffer(gdr_t g, gdr_mh_t handle);

/* *flag = 1 once the GPU memory was freed (or otherwise revoked). */
int gdr_get_callback_flag(gdr_t g, gdr_mh_t handle, int *flag);

typedef enum gdr_mapping_type {
	GDR_MAPPING_TYPE_NONE = 0,
	GDR_MAPPING_TYPE_WC = 1,
	GDR_MAPPING_TYPE_CACHING = 2,
	GDR_MAPPING_TYPE_DEVICE = 3,
	GDR_MAPPING_TYPE_MAX	/* the number of types, not a type */
} gdr_mapping_type_t;

/*
 * A pin as the driver made it: va and mapped_size are the 64 KiB-aligned
 * range actually pinned, which may start below the address passed to the
 * pin.  tm_cycles and cycles_per_ms are deprecated (0).
 */
typedef struct gdr_info_v2 {
	uint64_t va;
	uint64_t mapped_size;
	uint32_t page_size;
	uint64_t tm_cycles;
	uint32_t cycles_per_ms;
	unsigned mapped:1;
	unsigned wc_mapping:1;
	gdr_mapping_type_t mapping_type;
} gdr_info_v2_t;
typedef gdr_info_v2_t gdr_info_t;

int gdr_get_info_v2(gdr_t g, gdr_mh_t handle, gdr_info_v2_t *info);

/*
 * Programs built against this header call gdr_get_info_v2; the library
 * still exports gdr_get_info, with the 40-byte layout of gdrcopy 2.0-2.2
 * (no mapping_type), for programs built before.
 */
#define gdr_get_info gdr_get_info_v2

/*
 * Map the whole pin into the caller: *va corresponds to info.va, so the
 * byte at GPU address A is at *va + (A - info.va).  SIZE is the pin's
 * mapped_size (or less).
 */
int gdr_map(gdr_t g, gdr_mh_t handle, void **va, size_t size);

typedef enum gdr_map_flags {
	GDR_MAP_FLAG_DEFAULT = 0,
	GDR_MAP_FLAG_REQ_WC_MAPPING = 1,
	GDR_MAP_FLAG_REQ_CACHE_MAPPING = 2,
	GDR_MAP_FLAG_REQ_DEVICE_MAPPING = 3
} gdr_map_flags_t;

/* gdr_map() asking for a mapping type; EINVAL when it cannot be had. */
int gdr_map_v2(gdr_t g, gdr_mh_t handle, void **va, size_t size, int flags);

/* Remove the mapping gdr_map() made. */
int gdr_unmap(gdr_t g, gdr_mh_t handle, void *va, size_t size);

/*
 * CPU copies into and out of a mapping (MAP_D_PTR lies inside the mapping
 * of HANDLE), with the fences write-combined memory needs.  They do not
 * order against GPU work already launched (guide: synchronization).
 */
int gdr_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr,
			size_t size);
int gdr_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr,
			  size_t size);

/* The interface version this library implements (GDR_API_*_VERSION). */
void gdr_runtime_get_version(int *major, int *minor);

/* The gdrdrv interface version of the driver behind G. */
int gdr_driver_get_version(gdr_t g, int *major, int *minor);

typedef enum gdr_attr {
	GDR_ATTR_USE_PERSISTENT_MAPPING = 1,	  /* pins survive cuMemFree */
	GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE = 2, /* GDR_PIN_FLAG_FORCE_PCIE works */
	GDR_ATTR_USING_DMA_BUF_MMAP = 3,	  /* pins go through the dma-buf backend */
	GDR_ATTR_MAX
} gdr_attr_t;

int gdr_get_attribute(gdr_t g, gdr_attr_t attr, int *v);

typedef enum gdr_pin_flags {
	GDR_PIN_FLAG_DEFAULT = 0,
	GDR_PIN_FLAG_FORCE_PCIE = 1
} gdr_pin_flags_t;

/* gdr_pin_buffer() without tokens, with GDR_PIN_FLAG_* FLAGS. */
int gdr_pin_buffer_v2(gdr_t g, unsigned long addr, size_t size, uint32_t flags,
		      gdr_mh_t *handle);

/* *str = "None", "Write Combining", "Caching" or "Device"; else EINVAL. */
int gdr_get_mapping_type_string(gdr_mapping_type_t type, const char **str);

#ifdef __cplusplus
}
#endif

#endif /* __GDRAPI_H__ */
