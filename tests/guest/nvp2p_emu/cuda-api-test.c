// SPDX-License-Identifier: MIT
/*
 * cuda-api-test.c - a program that uses only CUDA driver API calls, run in
 * the guest against the emulated libcuda.so.1.  It checks the behaviours a
 * real H200 with driver 580 shows and that registration caches depend on.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cuda.h>

#include "tap.h"

#define CK(call) ((call) == CUDA_SUCCESS)

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr d, d2, small[4];
	unsigned long long id1 = 0, id2 = 0, id;
	unsigned int mt = 0, managed = 1, one = 1, sync = 0;
	int n = 0, attr = 0, ver = 0;
	char name[128], host[256], back[256];
	CUdeviceptr base;
	size_t size;
	const char *s = NULL;
	void *fn = NULL;
	CUdriverProcAddressQueryResult qr;
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tok = { 1, 1 };

	tap_plan(31);
	tap_ok(cuMemAlloc(&d, 4096) == CUDA_ERROR_NOT_INITIALIZED, "calls before cuInit: CUDA_ERROR_NOT_INITIALIZED");
	tap_ok(cuInit(1) == CUDA_ERROR_INVALID_VALUE, "cuInit(1) rejects flags");
	tap_ok(CK(cuInit(0)), "cuInit(0)");
	tap_ok(CK(cuDriverGetVersion(&ver)) && ver == 13000, "cuDriverGetVersion: %d", ver);
	tap_ok(CK(cuDeviceGetCount(&n)) && n == 1, "one device");
	tap_ok(cuDeviceGet(&dev, 1) == CUDA_ERROR_INVALID_DEVICE && CK(cuDeviceGet(&dev, 0)), "cuDeviceGet: ordinal 1 invalid, 0 valid");
	tap_ok(CK(cuDeviceGetName(name, sizeof(name), dev)) && strstr(name, "emulated"), "cuDeviceGetName: %s", name);
	tap_ok(CK(cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, dev)) && attr == 1, "GPU_DIRECT_RDMA_SUPPORTED = 1");
	tap_ok(CK(cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev)), "PCI device id %d", attr);
	tap_ok(cuMemAlloc(&d, 4096) == CUDA_ERROR_INVALID_CONTEXT, "cuMemAlloc without a context: CUDA_ERROR_INVALID_CONTEXT");
	tap_ok(CK(cuDevicePrimaryCtxRetain(&ctx, dev)) && CK(cuCtxSetCurrent(ctx)), "primary context retained and current");

	tap_ok(CK(cuMemAlloc(&d, 1 << 20)) && (d & 0xffff) == 0, "cuMemAlloc 1 MiB: 64 KiB aligned at 0x%llx", d);
	for (int i = 0; i < 256; i++)
		host[i] = (char)(i * 7 + 1);
	tap_ok(CK(cuMemcpyHtoD(d + 1000, host, 256)) && CK(cuMemcpyDtoH(back, d + 1000, 256)) && !memcmp(host, back, 256), "HtoD then DtoH round-trips 256 bytes at an odd offset");
	tap_ok(CK(cuMemsetD8(d, 0xab, 64)) && CK(cuMemcpyDtoH(back, d, 64)) && back[0] == (char)0xab && back[63] == (char)0xab, "cuMemsetD8");
	tap_ok(cuMemcpyHtoD(d + (1 << 20) - 10, host, 11) == CUDA_ERROR_INVALID_VALUE, "a copy past the end of the allocation is refused");
	tap_ok(CK(cuMemGetAddressRange(&base, &size, d + 12345)) && base == d && size == 1 << 20, "cuMemGetAddressRange of an inner pointer");
	tap_ok(CK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d)) && mt == CU_MEMORYTYPE_DEVICE, "MEMORY_TYPE = DEVICE");
	tap_ok(CK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, d)) && managed == 0, "IS_MANAGED = 0");
	tap_ok(CK(cuPointerGetAttribute(&id1, CU_POINTER_ATTRIBUTE_BUFFER_ID, d)) && id1, "BUFFER_ID %llu", id1);
	tap_ok(CK(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d + 4096)) && CK(cuPointerGetAttribute(&sync, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d)) && sync == 1, "SYNC_MEMOPS set through an inner pointer applies to the allocation");
	tap_ok(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)(uintptr_t)host) == CUDA_ERROR_INVALID_VALUE, "host pointer refused for SYNC_MEMOPS");
	{
		CUpointer_attribute at[2] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_BUFFER_ID };
		void *data[2] = { &mt, &id };

		mt = 99;
		tap_ok(CK(cuPointerGetAttributes(2, at, data, (CUdeviceptr)(uintptr_t)host)) && mt == 0, "cuPointerGetAttributes on a host pointer: success, memory type 0");
	}
	tap_ok(CK(cuPointerGetAttribute(&tok, CU_POINTER_ATTRIBUTE_P2P_TOKENS, d)) && tok.p2pToken == 0 && tok.vaSpaceToken == 0, "P2P tokens read as 0");

	tap_ok(CK(cuMemFree(d)) && cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, d) == CUDA_ERROR_INVALID_VALUE, "freed pointer: BUFFER_ID query is CUDA_ERROR_INVALID_VALUE");
	tap_ok(CK(cuMemAlloc(&d2, 1 << 20)) && d2 == d && CK(cuPointerGetAttribute(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, d2)) && id2 != id1, "re-allocation returns the same VA (0x%llx) with a new BUFFER_ID (%llu -> %llu)", d2, id1, id2);
	{
		int ok = 1;
		unsigned long long ids[4];

		for (int i = 0; i < 4; i++)
			ok &= CK(cuMemAlloc(&small[i], 4096)) && CK(cuPointerGetAttribute(&ids[i], CU_POINTER_ATTRIBUTE_BUFFER_ID, small[i]));
		for (int i = 1; i < 4 && ok; i++)
			ok &= small[i] == small[0] + 4096 * (CUdeviceptr)i && (small[i] >> 16) == (small[0] >> 16) && ids[i] != ids[i - 1];
		tap_ok(ok, "4 KiB allocations at consecutive 4 KiB addresses in one 64 KiB page, distinct BUFFER_IDs");
	}
	tap_ok(cuMemFree(small[0] + 16) == CUDA_ERROR_INVALID_VALUE, "cuMemFree of an inner pointer is refused");
	tap_ok(CK(cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &s)) && !strcmp(s, "CUDA_ERROR_INVALID_VALUE"), "cuGetErrorName");
	tap_ok(CK(cuGetProcAddress("cuMemAlloc", &fn, 13000, 0, &qr)) && fn == (void *)cuMemAlloc_v2 && qr == CU_GET_PROC_ADDRESS_SUCCESS, "cuGetProcAddress(cuMemAlloc, 13000) is cuMemAlloc_v2");
	tap_ok(CK(cuGetProcAddress("cuNoSuchThing", &fn, 13000, 0, &qr)) && !fn && qr == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, "cuGetProcAddress of an unknown symbol: CUDA_SUCCESS, status SYMBOL_NOT_FOUND (as the driver)");
	{
		pid_t pid = fork();
		int st = -1;

		if (pid == 0)
			_exit(cuMemAlloc(&d, 4096) == CUDA_ERROR_NOT_INITIALIZED ? 0 : 1);
		waitpid(pid, &st, 0);
		tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "CUDA is unusable in a forked child");
	}
	cuDevicePrimaryCtxRelease(dev);
	return tap_done();
}
