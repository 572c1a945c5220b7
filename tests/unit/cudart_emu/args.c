// SPDX-License-Identifier: MIT
/*
 * args.c - the emulated runtime's own rules, over the fake driver
 * (tests/fakes/fake_cuda.c built as fakecuda_rt.so, SONAME libcuda.so.1,
 * loaded by path from $FAKE_CUDA): argument checks, the per-thread
 * last error, error names, the primary context retained once, which
 * attribute fills which cudaDeviceProp field, the special streams,
 * cudaErrorCallRequiresNewerDriver for entry points the driver lacks, and
 * cudaErrorInvalidSymbol for every device symbol (no module is loaded).
 * The runtime over the emulated GPU is tested in the guest
 * (cudart-emu-runtime.sh).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda.h"
#include "cuda_runtime_api.h"
#include "fake_cuda.h"
#include "tap.h"

static void *other_thread(void *arg)
{
	cudaError_t *seen = arg;
	void *p;

	seen[0] = cudaPeekAtLastError();	/* the main thread's error is not ours */
	seen[1] = cudaMalloc(&p, 64);		/* the context: retained already */
	seen[2] = cudaGetLastError();
	return NULL;
}

int main(void)
{
	struct cudaPointerAttributes pa;
	struct cudaDeviceProp prop;
	struct fake_cuda_calls *calls;
	void (*set_version)(int);
	cudaIpcMemHandle_t ipc;
	cudaError_t seen[3];
	int n = -1, v = 0;
	void *drv, *p = NULL;
	pthread_t t;
	char c[8];

	/* Loaded first, the fake is the libcuda.so.1 the runtime finds. */
	drv = getenv("FAKE_CUDA") ? dlopen(getenv("FAKE_CUDA"), RTLD_NOW | RTLD_GLOBAL) : NULL;
	calls = drv ? dlsym(drv, "fake_cuda_calls") : NULL;
	*(void **)&set_version = drv ? dlsym(drv, "fake_cuda_set_driver_version") : NULL;
	if (!calls || !set_version) {
		printf("1..0 # SKIP FAKE_CUDA does not name the fake driver\n");
		return 77;
	}
	/* Not the runtime's own 13000: the runtime must pass the driver's on. */
	set_version(12345);
	tap_ok(cudaGetLastError() == cudaSuccess, "no last error at first");
	tap_ok(cudaGetDeviceCount(&n) == cudaSuccess && n == 1, "one device (%d)", n);
	tap_ok(calls->inits == 1, "cuInit ran once (%d)", calls->inits);
	tap_ok(cudaGetDeviceCount(NULL) == cudaErrorInvalidValue, "cudaGetDeviceCount(NULL)");
	tap_ok(cudaPeekAtLastError() == cudaErrorInvalidValue &&
	       cudaPeekAtLastError() == cudaErrorInvalidValue,
	       "cudaPeekAtLastError returns the error and keeps it");
	tap_ok(cudaGetLastError() == cudaErrorInvalidValue &&
	       cudaGetLastError() == cudaSuccess, "cudaGetLastError returns it and clears it");
	tap_ok(cudaSetDevice(1) == cudaErrorInvalidDevice && cudaSetDevice(-1) ==
	       cudaErrorInvalidDevice, "cudaSetDevice(1), (-1): cudaErrorInvalidDevice");
	cudaGetLastError();
	tap_ok(calls->retains == 0, "no primary context retained before it is needed");
	tap_ok(cudaMalloc(&p, 4096) == cudaSuccess && p &&
	       (CUdeviceptr)(uintptr_t)p == calls->last_alloc,
	       "cudaMalloc: the driver's pointer");
	tap_ok(calls->retains == 1, "the primary context retained on first need (%d)",
	       calls->retains);
	tap_ok(cudaMalloc(NULL, 8) == cudaErrorInvalidValue, "cudaMalloc(NULL)");
	pthread_create(&t, NULL, other_thread, seen);
	pthread_join(t, NULL);
	tap_ok(seen[0] == cudaSuccess, "another thread does not see this thread's last error");
	tap_ok(seen[1] == cudaSuccess && seen[2] == cudaSuccess && calls->retains == 1,
	       "another thread uses the retained primary context (retains %d)",
	       calls->retains);
	tap_ok(cudaGetLastError() == cudaErrorInvalidValue, "this thread's error is still there");
	tap_ok(cudaMalloc(&p, 0) == cudaSuccess && p == NULL, "cudaMalloc of 0 bytes: NULL");
	tap_ok(cudaFree(NULL) == cudaSuccess && calls->free_calls == 0,
	       "cudaFree(NULL): nothing");
	tap_ok(cudaFree((void *)0x1000) == cudaErrorInvalidValue && calls->last_free == 0x1000,
	       "cudaFree of a foreign pointer: the driver's INVALID_VALUE");
	tap_ok(cudaMemcpy(c, c, 1, (enum cudaMemcpyKind)7) == cudaErrorInvalidMemcpyDirection,
	       "cudaMemcpy kind 7: cudaErrorInvalidMemcpyDirection");
	tap_ok(cudaMemcpy(c, c, 1, cudaMemcpyDefault) == cudaErrorCallRequiresNewerDriver,
	       "cudaMemcpy without the driver's cuMemcpy: cudaErrorCallRequiresNewerDriver");
	calls->last_stream = (CUstream)7;
	tap_ok(cudaMemcpyAsync(c, c, 1, cudaMemcpyDefault, cudaStreamPerThread) == cudaSuccess &&
	       calls->last_stream == CU_STREAM_PER_THREAD,
	       "cudaStreamPerThread reaches the driver as CU_STREAM_PER_THREAD");
	calls->last_stream = (CUstream)7;
	tap_ok(cudaMemcpyAsync(c, c, 1, cudaMemcpyDefault, cudaStreamLegacy) == cudaSuccess &&
	       calls->last_stream == NULL, "cudaStreamLegacy reaches the driver as NULL");
	tap_ok(cudaIpcGetMemHandle(&ipc, p) == cudaErrorCallRequiresNewerDriver,
	       "cudaIpcGetMemHandle without cuIpcGetMemHandle: cudaErrorCallRequiresNewerDriver");
	tap_ok(cudaMallocManaged(&p, 64, cudaMemAttachSingle) == cudaErrorInvalidValue,
	       "cudaMallocManaged with cudaMemAttachSingle: cudaErrorInvalidValue");
	tap_ok(cudaMallocManaged(&p, 0, cudaMemAttachGlobal) == cudaSuccess && !p,
	       "cudaMallocManaged of 0 bytes: success, NULL");
	tap_ok(cudaMallocManaged(&p, 64, cudaMemAttachGlobal) == cudaErrorCallRequiresNewerDriver,
	       "cudaMallocManaged without cuMemAllocManaged: cudaErrorCallRequiresNewerDriver");
	tap_ok(cudaStreamCreateWithFlags(NULL, 0) == cudaErrorInvalidValue &&
	       cudaStreamCreateWithFlags((cudaStream_t *)&p, 2) == cudaErrorInvalidValue,
	       "cudaStreamCreateWithFlags: NULL, flag 2");
	tap_ok(cudaGetDeviceProperties(&prop, 0) == cudaSuccess, "cudaGetDeviceProperties");
	tap_ok(!strcmp(prop.name, "fake GPU") && prop.totalGlobalMem == 1ULL << 30,
	       "name and memory from the driver");
	tap_ok(prop.warpSize == cudaDevAttrWarpSize && prop.pciBusID == cudaDevAttrPciBusId &&
	       prop.major == cudaDevAttrComputeCapabilityMajor &&
	       prop.maxGridSize[2] == cudaDevAttrMaxGridDimZ &&
	       prop.sharedMemPerBlock == cudaDevAttrMaxSharedMemoryPerBlock &&
	       prop.ipcEventSupported == cudaDevAttrIpcEventSupport &&
	       prop.gpuPciDeviceID == cudaDevAttrGpuPciDeviceId,
	       "each field from its attribute");
	tap_ok(prop.hostNumaMultinodeIpcSupported == 0,
	       "an attribute the driver refuses reads 0");
	tap_ok(cudaGetDeviceProperties(&prop, 3) == cudaErrorInvalidDevice,
	       "cudaGetDeviceProperties of device 3: cudaErrorInvalidDevice");
	tap_ok(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 0) == cudaSuccess &&
	       v == cudaDevAttrWarpSize, "cudaDeviceGetAttribute");
	tap_ok(cudaPointerGetAttributes(&pa, c) == cudaSuccess &&
	       pa.type == cudaMemoryTypeUnregistered && pa.device == -2 &&
	       !pa.devicePointer && pa.hostPointer == c,
	       "memory the driver does not know: unregistered, device -2, host pointer itself");
	tap_ok(cudaPointerGetAttributes(NULL, c) == cudaErrorInvalidValue,
	       "cudaPointerGetAttributes(NULL)");
	tap_ok(cudaDriverGetVersion(&v) == cudaSuccess && v == 12345, "the driver's version");
	tap_ok(cudaRuntimeGetVersion(&v) == cudaSuccess && v == 13000, "runtime 13000");
	cudaGetLastError();
	tap_ok(cudaLaunchKernel(NULL, (dim3){ 1, 1, 1 }, (dim3){ 1, 1, 1 }, NULL, 0, NULL) ==
	       cudaErrorNotSupported && cudaGetLastError() == cudaErrorNotSupported,
	       "cudaLaunchKernel: cudaErrorNotSupported, also as the last error");
	tap_ok(!strcmp(cudaGetErrorName(cudaErrorNotSupported), "cudaErrorNotSupported") &&
	       !strcmp(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument") &&
	       !strcmp(cudaGetErrorString((cudaError_t)12345), "unrecognized error code") &&
	       !strcmp(cudaGetErrorName((cudaError_t)12345), "unrecognized error code"),
	       "error names and texts");
	/* No module is loaded, so no symbol has a device address or size;
	 * the outputs stay as they were, and the error is the last error. */
	{
		static int var;
		size_t sz = 3;
		void *dp = &sz;

		cudaGetLastError();
		tap_ok(cudaGetSymbolSize(&sz, &var) == cudaErrorInvalidSymbol && sz == 3,
		       "cudaGetSymbolSize of any symbol: cudaErrorInvalidSymbol, size unchanged");
		tap_ok(cudaGetLastError() == cudaErrorInvalidSymbol,
		       "cudaGetSymbolSize's error is the last error");
		tap_ok(cudaGetSymbolSize(NULL, &var) == cudaErrorInvalidValue,
		       "cudaGetSymbolSize(NULL size): cudaErrorInvalidValue");
		tap_ok(cudaGetSymbolAddress(&dp, &var) == cudaErrorInvalidSymbol && dp == &sz,
		       "cudaGetSymbolAddress of any symbol: cudaErrorInvalidSymbol, pointer unchanged");
		tap_ok(cudaGetSymbolAddress(NULL, &var) == cudaErrorInvalidValue,
		       "cudaGetSymbolAddress(NULL devPtr): cudaErrorInvalidValue");
		cudaGetLastError();
	}
	return tap_done();
}
