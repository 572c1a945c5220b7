// SPDX-License-Identifier: MIT
/*
 * rt.c - loading the driver, the last error, error names, versions and
 * devices of the emulated CUDA runtime
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "cudart_emu_internal.h"

struct rt_driver drv;

/* Marker that packaging/install.sh looks for: this libcudart is ours. */
__attribute__((used)) static const char cudart_id[] =
	"GDIRECT_EMU_LIB: libcudart.so.13 of gdirect's emulated GPU";

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static cudaError_t init_result;
static int device_count;

/* Per device: the primary context the runtime holds retained. */
#define RT_MAX_DEVICES 64
static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext primary[RT_MAX_DEVICES];
static bool retained[RT_MAX_DEVICES];

static __thread cudaError_t last_error;
static __thread int current_device;

cudaError_t rt_ret(cudaError_t e)
{
	/* cudaErrorNotReady is an answer, not a failure: never recorded. */
	if (e != cudaSuccess && e != cudaErrorNotReady)
		last_error = e;
	return e;
}

static const struct {
	cudaError_t code;
	const char *name;
	const char *text;
} errors[] = {
#include "errors.inc"
};

static int error_index(int code)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if ((int)errors[i].code == code)
			return (int)i;
	return -1;
}

/* The driver's and the runtime's codes share their numbers. */
cudaError_t rt_error(CUresult r)
{
	if (r == CUDA_SUCCESS)
		return cudaSuccess;
	if (r == CUDA_ERROR_NOT_FOUND)
		return cudaErrorSymbolNotFound;
	return error_index((int)r) < 0 ? cudaErrorUnknown : (cudaError_t)r;
}

cudaError_t rt_ret_cu(CUresult r)
{
	return rt_ret(rt_error(r));
}

/*
 * The runtime's special handles to the driver's: cudaStreamPerThread is
 * the calling thread's own default stream (CU_STREAM_PER_THREAD), which
 * does not queue behind other threads' work as the legacy one does.
 */
CUstream rt_stream(cudaStream_t s)
{
	if (s == cudaStreamPerThread)
		return CU_STREAM_PER_THREAD;
	return s == cudaStreamLegacy ? NULL : s;
}

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
				CUdriverProcAddressQueryResult *);

static void *resolve(get_proc_fn get_proc, const char *name)
{
	CUdriverProcAddressQueryResult status;
	void *fn = NULL;

	if (get_proc(name, &fn, CUDART_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
		     &status) != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS)
		return NULL;
	return fn;
}

static void init_driver(void)
{
	CUresult (*cu_init)(unsigned int);
	get_proc_fn get_proc;
	void *lib;
	CUresult r;

	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		init_result = cudaErrorInsufficientDriver;
		return;
	}
	*(void **)&get_proc = dlsym(lib, "cuGetProcAddress_v2");
	if (!get_proc) {
		init_result = cudaErrorInsufficientDriver;
		return;
	}
	*(void **)&cu_init = resolve(get_proc, "cuInit");
	if (!cu_init) {
		init_result = cudaErrorInsufficientDriver;
		return;
	}
#define RT_RESOLVE(name, type) *(void **)&drv.name = resolve(get_proc, #name);
	RT_DRIVER_CALLS(RT_RESOLVE)
#undef RT_RESOLVE
	r = cu_init(0);
	if (r == CUDA_SUCCESS && drv.cuDeviceGetCount)
		r = drv.cuDeviceGetCount(&device_count);
	if (r == CUDA_SUCCESS && !device_count)
		r = CUDA_ERROR_NO_DEVICE;
	if (device_count > RT_MAX_DEVICES)
		device_count = RT_MAX_DEVICES;
	/* The library stays loaded: the resolved entry points point into it. */
	init_result = rt_error(r);
}

cudaError_t rt_init(void)
{
	pthread_once(&init_once, init_driver);
	return init_result;
}

static cudaError_t check_device(int dev)
{
	cudaError_t e = rt_init();

	if (e)
		return e;
	return dev < 0 || dev >= device_count ? cudaErrorInvalidDevice : cudaSuccess;
}

/* dev's primary context retained by the runtime, made current. */
static cudaError_t use_primary(int dev)
{
	CUresult r = CUDA_SUCCESS;
	CUcontext ctx;

	if (!drv.cuDevicePrimaryCtxRetain || !drv.cuCtxSetCurrent)
		return cudaErrorCallRequiresNewerDriver;
	pthread_mutex_lock(&primary_lock);
	if (!retained[dev]) {
		r = drv.cuDevicePrimaryCtxRetain(&primary[dev], dev);
		retained[dev] = r == CUDA_SUCCESS;
	}
	ctx = primary[dev];
	pthread_mutex_unlock(&primary_lock);
	if (r)
		return rt_error(r);
	return rt_error(drv.cuCtxSetCurrent(ctx));
}

