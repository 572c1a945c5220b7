/* SPDX-License-Identifier: MIT */
/*
 * cuda_dl.h - the CUDA driver, loaded at run time.
 *
 * libgdirect never links libcuda: it loads libcuda.so.1 (or
 * $GDIRECT_LIBCUDA) once with the product's one loader (lib/cudaload) and
 * resolves the few entry points it needs through cuGetProcAddress_v2 where
 * the driver has it.  Without a driver every pointer is CPU memory.
 */
#ifndef GDL_CUDA_DL_H
#define GDL_CUDA_DL_H

#include <stdint.h>

struct gdl_cuquery {
	int type;		/* GDIRECT_MEM_* */
	int device;
	uint64_t base, size;	/* the allocation (device/managed only) */
	uint64_t buffer_id;
};

/* 1 when a CUDA driver was loaded. */
int gdl_cuda_available(void);

/*
 * Loads the driver if that was not tried yet.  NULL, or why the library
 * GDIRECT_LIBCUDA names could not serve (a typo must not pass for a
 * machine without CUDA, on which every pointer would be CPU memory).
 */
const char *gdl_cuda_named_error(void);

/* Classify addr with one cuPointerGetAttributes call (+ cuMemGetAddressRange
 * for device memory).  Always succeeds: errors mean CPU memory. */
void gdl_cuda_query(uint64_t addr, struct gdl_cuquery *q);

/* BUFFER_ID of addr: 0 on success, -EINVAL if addr is not (or no longer)
 * valid device memory. */
int gdl_cuda_buffer_id(uint64_t addr, uint64_t *id);

/* gdl_cuda_sync_memops(): the allocation is a VMM mapping, which the driver
 * gives no SYNC_MEMOPS; it is registered without it. */
#define GDL_SYNC_VMM 1

/*
 * cuPointerSetAttribute(SYNC_MEMOPS, 1) on the allocation holding addr.
 * 0 when set; GDL_SYNC_VMM when the driver answered CUDA_ERROR_NOT_SUPPORTED
 * and addr is a VMM mapping (cuMemRetainAllocationHandle knows it);
 * -ENOSYS without the driver's entry point; otherwise *cu_err is the
 * driver's answer and the result -EOPNOTSUPP (CUDA_ERROR_NOT_SUPPORTED on
 * other memory) or -EINVAL.
 */
int gdl_cuda_sync_memops(uint64_t addr, int *cu_err);

/*
 * A dma-buf of [base, base+size) of one allocation (host-page aligned),
 * from cuMemGetHandleForAddressRange(DMA_BUF_FD, flags 0), in *fd.
 * -ENOSYS without the driver's entry point; otherwise *cu_err is the
 * driver's answer and the result -EOPNOTSUPP (CUDA_ERROR_NOT_SUPPORTED)
 * or -EINVAL.
 */
int gdl_cuda_dmabuf_fd(uint64_t base, uint64_t size, int *fd, int *cu_err);

#endif
