// SPDX-License-Identifier: MIT
/*
 * ctx.c - the device and its contexts
 *
 * One device, ordinal 0: the ivshmem "GPU".  Contexts own the memory
 * allocated in them; destroying one (or releasing the primary context for
 * the last time) frees that memory, which revokes third-party pins as
 * cuCtxDestroy does with the NVIDIA driver.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

__thread struct CUctx_st *emu_current_ctx;

EMU_EXPORT CUresult cuDeviceGetCount(int *count)
{
	CUresult r = emu_check_init();

	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	*count = 1;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	CUresult r = emu_check_init();

	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = 0;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	CUresult r = emu_check_init();

	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "gdirect emulated GPU (ivshmem %04x:%02x:%02x.%x)",
		 emu.pci_domain, emu.pci_bus, emu.pci_devfn >> 3, emu.pci_devfn & 7);
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib,
					 CUdevice dev)
{
	CUresult r = emu_check_init();

	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *pi = 32; break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 132; break;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *pi = (int)emu.pci_bus; break;
	case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *pi = (int)(emu.pci_devfn >> 3); break;
	case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *pi = (int)emu.pci_domain; break;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *pi = 1; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; break;
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: *pi = 0; break;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: *pi = 1; break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUresult r = emu_check_init();

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&emu.lock);
	emu.primary_refs++;
	emu.primary.destroyed = false;
	pthread_mutex_unlock(&emu.lock);
	*pctx = &emu.primary;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	CUresult r = emu_check_init();

	if (r)
		return r;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&emu.lock);
	if (!emu.primary_refs) {
		pthread_mutex_unlock(&emu.lock);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	/* The last release resets the primary context: its memory goes. */
	if (--emu.primary_refs == 0) {
		emu_free_ctx_allocs(&emu.primary);
		emu.primary.destroyed = true;
	}
	pthread_mutex_unlock(&emu.lock);
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params,
				   unsigned int flags, CUdevice dev)
{
	CUresult r = emu_check_init();
	struct CUctx_st *ctx;

	if (!pctx || params || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ctx->dev = dev;
	emu_current_ctx = ctx;
	*pctx = ctx;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	CUresult r = emu_check_init();

	if (r)
		return r;
	if (!ctx || ctx->primary)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&emu.lock);
	emu_free_ctx_allocs(ctx);
	pthread_mutex_unlock(&emu.lock);
	if (emu_current_ctx == ctx)
		emu_current_ctx = NULL;
	free(ctx);
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
	CUresult r = emu_check_init();

	if (r)
		return r;
	emu_current_ctx = ctx;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	CUresult r = emu_check_init();

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	*pctx = emu_current_ctx;
	return CUDA_SUCCESS;
}

/* Every operation of ours completes before it returns. */
EMU_EXPORT CUresult cuCtxSynchronize(void)
{
	CUresult r = emu_check_init();

	if (r)
		return r;
	return emu_current_ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
