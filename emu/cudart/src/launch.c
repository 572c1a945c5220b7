// SPDX-License-Identifier: MIT
/*
 * launch.c - what nvcc-built programs call to register and launch kernels
 *
 * No GPU code runs on the emulated GPU.  Registration succeeds (it runs in
 * a constructor, before main, where a program cannot handle an error), so
 * that a program's host-only parts work; every launch fails with
 * cudaErrorNotSupported, recorded as the thread's last error like any
 * failure, so `kernel<<<...>>>(); cudaGetLastError()` reports it.
 */
#include <stddef.h>

#include "cudart_emu_internal.h"

/* A handle to hand back: nothing is kept per fat binary. */
static void *fatbin_handle;

RT_EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
	(void)fatCubin;
	return &fatbin_handle;
}

RT_EXPORT void __cudaRegisterFatBinaryEnd(void **handle)
{
	(void)handle;
}

RT_EXPORT void __cudaUnregisterFatBinary(void **handle)
{
	(void)handle;
}

RT_EXPORT void __cudaRegisterFunction(void **handle, const char *hostFun,
				      char *deviceFun, const char *deviceName,
				      int threadLimit, void *tid, void *bid,
				      dim3 *bDim, dim3 *gDim, int *wSize)
{
	(void)handle, (void)hostFun, (void)deviceFun, (void)deviceName;
	(void)threadLimit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
}

RT_EXPORT void __cudaRegisterVar(void **handle, char *hostVar, char *deviceAddress,
				 const char *deviceName, int ext, size_t size,
				 int constant, int global)
{
	(void)handle, (void)hostVar, (void)deviceAddress, (void)deviceName;
	(void)ext, (void)size, (void)constant, (void)global;
}

/* The <<<grid, block, shared, stream>>> configuration, kept per thread
 * for the launch that pops it. */
static __thread struct {
	dim3 grid, block;
	size_t shared;
	void *stream;
} config;

RT_EXPORT unsigned int __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim,
						   size_t sharedMem, void *stream)
{
	config.grid = gridDim;
	config.block = blockDim;
	config.shared = sharedMem;
	config.stream = stream;
	return 0;
}

RT_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
						 size_t *sharedMem, void *stream)
{
	*gridDim = config.grid;
	*blockDim = config.block;
	*sharedMem = config.shared;
	*(void **)stream = config.stream;
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim,
				       void **args, size_t sharedMem, cudaStream_t stream)
{
	(void)func, (void)gridDim, (void)blockDim, (void)args, (void)sharedMem;
	(void)stream;
	return rt_ret(cudaErrorNotSupported);
}

/*
 * CUDA 13's launch path: nvcc's host code looks a kernel up once
 * (__cudaGetKernel) and launches it through __cudaLaunchKernel, and calls
 * __cudaInitModule for lazily loaded modules.  The lookup succeeds (it runs
 * from a static initialiser), so the program loads and its host-only parts
 * work; the launch fails as cudaLaunchKernel does.
 */
typedef struct CUkern_st *cudaKernel_t;

RT_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
	(void)func;
	if (kernel)
		*kernel = NULL;
	return cudaSuccess;
}

RT_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim,
					 dim3 blockDim, void **args,
					 size_t sharedMem, cudaStream_t stream)
{
	return cudaLaunchKernel((const void *)kernel, gridDim, blockDim, args,
				sharedMem, stream);
}

RT_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim,
					      dim3 blockDim, void **args,
					      size_t sharedMem, cudaStream_t stream)
{
	return cudaLaunchKernel((const void *)kernel, gridDim, blockDim, args,
				sharedMem, stream);
}

RT_EXPORT char __cudaInitModule(void **fatCubinHandle)
{
	(void)fatCubinHandle;
	return 1;
}

/*
 * __cudaRegisterVar keeps nothing: no module is loaded, so no device
 * variable has a device address or a size.  Every symbol is then "not
 * found", which NVIDIA's documentation answers with cudaErrorInvalidSymbol
 * (*devPtr and *size unchanged); a NULL result pointer is
 * cudaErrorInvalidValue.
 */
RT_EXPORT cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
	(void)symbol;
	return rt_ret(devPtr ? cudaErrorInvalidSymbol : cudaErrorInvalidValue);
}

RT_EXPORT cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
	(void)symbol;
	return rt_ret(size ? cudaErrorInvalidSymbol : cudaErrorInvalidValue);
}
