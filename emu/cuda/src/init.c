// SPDX-License-Identifier: MIT
/*
 * init.c - cuInit, versions, error strings and cuGetProcAddress
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda_emu_internal.h"
#include "nvp2p_emu.h"

struct emu_state emu = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1,
	.next_buffer_id = 1,
};

/* Marker that packaging/install.sh looks for: this libcuda is ours. */
__attribute__((used)) static const char cuda_id[] =
	"GDIRECT_EMU_LIB: libcuda.so.1 of gdirect's emulated GPU";

/*
 * CUDA cannot be used in a child after fork: the GPU VA space belongs to the
 * parent (our control device refuses other processes, too).
 */
static void emu_atfork_child(void)
{
	if (emu.initialized)
		emu.forked = true;
	pthread_mutex_init(&emu.lock, NULL);
}

CUresult emu_check_init(void)
{
	if (!emu.initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (emu.forked)
		return CUDA_ERROR_NOT_INITIALIZED;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuInit(unsigned int flags)
{
	struct nvp2p_emu_info info;
	CUresult ret = CUDA_SUCCESS;
	void *va;

	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&emu.lock);
	if (emu.initialized)
		goto out;
	/* a value we do not know is an error, never a silent default */
	emu.place = emu_placement_parse(getenv("CUDA_EMU_PLACEMENT"));
	if (!emu.place) {
		fprintf(stderr, "cuda_emu: CUDA_EMU_PLACEMENT=%s: not \"64k\" or \"h100\"\n",
			getenv("CUDA_EMU_PLACEMENT"));
		ret = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	emu.fd = open(NVP2P_EMU_DEVICE, O_RDWR | O_CLOEXEC);
	if (emu.fd < 0) {
		ret = CUDA_ERROR_NO_DEVICE;
		goto out;
	}
	if (ioctl(emu.fd, NVP2P_EMU_IOC_INFO, &info) ||
	    info.abi_version != NVP2P_EMU_ABI_VERSION) {
		close(emu.fd);
		emu.fd = -1;
		ret = CUDA_ERROR_NO_DEVICE;
		goto out;
	}
	/*
	 * Reserve 4x the GPU memory of VA, at least 1 GiB, 2 MiB-aligned as
	 * the driver's (so placement classes do not depend on where mmap put
	 * it).
	 */
	emu.va_size = info.mem_size * 4 < (1ULL << 30) ? 1ULL << 30 : info.mem_size * 4;
	va = mmap(NULL, emu.va_size + VA_ALIGN, PROT_NONE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (va == MAP_FAILED) {
		close(emu.fd);
		emu.fd = -1;
		ret = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	emu.va_base = ((uint64_t)(uintptr_t)va + VA_ALIGN - 1) & ~(uint64_t)(VA_ALIGN - 1);
	emu.mem_size = info.mem_size;
	emu.pci_domain = info.pci_domain;
	emu.pci_bus = info.pci_bus;
	emu.pci_devfn = info.pci_devfn;
	emu.caps = info.caps;
	emu.cuda_version = emu_cuda_version_of(info.cuda_version);
	memcpy(emu.uuid, info.gpu_uuid, sizeof(emu.uuid));
	emu.primary.dev = 0;
	emu.primary.primary = true;
	pthread_atfork(NULL, NULL, emu_atfork_child);
	emu.initialized = true;
out:
	pthread_mutex_unlock(&emu.lock);
	return ret;
}

int emu_cuda_version_of(uint32_t knob)
{
	return knob == NVP2P_EMU_CUDA_13_3 ? NVP2P_EMU_CUDA_13_3 : NVP2P_EMU_CUDA_13_0;
}

/*
 * The version read in cuInit; before it (the driver answers without
 * cuInit), the knob's value now, and CUDA_VERSION without the device.
 */
EMU_EXPORT CUresult cuDriverGetVersion(int *version)
{
	struct nvp2p_emu_info info = { 0 };
	bool initialized;
	int v = CUDA_VERSION, fd;

	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&emu.lock);
	initialized = emu.initialized;
	if (initialized)
		v = emu.cuda_version;
	pthread_mutex_unlock(&emu.lock);
	if (!initialized) {
		fd = open(NVP2P_EMU_DEVICE, O_RDWR | O_CLOEXEC);
		if (fd >= 0 && ioctl(fd, NVP2P_EMU_IOC_INFO, &info) == 0 &&
		    info.abi_version == NVP2P_EMU_ABI_VERSION)
			v = emu_cuda_version_of(info.cuda_version);
		if (fd >= 0)
			close(fd);
	}
	*version = v;
	return CUDA_SUCCESS;
}

static const struct {
	CUresult code;
	const char *name;
	const char *text;
} errors[] = {
	{ CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
	{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
	{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
	{ CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down" },
	{ CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
	{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid" },
	{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
	{ CUDA_ERROR_MAP_FAILED, "CUDA_ERROR_MAP_FAILED", "mapping of buffer object failed" },
	{ CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", "context already in use" },
	{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
	{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
	{ CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready" },
	{ CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered" },
	{ CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed" },
	{ CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "part or all of the requested memory range is already mapped" },
	{ CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "pointer does not correspond to a registered memory region" },
	{ CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted" },
	{ CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
	{ CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

static int error_index(CUresult e)
{
	for (unsigned int i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == e)
			return (int)i;
	return -1;
}

EMU_EXPORT CUresult cuGetErrorName(CUresult error, const char **str)
{
	int i = error_index(error);

	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	*str = i < 0 ? NULL : errors[i].name;
	return i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuGetErrorString(CUresult error, const char **str)
{
	int i = error_index(error);

	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	*str = i < 0 ? NULL : errors[i].text;
	return i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

/*
 * cuGetProcAddress resolves a base name ("cuMemAlloc") to the entry point a
 * caller built for cudaVersion expects: the variant with the highest
 * "since" not above it, and its per-thread-default-stream twin when asked
 * for.  Names are NVIDIA's; the 32-bit entry points from before CUDA 3.2
 * are not emulated, so a caller that old gets VERSION_NOT_SUFFICIENT.
 */
#define P(n, v, f) { n, v, (void *)f, NULL }
#define PT(n, v, f, t) { n, v, (void *)f, (void *)t }
#undef cuCtxDestroy
#undef cuCtxPushCurrent
#undef cuCtxPopCurrent
#undef cuDevicePrimaryCtxRelease
#undef cuStreamDestroy
#undef cuEventDestroy
#undef cuEventElapsedTime
#undef cuDeviceGetUuid
#undef cuGetProcAddress
#undef cuIpcOpenMemHandle
#undef cuStreamBatchMemOp
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
			  cuuint64_t flags);
CUresult cuCtxDestroy(CUcontext ctx);
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult cuCtxPushCurrent(CUcontext ctx);
CUresult cuCtxPopCurrent(CUcontext *pctx);
CUresult cuDevicePrimaryCtxRelease(CUdevice dev);
CUresult cuStreamDestroy(CUstream s);
CUresult cuEventDestroy(CUevent e);
CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle h,
			    unsigned int flags);
CUresult cuStreamBatchMemOp(CUstream s, unsigned int count,
			    CUstreamBatchMemOpParams *ops, unsigned int flags);
extern __typeof__(cuStreamBatchMemOp) cuStreamBatchMemOp_ptsz;
extern __typeof__(cuStreamBatchMemOp_v2) cuStreamBatchMemOp_v2_ptsz;
CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end);
extern __typeof__(cuDeviceGetUuid_v2) cuDeviceGetUuid;
extern __typeof__(cuMemcpy) cuMemcpy_ptds;
extern __typeof__(cuMemcpyAsync) cuMemcpyAsync_ptsz;
extern __typeof__(cuMemcpyHtoD_v2) cuMemcpyHtoD_v2_ptds;
extern __typeof__(cuMemcpyDtoH_v2) cuMemcpyDtoH_v2_ptds;
extern __typeof__(cuMemcpyDtoD_v2) cuMemcpyDtoD_v2_ptds;
extern __typeof__(cuMemcpyHtoDAsync_v2) cuMemcpyHtoDAsync_v2_ptsz;
extern __typeof__(cuMemcpyDtoHAsync_v2) cuMemcpyDtoHAsync_v2_ptsz;
extern __typeof__(cuMemcpyDtoDAsync_v2) cuMemcpyDtoDAsync_v2_ptsz;
extern __typeof__(cuMemsetD8_v2) cuMemsetD8_v2_ptds;
extern __typeof__(cuMemsetD16_v2) cuMemsetD16_v2_ptds;
extern __typeof__(cuMemsetD32_v2) cuMemsetD32_v2_ptds;
extern __typeof__(cuMemsetD8Async) cuMemsetD8Async_ptsz;
extern __typeof__(cuMemsetD16Async) cuMemsetD16Async_ptsz;
extern __typeof__(cuMemsetD32Async) cuMemsetD32Async_ptsz;
extern __typeof__(cuStreamQuery) cuStreamQuery_ptsz;
extern __typeof__(cuStreamSynchronize) cuStreamSynchronize_ptsz;
extern __typeof__(cuStreamGetFlags) cuStreamGetFlags_ptsz;
extern __typeof__(cuStreamGetCtx) cuStreamGetCtx_ptsz;
extern __typeof__(cuStreamWaitEvent) cuStreamWaitEvent_ptsz;
extern __typeof__(cuEventRecord) cuEventRecord_ptsz;
extern __typeof__(cuLaunchHostFunc) cuLaunchHostFunc_ptsz;
extern __typeof__(cuStreamAddCallback) cuStreamAddCallback_ptsz;
extern __typeof__(cuLaunchKernel) cuLaunchKernel_ptsz;
extern __typeof__(cuStreamWaitValue32_v2) cuStreamWaitValue32_v2_ptsz;
extern __typeof__(cuStreamWaitValue64_v2) cuStreamWaitValue64_v2_ptsz;
extern __typeof__(cuStreamWriteValue32_v2) cuStreamWriteValue32_v2_ptsz;
extern __typeof__(cuStreamWriteValue64_v2) cuStreamWriteValue64_v2_ptsz;
static const struct {
	const char *name;
	int since;		/* first CUDA version of this variant */
	void *fn;
	void *ptds;		/* the per-thread default stream variant */
} procs[] = {
	P("cuInit", 2000, cuInit),
	P("cuDriverGetVersion", 2020, cuDriverGetVersion),
	P("cuGetErrorName", 6000, cuGetErrorName),
	P("cuGetErrorString", 6000, cuGetErrorString),
	P("cuGetProcAddress", 11030, cuGetProcAddress),
	P("cuGetProcAddress", 12000, cuGetProcAddress_v2),
	P("cuDeviceGet", 2000, cuDeviceGet),
	P("cuDeviceGetCount", 2000, cuDeviceGetCount),
	P("cuDeviceGetName", 2000, cuDeviceGetName),
	P("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute),
	P("cuDeviceGetUuid", 9020, cuDeviceGetUuid),
	P("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2),
	P("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
	P("cuDeviceGetPCIBusId", 4010, cuDeviceGetPCIBusId),
	P("cuDeviceGetByPCIBusId", 4010, cuDeviceGetByPCIBusId),
	P("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
	P("cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState),
	P("cuDevicePrimaryCtxSetFlags", 11000, cuDevicePrimaryCtxSetFlags_v2),
	P("cuDevicePrimaryCtxReset", 11000, cuDevicePrimaryCtxReset_v2),
	P("cuCtxGetApiVersion", 3020, cuCtxGetApiVersion),
	P("cuCtxGetFlags", 7000, cuCtxGetFlags),
	P("cuMemHostGetFlags", 2030, cuMemHostGetFlags),
	P("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease),
	P("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
	P("cuCtxCreate", 3020, cuCtxCreate_v2),
	P("cuCtxCreate", 12050, cuCtxCreate_v4),
	P("cuCtxDestroy", 2000, cuCtxDestroy),
	P("cuCtxDestroy", 4000, cuCtxDestroy_v2),
	P("cuCtxPushCurrent", 2000, cuCtxPushCurrent),
	P("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2),
	P("cuCtxPopCurrent", 2000, cuCtxPopCurrent),
	P("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
	P("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
	P("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
	P("cuCtxGetDevice", 2000, cuCtxGetDevice),
	P("cuCtxGetDevice", 13000, cuCtxGetDevice_v2),
	P("cuCtxGetId", 12000, cuCtxGetId),
	P("cuCtxSynchronize", 2000, cuCtxSynchronize),
	P("cuMemAlloc", 3020, cuMemAlloc_v2),
	P("cuMemFree", 3020, cuMemFree_v2),
	P("cuMemGetInfo", 3020, cuMemGetInfo_v2),
	P("cuMemAllocPitch", 3020, cuMemAllocPitch_v2),
	P("cuMemGetAddressRange", 3020, cuMemGetAddressRange_v2),
	P("cuMemAllocHost", 3020, cuMemAllocHost_v2),
	P("cuMemHostAlloc", 2020, cuMemHostAlloc),
	P("cuMemFreeHost", 2000, cuMemFreeHost),
	P("cuMemHostGetDevicePointer", 3020, cuMemHostGetDevicePointer_v2),
	P("cuMemHostRegister", 6050, cuMemHostRegister_v2),
	P("cuMemHostUnregister", 4000, cuMemHostUnregister),
	PT("cuMemcpy", 4000, cuMemcpy, cuMemcpy_ptds),
	PT("cuMemcpyAsync", 4000, cuMemcpyAsync, cuMemcpyAsync_ptsz),
	PT("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds),
	PT("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds),
	PT("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds),
	PT("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz),
	PT("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz),
	PT("cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz),
	PT("cuMemsetD8", 3020, cuMemsetD8_v2, cuMemsetD8_v2_ptds),
	PT("cuMemsetD16", 3020, cuMemsetD16_v2, cuMemsetD16_v2_ptds),
	PT("cuMemsetD32", 3020, cuMemsetD32_v2, cuMemsetD32_v2_ptds),
	PT("cuMemsetD8Async", 3020, cuMemsetD8Async, cuMemsetD8Async_ptsz),
	PT("cuMemsetD16Async", 3020, cuMemsetD16Async, cuMemsetD16Async_ptsz),
	PT("cuMemsetD32Async", 3020, cuMemsetD32Async, cuMemsetD32Async_ptsz),
	P("cuStreamCreate", 2000, cuStreamCreate),
	P("cuStreamCreateWithPriority", 5050, cuStreamCreateWithPriority),
	P("cuStreamDestroy", 2000, cuStreamDestroy),
	P("cuStreamDestroy", 4000, cuStreamDestroy_v2),
	PT("cuStreamQuery", 2000, cuStreamQuery, cuStreamQuery_ptsz),
	PT("cuStreamSynchronize", 2000, cuStreamSynchronize, cuStreamSynchronize_ptsz),
	PT("cuStreamGetFlags", 5050, cuStreamGetFlags, cuStreamGetFlags_ptsz),
	PT("cuStreamGetCtx", 9020, cuStreamGetCtx, cuStreamGetCtx_ptsz),
	PT("cuStreamWaitEvent", 3020, cuStreamWaitEvent, cuStreamWaitEvent_ptsz),
	PT("cuStreamWaitValue32", 11070, cuStreamWaitValue32_v2, cuStreamWaitValue32_v2_ptsz),
	PT("cuStreamWaitValue64", 11070, cuStreamWaitValue64_v2, cuStreamWaitValue64_v2_ptsz),
	PT("cuStreamWriteValue32", 11070, cuStreamWriteValue32_v2, cuStreamWriteValue32_v2_ptsz),
	PT("cuStreamWriteValue64", 11070, cuStreamWriteValue64_v2, cuStreamWriteValue64_v2_ptsz),
	PT("cuStreamBatchMemOp", 8000, cuStreamBatchMemOp, cuStreamBatchMemOp_ptsz),
	PT("cuStreamBatchMemOp", 11070, cuStreamBatchMemOp_v2, cuStreamBatchMemOp_v2_ptsz),
	PT("cuLaunchHostFunc", 10000, cuLaunchHostFunc, cuLaunchHostFunc_ptsz),
	PT("cuStreamAddCallback", 5000, cuStreamAddCallback, cuStreamAddCallback_ptsz),
	P("cuMemAllocManaged", 6000, cuMemAllocManaged),
	P("cuEventCreate", 2000, cuEventCreate),
	PT("cuEventRecord", 2000, cuEventRecord, cuEventRecord_ptsz),
	P("cuEventQuery", 2000, cuEventQuery),
	P("cuEventSynchronize", 2000, cuEventSynchronize),
	P("cuEventElapsedTime", 2000, cuEventElapsedTime),
	P("cuEventElapsedTime", 12080, cuEventElapsedTime_v2),
	P("cuEventDestroy", 2000, cuEventDestroy),
	P("cuEventDestroy", 4000, cuEventDestroy_v2),
	P("cuModuleLoad", 2000, cuModuleLoad),
	P("cuModuleLoadData", 2000, cuModuleLoadData),
	P("cuModuleGetFunction", 2000, cuModuleGetFunction),
	PT("cuLaunchKernel", 4000, cuLaunchKernel, cuLaunchKernel_ptsz),
	P("cuMemGetAllocationGranularity", 10020, cuMemGetAllocationGranularity),
	P("cuMemCreate", 10020, cuMemCreate),
	P("cuMemRelease", 10020, cuMemRelease),
	P("cuMemAddressReserve", 10020, cuMemAddressReserve),
	P("cuMemAddressFree", 10020, cuMemAddressFree),
	P("cuMemMap", 10020, cuMemMap),
	P("cuMemUnmap", 10020, cuMemUnmap),
	P("cuMemSetAccess", 10020, cuMemSetAccess),
	P("cuMemGetAccess", 10020, cuMemGetAccess),
	P("cuMemRetainAllocationHandle", 11000, cuMemRetainAllocationHandle),
	P("cuMemGetAllocationPropertiesFromHandle", 10020, cuMemGetAllocationPropertiesFromHandle),
	P("cuMemExportToShareableHandle", 10020, cuMemExportToShareableHandle),
	P("cuMemImportFromShareableHandle", 10020, cuMemImportFromShareableHandle),
	P("cuMemRangeGetAttribute", 8000, cuMemRangeGetAttribute),
	P("cuIpcGetMemHandle", 4010, cuIpcGetMemHandle),
	P("cuIpcOpenMemHandle", 4010, cuIpcOpenMemHandle),
	P("cuIpcOpenMemHandle", 11000, cuIpcOpenMemHandle_v2),
	P("cuIpcCloseMemHandle", 4010, cuIpcCloseMemHandle),
	P("cuIpcGetEventHandle", 4010, cuIpcGetEventHandle),
	P("cuIpcOpenEventHandle", 4010, cuIpcOpenEventHandle),
	P("cuMemGetHandleForAddressRange", 11070, cuMemGetHandleForAddressRange),
	P("cuPointerGetAttribute", 4000, cuPointerGetAttribute),
	P("cuPointerGetAttributes", 7000, cuPointerGetAttributes),
	P("cuPointerSetAttribute", 6000, cuPointerSetAttribute),
};

/*
 * As the driver: an unknown name or too old a version is CUDA_SUCCESS with
 * the reason in *status (CUDA_ERROR_NOT_FOUND when there is no status).
 */
EMU_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn,
					int cudaVersion, cuuint64_t flags,
					CUdriverProcAddressQueryResult *status)
{
	bool found = false;
	int best = -1;

	if (!symbol || !pfn || flags > (CU_GET_PROC_ADDRESS_LEGACY_STREAM |
					CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	for (unsigned int i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		if (strcmp(procs[i].name, symbol))
			continue;
		found = true;
		if (procs[i].since <= cudaVersion &&
		    (best < 0 || procs[i].since > procs[best].since))
			best = (int)i;
	}
	if (best >= 0)
		*pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) &&
		       procs[best].ptds ? procs[best].ptds : procs[best].fn;
	if (status)
		*status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS :
			  found ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT :
				  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return *pfn || status ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/*
 * The unversioned name, which NVIDIA's library exports too: the CUDA 11.3
 * entry point, without the status argument.
 */
EMU_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn,
				     int cudaVersion, cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}
