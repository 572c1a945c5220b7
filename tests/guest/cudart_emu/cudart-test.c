// SPDX-License-Identifier: MIT
/*
 * cudart-test.c - the emulated CUDA runtime over the emulated GPU: device
 * properties against the driver's answers, data through cudaMemcpy of
 * every kind, memsets, page-locked and registered host memory, pointer
 * attributes, streams and events, the per-thread last error, a context the
 * caller made current, cudaDeviceReset freeing the device's memory, and
 * the error cases (bad device, bad pointers and kinds, managed memory,
 * kernels).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "tap.h"

#define OK(call) ((call) == cudaSuccess)

static void *other_thread(void *arg)
{
	cudaError_t *seen = arg;

	seen[0] = cudaPeekAtLastError();
	seen[1] = cudaSetDevice(7);
	seen[2] = cudaGetLastError();
	return NULL;
}

/* Work on this thread's cudaStreamPerThread, then wait for it. */
struct pt_arg {
	void *d;
	int done;	/* 1 done, -1 failed; atomic */
};

static void *pt_thread(void *arg)
{
	struct pt_arg *a = arg;
	int r = OK(cudaMemsetAsync(a->d, 7, 64, cudaStreamPerThread)) &&
		OK(cudaStreamSynchronize(cudaStreamPerThread)) ? 1 : -1;

	__atomic_store_n(&a->done, r, __ATOMIC_RELEASE);
	return NULL;
}

