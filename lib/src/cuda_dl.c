/* SPDX-License-Identifier: MIT */
#include "cuda_dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "gdirect.h"

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
				CUdriverProcAddressQueryResult *);
typedef CUresult (*ptr_get_attrs_fn)(unsigned int, CUpointer_attribute *,
				     void **, CUdeviceptr);
typedef CUresult (*ptr_get_attr_fn)(void *, CUpointer_attribute, CUdeviceptr);
typedef CUresult (*ptr_set_attr_fn)(const void *, CUpointer_attribute,
				    CUdeviceptr);
typedef CUresult (*addr_range_fn)(CUdeviceptr *, size_t *, CUdeviceptr);

static struct {
	void *dl;
	ptr_get_attrs_fn get_attrs;
	ptr_get_attr_fn get_attr;
	ptr_set_attr_fn set_attr;
	addr_range_fn addr_range;
} cu;

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

/* cuGetProcAddress_v2 first (it knows the right version of each name),
 * dlsym of the versioned export otherwise. */
static void *resolve(get_proc_fn gpa, const char *base, const char *exported)
{
	void *fn = NULL;
	CUdriverProcAddressQueryResult st;

	if (gpa && gpa(base, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
		       &st) == CUDA_SUCCESS && st == CU_GET_PROC_ADDRESS_SUCCESS
	    && fn)
		return fn;
	return dlsym(cu.dl, exported);
}

static void cu_load(void)
{
	/* Not from a less privileged user's environment (set-user-ID). */
	const char *path = secure_getenv("GDIRECT_LIBCUDA");
	get_proc_fn gpa;

	cu.dl = dlopen(path && *path ? path : "libcuda.so.1",
		       RTLD_NOW | RTLD_LOCAL);
	if (!cu.dl)
		return;
	gpa = (get_proc_fn)dlsym(cu.dl, "cuGetProcAddress_v2");
	cu.get_attrs = (ptr_get_attrs_fn)resolve(gpa, "cuPointerGetAttributes",
						 "cuPointerGetAttributes");
	cu.get_attr = (ptr_get_attr_fn)resolve(gpa, "cuPointerGetAttribute",
					       "cuPointerGetAttribute");
	cu.set_attr = (ptr_set_attr_fn)resolve(gpa, "cuPointerSetAttribute",
					       "cuPointerSetAttribute");
	cu.addr_range = (addr_range_fn)resolve(gpa, "cuMemGetAddressRange",
					       "cuMemGetAddressRange_v2");
	if (!cu.get_attr || !cu.addr_range) {
		/* Not a driver we can use: behave as if there were none. */
		dlclose(cu.dl);
		memset(&cu, 0, sizeof(cu));
	}
}

/* 0: not loaded yet; 1 + whether a driver is there.  Read on every
 * classification: an acquire load instead of pthread_once's call. */
static _Atomic int cu_state;

int gd_cuda_available(void)
{
	int st = atomic_load_explicit(&cu_state, memory_order_acquire);

	if (__builtin_expect(st != 0, 1))
		return st - 1;
	pthread_once(&cu_once, cu_load);
	atomic_store_explicit(&cu_state, 1 + (cu.dl != NULL),
			      memory_order_release);
	return cu.dl != NULL;
}

void gd_cuda_query(uint64_t addr, struct gd_cuquery *q)
{
	unsigned int memtype = 0, managed = 0;
	int ordinal = -1;
	unsigned long long id = 0;

	memset(q, 0, sizeof(*q));
	q->type = GDIRECT_MEM_CPU;
	q->device = -1;
	if (!gd_cuda_available())
		return;
	if (cu.get_attrs) {
		CUpointer_attribute a[] = {
			CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
			CU_POINTER_ATTRIBUTE_IS_MANAGED,
			CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
			CU_POINTER_ATTRIBUTE_BUFFER_ID,
		};
		void *d[] = { &memtype, &managed, &ordinal, &id };

		/* Unknown pointers succeed with zeroed values. */
		if (cu.get_attrs(4, a, d, addr) != CUDA_SUCCESS)
			return;
	} else {
		if (cu.get_attr(&memtype, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				addr) != CUDA_SUCCESS)
			return;
		cu.get_attr(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, addr);
		cu.get_attr(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, addr);
		cu.get_attr(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, addr);
	}
	if (memtype != CU_MEMORYTYPE_DEVICE && memtype != CU_MEMORYTYPE_UNIFIED
	    && !managed)
		return;	/* host (pinned host memory included): CPU path */

	CUdeviceptr base = 0;
	size_t size = 0;

	if (cu.addr_range(&base, &size, addr) != CUDA_SUCCESS)
		return;
	/* IS_MANAGED may be written as a C bool: test the whole word. */
	q->type = (managed || memtype == CU_MEMORYTYPE_UNIFIED) ?
		  GDIRECT_MEM_MANAGED : GDIRECT_MEM_DEVICE;
	q->device = ordinal;
	q->base = base;
	q->size = size;
	q->buffer_id = id;
}

int gd_cuda_buffer_id(uint64_t addr, uint64_t *id)
{
	unsigned long long v = 0;

	if (!gd_cuda_available())
		return -EINVAL;
	if (cu.get_attr(&v, CU_POINTER_ATTRIBUTE_BUFFER_ID, addr) != CUDA_SUCCESS)
		return -EINVAL;
	*id = v;
	return 0;
}

int gd_cuda_sync_memops(uint64_t addr)
{
	unsigned int one = 1;

	if (!gd_cuda_available() || !cu.set_attr)
		return -ENOSYS;
	return cu.set_attr(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, addr) ==
	       CUDA_SUCCESS ? 0 : -EINVAL;
}