static bool is_released_primary(CUcontext ctx)
{
	bool released = false;

	pthread_mutex_lock(&primary_lock);
	for (int i = 0; i < device_count; i++)
		if (primary[i] == ctx && !retained[i])
			released = true;
	pthread_mutex_unlock(&primary_lock);
	return released;
}

/*
 * As NVIDIA's runtime: a context the caller made current through the
 * driver is used as it is; otherwise the current device's primary context.
 */
cudaError_t rt_ctx(void)
{
	cudaError_t e = rt_init();
	CUcontext ctx = NULL;

	if (e)
		return e;
	if (!drv.cuCtxGetCurrent)
		return cudaErrorCallRequiresNewerDriver;
	if (drv.cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx &&
	    !is_released_primary(ctx))
		return cudaSuccess;
	return use_primary(current_device);
}

RT_EXPORT cudaError_t cudaGetLastError(void)
{
	cudaError_t e = last_error;

	last_error = cudaSuccess;
	return e;
}

RT_EXPORT cudaError_t cudaPeekAtLastError(void)
{
	return last_error;
}

RT_EXPORT const char *cudaGetErrorName(cudaError_t error)
{
	int i = error_index((int)error);

	return i < 0 ? "unrecognized error code" : errors[i].name;
}

RT_EXPORT const char *cudaGetErrorString(cudaError_t error)
{
	int i = error_index((int)error);

	return i < 0 ? "unrecognized error code" : errors[i].text;
}

RT_EXPORT cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
	if (!runtimeVersion)
		return rt_ret(cudaErrorInvalidValue);
	*runtimeVersion = CUDART_VERSION;
	return cudaSuccess;
}

/* No driver: version 0 and success, as documented. */
RT_EXPORT cudaError_t cudaDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return rt_ret(cudaErrorInvalidValue);
	*driverVersion = 0;
	if (rt_init() == cudaErrorInsufficientDriver || !drv.cuDriverGetVersion)
		return cudaSuccess;
	return rt_ret_cu(drv.cuDriverGetVersion(driverVersion));
}

RT_EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
	cudaError_t e;

	if (!count)
		return rt_ret(cudaErrorInvalidValue);
	e = rt_init();
	*count = e ? 0 : device_count;
	return rt_ret(e);
}

RT_EXPORT cudaError_t cudaSetDevice(int device)
{
	cudaError_t e = check_device(device);

	if (e)
		return rt_ret(e);
	current_device = device;
	return rt_ret(use_primary(device));
}

RT_EXPORT cudaError_t cudaGetDevice(int *device)
{
	cudaError_t e;
	CUcontext ctx = NULL;
	CUdevice dev;

	if (!device)
		return rt_ret(cudaErrorInvalidValue);
	e = rt_init();
	if (e)
		return rt_ret(e);
	if (drv.cuCtxGetCurrent && drv.cuCtxGetDevice &&
	    drv.cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx &&
	    drv.cuCtxGetDevice(&dev, NULL) == CUDA_SUCCESS) {
		*device = dev;
		return cudaSuccess;
	}
	*device = current_device;
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr,
					     int device)
{
	cudaError_t e;

	if (!value)
		return rt_ret(cudaErrorInvalidValue);
	e = check_device(device);
	if (e)
		return rt_ret(e);
	RT_NEED(cuDeviceGetAttribute);
	return rt_ret_cu(drv.cuDeviceGetAttribute(value, (CUdevice_attribute)attr,
						  device));
}

/* One cudaDeviceProp field from one attribute (0 where the driver has none). */
static CUresult attr(int *v, enum cudaDeviceAttr a, int dev)
{
	CUresult r = drv.cuDeviceGetAttribute(v, (CUdevice_attribute)a, dev);

	if (r == CUDA_ERROR_INVALID_VALUE) {
		*v = 0;
		return CUDA_SUCCESS;
	}
	return r;
}

