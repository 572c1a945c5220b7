/* SPDX-License-Identifier: MIT */
/*
 * benchcuda.c - the CUDA driver entry points libgdirect's miss path calls,
 * for the registration-cache benchmark (libbenchcuda.so, loaded by
 * libgdirect through GDIRECT_LIBCUDA).
 *
 * The unit tests' fake driver (tests/unit/lib/fakecuda.c) backs allocations with
 * a 1 GiB arena and finds them by linear search: right for checking
 * behaviour, wrong for 65536 regions.  Here "device memory" is address
 * space only (a PROT_NONE reservation, never touched: the benchmark never
 * copies), allocations are handed out in address order and found by binary
 * search, so the fake adds a constant, small cost to each miss of the
 * cache under test and nothing to its hits.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cuda.h>

#include "benchcuda.h"

#define EXPORT __attribute__((visibility("default")))
#define VA_SIZE (64ULL << 30)
#define STRIDE_ALIGN 0x10000ULL

struct alloc {
	uint64_t base, size, id;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t va_next, va_end;
static struct alloc *allocs;	/* sorted by base: handed out in order */
static size_t nallocs, cap;
static uint64_t next_id = 1000;

EXPORT uint64_t bc_alloc(size_t size, size_t gap)
{
	uint64_t a = 0;

	pthread_mutex_lock(&lock);
	if (!va_next) {
		void *p = mmap(NULL, VA_SIZE + STRIDE_ALIGN, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (p == MAP_FAILED)
			goto out;
		va_next = ((uint64_t)(uintptr_t)p + STRIDE_ALIGN - 1) &
			  ~(STRIDE_ALIGN - 1);
		va_end = va_next + VA_SIZE;
	}
	if (nallocs == cap) {
		size_t ncap = cap ? 2 * cap : 4096;
		struct alloc *n = realloc(allocs, ncap * sizeof(*n));

		if (!n)
			goto out;
		allocs = n;
		cap = ncap;
	}
	size = (size + STRIDE_ALIGN - 1) & ~(STRIDE_ALIGN - 1);
	if (va_next + size + gap > va_end)
		goto out;
	a = va_next;
	allocs[nallocs++] = (struct alloc){ a, size, next_id++ };
	va_next += size + ((gap + STRIDE_ALIGN - 1) & ~(STRIDE_ALIGN - 1));
out:
	pthread_mutex_unlock(&lock);
	return a;
}

/* Under lock. */
static const struct alloc *find(uint64_t a)
{
	size_t lo = 0, hi = nallocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (allocs[mid].base + allocs[mid].size <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < nallocs && allocs[lo].base <= a)
		return &allocs[lo];
	return NULL;
}

static void attr(CUpointer_attribute at, void *data, const struct alloc *al)
{
	switch (at) {
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data = al ? CU_MEMORYTYPE_DEVICE : 0;
		break;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(unsigned int *)data = 0;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = al ? 0 : -1;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data = al ? al->id : 0;
		break;
	default:
		break;
	}
}

EXPORT CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *at,
				       void **data, CUdeviceptr ptr)
{
	pthread_mutex_lock(&lock);
	const struct alloc *al = find(ptr);

	for (unsigned int i = 0; i < n; i++)
		attr(at[i], data[i], al);
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute at,
				      CUdeviceptr ptr)
{
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&lock);
	const struct alloc *al = find(ptr);

	if (al) {
		attr(at, data, al);
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

EXPORT CUresult cuPointerSetAttribute(const void *value, CUpointer_attribute at,
				      CUdeviceptr ptr)
{
	CUresult rc;

	(void)value;
	pthread_mutex_lock(&lock);
	rc = find(ptr) && at == CU_POINTER_ATTRIBUTE_SYNC_MEMOPS ?
	     CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&lock);
	return rc;
}

EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size,
					CUdeviceptr ptr)
{
	CUresult rc = CUDA_ERROR_NOT_FOUND;

	pthread_mutex_lock(&lock);
	const struct alloc *al = find(ptr);

	if (al) {
		if (base)
			*base = al->base;
		if (size)
			*size = al->size;
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}
