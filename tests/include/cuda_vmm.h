/* SPDX-License-Identifier: MIT */
/*
 * cuda_vmm.h - one VMM allocation for the tests that set VMM memory beside
 * cuMemAlloc's: on the emulated machine and on a GPU alike.
 *
 * The allocation is the device's minimum granularity (2 MiB on the H100
 * and H200), made, mapped and made readable and writable the way CUDA's
 * VMM samples do, with or without gpuDirectRDMACapable: whether that flag
 * matters is what those tests ask.
 */
#ifndef TESTS_CUDA_VMM_H
#define TESTS_CUDA_VMM_H

#include <string.h>

#include <cuda.h>

struct tcu_vmm {
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;
	size_t size;
};

/*
 * 0, or the CUresult of the first call that failed; then *v holds what
 * was made, and tcu_vmm_free() gives it back.
 */
static inline CUresult tcu_vmm_alloc(struct tcu_vmm *v, CUdevice dev, int rdma)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	CUresult r;

	memset(v, 0, sizeof(*v));
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	prop.allocFlags.gpuDirectRDMACapable = (unsigned char)rdma;
	memset(&acc, 0, sizeof(acc));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	r = cuMemGetAllocationGranularity(&v->size, &prop,
					  CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	if (r)
		return r;
	r = cuMemCreate(&v->h, v->size, &prop, 0);
	if (r) {
		v->h = 0;
		return r;
	}
	r = cuMemAddressReserve(&v->va, v->size, 0, 0, 0);
	if (r) {
		v->va = 0;
		return r;
	}
	r = cuMemMap(v->va, v->size, 0, v->h, 0);
	if (!r)
		r = cuMemSetAccess(v->va, v->size, &acc, 1);
	return r;
}

/* Give back whatever tcu_vmm_alloc() made; unmapping what is not mapped
 * fails harmlessly. */
static inline void tcu_vmm_free(struct tcu_vmm *v)
{
	if (v->va) {
		cuMemUnmap(v->va, v->size);
		cuMemAddressFree(v->va, v->size);
	}
	if (v->h)
		cuMemRelease(v->h);
	memset(v, 0, sizeof(*v));
}

#endif