int main(void)
{
	unsigned char host[8192], back[8192];
	struct cudaPointerAttributes pa;
	struct cudaDeviceProp prop;
	cudaError_t seen[3];
	cudaStream_t s;
	cudaEvent_t e0, e1;
	CUcontext created, cur;
	size_t free0, free1, total, cutotal = 0;
	char name[256], bus[32], bus2[32];
	void *d = NULL, *d2 = NULL, *h = NULL, *hd = NULL, *m = NULL;
	unsigned int flags = 0;
	unsigned char *reg;
	float ms = -1;
	int n = 0, v = 0, dev = -1;
	pthread_t t;
	CUdevice cudev;

	tap_plan(53);
	for (size_t i = 0; i < sizeof(host); i++)
		host[i] = (unsigned char)(i * 7 + 3);
	tap_ok(OK(cudaGetDeviceCount(&n)) && n == 1, "one device (%d)", n);
	tap_ok(OK(cudaGetDevice(&dev)) && dev == 0, "device 0 current");
	tap_ok(cudaSetDevice(1) == cudaErrorInvalidDevice, "cudaSetDevice(1): cudaErrorInvalidDevice");
	tap_ok(cudaGetLastError() == cudaErrorInvalidDevice && cudaGetLastError() == cudaSuccess,
	       "the last error, once");
	tap_ok(OK(cudaSetDevice(0)), "cudaSetDevice(0)");
	/* The runtime's answers against the driver's. */
	tap_ok(OK(cudaGetDeviceProperties(&prop, 0)), "cudaGetDeviceProperties");
	cuDeviceGetName(name, sizeof(name), 0);
	cuDeviceTotalMem(&cutotal, 0);
	tap_ok(!strcmp(prop.name, name) && prop.totalGlobalMem == cutotal,
	       "name and memory as the driver's: %s, %zu MiB", prop.name, cutotal >> 20);
	cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0);
	tap_ok(prop.pciBusID == v && prop.major == 9 && prop.minor == 0 && prop.warpSize == 32,
	       "PCI bus %d, sm_%d%d, warp %d", prop.pciBusID, prop.major, prop.minor,
	       prop.warpSize);
	tap_ok(prop.unifiedAddressing == 1 && prop.canMapHostMemory == 1 &&
	       prop.managedMemory == 0 && prop.gpuDirectRDMASupported == 1,
	       "UVA, mapped host memory, no managed memory, GPUDirect RDMA");
	tap_ok(OK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0)) &&
	       v == prop.multiProcessorCount, "cudaDeviceGetAttribute: %d SMs", v);
	tap_ok(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 1) == cudaErrorInvalidDevice,
	       "an attribute of device 1: cudaErrorInvalidDevice");
	cuDeviceGetPCIBusId(bus, sizeof(bus), 0);
	tap_ok(OK(cudaDeviceGetPCIBusId(bus2, sizeof(bus2), 0)) && !strcmp(bus, bus2),
	       "cudaDeviceGetPCIBusId: %s", bus2);
	/* Memory and data. */
	tap_ok(OK(cudaMemGetInfo(&free0, &total)) && total == cutotal, "cudaMemGetInfo");
	tap_ok(OK(cudaMalloc(&d, sizeof(host))) && d, "cudaMalloc");
	tap_ok(OK(cudaMalloc(&d2, sizeof(host))) && d2, "a second cudaMalloc");
	tap_ok(OK(cudaMemGetInfo(&free1, &total)) && free1 < free0, "the memory is counted");
	tap_ok(OK(cudaMemcpy(d, host, sizeof(host), cudaMemcpyHostToDevice)) &&
	       OK(cudaMemcpy(d2, d, sizeof(host), cudaMemcpyDeviceToDevice)) &&
	       OK(cudaMemcpy(back, d2, sizeof(back), cudaMemcpyDeviceToHost)) &&
	       !memcmp(host, back, sizeof(host)), "host -> device -> device -> host");
	memset(back, 0, sizeof(back));
	tap_ok(OK(cudaMemset(d, 0x5a, 100)) &&
	       OK(cudaMemcpy(back, d, 200, cudaMemcpyDefault)) && back[0] == 0x5a &&
	       back[99] == 0x5a && back[100] == host[100], "cudaMemset, read back by cudaMemcpyDefault");
	tap_ok(cudaMemcpy(back, d, 16, (enum cudaMemcpyKind)9) == cudaErrorInvalidMemcpyDirection,
	       "kind 9: cudaErrorInvalidMemcpyDirection");
	tap_ok(cudaMemcpy(back, (char *)d + sizeof(host) - 8, 16, cudaMemcpyDeviceToHost) ==
	       cudaErrorInvalidValue, "a copy past the allocation: cudaErrorInvalidValue");
	tap_ok(OK(cudaPointerGetAttributes(&pa, d)) && pa.type == cudaMemoryTypeDevice &&
	       pa.device == 0 && pa.devicePointer == d, "device memory's attributes");
	tap_ok(OK(cudaPointerGetAttributes(&pa, host)) && pa.type == cudaMemoryTypeUnregistered &&
	       pa.device == -2 && pa.hostPointer == host && !pa.devicePointer,
	       "stack memory: cudaMemoryTypeUnregistered, device -2, host pointer itself");
	/* Page-locked and registered host memory. */
	tap_ok(OK(cudaMallocHost(&h, 4096)) && OK(cudaPointerGetAttributes(&pa, h)) &&
	       pa.type == cudaMemoryTypeHost && pa.hostPointer == h, "cudaMallocHost: host memory");
	tap_ok(OK(cudaHostAlloc(&hd, 4096, cudaHostAllocMapped)) &&
	       OK(cudaHostGetFlags(&flags, hd)) && (flags & cudaHostAllocMapped),
	       "cudaHostAlloc(Mapped), its flags 0x%x", flags);
	reg = aligned_alloc(4096, 1 << 16);
	tap_ok(OK(cudaHostRegister(reg, 1 << 16, cudaHostRegisterMapped)) &&
	       OK(cudaHostGetDevicePointer(&m, reg, 0)) && m, "cudaHostRegister, its device pointer");
	tap_ok(cudaHostRegister(reg, 1 << 16, 0) == cudaErrorHostMemoryAlreadyRegistered,
	       "registering it again: cudaErrorHostMemoryAlreadyRegistered");
	tap_ok(OK(cudaMemcpy(d, reg, 4096, cudaMemcpyDefault)), "a copy from registered memory");
	tap_ok(OK(cudaHostUnregister(reg)) &&
	       cudaHostUnregister(reg) == cudaErrorHostMemoryNotRegistered,
	       "cudaHostUnregister, twice: cudaErrorHostMemoryNotRegistered");
	free(reg);
	tap_ok(cudaHostGetDevicePointer(&m, hd, 1) == cudaErrorInvalidValue,
	       "cudaHostGetDevicePointer with flags 1: cudaErrorInvalidValue");
	tap_ok(OK(cudaFreeHost(h)) && OK(cudaFreeHost(hd)), "cudaFreeHost");
	/* Streams and events. */
	tap_ok(OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)), "a non-blocking stream");
	tap_ok(OK(cudaEventCreate(&e0)) && OK(cudaEventCreateWithFlags(&e1, cudaEventDefault)),
	       "two events");
	tap_ok(OK(cudaEventRecord(e0, s)) &&
	       OK(cudaMemcpyAsync(back, d, 4096, cudaMemcpyDeviceToHost, s)) &&
	       OK(cudaMemsetAsync(d2, 1, 64, s)) && OK(cudaEventRecord(e1, s)),
	       "record, async copy and memset, record");
	tap_ok(OK(cudaStreamSynchronize(s)) && OK(cudaStreamQuery(s)) && OK(cudaEventQuery(e1)) &&
	       OK(cudaEventSynchronize(e1)), "synchronized, queries answer success");
	tap_ok(OK(cudaEventElapsedTime(&ms, e0, e1)) && ms >= 0, "elapsed %.3f ms", ms);
	tap_ok(OK(cudaMemcpyAsync(back, d, 16, cudaMemcpyDefault, cudaStreamPerThread)) &&
	       OK(cudaStreamSynchronize(cudaStreamLegacy)), "the per-thread and legacy streams");
	tap_ok(OK(cudaEventDestroy(e1)) && cudaEventQuery(e1) == cudaErrorInvalidResourceHandle,
	       "a destroyed event: cudaErrorInvalidResourceHandle");
	tap_ok(OK(cudaStreamDestroy(s)) && OK(cudaEventDestroy(e0)) && OK(cudaDeviceSynchronize()),
	       "destroy, cudaDeviceSynchronize");
	{
		/* IPC goes to the driver's cuIpc* calls, which the emulated
		 * driver has. */
		cudaIpcMemHandle_t ipc;

		tap_ok(cudaIpcGetMemHandle(&ipc, d) == cudaSuccess,
		       "cudaIpcGetMemHandle through the driver's cuIpcGetMemHandle");
		tap_ok(cudaIpcGetMemHandle(NULL, d) == cudaErrorInvalidValue,
		       "cudaIpcGetMemHandle(NULL): cudaErrorInvalidValue");
	}
	cudaGetLastError();
	/* Errors. */
	tap_ok(cudaFree((void *)0x1000) == cudaErrorInvalidValue, "cudaFree of a foreign pointer");
	tap_ok(cudaMallocManaged(&m, 4096, cudaMemAttachGlobal) == cudaErrorNotSupported,
	       "cudaMallocManaged: cudaErrorNotSupported (no managed memory)");
	tap_ok(cudaLaunchKernel(NULL, (dim3){ 1, 1, 1 }, (dim3){ 1, 1, 1 }, NULL, 0, NULL) ==
	       cudaErrorNotSupported, "cudaLaunchKernel: cudaErrorNotSupported");
	pthread_create(&t, NULL, other_thread, seen);
	pthread_join(t, NULL);
	tap_ok(seen[0] == cudaSuccess && seen[1] == cudaErrorInvalidDevice &&
	       seen[2] == cudaErrorInvalidDevice, "another thread has its own last error");
	tap_ok(cudaGetLastError() == cudaErrorNotSupported, "ours is the launch's");
	/* A context the caller made current is the runtime's. */
	tap_ok(cuCtxCreate(&created, NULL, 0, 0) == CUDA_SUCCESS && OK(cudaMalloc(&m, 4096)) &&
	       cuPointerGetAttribute(&cur, CU_POINTER_ATTRIBUTE_CONTEXT, (CUdeviceptr)(uintptr_t)m) ==
	       CUDA_SUCCESS && cur == created, "with a created context current, cudaMalloc uses it");
	tap_ok(OK(cudaFree(m)) && cuCtxDestroy(created) == CUDA_SUCCESS &&
	       cuCtxGetCurrent(&cur) == CUDA_SUCCESS, "freed, context destroyed");
	tap_ok(OK(cudaGetDevice(&dev)) && cuCtxGetDevice(&cudev) == CUDA_SUCCESS && dev == cudev,
	       "back on the primary context");
	/*
	 * cudaStreamPerThread is each thread's own stream: another thread's
	 * work on its per-thread stream runs while this thread's waits (on a
	 * device word a non-blocking stream writes later).  Were it the legacy
	 * stream, that work would queue behind the wait.
	 */
	{
		struct pt_arg a = { 0 };
		CUdeviceptr flag = 0;
		CUstream ns = NULL;
		void *pd = NULL;
		int ok, before = 0;

		ok = cuMemAlloc(&flag, 64) == CUDA_SUCCESS && cuMemsetD32(flag, 0, 1) == CUDA_SUCCESS &&
		     OK(cudaMalloc(&pd, 64)) && cuStreamCreate(&ns, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS &&
		     cuStreamWaitValue32(CU_STREAM_PER_THREAD, flag, 1, CU_STREAM_WAIT_VALUE_EQ) == CUDA_SUCCESS;
		a.d = pd;
		if (ok && pthread_create(&t, NULL, pt_thread, &a) == 0) {
			/* 30 s: only a stream that does wait pays all of it */
			for (int i = 0; i < 3000 && !__atomic_load_n(&a.done, __ATOMIC_ACQUIRE); i++)
				usleep(10000);
			before = __atomic_load_n(&a.done, __ATOMIC_ACQUIRE);
			ok = cuStreamWriteValue32(ns, flag, 1, 0) == CUDA_SUCCESS &&
			     cuStreamSynchronize(ns) == CUDA_SUCCESS;
			pthread_join(t, NULL);
			ok = ok && cuStreamSynchronize(CU_STREAM_PER_THREAD) == CUDA_SUCCESS;
		} else {
			ok = 0;
		}
		tap_ok(ok && before == 1,
		       "cudaStreamPerThread: another thread's runs while this thread's waits (%d)", before);
		if (ns)
			cuStreamDestroy(ns);
		cudaFree(pd);
		cuMemFree(flag);
	}
	/* cudaDeviceReset frees the device's memory. */
	tap_ok(OK(cudaDeviceReset()), "cudaDeviceReset");
	tap_ok(OK(cudaMemGetInfo(&free1, &total)) && free1 == free0,
	       "its memory is free again (%zu of %zu MiB)", free1 >> 20, free0 >> 20);
	tap_ok(OK(cudaPointerGetAttributes(&pa, d)) && pa.type == cudaMemoryTypeUnregistered,
	       "an allocation from before the reset is gone");
	tap_ok(cudaFree(d) == cudaErrorInvalidValue, "and cannot be freed");
	return tap_done();
}
