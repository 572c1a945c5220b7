// SPDX-License-Identifier: MIT
/*
 * fake_driver.c - a stand-in libcuda.so.1 for the runtime's unit tests
 *
 * It offers a few driver entry points through cuGetProcAddress_v2, the
 * only name it exports besides its marker, and lacks the rest (the IPC
 * calls, managed memory), so the tests see how the runtime copes with a
 * driver that is missing entry points.  One device; every attribute's
 * value is its number (so a test can tell which attribute filled which
 * field), except those above 140, which it refuses.  What the runtime
 * passed is recorded in fake_calls for the tests to check.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cuda.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT struct fake_calls {
	int retains, inits, allocs, frees;
	CUstream last_stream;
	CUdeviceptr last_free;
} fake_calls;

static struct CUctx_st { int dummy; } the_ctx;
static __thread CUcontext current;

static CUresult f_cuInit(unsigned int flags)
{
	fake_calls.inits++;
	return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

static CUresult f_cuDriverGetVersion(int *v)
{
	*v = 12345;
	return CUDA_SUCCESS;
}

static CUresult f_cuDeviceGetCount(int *n)
{
	*n = 1;
	return CUDA_SUCCESS;
}

static CUresult f_cuDeviceGetName(char *name, int len, CUdevice dev)
{
	if (dev)
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "fake GPU");
	return CUDA_SUCCESS;
}

static CUresult f_cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice dev)
{
	if (dev)
		return CUDA_ERROR_INVALID_DEVICE;
	if ((int)a > 140)
		return CUDA_ERROR_INVALID_VALUE;
	*v = (int)a;
	return CUDA_SUCCESS;
}

static CUresult f_cuDeviceTotalMem(size_t *b, CUdevice dev)
{
	(void)dev;
	*b = 1ULL << 30;
	return CUDA_SUCCESS;
}

static CUresult f_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice dev)
{
	if (dev)
		return CUDA_ERROR_INVALID_DEVICE;
	__atomic_add_fetch(&fake_calls.retains, 1, __ATOMIC_SEQ_CST);
	*c = &the_ctx;
	return CUDA_SUCCESS;
}

static CUresult f_cuCtxGetCurrent(CUcontext *c)
{
	*c = current;
	return CUDA_SUCCESS;
}

static CUresult f_cuCtxSetCurrent(CUcontext c)
{
	current = c;
	return CUDA_SUCCESS;
}

static CUresult f_cuMemAlloc(CUdeviceptr *p, size_t n)
{
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	fake_calls.allocs++;
	*p = 0x7f0000000000ULL + n;
	return CUDA_SUCCESS;
}

static CUresult f_cuMemFree(CUdeviceptr p)
{
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	fake_calls.frees++;
	fake_calls.last_free = p;
	return p < 0x7f0000000000ULL ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

static CUresult f_cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
	(void)d, (void)s, (void)n;
	fake_calls.last_stream = st;
	return CUDA_SUCCESS;
}

/* Nothing is the driver's: type 0, as NVIDIA's driver answers for malloc. */
static CUresult f_cuPointerGetAttributes(unsigned int n, CUpointer_attribute *a,
					 void **data, CUdeviceptr p)
{
	(void)p;
	for (unsigned int i = 0; i < n; i++)
		if (a[i] == CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
			*(unsigned int *)data[i] = 0;
	return CUDA_SUCCESS;
}

static const struct {
	const char *name;
	void *fn;
} procs[] = {
	{ "cuInit", (void *)f_cuInit },
	{ "cuDriverGetVersion", (void *)f_cuDriverGetVersion },
	{ "cuDeviceGetCount", (void *)f_cuDeviceGetCount },
	{ "cuDeviceGetName", (void *)f_cuDeviceGetName },
	{ "cuDeviceGetAttribute", (void *)f_cuDeviceGetAttribute },
	{ "cuDeviceTotalMem", (void *)f_cuDeviceTotalMem },
	{ "cuDevicePrimaryCtxRetain", (void *)f_cuDevicePrimaryCtxRetain },
	{ "cuCtxGetCurrent", (void *)f_cuCtxGetCurrent },
	{ "cuCtxSetCurrent", (void *)f_cuCtxSetCurrent },
	{ "cuMemAlloc", (void *)f_cuMemAlloc },
	{ "cuMemFree", (void *)f_cuMemFree },
	{ "cuMemcpyAsync", (void *)f_cuMemcpyAsync },
	{ "cuPointerGetAttributes", (void *)f_cuPointerGetAttributes },
};

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
				    cuuint64_t flags,
				    CUdriverProcAddressQueryResult *status)
{
	(void)version, (void)flags;
	*pfn = NULL;
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
		if (!strcmp(procs[i].name, symbol))
			*pfn = procs[i].fn;
	if (status)
		*status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS :
				 CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return CUDA_SUCCESS;
}
