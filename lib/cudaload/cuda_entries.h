/* SPDX-License-Identifier: MIT */
/*
 * cuda_entries.h - every CUDA driver entry point the product calls, once.
 *
 * GDL_CUDA_ENTRIES(X) calls X(field, name, symbol, type) for each entry:
 *   field   the member of struct gdl_cuda (cudaload.h) that holds it; not
 *           the symbol itself, since cuda.h defines cuMemFree and others
 *           as macros for their current versions;
 *   name    the base name cuGetProcAddress takes ("cuMemFree");
 *   symbol  the versioned name libcuda.so.1 exports ("cuMemFree_v2"),
 *           which dlsym and RTLD_NEXT look up;
 *   type    the function pointer type.  It is the prototype that
 *           include/nvidia/cuda.h declares for the symbol (GDL_CUDA_PROTO),
 *           so no signature is written twice; the few older ABIs cuda.h
 *           does not declare are spelt out here with the reason.
 *
 * Which entries a user needs, and which of them it requires, is the
 * user's choice (gdl_cuload_open()); the list has no order that matters.
 */
#ifndef GDL_CUDA_ENTRIES_H
#define GDL_CUDA_ENTRIES_H

#include <cuda.h>

/* The pointer type of the function cuda.h declares as fn. */
#define GDL_CUDA_PROTO(fn) __typeof__(&fn)

#define GDL_CUDA_ENTRIES(X)						\
	X(init, "cuInit", cuInit, GDL_CUDA_PROTO(cuInit))		\
	X(driver_get_version, "cuDriverGetVersion", cuDriverGetVersion,	\
	  GDL_CUDA_PROTO(cuDriverGetVersion))				\
	X(device_get, "cuDeviceGet", cuDeviceGet,			\
	  GDL_CUDA_PROTO(cuDeviceGet))					\
	X(device_get_count, "cuDeviceGetCount", cuDeviceGetCount,	\
	  GDL_CUDA_PROTO(cuDeviceGetCount))				\
	X(device_get_attribute, "cuDeviceGetAttribute",		\
	  cuDeviceGetAttribute, GDL_CUDA_PROTO(cuDeviceGetAttribute))	\
	X(get_proc_address, "cuGetProcAddress", cuGetProcAddress_v2,	\
	  GDL_CUDA_PROTO(cuGetProcAddress_v2))				\
	/* The CUDA 11.3 ABI, without the query result. */		\
	X(get_proc_address_v1, "cuGetProcAddress", cuGetProcAddress,	\
	  CUresult (*)(const char *, void **, int, cuuint64_t))	\
	X(primary_retain, "cuDevicePrimaryCtxRetain",			\
	  cuDevicePrimaryCtxRetain,					\
	  GDL_CUDA_PROTO(cuDevicePrimaryCtxRetain))			\
	X(primary_release, "cuDevicePrimaryCtxRelease",		\
	  cuDevicePrimaryCtxRelease_v2,					\
	  GDL_CUDA_PROTO(cuDevicePrimaryCtxRelease_v2))			\
	/* The pre-11.0 ABI has the same prototype as _v2. */		\
	X(primary_release_v1, "cuDevicePrimaryCtxRelease",		\
	  cuDevicePrimaryCtxRelease,					\
	  GDL_CUDA_PROTO(cuDevicePrimaryCtxRelease_v2))			\
	X(primary_reset, "cuDevicePrimaryCtxReset",			\
	  cuDevicePrimaryCtxReset_v2,					\
	  GDL_CUDA_PROTO(cuDevicePrimaryCtxReset_v2))			\
	/* The pre-11.0 ABI has the same prototype as _v2. */		\
	X(primary_reset_v1, "cuDevicePrimaryCtxReset",			\
	  cuDevicePrimaryCtxReset,					\
	  GDL_CUDA_PROTO(cuDevicePrimaryCtxReset_v2))			\
	X(primary_get_state, "cuDevicePrimaryCtxGetState",		\
	  cuDevicePrimaryCtxGetState,					\
	  GDL_CUDA_PROTO(cuDevicePrimaryCtxGetState))			\
	X(ctx_destroy, "cuCtxDestroy", cuCtxDestroy_v2,		\
	  GDL_CUDA_PROTO(cuCtxDestroy_v2))				\
	/* The pre-4.0 ABI has the same prototype as _v2. */		\
	X(ctx_destroy_v1, "cuCtxDestroy", cuCtxDestroy,		\
	  GDL_CUDA_PROTO(cuCtxDestroy_v2))				\
	X(ctx_get_current, "cuCtxGetCurrent", cuCtxGetCurrent,		\
	  GDL_CUDA_PROTO(cuCtxGetCurrent))				\
	X(ctx_set_current, "cuCtxSetCurrent", cuCtxSetCurrent,		\
	  GDL_CUDA_PROTO(cuCtxSetCurrent))				\
	X(mem_alloc, "cuMemAlloc", cuMemAlloc_v2,			\
	  GDL_CUDA_PROTO(cuMemAlloc_v2))					\
	X(mem_free, "cuMemFree", cuMemFree_v2, GDL_CUDA_PROTO(cuMemFree_v2)) \
	/* The pre-3.2 ABI: a 32-bit device pointer. */			\
	X(mem_free_v1, "cuMemFree", cuMemFree, CUresult (*)(unsigned int)) \
	/* Not in cuda.h's subset: the product only wraps it. */	\
	X(mem_free_async, "cuMemFreeAsync", cuMemFreeAsync,		\
	  CUresult (*)(CUdeviceptr, CUstream))				\
	X(mem_unmap, "cuMemUnmap", cuMemUnmap, GDL_CUDA_PROTO(cuMemUnmap)) \
	X(mem_free_host, "cuMemFreeHost", cuMemFreeHost,		\
	  GDL_CUDA_PROTO(cuMemFreeHost))					\
	X(mem_retain_allocation_handle, "cuMemRetainAllocationHandle",	\
	  cuMemRetainAllocationHandle,					\
	  GDL_CUDA_PROTO(cuMemRetainAllocationHandle))			\
	X(mem_release, "cuMemRelease", cuMemRelease,			\
	  GDL_CUDA_PROTO(cuMemRelease))					\
	X(mem_get_address_range, "cuMemGetAddressRange",		\
	  cuMemGetAddressRange_v2, GDL_CUDA_PROTO(cuMemGetAddressRange_v2)) \
	X(mem_get_handle_for_address_range,				\
	  "cuMemGetHandleForAddressRange", cuMemGetHandleForAddressRange, \
	  GDL_CUDA_PROTO(cuMemGetHandleForAddressRange))		\
	X(pointer_get_attribute, "cuPointerGetAttribute",		\
	  cuPointerGetAttribute, GDL_CUDA_PROTO(cuPointerGetAttribute))	\
	X(pointer_get_attributes, "cuPointerGetAttributes",		\
	  cuPointerGetAttributes, GDL_CUDA_PROTO(cuPointerGetAttributes)) \
	X(pointer_set_attribute, "cuPointerSetAttribute",		\
	  cuPointerSetAttribute, GDL_CUDA_PROTO(cuPointerSetAttribute))

#endif
