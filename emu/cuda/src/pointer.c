// SPDX-License-Identifier: MIT
/*
 * pointer.c - cuPointerGetAttribute(s) and cuPointerSetAttribute
 *
 * What a real H200 with driver 580 shows, reproduced: a freed pointer's
 * BUFFER_ID query is CUDA_ERROR_INVALID_VALUE; cuPointerGetAttributes does
 * not fail on a host pointer but reports memory type 0; P2P tokens read as
 * 0 (and, as in guide 11.7, retrieving them turns on SYNC_MEMOPS for the
 * allocation).  Setting SYNC_MEMOPS succeeds on cuMemAlloc, IPC-opened and
 * page-locked host memory, fails with CUDA_ERROR_NOT_SUPPORTED on a VMM
 * mapping (with or without gpuDirectRDMACapable; the attribute then reads
 * 0) and with CUDA_ERROR_INVALID_VALUE on memory the driver does not know
 * (malloc's).  IS_GPU_DIRECT_RDMA_CAPABLE reads 1 for cuMemAlloc memory
 * and for VMM memory created gpuDirectRDMACapable, 0 for the rest.
 */
#include <string.h>

#include "cuda_emu_internal.h"

/* One attribute of page-locked host memory (host.c). */
static CUresult host_attr(struct hostmem *h, CUpointer_attribute attr,
			  void *data, CUdeviceptr ptr)
{
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = h->ctx;
		break;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data = CU_MEMORYTYPE_HOST;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		*(CUdeviceptr *)data = ptr;
		break;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		*(void **)data = (void *)(uintptr_t)ptr;
		break;
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
		*(unsigned int *)data = 0;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
	case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
		*(unsigned long long *)data = h->buffer_id;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = h->ctx ? h->ctx->dev : 0;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
	case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
		*(CUdeviceptr *)data = h->va;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = h->size;
		break;
	case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
		*(size_t *)data = h->map_size;
		break;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(unsigned int *)data = 1;
		break;
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
		*(unsigned long long *)data = 0;
		break;
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:	/* not from a pool */
		*(void **)data = NULL;
		break;
	case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
		*(unsigned int *)data = 3;	/* CU_MEM_ACCESS_FLAGS_PROT_READWRITE */
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

/* One attribute of a known allocation, or of an unknown pointer (a NULL). */
static CUresult get_attr(struct alloc *a, CUpointer_attribute attr,
			 void *data, CUdeviceptr ptr, bool lenient)
{
	if (!a) {
		struct hostmem *h = emu_check_init() ? NULL : emu_find_hostmem(ptr);

		/* page-locked host memory is known to both calls; an attribute
		 * it has not gets the plural call's default below */
		if (h) {
			CUresult r = host_attr(h, attr, data, ptr);

			if (r == CUDA_SUCCESS || !lenient)
				return r;
		} else if (!lenient) {
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = a ? a->ctx : NULL;
		break;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data = a ? CU_MEMORYTYPE_DEVICE : 0;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		if (a && a->vmm && !a->access && !lenient)
			return CUDA_ERROR_INVALID_VALUE;	/* no access set */
		*(CUdeviceptr *)data = a ? ptr : 0;
		break;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (a && !lenient)
			return CUDA_ERROR_INVALID_VALUE; /* not CPU-mapped */
		*(void **)data = NULL;
		break;
	case CU_POINTER_ATTRIBUTE_P2P_TOKENS: {
		CUDA_POINTER_ATTRIBUTE_P2P_TOKENS *t = data;

		t->p2pToken = 0;
		t->vaSpaceToken = 0;
		if (a)
			a->sync_memops = 1;
		break;
	}
	/* VMM mappings refuse the attribute and read 0 (see above). */
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
		*(unsigned int *)data = a && !a->vmm ? a->sync_memops : 0;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
	case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
		*(unsigned long long *)data = a ? a->buffer_id : 0;
		break;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(unsigned int *)data = 0;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = !a ? -2 : a->ctx ? a->ctx->dev : 0;
		break;
	/* A VMM mapping's range is its reservation. */
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)data = !a ? 0 : a->vmm ? a->chunk->va : a->va;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = !a ? 0 : a->vmm ? a->chunk->size : a->size;
		break;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(unsigned int *)data = a ? 1 : 0;
		break;
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
		*(unsigned int *)data = a && !a->vmm && !a->ipc_opens ? 1 : 0;
		break;
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
		/* the driver's answer for opened IPC memory is 0, too */
		*(unsigned int *)data = !a || a->ipc_opens ? 0 : a->vmm ? a->vmm->rdma : 1;
		break;
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
		*(unsigned long long *)data = 0;
		break;
	/* NULL unless the allocation came from a memory pool (NVIDIA's
	 * documentation); the emulator has no pools, so always NULL.  UCX
	 * 1.22's cuda_ipc asks for it with every key it packs. */
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
		*(void **)data = NULL;
		break;
	case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
		*(unsigned int *)data = !a ? 0 : a->vmm ? a->access : 3;
		break;
	/* The mapping is the chunk of GPU pages the allocation lies in. */
	case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
		*(size_t *)data = !a ? 0 : a->vmm ? a->size : a->chunk->size;
		break;
	case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
		*(CUdeviceptr *)data = !a ? 0 : a->vmm ? a->va : a->chunk->va;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuPointerGetAttribute(void *data,
					  CUpointer_attribute attribute,
					  CUdeviceptr ptr)
{
	CUresult r;

	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	if (emu_check_init())
		return CUDA_ERROR_INVALID_VALUE;	/* no device memory yet */
	pthread_mutex_lock(&emu.lock);
	r = get_attr(emu_find_alloc(ptr), attribute, data, ptr, false);
	pthread_mutex_unlock(&emu.lock);
	return r;
}

EMU_EXPORT CUresult cuPointerGetAttributes(unsigned int numAttributes,
					   CUpointer_attribute *attributes,
					   void **data, CUdeviceptr ptr)
{
	struct alloc *a;
	CUresult r = CUDA_SUCCESS;

	if (!numAttributes || !attributes || !data)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < numAttributes; i++)
		if (!data[i])
			return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&emu.lock);
	a = emu_check_init() ? NULL : emu_find_alloc(ptr);
	for (unsigned int i = 0; i < numAttributes && !r; i++)
		r = get_attr(a, attributes[i], data[i], ptr, true);
	pthread_mutex_unlock(&emu.lock);
	return r;
}

EMU_EXPORT CUresult cuPointerSetAttribute(const void *value,
					  CUpointer_attribute attribute,
					  CUdeviceptr ptr)
{
	struct alloc *a;
	CUresult r = emu_check_init();

	if (!value || attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	a = emu_find_alloc(ptr);
	if (a && a->vmm)
		r = CUDA_ERROR_NOT_SUPPORTED;
	else if (a)
		a->sync_memops = *(const unsigned int *)value ? 1 : 0;
	else if (!emu_find_hostmem(ptr))
		r = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&emu.lock);
	return r;
}
