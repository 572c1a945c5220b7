// SPDX-License-Identifier: MIT
/*
 * mem.c - device, managed and page-locked host memory, copies, memsets and
 * pointer attributes of the emulated CUDA runtime
 *
 * The allocation and free calls UCX's memory hooks patch (cudaMalloc,
 * cudaMallocManaged, cudaMallocPitch, cudaFree, cudaFreeHost) are exported
 * through EMU_HOOKABLE stubs (emu/cuda/src/hookable.h).
 */
#include <stdint.h>

#include "hookable.h"
#include "cudart_emu_internal.h"

#define DPTR(p) ((CUdeviceptr)(uintptr_t)(p))

EMU_HOOK_IMPL cudaError_t rt_cudaMalloc(void **devPtr, size_t size)
{
	CUdeviceptr p;
	CUresult r;

	if (!devPtr)
		return rt_ret(cudaErrorInvalidValue);
	RT_CTX();
	if (!size) {
		*devPtr = NULL;
		return cudaSuccess;
	}
	RT_NEED(cuMemAlloc);
	r = drv.cuMemAlloc(&p, size);
	if (r)
		return rt_ret_cu(r);
	*devPtr = (void *)(uintptr_t)p;
	return cudaSuccess;
}
EMU_HOOKABLE(cudaMalloc, rt_cudaMalloc);

EMU_HOOK_IMPL cudaError_t rt_cudaMallocPitch(void **devPtr, size_t *pitch,
					     size_t width, size_t height)
{
	CUdeviceptr p;
	CUresult r;

	if (!devPtr || !pitch)
		return rt_ret(cudaErrorInvalidValue);
	RT_CTX();
	RT_NEED(cuMemAllocPitch);
	r = drv.cuMemAllocPitch(&p, pitch, width, height, 4);
	if (r)
		return rt_ret_cu(r);
	*devPtr = (void *)(uintptr_t)p;
	return cudaSuccess;
}
EMU_HOOKABLE(cudaMallocPitch, rt_cudaMallocPitch);

/* Fails as the driver does where the GPU has no managed memory. */
EMU_HOOK_IMPL cudaError_t rt_cudaMallocManaged(void **devPtr, size_t size,
					       unsigned int flags)
{
	CUdeviceptr p;
	CUresult r;

	if (!devPtr || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
		return rt_ret(cudaErrorInvalidValue);
	RT_CTX();
	if (!size) {		/* no error, as on an H100 */
		*devPtr = NULL;
		return cudaSuccess;
	}
	RT_NEED(cuMemAllocManaged);
	r = drv.cuMemAllocManaged(&p, size, flags);
	if (r)
		return rt_ret_cu(r);
	*devPtr = (void *)(uintptr_t)p;
	return cudaSuccess;
}
EMU_HOOKABLE(cudaMallocManaged, rt_cudaMallocManaged);

EMU_HOOK_IMPL cudaError_t rt_cudaFree(void *devPtr)
{
	RT_CTX();
	if (!devPtr)
		return cudaSuccess;
	RT_NEED(cuMemFree);
	return rt_ret_cu(drv.cuMemFree(DPTR(devPtr)));
}
EMU_HOOKABLE(cudaFree, rt_cudaFree);

RT_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	if (!ptr)
		return rt_ret(cudaErrorInvalidValue);
	RT_CTX();
	RT_NEED(cuMemAllocHost);
	return rt_ret_cu(drv.cuMemAllocHost(ptr, size));
}

RT_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	if (!pHost)
		return rt_ret(cudaErrorInvalidValue);
	RT_CTX();
	RT_NEED(cuMemHostAlloc);
	return rt_ret_cu(drv.cuMemHostAlloc(pHost, size, flags));
}

EMU_HOOK_IMPL cudaError_t rt_cudaFreeHost(void *ptr)
{
	RT_CTX();
	if (!ptr)
		return cudaSuccess;
	RT_NEED(cuMemFreeHost);
	return rt_ret_cu(drv.cuMemFreeHost(ptr));
}
EMU_HOOKABLE(cudaFreeHost, rt_cudaFreeHost);

RT_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
	RT_CTX();
	RT_NEED(cuMemHostRegister);
	return rt_ret_cu(drv.cuMemHostRegister(ptr, size, flags));
}

RT_EXPORT cudaError_t cudaHostUnregister(void *ptr)
{
	RT_CTX();
	RT_NEED(cuMemHostUnregister);
	return rt_ret_cu(drv.cuMemHostUnregister(ptr));
}