RT_EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int dev)
{
	static const struct {
		size_t off;
		enum cudaDeviceAttr a;
		bool wide;		/* a size_t field */
	} map[] = {
#define F(field, a) { offsetof(struct cudaDeviceProp, field), a, false }
#define W(field, a) { offsetof(struct cudaDeviceProp, field), a, true }
		W(sharedMemPerBlock, cudaDevAttrMaxSharedMemoryPerBlock),
		F(regsPerBlock, cudaDevAttrMaxRegistersPerBlock),
		F(warpSize, cudaDevAttrWarpSize),
		W(memPitch, cudaDevAttrMaxPitch),
		F(maxThreadsPerBlock, cudaDevAttrMaxThreadsPerBlock),
		F(maxThreadsDim[0], cudaDevAttrMaxBlockDimX),
		F(maxThreadsDim[1], cudaDevAttrMaxBlockDimY),
		F(maxThreadsDim[2], cudaDevAttrMaxBlockDimZ),
		F(maxGridSize[0], cudaDevAttrMaxGridDimX),
		F(maxGridSize[1], cudaDevAttrMaxGridDimY),
		F(maxGridSize[2], cudaDevAttrMaxGridDimZ),
		W(totalConstMem, cudaDevAttrTotalConstantMemory),
		F(major, cudaDevAttrComputeCapabilityMajor),
		F(minor, cudaDevAttrComputeCapabilityMinor),
		W(textureAlignment, cudaDevAttrTextureAlignment),
		W(texturePitchAlignment, cudaDevAttrTexturePitchAlignment),
		F(multiProcessorCount, cudaDevAttrMultiProcessorCount),
		F(integrated, cudaDevAttrIntegrated),
		F(canMapHostMemory, cudaDevAttrCanMapHostMemory),
		F(maxTexture1D, cudaDevAttrMaxTexture1DWidth),
		F(maxTexture1DMipmap, cudaDevAttrMaxTexture1DMipmappedWidth),
		F(maxTexture2D[0], cudaDevAttrMaxTexture2DWidth),
		F(maxTexture2D[1], cudaDevAttrMaxTexture2DHeight),
		F(maxTexture2DMipmap[0], cudaDevAttrMaxTexture2DMipmappedWidth),
		F(maxTexture2DMipmap[1], cudaDevAttrMaxTexture2DMipmappedHeight),
		F(maxTexture2DLinear[0], cudaDevAttrMaxTexture2DLinearWidth),
		F(maxTexture2DLinear[1], cudaDevAttrMaxTexture2DLinearHeight),
		F(maxTexture2DLinear[2], cudaDevAttrMaxTexture2DLinearPitch),
		F(maxTexture2DGather[0], cudaDevAttrMaxTexture2DGatherWidth),
		F(maxTexture2DGather[1], cudaDevAttrMaxTexture2DGatherHeight),
		F(maxTexture3D[0], cudaDevAttrMaxTexture3DWidth),
		F(maxTexture3D[1], cudaDevAttrMaxTexture3DHeight),
		F(maxTexture3D[2], cudaDevAttrMaxTexture3DDepth),
		F(maxTexture3DAlt[0], cudaDevAttrMaxTexture3DWidthAlt),
		F(maxTexture3DAlt[1], cudaDevAttrMaxTexture3DHeightAlt),
		F(maxTexture3DAlt[2], cudaDevAttrMaxTexture3DDepthAlt),
		F(maxTextureCubemap, cudaDevAttrMaxTextureCubemapWidth),
		F(maxTexture1DLayered[0], cudaDevAttrMaxTexture1DLayeredWidth),
		F(maxTexture1DLayered[1], cudaDevAttrMaxTexture1DLayeredLayers),
		F(maxTexture2DLayered[0], cudaDevAttrMaxTexture2DLayeredWidth),
		F(maxTexture2DLayered[1], cudaDevAttrMaxTexture2DLayeredHeight),
		F(maxTexture2DLayered[2], cudaDevAttrMaxTexture2DLayeredLayers),
		F(maxTextureCubemapLayered[0], cudaDevAttrMaxTextureCubemapLayeredWidth),
		F(maxTextureCubemapLayered[1], cudaDevAttrMaxTextureCubemapLayeredLayers),
		F(maxSurface1D, cudaDevAttrMaxSurface1DWidth),
		F(maxSurface2D[0], cudaDevAttrMaxSurface2DWidth),
		F(maxSurface2D[1], cudaDevAttrMaxSurface2DHeight),
		F(maxSurface3D[0], cudaDevAttrMaxSurface3DWidth),
		F(maxSurface3D[1], cudaDevAttrMaxSurface3DHeight),
		F(maxSurface3D[2], cudaDevAttrMaxSurface3DDepth),
		F(maxSurface1DLayered[0], cudaDevAttrMaxSurface1DLayeredWidth),
		F(maxSurface1DLayered[1], cudaDevAttrMaxSurface1DLayeredLayers),
		F(maxSurface2DLayered[0], cudaDevAttrMaxSurface2DLayeredWidth),
		F(maxSurface2DLayered[1], cudaDevAttrMaxSurface2DLayeredHeight),
		F(maxSurface2DLayered[2], cudaDevAttrMaxSurface2DLayeredLayers),
		F(maxSurfaceCubemap, cudaDevAttrMaxSurfaceCubemapWidth),
		F(maxSurfaceCubemapLayered[0], cudaDevAttrMaxSurfaceCubemapLayeredWidth),
		F(maxSurfaceCubemapLayered[1], cudaDevAttrMaxSurfaceCubemapLayeredLayers),
		W(surfaceAlignment, cudaDevAttrSurfaceAlignment),
		F(concurrentKernels, cudaDevAttrConcurrentKernels),
		F(ECCEnabled, cudaDevAttrEccEnabled),
		F(pciBusID, cudaDevAttrPciBusId),
		F(pciDeviceID, cudaDevAttrPciDeviceId),
		F(pciDomainID, cudaDevAttrPciDomainId),
		F(tccDriver, cudaDevAttrTccDriver),
		F(asyncEngineCount, cudaDevAttrAsyncEngineCount),
		F(unifiedAddressing, cudaDevAttrUnifiedAddressing),
		F(memoryBusWidth, cudaDevAttrGlobalMemoryBusWidth),
		F(l2CacheSize, cudaDevAttrL2CacheSize),
		F(persistingL2CacheMaxSize, cudaDevAttrMaxPersistingL2CacheSize),
		F(maxThreadsPerMultiProcessor, cudaDevAttrMaxThreadsPerMultiProcessor),
		F(streamPrioritiesSupported, cudaDevAttrStreamPrioritiesSupported),
		F(globalL1CacheSupported, cudaDevAttrGlobalL1CacheSupported),
		F(localL1CacheSupported, cudaDevAttrLocalL1CacheSupported),
		W(sharedMemPerMultiprocessor, cudaDevAttrMaxSharedMemoryPerMultiprocessor),
		F(regsPerMultiprocessor, cudaDevAttrMaxRegistersPerMultiprocessor),
		F(managedMemory, cudaDevAttrManagedMemory),
		F(isMultiGpuBoard, cudaDevAttrIsMultiGpuBoard),
		F(multiGpuBoardGroupID, cudaDevAttrMultiGpuBoardGroupID),
		F(hostNativeAtomicSupported, cudaDevAttrHostNativeAtomicSupported),
		F(pageableMemoryAccess, cudaDevAttrPageableMemoryAccess),
		F(concurrentManagedAccess, cudaDevAttrConcurrentManagedAccess),
		F(computePreemptionSupported, cudaDevAttrComputePreemptionSupported),
		F(canUseHostPointerForRegisteredMem, cudaDevAttrCanUseHostPointerForRegisteredMem),
		F(cooperativeLaunch, cudaDevAttrCooperativeLaunch),
		W(sharedMemPerBlockOptin, cudaDevAttrMaxSharedMemoryPerBlockOptin),
		F(pageableMemoryAccessUsesHostPageTables, cudaDevAttrPageableMemoryAccessUsesHostPageTables),
		F(directManagedMemAccessFromHost, cudaDevAttrDirectManagedMemAccessFromHost),
		F(maxBlocksPerMultiProcessor, cudaDevAttrMaxBlocksPerMultiprocessor),
		F(accessPolicyMaxWindowSize, cudaDevAttrMaxAccessPolicyWindowSize),
		W(reservedSharedMemPerBlock, cudaDevAttrReservedSharedMemoryPerBlock),
		F(hostRegisterSupported, cudaDevAttrHostRegisterSupported),
		F(sparseCudaArraySupported, cudaDevAttrSparseCudaArraySupported),
		F(hostRegisterReadOnlySupported, cudaDevAttrHostRegisterReadOnlySupported),
		F(timelineSemaphoreInteropSupported, cudaDevAttrTimelineSemaphoreInteropSupported),
		F(memoryPoolsSupported, cudaDevAttrMemoryPoolsSupported),
		F(gpuDirectRDMASupported, cudaDevAttrGPUDirectRDMASupported),
		F(gpuDirectRDMAFlushWritesOptions, cudaDevAttrGPUDirectRDMAFlushWritesOptions),
		F(gpuDirectRDMAWritesOrdering, cudaDevAttrGPUDirectRDMAWritesOrdering),
		F(memoryPoolSupportedHandleTypes, cudaDevAttrMemoryPoolSupportedHandleTypes),
		F(deferredMappingCudaArraySupported, cudaDevAttrDeferredMappingCudaArraySupported),
		F(ipcEventSupported, cudaDevAttrIpcEventSupport),
		F(clusterLaunch, cudaDevAttrClusterLaunch),
		F(deviceNumaConfig, cudaDevAttrNumaConfig),
		F(deviceNumaId, cudaDevAttrNumaId),
		F(mpsEnabled, cudaDevAttrMpsEnabled),
		F(hostNumaId, cudaDevAttrHostNumaId),
		F(gpuPciDeviceID, cudaDevAttrGpuPciDeviceId),
		F(gpuPciSubsystemID, cudaDevAttrGpuPciSubsystemId),
		F(hostNumaMultinodeIpcSupported, cudaDevAttrHostNumaMultinodeIpcSupported),
#undef F
#undef W
	};
	cudaError_t e;
	CUresult r;
	size_t total;

	if (!p)
		return rt_ret(cudaErrorInvalidValue);
	e = check_device(dev);
	if (e)
		return rt_ret(e);
	RT_NEED(cuDeviceGetAttribute);
	RT_NEED(cuDeviceGetName);
	RT_NEED(cuDeviceTotalMem);
	memset(p, 0, sizeof(*p));
	r = drv.cuDeviceGetName(p->name, (int)sizeof(p->name), dev);
	if (!r)
		r = drv.cuDeviceTotalMem(&total, dev);
	if (!r && drv.cuDeviceGetUuid)
		r = drv.cuDeviceGetUuid(&p->uuid, dev);
	for (size_t i = 0; !r && i < sizeof(map) / sizeof(map[0]); i++) {
		int v;

		r = attr(&v, map[i].a, dev);
		if (map[i].wide)
			*(size_t *)(void *)((char *)p + map[i].off) = (size_t)(unsigned int)v;
		else
			*(int *)(void *)((char *)p + map[i].off) = v;
	}
	if (r) {
		memset(p, 0, sizeof(*p));
		return rt_ret_cu(r);
	}
	p->totalGlobalMem = total;
	/* No attribute holds it; an H100 (sm_90) answers 1. */
	p->unifiedFunctionPointers = p->major >= 9;
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
	cudaError_t e;

	if (!pciBusId || len <= 0)
		return rt_ret(cudaErrorInvalidValue);
	e = check_device(device);
	if (e)
		return rt_ret(e);
	RT_NEED(cuDeviceGetPCIBusId);
	return rt_ret_cu(drv.cuDeviceGetPCIBusId(pciBusId, len, device));
}

