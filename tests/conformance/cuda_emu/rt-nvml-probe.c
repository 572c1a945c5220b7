// SPDX-License-Identifier: MIT
/*
 * rt-nvml-probe.c - what the CUDA runtime and NVML answer, as a transcript
 *
 *	rt-nvml-probe [CUDART [NVML]]
 *
 * Loads libcudart.so.13 and libnvidia-ml.so.1 (or the files named) with
 * dlopen, so the same source runs against NVIDIA's libraries on a GPU
 * machine and against cudart_emu and nvml_emu in the guest, and prints one
 * `key = value` line per observation: every cudaError_t's name and text,
 * every struct cudaDeviceProp field that describes the GPU model (not
 * the machine: names, UUIDs, PCI location, memory size and clocks are
 * left out), pointer attributes of unregistered memory, the runtime's
 * error codes for bad input, and NVML's error texts, field values, NVLink
 * answers and buffer-size rules.  gpu/h100-580.rt-nvml.transcript is an
 * H100's; docs/emulator.md says what differs on the emulator and why.
 * Built with our headers for the layouts (they are NVIDIA's).
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_runtime_api.h"
#include "nvml.h"

#define SYM(lib, name) dlsym(lib, name)

static void *rt, *ml;

#define RT(name) ((__typeof__(&name))SYM(rt, #name))
#define ML(name) ((__typeof__(&name))SYM(ml, #name))

static void errors(void)
{
	for (int c = 0; c <= 1000; c++) {
		const char *n = RT(cudaGetErrorName)((cudaError_t)c);
		const char *t = RT(cudaGetErrorString)((cudaError_t)c);

		if (!strcmp(n, "unrecognized error code") && c != 1000)
			continue;
		printf("rt.error.%d = %s | %s\n", c, n, t);
	}
}

static void props(void)
{
	struct cudaDeviceProp p;
	cudaError_t e = RT(cudaGetDeviceProperties)(&p, 0);

	printf("rt.cudaGetDeviceProperties = %d\n", e);
	if (e)
		return;
#define I(f) printf("rt.prop." #f " = %d\n", (int)p.f)
#define Z(f) printf("rt.prop." #f " = %zu\n", (size_t)p.f)
	Z(sharedMemPerBlock); I(regsPerBlock); I(warpSize); Z(memPitch);
	I(maxThreadsPerBlock); I(maxThreadsDim[0]); I(maxThreadsDim[1]); I(maxThreadsDim[2]);
	I(maxGridSize[0]); I(maxGridSize[1]); I(maxGridSize[2]); Z(totalConstMem);
	I(major); I(minor); Z(textureAlignment); Z(texturePitchAlignment);
	I(multiProcessorCount); I(integrated); I(canMapHostMemory); I(maxTexture1D);
	I(maxTexture1DMipmap); I(maxTexture2D[0]); I(maxTexture2D[1]);
	I(maxTexture2DMipmap[0]); I(maxTexture2DMipmap[1]); I(maxTexture2DLinear[0]);
	I(maxTexture2DLinear[1]); I(maxTexture2DLinear[2]); I(maxTexture2DGather[0]);
	I(maxTexture2DGather[1]); I(maxTexture3D[0]); I(maxTexture3D[1]); I(maxTexture3D[2]);
	I(maxTexture3DAlt[0]); I(maxTexture3DAlt[1]); I(maxTexture3DAlt[2]);
	I(maxTextureCubemap); I(maxTexture1DLayered[0]); I(maxTexture1DLayered[1]);
	I(maxTexture2DLayered[0]); I(maxTexture2DLayered[1]); I(maxTexture2DLayered[2]);
	I(maxTextureCubemapLayered[0]); I(maxTextureCubemapLayered[1]); I(maxSurface1D);
	I(maxSurface2D[0]); I(maxSurface2D[1]); I(maxSurface3D[0]); I(maxSurface3D[1]);
	I(maxSurface3D[2]); I(maxSurface1DLayered[0]); I(maxSurface1DLayered[1]);
	I(maxSurface2DLayered[0]); I(maxSurface2DLayered[1]); I(maxSurface2DLayered[2]);
	I(maxSurfaceCubemap); I(maxSurfaceCubemapLayered[0]); I(maxSurfaceCubemapLayered[1]);
	Z(surfaceAlignment); I(concurrentKernels); I(ECCEnabled); I(tccDriver);
	I(asyncEngineCount); I(unifiedAddressing); I(memoryBusWidth); I(l2CacheSize);
	I(persistingL2CacheMaxSize); I(maxThreadsPerMultiProcessor);
	I(streamPrioritiesSupported); I(globalL1CacheSupported); I(localL1CacheSupported);
	Z(sharedMemPerMultiprocessor); I(regsPerMultiprocessor); I(managedMemory);
	I(isMultiGpuBoard); I(multiGpuBoardGroupID); I(hostNativeAtomicSupported);
	I(pageableMemoryAccess); I(concurrentManagedAccess); I(computePreemptionSupported);
	I(canUseHostPointerForRegisteredMem); I(cooperativeLaunch); Z(sharedMemPerBlockOptin);
	I(pageableMemoryAccessUsesHostPageTables); I(directManagedMemAccessFromHost);
	I(maxBlocksPerMultiProcessor); I(accessPolicyMaxWindowSize);
	Z(reservedSharedMemPerBlock); I(hostRegisterSupported); I(sparseCudaArraySupported);
	I(hostRegisterReadOnlySupported); I(timelineSemaphoreInteropSupported);
	I(memoryPoolsSupported); I(gpuDirectRDMASupported); I(gpuDirectRDMAFlushWritesOptions);
	I(gpuDirectRDMAWritesOrdering); I(memoryPoolSupportedHandleTypes);
	I(deferredMappingCudaArraySupported); I(ipcEventSupported); I(clusterLaunch);
	I(unifiedFunctionPointers); I(deviceNumaConfig); I(mpsEnabled);
	I(hostNumaMultinodeIpcSupported);
	printf("rt.prop.luid.zero = %d\n", !memcmp(p.luid, "\0\0\0\0\0\0\0\0", 8));
	printf("rt.prop.reserved.zero = %d\n", !memcmp(p.reserved, (int[56]){ 0 }, sizeof(p.reserved)));
}

static void runtime(void)
{
	struct cudaPointerAttributes a;
	void *d = NULL, *p = NULL;
	cudaError_t e;
	int v = 0;
	char c[64];

	e = RT(cudaGetDeviceCount)(&v);
	printf("rt.cudaGetDeviceCount = %d %s\n", e, v > 0 ? "positive" : "0");
	RT(cudaRuntimeGetVersion)(&v);
	printf("rt.cudaRuntimeGetVersion = %d\n", v);
	props();
	memset(&a, 0x55, sizeof(a));
	e = RT(cudaPointerGetAttributes)(&a, c);
	printf("rt.ptr.stack = %d type %d device %d dptr %s hptr %s\n", e, a.type, a.device,
	       a.devicePointer ? "set" : "NULL", a.hostPointer == c ? "=ptr" :
	       a.hostPointer ? "other" : "NULL");
	e = RT(cudaMalloc)(&d, 1 << 20);
	memset(&a, 0x55, sizeof(a));
	e = RT(cudaPointerGetAttributes)(&a, d);
	printf("rt.ptr.device = %d type %d device %d dptr %s hptr %s\n", e, a.type, a.device,
	       a.devicePointer == d ? "=ptr" : "other", a.hostPointer ? "set" : "NULL");
	RT(cudaMallocHost)(&p, 4096);
	memset(&a, 0x55, sizeof(a));
	e = RT(cudaPointerGetAttributes)(&a, p);
	printf("rt.ptr.host = %d type %d device %d dptr %s hptr %s\n", e, a.type, a.device,
	       a.devicePointer == p ? "=ptr" : "other", a.hostPointer == p ? "=ptr" : "other");
	RT(cudaGetLastError)();
	printf("rt.cudaMalloc(NULL) = %d\n", RT(cudaMalloc)(NULL, 8));
	e = RT(cudaPeekAtLastError)();
	printf("rt.lasterror.peek = %d\n", e);
	e = RT(cudaGetLastError)();
	printf("rt.lasterror.get = %d\n", e);
	e = RT(cudaGetLastError)();
	printf("rt.lasterror.again = %d\n", e);
	printf("rt.cudaMalloc(0) = %d\n", RT(cudaMalloc)(&p, 0));
	printf("rt.cudaFree(NULL) = %d\n", RT(cudaFree)(NULL));
	printf("rt.cudaFree(stack) = %d\n", RT(cudaFree)(c));
	printf("rt.cudaFree(device+8) = %d\n", RT(cudaFree)((char *)d + 8));
	printf("rt.cudaSetDevice(99) = %d\n", RT(cudaSetDevice)(99));
	printf("rt.cudaSetDevice(-1) = %d\n", RT(cudaSetDevice)(-1));
	printf("rt.cudaMemcpy(kind 7) = %d\n", RT(cudaMemcpy)(c, c, 8, (enum cudaMemcpyKind)7));
	printf("rt.cudaMemcpy(past end) = %d\n",
	       RT(cudaMemcpy)(c, (char *)d + (1 << 20) - 8, 16, cudaMemcpyDeviceToHost));
	printf("rt.cudaMemcpy(H2D, stack dst) = %d\n", RT(cudaMemcpy)(c, c + 8, 8, cudaMemcpyHostToDevice));
	printf("rt.cudaMemcpy(HtoH) = %d\n", RT(cudaMemcpy)(c, c + 8, 8, cudaMemcpyHostToHost));
	printf("rt.cudaMemset(stack) = %d\n", RT(cudaMemset)(c, 0, 8));
	printf("rt.cudaMallocManaged(Single) = %d\n", RT(cudaMallocManaged)(&p, 64, cudaMemAttachSingle));
	printf("rt.cudaMallocManaged(0 bytes) = %d\n", RT(cudaMallocManaged)(&p, 0, cudaMemAttachGlobal));
	printf("rt.cudaStreamCreateWithFlags(2) = %d\n",
	       RT(cudaStreamCreateWithFlags)((cudaStream_t *)&p, 2));
	printf("rt.cudaStreamDestroy(NULL) = %d\n", RT(cudaStreamDestroy)(NULL));
	printf("rt.cudaStreamQuery(NULL) = %d\n", RT(cudaStreamQuery)(NULL));
	printf("rt.cudaEventCreateWithFlags(8) = %d\n",
	       RT(cudaEventCreateWithFlags)((cudaEvent_t *)&p, 8));
	printf("rt.cudaHostGetDevicePointer(flags 1) = %d\n",
	       RT(cudaHostGetDevicePointer)(&p, c, 1));
	printf("rt.cudaHostUnregister(stack) = %d\n", RT(cudaHostUnregister)(c));
	printf("rt.cudaIpcOpenMemHandle(flags 2) = %d\n",
	       RT(cudaIpcOpenMemHandle)(&p, (cudaIpcMemHandle_t){ { 0 } }, 2));
	printf("rt.cudaLaunchKernel(NULL) = %d\n",
	       RT(cudaLaunchKernel)(NULL, (dim3){ 1, 1, 1 }, (dim3){ 1, 1, 1 }, NULL, 0, NULL));
	RT(cudaGetLastError)();
	RT(cudaFree)(d);
}

static void nvml(void)
{
	nvmlFieldValue_t fv[4] = { { .fieldId = 91 }, { .fieldId = 1 }, { .fieldId = 164 },
				   { .fieldId = 100000 } };
	nvmlDevice_t dev, dev2;
	nvmlPciInfo_t pci;
	unsigned int n = 0;
	char buf[128];
	nvmlReturn_t r;
	int v = 0;

	for (int c = 0; c <= 30; c++)
		printf("nvml.error.%d = %s\n", c, ML(nvmlErrorString)((nvmlReturn_t)c));
	printf("nvml.error.999 = %s\n", ML(nvmlErrorString)(NVML_ERROR_UNKNOWN));
	printf("nvml.error.12345 = %s\n", ML(nvmlErrorString)((nvmlReturn_t)12345));
	printf("nvml.beforeinit.count = %d\n", ML(nvmlDeviceGetCount_v2)(&n));
	printf("nvml.beforeinit.shutdown = %d\n", ML(nvmlShutdown)());
	printf("nvml.beforeinit.cudaversion = %d\n", ML(nvmlSystemGetCudaDriverVersion)(&v));
	printf("nvml.beforeinit.driverversion = %d\n", ML(nvmlSystemGetDriverVersion)(buf, sizeof(buf)));
	r = ML(nvmlInitWithFlags)(0x80);
	printf("nvml.initflags(0x80) = %d\n", r);
	if (!r)
		ML(nvmlShutdown)();
	r = ML(nvmlInit_v2)();
	printf("nvml.init = %d\n", r);
	printf("nvml.init.again = %d\n", ML(nvmlInit_v2)());
	printf("nvml.count = %d %s\n", ML(nvmlDeviceGetCount_v2)(&n), n ? "positive" : "0");
	printf("nvml.count(NULL) = %d\n", ML(nvmlDeviceGetCount_v2)(NULL));
	printf("nvml.handle(index 99) = %d\n", ML(nvmlDeviceGetHandleByIndex_v2)(99, &dev2));
	printf("nvml.handle(index 0, NULL) = %d\n", ML(nvmlDeviceGetHandleByIndex_v2)(0, NULL));
	r = ML(nvmlDeviceGetHandleByIndex_v2)(0, &dev);
	printf("nvml.handle(0) = %d\n", r);
	if (r)
		return;
	r = ML(nvmlDeviceGetPciInfo_v3)(dev, &pci);
	printf("nvml.pci = %d busId.len %zu legacy.len %zu busId.upper %d\n", r, strlen(pci.busId),
	       strlen(pci.busIdLegacy), strpbrk(pci.busId, "abcdef") == NULL);
	printf("nvml.pci.busId.tail-matches-legacy = %d\n",
	       !strcmp(pci.busId + strlen(pci.busId) - 7, pci.busIdLegacy + strlen(pci.busIdLegacy) - 7));
	printf("nvml.handle(busId) = %d\n", ML(nvmlDeviceGetHandleByPciBusId_v2)(pci.busId, &dev2));
	printf("nvml.handle(legacy) = %d\n", ML(nvmlDeviceGetHandleByPciBusId_v2)(pci.busIdLegacy, &dev2));
	printf("nvml.handle(bus:dev.fn) = %d\n",
	       ML(nvmlDeviceGetHandleByPciBusId_v2)(pci.busIdLegacy + 5, &dev2));
	printf("nvml.handle(lowercase) = %d\n", ML(nvmlDeviceGetHandleByPciBusId_v2)("0000:ff:1f.0", &dev2));
	printf("nvml.handle(junk) = %d\n", ML(nvmlDeviceGetHandleByPciBusId_v2)("junk", &dev2));
	printf("nvml.handle(0x prefix) = %d\n", ML(nvmlDeviceGetHandleByPciBusId_v2)("0x0:0x0:0x0.0", &dev2));
	printf("nvml.handle(NULL) = %d\n", ML(nvmlDeviceGetHandleByPciBusId_v2)(NULL, &dev2));
	printf("nvml.name(len 4) = %d\n", ML(nvmlDeviceGetName)(dev, buf, 4));
	printf("nvml.uuid(len 10) = %d\n", ML(nvmlDeviceGetUUID)(dev, buf, 10));
	r = ML(nvmlDeviceGetUUID)(dev, buf, sizeof(buf));
	printf("nvml.uuid = %d len %zu prefix %.4s\n", r, strlen(buf), buf);
	printf("nvml.uuid(len 41) = %d\n", ML(nvmlDeviceGetUUID)(dev, buf, 41));
	printf("nvml.uuid(len 40) = %d\n", ML(nvmlDeviceGetUUID)(dev, buf, 40));
	printf("nvml.driverversion(len 4) = %d\n", ML(nvmlSystemGetDriverVersion)(buf, 4));
	printf("nvml.bar1(NULL) = %d\n", ML(nvmlDeviceGetBAR1MemoryInfo)(dev, NULL));
	printf("nvml.bar1(NULL dev) = %d\n", ML(nvmlDeviceGetBAR1MemoryInfo)(NULL, (nvmlBAR1Memory_t *)buf));
	{
		nvmlBAR1Memory_t b;
		nvmlMemory_t m;

		r = ML(nvmlDeviceGetBAR1MemoryInfo)(dev, &b);
		printf("nvml.bar1 = %d used+free=total %d used>0 %d\n", r,
		       b.bar1Used + b.bar1Free == b.bar1Total, b.bar1Used > 0);
		r = ML(nvmlDeviceGetMemoryInfo)(dev, &m);
		printf("nvml.mem = %d used+free=total %d\n", r, m.used + m.free == m.total);
	}
	r = ML(nvmlDeviceGetFieldValues)(dev, 4, fv);
	printf("nvml.fields = %d\n", r);
	for (int i = 0; i < 4; i++)
		printf("nvml.field.%u = ret %d type %d value %llu\n", fv[i].fieldId, fv[i].nvmlReturn,
		       fv[i].nvmlReturn ? -1 : (int)fv[i].valueType,
		       fv[i].nvmlReturn ? 0 : fv[i].value.ullVal & 0xffffffff);
	printf("nvml.fields(NULL) = %d\n", ML(nvmlDeviceGetFieldValues)(dev, 1, NULL));
	printf("nvml.fields(-1) = %d\n", ML(nvmlDeviceGetFieldValues)(dev, -1, fv));
	for (unsigned int l = 0; l < 20; l += 19)
		printf("nvml.nvlinkremote.%u = %d\n", l,
		       ML(nvmlDeviceGetNvLinkRemotePciInfo_v2)(dev, l, &pci));
	printf("nvml.nvlinkremote(NULL) = %d\n", ML(nvmlDeviceGetNvLinkRemotePciInfo_v2)(dev, 0, NULL));
	printf("nvml.minor = %d\n", ML(nvmlDeviceGetMinorNumber)(dev, &n));
	printf("nvml.cudaversion = %d %d\n", ML(nvmlSystemGetCudaDriverVersion)(&v), v);
	printf("nvml.shutdown = %d\n", ML(nvmlShutdown)());
	printf("nvml.shutdown = %d\n", ML(nvmlShutdown)());
	printf("nvml.shutdown = %d\n", ML(nvmlShutdown)());
}

int main(int argc, char **argv)
{
	rt = dlopen(argc > 1 ? argv[1] : "libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
	ml = dlopen(argc > 2 ? argv[2] : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	printf("probe.libcudart = %s\nprobe.libnvidia-ml = %s\n", rt ? "loaded" : "absent",
	       ml ? "loaded" : "absent");
	if (rt) {
		errors();
		runtime();
	}
	if (ml)
		nvml();
	return 0;
}
