// SPDX-License-Identifier: MIT
/*
 * vmm.c - the virtual memory management API: cuMemCreate, cuMemRelease,
 * cuMemAddressReserve/Free, cuMemMap/Unmap, cuMemSetAccess,
 * cuMemGetAllocationGranularity
 *
 * A reservation is a chunk of our VA with no memory.  GPU memory comes
 * from nvp2p_emu.ko when a handle is mapped, at the mapped VA, so nv-p2p
 * pins and copies see an ordinary allocation there; it goes at the unmap
 * (revoking pins).  So a handle can be mapped once at a time, whole
 * (offset 0): other mappings are CUDA_ERROR_NOT_SUPPORTED, as the driver
 * answers misaligned ones.  Granularity is the H100's: 2 MiB.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "cuda_emu_internal.h"
#include "hookable.h"
#include "nvp2p_emu.h"

#define VMM_GRANULE	(2ull << 20)

static struct vmm_handle *handles;	/* under emu.lock */

static struct vmm_handle *handle_find(CUmemGenericAllocationHandle h)
{
	for (struct vmm_handle *i = handles; i; i = i->next)
		if ((uintptr_t)i == h)
			return i;
	return NULL;
}

static void handle_free(struct vmm_handle *h)
{
	struct vmm_handle **pp;

	for (pp = &handles; *pp != h; pp = &(*pp)->next)
		;
	*pp = h->next;
	free(h);
}

void emu_vmm_unmapped(struct vmm_handle *h)
{
	if (!--h->maps && !h->refs)
		handle_free(h);
}