RT_EXPORT cudaError_t cudaDeviceGetByPCIBusId(int *device, const char *pciBusId)
{
	cudaError_t e;
	CUdevice dev;
	CUresult r;

	if (!device || !pciBusId)
		return rt_ret(cudaErrorInvalidValue);
	e = rt_init();
	if (e)
		return rt_ret(e);
	RT_NEED(cuDeviceGetByPCIBusId);
	r = drv.cuDeviceGetByPCIBusId(&dev, pciBusId);
	if (r)
		return rt_ret(r == CUDA_ERROR_INVALID_DEVICE ? cudaErrorInvalidDevice :
			      rt_error(r));
	*device = dev;
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	RT_CTX();
	RT_NEED(cuCtxSynchronize);
	return rt_ret_cu(drv.cuCtxSynchronize(NULL));
}

/*
 * Frees everything of the current device's primary context (its memory,
 * streams, events); the next call that needs the device retains it again.
 */
RT_EXPORT cudaError_t cudaDeviceReset(void)
{
	int dev = current_device;
	CUresult r = CUDA_SUCCESS;
	cudaError_t e = rt_init();

	if (e)
		return rt_ret(e);
	RT_NEED(cuDevicePrimaryCtxReset);
	RT_NEED(cuDevicePrimaryCtxRelease);
	/*
	 * Under the lock: a first call of another thread must not retain the
	 * context the reset is about to destroy and then take it as live.
	 * The reset waits for the queued work; CUDA says no other thread may
	 * use the device meanwhile, and a host function may not call CUDA.
	 */
	pthread_mutex_lock(&primary_lock);
	if (retained[dev]) {
		r = drv.cuDevicePrimaryCtxReset(dev);
		if (!r)
			r = drv.cuDevicePrimaryCtxRelease(dev);
		retained[dev] = false;
	}
	pthread_mutex_unlock(&primary_lock);
	return rt_ret_cu(r);
}

RT_EXPORT cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
	if (!free_bytes || !total)
		return rt_ret(cudaErrorInvalidValue);
	RT_CTX();
	RT_NEED(cuMemGetInfo);
	return rt_ret_cu(drv.cuMemGetInfo(free_bytes, total));
}
