// SPDX-License-Identifier: MIT
/*
 * callback.c - host functions on streams (cuLaunchHostFunc,
 * cuStreamAddCallback) and managed memory (cuMemAllocManaged)
 *
 * Host functions run in stream order on the stream worker (stream.c);
 * the emulated GPU has no managed memory (CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY
 * is 0), so cuMemAllocManaged checks its arguments as the driver does and
 * then fails with CUDA_ERROR_NOT_SUPPORTED.
 */
#include <stdlib.h>

#include "hookable.h"
#include "cuda_emu_internal.h"

struct host_call {
	CUhostFn fn;
	CUstreamCallback cb;
	void *user;
};

/* After a sticky error callbacks are told it; host functions do not run. */
static void run_host_call(CUstream s, void *arg, CUresult status)
{
	struct host_call *c = arg;

	if (c->cb)
		c->cb(s, status, c->user);
	else if (!status)
		c->fn(c->user);
	free(c);
}

static CUresult queue_host_call(CUstream s, CUhostFn fn, CUstreamCallback cb,
				void *user)
{
	struct host_call *c;
	CUresult r;

	c = malloc(sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*c = (struct host_call){ .fn = fn, .cb = cb, .user = user };
	r = emu_stream_host_fn(s, run_host_call, c);
	if (r)
		free(c);
	return r;
}

EMU_EXPORT CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *userData)
{
	CUresult r = emu_need_ctx();

	if (r)
		return r;
	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	return queue_host_call(s, fn, NULL, userData);
}
EMU_PTDS(cuLaunchHostFunc_ptsz, cuLaunchHostFunc,
	 (CUstream s, CUhostFn fn, void *userData), (s, fn, userData))

/* flags is reserved: it must be 0. */
EMU_EXPORT CUresult cuStreamAddCallback(CUstream s, CUstreamCallback cb,
					void *userData, unsigned int flags)
{
	CUresult r = emu_need_ctx();

	if (r)
		return r;
	if (!cb || flags)
		return CUDA_ERROR_INVALID_VALUE;
	return queue_host_call(s, NULL, cb, userData);
}
EMU_PTDS(cuStreamAddCallback_ptsz, cuStreamAddCallback,
	 (CUstream s, CUstreamCallback cb, void *userData, unsigned int flags),
	 (s, cb, userData, flags))

EMU_HOOK_IMPL CUresult emu_cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize,
					     unsigned int flags)
{
	CUresult r = emu_need_ctx();

	if (r)
		return r;
	if (!dptr || !bytesize ||
	    (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_ERROR_NOT_SUPPORTED;
}
EMU_HOOKABLE(cuMemAllocManaged, emu_cuMemAllocManaged);

/*
 * Attributes of a range of managed memory.  dataSize must be 4 for every
 * attribute but ACCESSED_BY, whose answer is an array of 4-byte ordinals
 * (a nonzero multiple of 4), and count nonzero (NVIDIA's documentation).
 * The emulator has no managed memory (cuMemAllocManaged above), and the
 * driver answers CUDA_ERROR_INVALID_VALUE for a range that is not managed
 * memory ("devPtr must be a pointer to memory obtained via
 * cuMemAllocManaged"), so every valid query is that too; data is left
 * alone.
 */
EMU_EXPORT CUresult cuMemRangeGetAttribute(void *data, size_t dataSize,
					   CUmem_range_attribute attribute,
					   CUdeviceptr devPtr, size_t count)
{
	CUresult r = emu_need_ctx();

	(void)devPtr;
	if (r)
		return r;
	if (!data || !count)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attribute) {
	case CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY:
		if (!dataSize || dataSize % 4)
			return CUDA_ERROR_INVALID_VALUE;
		break;
	case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY:
	case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
	case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
	case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
	case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID:
	case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
	case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID:
		if (dataSize != 4)
			return CUDA_ERROR_INVALID_VALUE;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_ERROR_INVALID_VALUE;
}
