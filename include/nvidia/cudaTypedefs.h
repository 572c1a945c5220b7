/* SPDX-License-Identifier: MIT */
/*
 * cudaTypedefs.h - pointer types of driver entry points, as NVIDIA's
 * cudaTypedefs.h names them (PFN_<name>_v<first CUDA version>,
 * without unversioned aliases, as CUDA 13.0's), for code that finds entry
 * points with cuGetProcAddress.
 *
 * Only the entry points gdirect's emulated driver exports that such code
 * looks up are here; each type is the one of NVIDIA's header for CUDA 13.0.
 */
#ifndef GDIRECT_CUDA_TYPEDEFS_H
#define GDIRECT_CUDA_TYPEDEFS_H

#include "cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef CUresult(CUDAAPI *PFN_cuGetProcAddress_v12000)(
	const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
	CUdriverProcAddressQueryResult *symbolStatus);
typedef CUresult(CUDAAPI *PFN_cuCtxGetId_v12000)(CUcontext ctx,
						 unsigned long long *ctxId);
typedef CUresult(CUDAAPI *PFN_cuCtxGetDevice_v13000)(CUdevice *device,
						     CUcontext ctx);
typedef CUresult(CUDAAPI *PFN_cuMemExportToShareableHandle_v10020)(
	void *shareableHandle, CUmemGenericAllocationHandle handle,
	CUmemAllocationHandleType handleType, unsigned long long flags);
typedef CUresult(CUDAAPI *PFN_cuMemImportFromShareableHandle_v10020)(
	CUmemGenericAllocationHandle *handle, void *osHandle,
	CUmemAllocationHandleType shHandleType);
typedef CUresult(CUDAAPI *PFN_cuMemRangeGetAttribute_v8000)(
	void *data, size_t dataSize, CUmem_range_attribute attribute,
	CUdeviceptr devPtr, size_t count);
typedef CUresult(CUDAAPI *PFN_cuMemGetHandleForAddressRange_v11070)(
	void *handle, CUdeviceptr dptr, size_t size,
	CUmemRangeHandleType handleType, unsigned long long flags);

#ifdef __cplusplus
}
#endif

#endif /* GDIRECT_CUDA_TYPEDEFS_H */
