/* SPDX-License-Identifier: MIT */
/*
 * cudart_emu_internal.h - state of the emulated CUDA runtime (not installed)
 *
 * As NVIDIA's runtime, this one links no driver: the first call that needs
 * it loads libcuda.so.1, resolves every driver entry point it uses through
 * cuGetProcAddress (CUDA 13.0's variants), and runs cuInit.  An entry
 * point the driver lacks stays NULL, and the runtime calls that need it
 * return cudaErrorCallRequiresNewerDriver.  Each device's primary context
 * is retained on the first call that needs a context on it.
 */
#ifndef CUDART_EMU_INTERNAL_H
#define CUDART_EMU_INTERNAL_H

#include <stdbool.h>

#include "cuda.h"
#include "cuda_runtime_api.h"

#define RT_EXPORT __attribute__((visibility("default")))

/* The driver's IPC handles: 64 bytes, passed by value as the runtime's. */
typedef cudaIpcMemHandle_t rt_ipc_mem_handle;
typedef cudaIpcEventHandle_t rt_ipc_event_handle;

/* Every driver entry point the runtime calls: base name, type. */
#define RT_DRIVER_CALLS(X)						\
	X(cuDriverGetVersion, CUresult (*)(int *))			\
	X(cuDeviceGetCount, CUresult (*)(int *))			\
	X(cuDeviceGet, CUresult (*)(CUdevice *, int))			\
	X(cuDeviceGetName, CUresult (*)(char *, int, CUdevice))		\
	X(cuDeviceGetAttribute, CUresult (*)(int *, CUdevice_attribute, CUdevice)) \
	X(cuDeviceGetUuid, CUresult (*)(CUuuid *, CUdevice))		\
	X(cuDeviceTotalMem, CUresult (*)(size_t *, CUdevice))		\
	X(cuDeviceGetPCIBusId, CUresult (*)(char *, int, CUdevice))	\
	X(cuDeviceGetByPCIBusId, CUresult (*)(CUdevice *, const char *)) \
	X(cuDevicePrimaryCtxRetain, CUresult (*)(CUcontext *, CUdevice)) \
	X(cuDevicePrimaryCtxRelease, CUresult (*)(CUdevice))		\
	X(cuDevicePrimaryCtxReset, CUresult (*)(CUdevice))		\
	X(cuCtxGetCurrent, CUresult (*)(CUcontext *))			\
	X(cuCtxSetCurrent, CUresult (*)(CUcontext))			\
	/* CUDA 13 (resolved at 13000): the _v2 forms, with a context */	\
	X(cuCtxGetDevice, CUresult (*)(CUdevice *, CUcontext))		\
	X(cuCtxSynchronize, CUresult (*)(CUcontext))			\
	X(cuMemGetInfo, CUresult (*)(size_t *, size_t *))		\
	X(cuMemAlloc, CUresult (*)(CUdeviceptr *, size_t))		\
	X(cuMemAllocPitch, CUresult (*)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int)) \
	X(cuMemAllocManaged, CUresult (*)(CUdeviceptr *, size_t, unsigned int)) \
	X(cuMemFree, CUresult (*)(CUdeviceptr))				\
	X(cuMemAllocHost, CUresult (*)(void **, size_t))		\
	X(cuMemHostAlloc, CUresult (*)(void **, size_t, unsigned int))	\
	X(cuMemFreeHost, CUresult (*)(void *))				\
	X(cuMemHostRegister, CUresult (*)(void *, size_t, unsigned int)) \
	X(cuMemHostUnregister, CUresult (*)(void *))			\
	X(cuMemHostGetDevicePointer, CUresult (*)(CUdeviceptr *, void *, unsigned int)) \
	X(cuMemHostGetFlags, CUresult (*)(unsigned int *, void *))	\
	X(cuPointerGetAttributes, CUresult (*)(unsigned int, CUpointer_attribute *, void **, CUdeviceptr)) \
	X(cuMemcpy, CUresult (*)(CUdeviceptr, CUdeviceptr, size_t))	\
	X(cuMemcpyAsync, CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
	X(cuMemcpyHtoD, CUresult (*)(CUdeviceptr, const void *, size_t)) \
	X(cuMemcpyDtoH, CUresult (*)(void *, CUdeviceptr, size_t))	\
	X(cuMemcpyDtoD, CUresult (*)(CUdeviceptr, CUdeviceptr, size_t))	\
	X(cuMemcpyHtoDAsync, CUresult (*)(CUdeviceptr, const void *, size_t, CUstream)) \
	X(cuMemcpyDtoHAsync, CUresult (*)(void *, CUdeviceptr, size_t, CUstream)) \
	X(cuMemcpyDtoDAsync, CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
	X(cuMemsetD8, CUresult (*)(CUdeviceptr, unsigned char, size_t))	\
	X(cuMemsetD8Async, CUresult (*)(CUdeviceptr, unsigned char, size_t, CUstream)) \
	X(cuStreamCreate, CUresult (*)(CUstream *, unsigned int))	\
	X(cuStreamDestroy, CUresult (*)(CUstream))			\
	X(cuStreamSynchronize, CUresult (*)(CUstream))			\
	X(cuStreamQuery, CUresult (*)(CUstream))			\
	X(cuStreamWaitEvent, CUresult (*)(CUstream, CUevent, unsigned int)) \
	X(cuEventCreate, CUresult (*)(CUevent *, unsigned int))		\
	X(cuEventRecord, CUresult (*)(CUevent, CUstream))		\
	X(cuEventQuery, CUresult (*)(CUevent))				\
	X(cuEventSynchronize, CUresult (*)(CUevent))			\
	X(cuEventDestroy, CUresult (*)(CUevent))			\
	X(cuEventElapsedTime, CUresult (*)(float *, CUevent, CUevent))	\
	X(cuIpcGetMemHandle, CUresult (*)(rt_ipc_mem_handle *, CUdeviceptr)) \
	X(cuIpcOpenMemHandle, CUresult (*)(CUdeviceptr *, rt_ipc_mem_handle, unsigned int)) \
	X(cuIpcCloseMemHandle, CUresult (*)(CUdeviceptr))		\
	X(cuIpcGetEventHandle, CUresult (*)(rt_ipc_event_handle *, CUevent)) \
	X(cuIpcOpenEventHandle, CUresult (*)(CUevent *, rt_ipc_event_handle))

struct rt_driver {
#define RT_FIELD(name, type) __typeof__(type) name;
	RT_DRIVER_CALLS(RT_FIELD)
#undef RT_FIELD
};

extern struct rt_driver drv;

/* rt.c: the driver loaded and initialised (cudaSuccess), or why not. */
cudaError_t rt_init(void);
/* rt.c: rt_init, and a context current on this thread (the current
 * device's primary context unless the caller made one current). */
cudaError_t rt_ctx(void);
/* rt.c: the runtime's code for a driver result. */
cudaError_t rt_error(CUresult r);
/* rt.c: record a failure as this thread's last error; returns e. */
cudaError_t rt_ret(cudaError_t e);
/* rt_ret(rt_error(r)) */
cudaError_t rt_ret_cu(CUresult r);
/* The driver's stream for a runtime stream handle (legacy and per-thread
 * default streams: the NULL stream, all operations being synchronous). */
CUstream rt_stream(cudaStream_t s);

/* Fail with cudaErrorCallRequiresNewerDriver when the driver lacks fn. */
#define RT_NEED(fn)							\
	do {								\
		if (!drv.fn)						\
			return rt_ret(cudaErrorCallRequiresNewerDriver); \
	} while (0)

/* rt_ctx, returning its failure as the call's. */
#define RT_CTX()							\
	do {								\
		cudaError_t e_ = rt_ctx();				\
		if (e_)							\
			return rt_ret(e_);				\
	} while (0)

#endif /* CUDART_EMU_INTERNAL_H */
