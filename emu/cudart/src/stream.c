// SPDX-License-Identifier: MIT
/*
 * stream.c - streams, events, IPC handles and (refused) kernel launches of
 * the emulated CUDA runtime
 */
#include <stdint.h>

#include "cudart_emu_internal.h"

RT_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream,
						unsigned int flags)
{
	if (!pStream || (flags & ~(unsigned int)cudaStreamNonBlocking))
		return rt_ret(cudaErrorInvalidValue);
	RT_CTX();
	RT_NEED(cuStreamCreate);
	return rt_ret_cu(drv.cuStreamCreate(pStream, flags));
}

RT_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

RT_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	RT_CTX();
	if (!rt_stream(stream))
		return rt_ret(cudaErrorInvalidResourceHandle);
	RT_NEED(cuStreamDestroy);
	return rt_ret_cu(drv.cuStreamDestroy(stream));
}

RT_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	RT_CTX();
	RT_NEED(cuStreamSynchronize);
	return rt_ret_cu(drv.cuStreamSynchronize(rt_stream(stream)));
}

RT_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	RT_CTX();
	RT_NEED(cuStreamQuery);
	return rt_ret_cu(drv.cuStreamQuery(rt_stream(stream)));
}

RT_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
					  unsigned int flags)
{
	RT_CTX();
	RT_NEED(cuStreamWaitEvent);
	return rt_ret_cu(drv.cuStreamWaitEvent(rt_stream(stream), event, flags));
}

RT_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	if (!event)
		return rt_ret(cudaErrorInvalidValue);
	RT_CTX();
	RT_NEED(cuEventCreate);
	return rt_ret_cu(drv.cuEventCreate(event, flags));
}

RT_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	return cudaEventCreateWithFlags(event, cudaEventDefault);
}

RT_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	RT_CTX();
	RT_NEED(cuEventRecord);
	return rt_ret_cu(drv.cuEventRecord(event, rt_stream(stream)));
}

RT_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event)
{
	RT_CTX();
	RT_NEED(cuEventQuery);
	return rt_ret_cu(drv.cuEventQuery(event));
}

RT_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	RT_CTX();
	RT_NEED(cuEventSynchronize);
	return rt_ret_cu(drv.cuEventSynchronize(event));
}

RT_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	RT_CTX();
	RT_NEED(cuEventDestroy);
	return rt_ret_cu(drv.cuEventDestroy(event));
}

RT_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start,
					   cudaEvent_t end)
{
	RT_CTX();
	RT_NEED(cuEventElapsedTime);
	return rt_ret_cu(drv.cuEventElapsedTime(ms, start, end));
}

RT_EXPORT cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr)
{
	if (!handle)
		return rt_ret(cudaErrorInvalidValue);
	RT_CTX();
	RT_NEED(cuIpcGetMemHandle);
	return rt_ret_cu(drv.cuIpcGetMemHandle(handle, (CUdeviceptr)(uintptr_t)devPtr));
}

RT_EXPORT cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle,
					   unsigned int flags)
{
	CUdeviceptr p;
	CUresult r;

	if (!devPtr || (flags & ~(unsigned int)cudaIpcMemLazyEnablePeerAccess))
		return rt_ret(cudaErrorInvalidValue);
	RT_CTX();
	RT_NEED(cuIpcOpenMemHandle);
	r = drv.cuIpcOpenMemHandle(&p, handle, flags);
	if (r)
		return rt_ret_cu(r);
	*devPtr = (void *)(uintptr_t)p;
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaIpcCloseMemHandle(void *devPtr)
{
	RT_CTX();
	RT_NEED(cuIpcCloseMemHandle);
	return rt_ret_cu(drv.cuIpcCloseMemHandle((CUdeviceptr)(uintptr_t)devPtr));
}

RT_EXPORT cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *handle,
					    cudaEvent_t event)
{
	if (!handle)
		return rt_ret(cudaErrorInvalidValue);
	RT_CTX();
	RT_NEED(cuIpcGetEventHandle);
	return rt_ret_cu(drv.cuIpcGetEventHandle(handle, event));
}

RT_EXPORT cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *event,
					     cudaIpcEventHandle_t handle)
{
	if (!event)
		return rt_ret(cudaErrorInvalidValue);
	RT_CTX();
	RT_NEED(cuIpcOpenEventHandle);
	return rt_ret_cu(drv.cuIpcOpenEventHandle(event, handle));
}
