/* SPDX-License-Identifier: MIT */
#include "cuda_dl.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cudaload.h"
#include "gdirect.h"

/* Written once, by cu_load() under cu_once, then only read: the calls on
 * the classification path go straight through it. */
static struct gdl_cuda cu;

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

/* Why the library GDIRECT_LIBCUDA named did not load; empty if it did, or
 * if the variable named none.  Written by cu_load() only. */
static char cu_named_err[256];

/*
 * cuPointerGetAttribute and cuMemGetAddressRange are required: without
 * them the library behaves as if there were no driver.  The others are
 * optional (one call for four attributes, SYNC_MEMOPS, telling VMM
 * mappings apart).  Entry points come through cuGetProcAddress_v2, which
 * knows the right version of each name.
 */
static void cu_load(void)
{
	char err[sizeof(cu_named_err) - 32];

	if (gdl_cuload_open(&cu,
		       GDL_CU_BIT(pointer_get_attributes) |
		       GDL_CU_BIT(pointer_get_attribute) |
		       GDL_CU_BIT(pointer_set_attribute) |
		       GDL_CU_BIT(mem_get_address_range) |
		       GDL_CU_BIT(mem_retain_allocation_handle) |
		       GDL_CU_BIT(mem_release) |
		       GDL_CU_BIT(mem_get_handle_for_address_range),
		       GDL_CU_BIT(pointer_get_attribute) |
		       GDL_CU_BIT(mem_get_address_range),
		       GDL_CUDA_PROC_ADDRESS, err, sizeof(err)) &&
	    gdl_cuload_named())
		snprintf(cu_named_err, sizeof(cu_named_err),
			 "GDIRECT_LIBCUDA: %s", err);
}

const char *gdl_cuda_named_error(void)
{
	gdl_cuda_available();
	return cu_named_err[0] ? cu_named_err : NULL;
}

/* 0: not loaded yet; 1 + whether a driver is there.  Read on every
 * classification: an acquire load instead of pthread_once's call. */
static _Atomic int cu_state;

int gdl_cuda_available(void)
{
	int st = atomic_load_explicit(&cu_state, memory_order_acquire);

	if (__builtin_expect(st != 0, 1))
		return st - 1;
	pthread_once(&cu_once, cu_load);
	atomic_store_explicit(&cu_state, 1 + (cu.dl != NULL),
			      memory_order_release);
	return cu.dl != NULL;
}

void gdl_cuda_query(uint64_t addr, struct gdl_cuquery *q)
{
	unsigned int memtype = 0, managed = 0;
	int ordinal = -1;
	unsigned long long id = 0;

	memset(q, 0, sizeof(*q));
	q->type = GDIRECT_MEM_CPU;
	q->device = -1;
	if (!gdl_cuda_available())
		return;
	if (cu.pointer_get_attributes) {
		CUpointer_attribute a[] = {
			CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
			CU_POINTER_ATTRIBUTE_IS_MANAGED,
			CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
			CU_POINTER_ATTRIBUTE_BUFFER_ID,
		};
		void *d[] = { &memtype, &managed, &ordinal, &id };

		/* Unknown pointers succeed with zeroed values. */
		if (cu.pointer_get_attributes(4, a, d, addr) != CUDA_SUCCESS)
			return;
	} else {
		if (cu.pointer_get_attribute(&memtype,
					     CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
					     addr) != CUDA_SUCCESS)
			return;
		cu.pointer_get_attribute(&managed,
					 CU_POINTER_ATTRIBUTE_IS_MANAGED, addr);
		cu.pointer_get_attribute(&ordinal,
					 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, addr);
		cu.pointer_get_attribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
					 addr);
	}
	if (memtype != CU_MEMORYTYPE_DEVICE && memtype != CU_MEMORYTYPE_UNIFIED
	    && !managed)
		return;	/* host (pinned host memory included): CPU path */

	CUdeviceptr base = 0;
	size_t size = 0;

	if (cu.mem_get_address_range(&base, &size, addr) != CUDA_SUCCESS)
		return;
	/* IS_MANAGED may be written as a C bool: test the whole word. */
	q->type = (managed || memtype == CU_MEMORYTYPE_UNIFIED) ?
		  GDIRECT_MEM_MANAGED : GDIRECT_MEM_DEVICE;
	q->device = ordinal;
	q->base = base;
	q->size = size;
	q->buffer_id = id;
}

int gdl_cuda_buffer_id(uint64_t addr, uint64_t *id)
{
	unsigned long long v = 0;

	if (!gdl_cuda_available())
		return -EINVAL;
	if (cu.pointer_get_attribute(&v, CU_POINTER_ATTRIBUTE_BUFFER_ID,
				     addr) != CUDA_SUCCESS)
		return -EINVAL;
	*id = v;
	return 0;
}

/* addr lies in a VMM mapping (cuMemCreate + cuMemMap): the driver hands
 * out its allocation handle.  The reference taken is given back at once. */
static bool is_vmm(uint64_t addr)
{
	CUmemGenericAllocationHandle h;

	if (!cu.mem_retain_allocation_handle || !cu.mem_release ||
	    cu.mem_retain_allocation_handle(&h, (void *)(uintptr_t)addr) !=
	    CUDA_SUCCESS)
		return false;
	cu.mem_release(h);
	return true;
}

int gdl_cuda_sync_memops(uint64_t addr, int *cu_err)
{
	unsigned int one = 1;
	CUresult r;

	*cu_err = CUDA_SUCCESS;
	if (!gdl_cuda_available() || !cu.pointer_set_attribute)
		return -ENOSYS;
	r = cu.pointer_set_attribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
				     addr);
	if (r == CUDA_SUCCESS)
		return 0;
	/* The driver refuses the attribute on VMM mappings, with or without
	 * gpuDirectRDMACapable; asking only once it refused keeps the
	 * common case at one call. */
	if (r == CUDA_ERROR_NOT_SUPPORTED && is_vmm(addr))
		return GDL_SYNC_VMM;
	*cu_err = r;
	return r == CUDA_ERROR_NOT_SUPPORTED ? -EOPNOTSUPP : -EINVAL;
}

int gdl_cuda_dmabuf_fd(uint64_t base, uint64_t size, int *fd, int *cu_err)
{
	int h = -1;
	CUresult r;

	*cu_err = 0;
	if (!gdl_cuda_available() || !cu.mem_get_handle_for_address_range)
		return -ENOSYS;
	r = cu.mem_get_handle_for_address_range(&h, (CUdeviceptr)base, size,
					CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (r != CUDA_SUCCESS || h < 0) {
		*cu_err = r;
		return r == CUDA_ERROR_NOT_SUPPORTED ? -EOPNOTSUPP : -EINVAL;
	}
	*fd = h;
	return 0;
}
