// SPDX-License-Identifier: MIT
/*
 * cuda-calls-test.c - the emulated driver's behaviour that the conformance
 * transcript cannot show (it runs on one thread, prints classes not data):
 * contexts across threads, stale handles, data through page-locked host
 * memory and the 16/32-bit memsets, primary context state and reset, PCI
 * bus ids, and compute calls refused.  Written only against cuda.h.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cuda.h>

#include "emu_knob.h"
#include "tap.h"

#define CK(call) ((call) == CUDA_SUCCESS)

static CUcontext created;

static void *other_thread(void *arg)
{
	CUdevice d = -1;
	CUcontext c = (CUcontext)1;

	(void)arg;
	/* A new thread starts with an empty stack ... */
	tap_ok(CK(cuCtxGetCurrent(&c)) && !c, "a new thread has no current context");
	tap_ok(cuCtxGetDevice(&d) == CUDA_ERROR_INVALID_CONTEXT, "cuCtxGetDevice on it: CUDA_ERROR_INVALID_CONTEXT");
	/* ... and a context destroyed elsewhere reads as destroyed. */
	tap_ok(CK(cuCtxSetCurrent(created)), "another thread's context can be made current");
	return NULL;
}

int main(void)
{
	CUdevice dev;
	CUcontext pctx, c;
	CUdeviceptr d, d2;
	CUstream s;
	CUevent e;
	CUmodule m;
	CUfunction f;
	pthread_t t;
	char bus[32], bad[8];
	unsigned int flags = 99, ver = 0;
	int active = -1, n;
	unsigned char *h, buf[64];
	unsigned short *h16;
	unsigned int *h32;
	unsigned long long id;

	tap_plan(43);
	if (!CK(cuInit(0)) || !CK(cuDeviceGet(&dev, 0))) {
		tap_ok(0, "cuInit and device 0");
		return tap_done();
	}
	tap_ok(CK(cuDeviceGetPCIBusId(bus, sizeof(bus), dev)) && strlen(bus) == 12, "cuDeviceGetPCIBusId: %s", bus);
	tap_ok(cuDeviceGetPCIBusId(bad, sizeof(bad), dev) == CUDA_ERROR_INVALID_VALUE, "cuDeviceGetPCIBusId with 8 bytes: CUDA_ERROR_INVALID_VALUE");
	tap_ok(CK(cuDeviceGetByPCIBusId(&n, bus)) && n == 0, "cuDeviceGetByPCIBusId of that id: device 0");
	tap_ok(cuDeviceGetByPCIBusId(&n, "0000:7f:1f.7") == CUDA_ERROR_INVALID_DEVICE, "another bus id: CUDA_ERROR_INVALID_DEVICE");
	tap_ok(cuDeviceGetByPCIBusId(&n, "not a bus id") == CUDA_ERROR_INVALID_VALUE, "a malformed bus id: CUDA_ERROR_INVALID_VALUE");

	tap_ok(CK(cuDevicePrimaryCtxGetState(dev, &flags, &active)) && active == 0, "primary context inactive before retain");
	tap_ok(cuDevicePrimaryCtxSetFlags(dev, 3) == CUDA_ERROR_INVALID_VALUE && CK(cuDevicePrimaryCtxSetFlags(dev, 4)), "primary flags: sched 3 refused, BLOCKING_SYNC taken");
	tap_ok(CK(cuDevicePrimaryCtxRetain(&pctx, dev)) && CK(cuCtxSetCurrent(pctx)), "primary context retained and current");
	tap_ok(CK(cuDevicePrimaryCtxGetState(dev, &flags, &active)) && active == 1 && flags == 4, "primary context active, flags %u", flags);
	tap_ok(CK(cuCtxGetApiVersion(NULL, &ver)) && ver == 3020 && CK(cuCtxGetFlags(&flags)) && flags == 4, "cuCtxGetApiVersion %u, cuCtxGetFlags %u", ver, flags);

	/* Contexts and threads. */
	tap_ok(CK(cuCtxCreate(&created, NULL, 0, dev)) && CK(cuCtxGetCurrent(&c)) && c == created, "cuCtxCreate pushes the new context");
	pthread_create(&t, NULL, other_thread, NULL);
	pthread_join(t, NULL);
	tap_ok(CK(cuCtxPopCurrent(&c)) && c == created && CK(cuCtxGetCurrent(&c)) && c == pctx, "pop: the primary context is current again");
	tap_ok(CK(cuCtxPushCurrent(created)) && CK(cuMemAlloc(&d2, 4096)) && CK(cuCtxPopCurrent(NULL)), "memory allocated in the created context");
	tap_ok(CK(cuCtxDestroy(created)) && cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, d2) == CUDA_ERROR_INVALID_VALUE, "cuCtxDestroy frees that memory");
	tap_ok(cuCtxDestroy(created) == CUDA_ERROR_CONTEXT_IS_DESTROYED, "destroying it again: CUDA_ERROR_CONTEXT_IS_DESTROYED");
	tap_ok(cuCtxPushCurrent(created) == CUDA_ERROR_CONTEXT_IS_DESTROYED, "pushing it: CUDA_ERROR_CONTEXT_IS_DESTROYED");

	/* Data through page-locked host memory, and the wide memsets. */
	tap_ok(CK(cuMemAlloc(&d, 1 << 16)), "cuMemAlloc 64 KiB");
	tap_ok(CK(cuMemHostAlloc((void **)&h, 1 << 16, CU_MEMHOSTALLOC_DEVICEMAP)) && CK(cuMemHostGetFlags(&flags, h)) && flags == CU_MEMHOSTALLOC_DEVICEMAP, "cuMemHostAlloc DEVICEMAP, flags read back");
	for (int i = 0; i < 64; i++)
		h[i] = (unsigned char)(i * 3 + 1);
	tap_ok(CK(cuMemcpy(d, (CUdeviceptr)(uintptr_t)h, 64)) && CK(cuMemcpyDtoH(buf, d, 64)) && !memcmp(buf, h, 64), "cuMemcpy from page-locked memory to the GPU and back");
	h16 = (unsigned short *)h;
	tap_ok(CK(cuMemsetD16(d, 0xbeef, 100)) && CK(cuMemcpy((CUdeviceptr)(uintptr_t)h, d, 256)) && h16[0] == 0xbeef && h16[99] == 0xbeef && h16[100] == (unsigned short)(h[200] | h[201] << 8), "cuMemsetD16: 100 halfwords, no more");
	h32 = (unsigned int *)h;
	tap_ok(CK(cuMemsetD32(d + 4, 0x01020304, 5000)) && CK(cuMemcpyDtoH(h, d, 20008)) && h32[1] == 0x01020304 && h32[5000] == 0x01020304 && h32[0] == 0xbeefbeef, "cuMemsetD32 across the 4 KiB staging page");
	tap_ok(cuMemsetD32(d, 0, (1 << 14) + 1) == CUDA_ERROR_INVALID_VALUE, "cuMemsetD32 past the end: CUDA_ERROR_INVALID_VALUE");
	{
		/* Host copies are counted (staged bytes); GPU to GPU is not. */
		uint64_t h0 = emu_stat_u64("htod_bytes"), d0 = emu_stat_u64("dtoh_bytes");
		CUdeviceptr d3 = 0;

		tap_ok(h0 != UINT64_MAX && d0 != UINT64_MAX && CK(cuMemcpyHtoD(d, h, 100)) &&
		       CK(cuMemAlloc(&d3, 4096)) && CK(cuMemcpyDtoD(d3, d, 4000)) &&
		       CK(cuMemcpyDtoH(buf, d3, 60)) && CK(cuMemFree(d3)) &&
		       emu_stat_u64("htod_bytes") - h0 == 100 && emu_stat_u64("dtoh_bytes") - d0 == 60,
		       "htod_bytes and dtoh_bytes count copies from and to host memory, not GPU to GPU");
	}
	tap_ok(CK(cuMemFreeHost(h)) && cuMemFreeHost(h) == CUDA_ERROR_INVALID_VALUE, "cuMemFreeHost, then again: CUDA_ERROR_INVALID_VALUE");
	{
		char *r = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CUdeviceptr dp = 0;

		tap_ok(r != MAP_FAILED && CK(cuMemHostRegister(r + 16, 100, 0)) && CK(cuMemHostGetDevicePointer(&dp, r + 50, 0)) && dp == (CUdeviceptr)(uintptr_t)(r + 50) && cuMemHostGetDevicePointer(&dp, r + 200, 0) == CUDA_ERROR_INVALID_VALUE, "cuMemHostRegister of 100 bytes: device pointers inside it only");
		tap_ok(CK(cuMemHostUnregister(r + 16)) && cuMemHostUnregister(r + 16) == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "unregistered, then again: CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED");
	}

	/* A stream wait released by a write from outside the stream. */
	{
		CUstream w;
		unsigned int v = 0;

		tap_ok(CK(cuStreamCreate(&w, CU_STREAM_NON_BLOCKING)) && CK(cuMemsetD32(d, 0, 2)) &&
		       CK(cuStreamWaitValue32(w, d, 1, CU_STREAM_WAIT_VALUE_EQ)) && CK(cuStreamWriteValue32(w, d + 4, 9, 0)) &&
		       cuStreamQuery(w) == CUDA_ERROR_NOT_READY && CK(cuMemsetD32(d, 1, 1)) && CK(cuStreamSynchronize(w)) &&
		       CK(cuMemcpyDtoH(&v, d + 4, 4)) && v == 9,
		       "cuStreamWaitValue32 holds the stream until a memset outside it; the write queued after it runs then");
		tap_ok(CK(cuStreamWaitValue32(w, d, 2, CU_STREAM_WAIT_VALUE_EQ)) && CK(cuStreamDestroy(w)) &&
		       CK(cuMemsetD32(d, 2, 1)) && cuStreamQuery(w) == CUDA_ERROR_INVALID_HANDLE,
		       "a stream destroyed while waiting: destroy returns, its work drains later");
	}

	/* VMM: what a mapping is, read back; a retained handle outlives release. */
	{
		CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
			.location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } }, got;
		CUmemAccessDesc acc = { { CU_MEM_LOCATION_TYPE_DEVICE, 0 }, CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
		CUmemLocation loc = { CU_MEM_LOCATION_TYPE_DEVICE, 0 };
		CUmemGenericAllocationHandle mh = 0, rh = 0;
		CUdeviceptr va = 0;
		unsigned long long af = 99;

		prop.allocFlags.gpuDirectRDMACapable = 1;
		tap_ok(CK(cuMemCreate(&mh, 2 << 20, &prop, 0)) && CK(cuMemAddressReserve(&va, 2 << 20, 0, 0, 0)) &&
		       CK(cuMemMap(va, 2 << 20, 0, mh, 0)) && CK(cuMemGetAccess(&af, &loc, va)) && af == 0 &&
		       CK(cuMemSetAccess(va, 2 << 20, &acc, 1)) && CK(cuMemGetAccess(&af, &loc, va + 4096)) && af == 3,
		       "cuMemGetAccess: none after map, read-write after cuMemSetAccess");
		tap_ok(CK(cuMemRetainAllocationHandle(&rh, (void *)(uintptr_t)(va + 100))) && rh == mh &&
		       CK(cuMemGetAllocationPropertiesFromHandle(&got, rh)) && got.allocFlags.gpuDirectRDMACapable == 1 &&
		       got.location.type == CU_MEM_LOCATION_TYPE_DEVICE,
		       "cuMemRetainAllocationHandle gives the mapped handle; its properties say RDMA-capable");
		tap_ok(CK(cuMemRelease(mh)) && CK(cuMemUnmap(va, 2 << 20)) && CK(cuMemGetAllocationPropertiesFromHandle(&got, rh)) &&
		       CK(cuMemRelease(rh)) && cuMemRelease(rh) == CUDA_ERROR_INVALID_VALUE && CK(cuMemAddressFree(va, 2 << 20)),
		       "the retained reference keeps the handle after release and unmap; its own release frees it");
	}

	/* Stale handles are refused, never used. */
	tap_ok(CK(cuStreamCreate(&s, 0)) && CK(cuStreamDestroy(s)) && cuStreamQuery(s) == CUDA_ERROR_INVALID_HANDLE && cuMemsetD8Async(d, 0, 1, s) == CUDA_ERROR_INVALID_HANDLE, "a destroyed stream: CUDA_ERROR_INVALID_HANDLE");
	tap_ok(CK(cuEventCreate(&e, 0)) && CK(cuEventDestroy(e)) && cuEventRecord(e, NULL) == CUDA_ERROR_INVALID_HANDLE, "a destroyed event: CUDA_ERROR_INVALID_HANDLE");

	/* No GPU code runs here. */
	tap_ok(cuModuleLoadData(&m, "\x7f" "ELF") == CUDA_ERROR_NOT_SUPPORTED, "cuModuleLoadData: CUDA_ERROR_NOT_SUPPORTED");
	tap_ok(cuModuleGetFunction(&f, (CUmodule)1, "k") == CUDA_ERROR_NOT_SUPPORTED, "cuModuleGetFunction: CUDA_ERROR_NOT_SUPPORTED");
	tap_ok(cuLaunchKernel((CUfunction)1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) == CUDA_ERROR_NOT_SUPPORTED, "cuLaunchKernel: CUDA_ERROR_NOT_SUPPORTED");

	/*
	 * Reset destroys the primary context, as on an H100 (conformance:
	 * primreset): its memory goes, it stays current but destroyed, its
	 * retains stay counted, and the next retain brings it back.
	 */
	tap_ok(CK(cuDevicePrimaryCtxReset(dev)) && cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, d) == CUDA_ERROR_INVALID_VALUE && cuMemAlloc(&d, 4096) == CUDA_ERROR_CONTEXT_IS_DESTROYED && CK(cuDevicePrimaryCtxGetState(dev, &flags, &active)) && !active, "cuDevicePrimaryCtxReset frees its memory and destroys the context");
	tap_ok(CK(cuDevicePrimaryCtxRetain(&c, dev)) && c == pctx && CK(cuMemAlloc(&d, 4096)) && CK(cuMemFree(d)) && CK(cuMemFree(0)) && CK(cuDevicePrimaryCtxRelease(dev)) && CK(cuDevicePrimaryCtxRelease(dev)), "retained again, the context is live; cuMemFree(0) is a no-op; both retains released");
	/*
	 * Released to no references while still current (what a program's
	 * exit handlers meet, UCX's among them): the handle stays current,
	 * calls that need it say it is destroyed, as on an H100.
	 */
	c = NULL;
	tap_ok(CK(cuCtxGetCurrent(&c)) && c == pctx, "the released primary context is still the current one");
	tap_ok(cuMemAlloc(&d, 4096) == CUDA_ERROR_CONTEXT_IS_DESTROYED, "cuMemAlloc on it: CUDA_ERROR_CONTEXT_IS_DESTROYED");
	return tap_done();
}
