// SPDX-License-Identifier: MIT
/*
 * init.c - cuInit, versions, error strings and cuGetProcAddress
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "nvp2p_emu.h"

struct emu_state emu = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1,
	.next_buffer_id = 1,
};

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
	/* Reserve 4x the GPU memory of VA, at least 1 GiB, 64 KiB-aligned. */
	emu.va_size = info.mem_size * 4 < (1ULL << 30) ? 1ULL << 30 : info.mem_size * 4;
	va = mmap(NULL, emu.va_size + CHUNK_PAGE, PROT_NONE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (va == MAP_FAILED) {
		close(emu.fd);
		emu.fd = -1;
		ret = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	emu.va_base = ((uint64_t)(uintptr_t)va + CHUNK_PAGE - 1) & ~(uint64_t)(CHUNK_PAGE - 1);
	emu.mem_size = info.mem_size;
	emu.pci_domain = info.pci_domain;
	emu.pci_bus = info.pci_bus;
	emu.pci_devfn = info.pci_devfn;
	emu.primary.dev = 0;
	emu.primary.primary = true;
	pthread_atfork(NULL, NULL, emu_atfork_child);
	emu.initialized = true;
out:
	pthread_mutex_unlock(&emu.lock);
	return ret;
}

EMU_EXPORT CUresult cuDriverGetVersion(int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = CUDA_VERSION;
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
	{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
	{ CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", "context already in use" },
	{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
	{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
	{ CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered" },
	{ CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed" },
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
 * caller built for cudaVersion expects: the _v2 variants exist since 3.2.
 */
#define PROC(n, v, f) { n, v, (void *)f }
static const struct {
	const char *name;
	int since;		/* first CUDA version of this variant */
	void *fn;
} procs[] = {
	PROC("cuInit", 2000, cuInit),
	PROC("cuDriverGetVersion", 2020, cuDriverGetVersion),
	PROC("cuGetErrorName", 6000, cuGetErrorName),
	PROC("cuGetErrorString", 6000, cuGetErrorString),
	PROC("cuGetProcAddress", 12000, cuGetProcAddress_v2),
	PROC("cuDeviceGet", 2000, cuDeviceGet),
	PROC("cuDeviceGetCount", 2000, cuDeviceGetCount),
	PROC("cuDeviceGetName", 2000, cuDeviceGetName),
	PROC("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute),
	PROC("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
	PROC("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
	PROC("cuCtxCreate", 12050, cuCtxCreate_v4),
	PROC("cuCtxDestroy", 4000, cuCtxDestroy_v2),
	PROC("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
	PROC("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
	PROC("cuCtxSynchronize", 2000, cuCtxSynchronize),
	PROC("cuMemAlloc", 3020, cuMemAlloc_v2),
	PROC("cuMemFree", 3020, cuMemFree_v2),
	PROC("cuMemGetAddressRange", 3020, cuMemGetAddressRange_v2),
	PROC("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2),
	PROC("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2),
	PROC("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2),
	PROC("cuMemsetD8", 3020, cuMemsetD8_v2),
	PROC("cuPointerGetAttribute", 4000, cuPointerGetAttribute),
	PROC("cuPointerGetAttributes", 7000, cuPointerGetAttributes),
	PROC("cuPointerSetAttribute", 6000, cuPointerSetAttribute),
};

EMU_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn,
					int cudaVersion, cuuint64_t flags,
					CUdriverProcAddressQueryResult *status)
{
	bool found = false;

	if (!symbol || !pfn || flags > (CU_GET_PROC_ADDRESS_LEGACY_STREAM |
					CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	for (unsigned int i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		if (strcmp(procs[i].name, symbol))
			continue;
		found = true;
		if (cudaVersion >= procs[i].since) {
			*pfn = procs[i].fn;
			break;
		}
	}
	if (status)
		*status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS :
			  found ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT :
				  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