static CUresult check_prop(const CUmemAllocationProp *prop)
{
	if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	return prop->location.id == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

EMU_EXPORT CUresult cuMemGetAllocationGranularity(size_t *granularity,
						  const CUmemAllocationProp *prop,
						  CUmemAllocationGranularity_flags option)
{
	CUresult r = emu_check_init();

	if (!granularity || !prop || (unsigned int)option > CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	*granularity = VMM_GRANULE;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
				const CUmemAllocationProp *prop,
				unsigned long long flags)
{
	CUresult r = emu_check_init();
	struct vmm_handle *h;

	if (!handle || !prop || flags || !size || size % VMM_GRANULE)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	r = check_prop(prop);
	if (r)
		return r;
	if (size > emu.mem_size)
		return CUDA_ERROR_OUT_OF_MEMORY;
	h = calloc(1, sizeof(*h));
	if (!h)
		return CUDA_ERROR_OUT_OF_MEMORY;
	h->size = size;
	h->rdma = prop->allocFlags.gpuDirectRDMACapable != 0;
	h->types = (unsigned int)prop->requestedHandleTypes;
	h->refs = 1;
	pthread_mutex_lock(&emu.lock);
	h->next = handles;
	handles = h;
	pthread_mutex_unlock(&emu.lock);
	*handle = (uintptr_t)h;
	return CUDA_SUCCESS;
}

/* Released while mapped: the memory stays until the last unmap. */
EMU_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	CUresult r = emu_check_init();
	struct vmm_handle *h;

	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	h = handle_find(handle);
	if (!h || !h->refs) {
		pthread_mutex_unlock(&emu.lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (!--h->refs && !h->maps)
		handle_free(h);
	pthread_mutex_unlock(&emu.lock);
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size,
					size_t alignment, CUdeviceptr addr,
					unsigned long long flags)
{
	CUresult r = emu_check_init();
	struct chunk *c;
	uint64_t va;

	(void)addr;	/* a hint, as on the driver */
	if (!ptr || flags || !size || size % VMM_GRANULE ||
	    (alignment & (alignment - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	if (alignment < VMM_GRANULE)
		alignment = VMM_GRANULE;
	c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&emu.lock);
	va = emu_va_find(size, alignment);
	if (!va) {
		pthread_mutex_unlock(&emu.lock);
		free(c);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	c->va = va;
	c->size = size;
	c->resv = true;
	emu_chunk_link(c);
	pthread_mutex_unlock(&emu.lock);
	*ptr = va;
	return CUDA_SUCCESS;
}

static struct chunk *resv_find(uint64_t va, uint64_t size)
{
	for (struct chunk *c = emu.chunks; c; c = c->next)
		if (c->resv && va >= c->va && size <= c->size &&
		    va - c->va <= c->size - size)
			return c;
	return NULL;
}

/* The whole reservation, with nothing mapped in it. */
EMU_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	CUresult r = emu_check_init();
	struct chunk *c, **pp;

	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	c = resv_find(ptr, size);
	if (!c || c->va != ptr || c->size != size || c->users) {
		pthread_mutex_unlock(&emu.lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	for (pp = &emu.chunks; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	pthread_mutex_unlock(&emu.lock);
	free(c);
	return CUDA_SUCCESS;
}

static bool mapped_overlap(uint64_t va, uint64_t size)
{
	for (struct alloc *a = emu.allocs; a; a = a->next)
		if (a->vmm && va < a->va + a->size && a->va < va + size)
			return true;
	return false;
}

EMU_HOOK_IMPL CUresult emu_cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
				    CUmemGenericAllocationHandle handle,
				    unsigned long long flags)
{
	struct nvp2p_emu_alloc req = { .va = ptr, .size = size };
	CUresult r = emu_check_init();
	struct vmm_handle *h;
	struct chunk *c;
	struct alloc *a;

	if (flags || !size)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&emu.lock);
	h = handle_find(handle);
	c = resv_find(ptr, size);
	if (!h || !h->refs || !c || mapped_overlap(ptr, size)) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else if (offset || ptr % VMM_GRANULE || size != h->size || h->maps) {
		r = CUDA_ERROR_NOT_SUPPORTED;	/* only whole, single mappings */
	} else if (ioctl(emu.fd, NVP2P_EMU_IOC_ALLOC, &req)) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (r) {
		pthread_mutex_unlock(&emu.lock);
		free(a);
		return r;
	}
	h->maps++;
	c->users++;
	a->va = ptr;
	a->size = size;
	a->chunk = c;
	a->vmm = h;
	a->buffer_id = emu.next_buffer_id++;
	emu_alloc_link(a);
	pthread_mutex_unlock(&emu.lock);
	return CUDA_SUCCESS;
}
EMU_HOOKABLE(cuMemMap, emu_cuMemMap);

/* A whole mapping; a range with no mapping in it is a no-op, as on the driver. */
EMU_HOOK_IMPL CUresult emu_cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	CUresult r = emu_check_init();
	struct alloc *a;

	if (r)
		return r;
	if (!size || ptr % VMM_GRANULE || size % VMM_GRANULE)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&emu.lock);
	a = emu_find_alloc(ptr);
	if (a && a->vmm && a->va == ptr && a->size == size) {
		emu_alloc_release(a);
	} else if (mapped_overlap(ptr, size) || !resv_find(ptr, size)) {
		r = CUDA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_unlock(&emu.lock);
	return r;
}
EMU_HOOKABLE(cuMemUnmap, emu_cuMemUnmap);

/* Device 0, read-write or none, over mappings that cover the range. */
EMU_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size,
				   const CUmemAccessDesc *desc, size_t count)
{
	CUresult r = emu_check_init();
	struct alloc *a;
	uint64_t at;

	if (!desc || !count || !size)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	for (size_t i = 0; i < count; i++) {
		if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
		    (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
		     desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE &&
		     desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ))
			return CUDA_ERROR_INVALID_VALUE;
		if (desc[i].location.id != 0)
			return CUDA_ERROR_INVALID_DEVICE;
	}
	pthread_mutex_lock(&emu.lock);
	for (at = ptr; at < ptr + size; at = a->va + a->size) {
		a = emu_find_alloc(at);
		if (!a || !a->vmm) {
			pthread_mutex_unlock(&emu.lock);
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	for (at = ptr; at < ptr + size; at = a->va + a->size) {
		a = emu_find_alloc(at);
		a->access = (unsigned int)desc[count - 1].flags;
	}
	pthread_mutex_unlock(&emu.lock);
	return CUDA_SUCCESS;
}

/* The handle mapped at addr, with a reference the caller releases. */
EMU_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle,
						void *addr)
{
	CUresult r = emu_check_init();
	struct alloc *a;

	if (!handle || !addr)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	a = emu_find_alloc((uint64_t)(uintptr_t)addr);
	if (!a || !a->vmm) {
		pthread_mutex_unlock(&emu.lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	a->vmm->refs++;
	*handle = (uintptr_t)a->vmm;
	pthread_mutex_unlock(&emu.lock);
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
							   CUmemGenericAllocationHandle handle)
{
	CUresult r = emu_check_init();
	struct vmm_handle *h;

	if (!prop)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	h = handle_find(handle);
	if (h && h->refs) {
		memset(prop, 0, sizeof(*prop));
		prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
		prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		prop->location.id = 0;
		prop->allocFlags.gpuDirectRDMACapable = h->rdma;
	}
	pthread_mutex_unlock(&emu.lock);
	return h && h->refs ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The access device 0 has to the mapping at ptr. */
EMU_EXPORT CUresult cuMemGetAccess(unsigned long long *flags,
				   const CUmemLocation *location, CUdeviceptr ptr)
{
	CUresult r = emu_check_init();
	struct alloc *a;

	if (!flags || !location || location->type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	if (location->id != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&emu.lock);
	a = emu_find_alloc(ptr);
	if (a && a->vmm)
		*flags = a->access;
	pthread_mutex_unlock(&emu.lock);
	return a && a->vmm ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The shareable handle types of CUDA 13.0: POSIX_FILE_DESCRIPTOR, WIN32,
 * WIN32_KMT and FABRIC (0x8, which include/nvidia/cuda.h leaves out so that
 * code built against it does not take the fabric paths). */
static bool shareable_type_known(CUmemAllocationHandleType t)
{
	return t == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
	       t == CU_MEM_HANDLE_TYPE_WIN32 ||
	       t == CU_MEM_HANDLE_TYPE_WIN32_KMT || (unsigned int)t == 0x8;
}

/*
 * The emulated GPU's memory cannot be shared with another process through
 * a shareable handle: nvp2p_emu.ko gives a mapping's pages to the process
 * that mapped it only, and CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_
 * DESCRIPTOR_SUPPORTED is 0.  So the export of a live handle created with
 * the type asked for is CUDA_ERROR_NOT_SUPPORTED, one of its documented
 * answers.  A bad argument, a flag (reserved, must be 0), a type the
 * handle was not created with (the H100 with driver 580 answers that
 * CUDA_ERROR_INVALID_VALUE) or a handle that is not, or no longer, ours
 * (NVIDIA's library crashes on one) is CUDA_ERROR_INVALID_VALUE.
 */
EMU_EXPORT CUresult cuMemExportToShareableHandle(void *shareableHandle,
						 CUmemGenericAllocationHandle handle,
						 CUmemAllocationHandleType handleType,
						 unsigned long long flags)
{
	CUresult r = emu_check_init();
	struct vmm_handle *h;

	if (!shareableHandle || flags || !shareable_type_known(handleType))
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	h = handle_find(handle);
	r = h && h->refs && (h->types & (unsigned int)handleType) ?
		    CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&emu.lock);
	return r;
}

/*
 * No process exports a shareable handle of emulated memory (above), so
 * there is nothing to import: "If the current process cannot support the
 * memory described by this shareable handle, this API will error as
 * CUDA_ERROR_NOT_SUPPORTED" (NVIDIA's documentation).  *handle is left
 * alone.
 */
EMU_EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle,
						   void *osHandle,
						   CUmemAllocationHandleType shHandleType)
{
	CUresult r = emu_check_init();

	(void)osHandle;	/* an fd, a Windows handle or a fabric handle */
	if (!handle || !shareable_type_known(shHandleType))
		return CUDA_ERROR_INVALID_VALUE;
	return r ? r : CUDA_ERROR_NOT_SUPPORTED;
}