RT_EXPORT cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost,
					       unsigned int flags)
{
	CUdeviceptr p;
	CUresult r;

	if (!pDevice || flags)
		return rt_ret(cudaErrorInvalidValue);
	RT_CTX();
	RT_NEED(cuMemHostGetDevicePointer);
	r = drv.cuMemHostGetDevicePointer(&p, pHost, 0);
	if (r)
		return rt_ret_cu(r);
	*pDevice = (void *)(uintptr_t)p;
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
	if (!pFlags)
		return rt_ret(cudaErrorInvalidValue);
	RT_CTX();
	RT_NEED(cuMemHostGetFlags);
	return rt_ret_cu(drv.cuMemHostGetFlags(pFlags, pHost));
}

/*
 * Memory the driver does not know (plain malloc, stack) is
 * cudaMemoryTypeUnregistered with device -2, no device pointer and the
 * pointer itself as host pointer, not an error (as an H100 answers).
 */
RT_EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a,
					       const void *ptr)
{
	CUpointer_attribute which[] = {
		CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
		CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
		CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
		CU_POINTER_ATTRIBUTE_HOST_POINTER,
		CU_POINTER_ATTRIBUTE_IS_MANAGED,
	};
	unsigned int type = 0;
	int ordinal = -2, managed = 0;
	void *dptr = NULL, *hptr = NULL;
	void *data[] = { &type, &ordinal, &dptr, &hptr, &managed };
	CUresult r;

	if (!a)
		return rt_ret(cudaErrorInvalidValue);
	RT_CTX();
	RT_NEED(cuPointerGetAttributes);
	r = drv.cuPointerGetAttributes(5, which, data, DPTR(ptr));
	if (r)
		return rt_ret_cu(r);
	*a = (struct cudaPointerAttributes){ 0 };
	switch (type) {
	case CU_MEMORYTYPE_DEVICE:
		a->type = managed ? cudaMemoryTypeManaged : cudaMemoryTypeDevice;
		break;
	case CU_MEMORYTYPE_HOST:
		a->type = cudaMemoryTypeHost;
		break;
	default:
		a->type = cudaMemoryTypeUnregistered;
		a->device = -2;
		a->hostPointer = (void *)ptr;
		return cudaSuccess;
	}
	a->device = ordinal;
	a->devicePointer = dptr;
	a->hostPointer = hptr;
	return cudaSuccess;
}

static cudaError_t copy(void *dst, const void *src, size_t count,
			enum cudaMemcpyKind kind, bool async, cudaStream_t stream)
{
	CUdeviceptr d = DPTR(dst), sp = DPTR(src);
	CUstream s = rt_stream(stream);

	if ((unsigned int)kind > cudaMemcpyDefault)
		return rt_ret(cudaErrorInvalidMemcpyDirection);
	RT_CTX();
	if (!count)
		return cudaSuccess;
	switch (kind) {
	case cudaMemcpyHostToDevice:
		if (async) {
			RT_NEED(cuMemcpyHtoDAsync);
			return rt_ret_cu(drv.cuMemcpyHtoDAsync(d, src, count, s));
		}
		RT_NEED(cuMemcpyHtoD);
		return rt_ret_cu(drv.cuMemcpyHtoD(d, src, count));
	case cudaMemcpyDeviceToHost:
		if (async) {
			RT_NEED(cuMemcpyDtoHAsync);
			return rt_ret_cu(drv.cuMemcpyDtoHAsync(dst, sp, count, s));
		}
		RT_NEED(cuMemcpyDtoH);
		return rt_ret_cu(drv.cuMemcpyDtoH(dst, sp, count));
	case cudaMemcpyDeviceToDevice:
		if (async) {
			RT_NEED(cuMemcpyDtoDAsync);
			return rt_ret_cu(drv.cuMemcpyDtoDAsync(d, sp, count, s));
		}
		RT_NEED(cuMemcpyDtoD);
		return rt_ret_cu(drv.cuMemcpyDtoD(d, sp, count));
	default:		/* host to host, and by the pointers' kinds */
		if (async) {
			RT_NEED(cuMemcpyAsync);
			return rt_ret_cu(drv.cuMemcpyAsync(d, sp, count, s));
		}
		RT_NEED(cuMemcpy);
		return rt_ret_cu(drv.cuMemcpy(d, sp, count));
	}
}

RT_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
				 enum cudaMemcpyKind kind)
{
	return copy(dst, src, count, kind, false, NULL);
}

RT_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
				      enum cudaMemcpyKind kind, cudaStream_t stream)
{
	return copy(dst, src, count, kind, true, stream);
}

RT_EXPORT cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	RT_CTX();
	RT_NEED(cuMemsetD8);
	return rt_ret_cu(drv.cuMemsetD8(DPTR(devPtr), (unsigned char)value, count));
}

RT_EXPORT cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count,
				      cudaStream_t stream)
{
	RT_CTX();
	RT_NEED(cuMemsetD8Async);
	return rt_ret_cu(drv.cuMemsetD8Async(DPTR(devPtr), (unsigned char)value,
					     count, rt_stream(stream)));
}
