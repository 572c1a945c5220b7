/* SPDX-License-Identifier: MIT */
/* fakecuda.c - a fake CUDA driver for libgdirect's unit tests. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cuda.h>

#include "fakecuda.h"

#define EXPORT __attribute__((visibility("default")))
#define ARENA_SIZE (1ULL << 30)
#define MAX_ALLOCS 65536

struct alloc {
	uint64_t base, size, id;
	bool managed;
	unsigned sync;
	bool host;	/* pinned host memory (cuMemAllocHost) */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *arena;
static struct alloc allocs[MAX_ALLOCS];	/* sorted by base */
static size_t nallocs;
static uint64_t next_id = 100;
static _Atomic unsigned long queries, frees;
static fake_free_listener listener;
static void *listener_arg;

static void arena_init(void)
{
	if (!arena) {
		void *p = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		arena = p == MAP_FAILED ? NULL : p;
		/* Start on a 64 KiB boundary, like GPU allocations. */
	}
}

static uint64_t arena_base(void)
{
	return ((uint64_t)(uintptr_t)arena + 0xffff) & ~0xffffULL;
}

static struct alloc *find(uint64_t a)
{
	for (size_t i = 0; i < nallocs; i++)
		if (a >= allocs[i].base && a < allocs[i].base + allocs[i].size)
			return &allocs[i];
	return NULL;
}

static uint64_t do_alloc(size_t size, bool managed)
{
	uint64_t align = size >= 0x10000 ? 0x10000 : 0x1000;
	uint64_t sz = (size + 0xfff) & ~0xfffULL, cand;

	pthread_mutex_lock(&lock);
	arena_init();
	if (!arena || !size || nallocs == MAX_ALLOCS) {
		pthread_mutex_unlock(&lock);
		return 0;
	}
	cand = arena_base();
	size_t i = 0;

	for (;; i++) {
		cand = (cand + align - 1) & ~(align - 1);
		if (i == nallocs || cand + sz <= allocs[i].base)
			break;
		if (allocs[i].base + allocs[i].size > cand)
			cand = allocs[i].base + allocs[i].size;
	}
	if (cand + sz > (uint64_t)(uintptr_t)arena + ARENA_SIZE) {
		pthread_mutex_unlock(&lock);
		return 0;
	}
	memmove(&allocs[i + 1], &allocs[i], (nallocs - i) * sizeof(allocs[0]));
	allocs[i] = (struct alloc){ cand, size, next_id++, managed, 0, false };
	nallocs++;
	pthread_mutex_unlock(&lock);
	return cand;
}

EXPORT uint64_t fake_cuda_alloc(size_t size)
{
	return do_alloc(size, false);
}

EXPORT uint64_t fake_cuda_alloc_managed(size_t size)
{
	return do_alloc(size, true);
}

EXPORT uint64_t fake_cuda_alloc_host(size_t size)
{
	uint64_t p = do_alloc(size, false);

	pthread_mutex_lock(&lock);
	if (p)
		find(p)->host = true;
	pthread_mutex_unlock(&lock);
	return p;
}

EXPORT void fake_cuda_reset(void)
{
	pthread_mutex_lock(&lock);
	nallocs = 0;
	pthread_mutex_unlock(&lock);
}

EXPORT void fake_cuda_set_free_listener(fake_free_listener fn, void *arg)
{
	pthread_mutex_lock(&lock);
	listener = fn;
	listener_arg = arg;
	pthread_mutex_unlock(&lock);
}

EXPORT uint64_t fake_cuda_buffer_id_at(uint64_t addr)
{
	pthread_mutex_lock(&lock);
	struct alloc *a = find(addr);
	uint64_t id = a ? a->id : 0;

	pthread_mutex_unlock(&lock);
	return id;
}

EXPORT unsigned fake_cuda_sync_count(uint64_t addr)
{
	pthread_mutex_lock(&lock);
	struct alloc *a = find(addr);
	unsigned n = a ? a->sync : 0;

	pthread_mutex_unlock(&lock);
	return n;
}

EXPORT unsigned long fake_cuda_queries(void)
{
	return atomic_load(&queries);
}

EXPORT unsigned long fake_cuda_frees(void)
{
	return atomic_load(&frees);
}

static CUresult free_range(uint64_t p, bool exact)
{
	fake_free_listener fn;
	void *arg;
	uint64_t base, size;

	pthread_mutex_lock(&lock);
	struct alloc *a = find(p);

	if (!a || (exact && a->base != p)) {
		pthread_mutex_unlock(&lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	base = a->base;
	size = a->size;
	fn = listener;
	arg = listener_arg;
	pthread_mutex_unlock(&lock);
	/* Like nvidia.ko: revoke third-party pins before the memory goes. */
	if (fn)
		fn(base, size, arg);
	pthread_mutex_lock(&lock);
	a = find(base);
	if (a && a->base == base) {
		size_t i = a - allocs;

		memmove(&allocs[i], &allocs[i + 1],
			(nallocs - i - 1) * sizeof(allocs[0]));
		nallocs--;
	}
	pthread_mutex_unlock(&lock);
	atomic_fetch_add(&frees, 1);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuInit(unsigned int flags)
{
	(void)flags;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
	*v = CUDA_VERSION;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size)
{
	*p = fake_cuda_alloc(size);
	return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	return free_range(p, true);
}

#undef cuMemFree
EXPORT CUresult cuMemFree(unsigned int p)
{
	return free_range(p, true);
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
	(void)s;
	return free_range(p, true);
}

static _Atomic unsigned long ptsz_frees;

/* The per-thread-default-stream variant (cuGetProcAddress with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM), counted apart. */
EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s)
{
	(void)s;
	atomic_fetch_add(&ptsz_frees, 1);
	return free_range(p, true);
}

EXPORT unsigned long fake_cuda_ptsz_frees(void)
{
	return atomic_load(&ptsz_frees);
}

/* Context teardown frees every allocation of the context: here, all. */
static CUresult free_all(void)
{
	for (;;) {
		uint64_t base;

		pthread_mutex_lock(&lock);
		base = nallocs ? allocs[0].base : 0;
		pthread_mutex_unlock(&lock);
		if (!base)
			return CUDA_SUCCESS;
		free_range(base, true);
	}
}

EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	(void)ctx;
	return free_all();
}

EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	(void)dev;
	return free_all();
}

/* Retains counted; the last release frees the memory, as NVIDIA's does. */
static int primary_refs;
static void (*after_last_release)(void);

EXPORT void fake_cuda_after_last_release(void (*fn)(void))
{
	after_last_release = fn;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	void (*fn)(void) = after_last_release;
	CUresult r;

	(void)dev;
	if (primary_refs <= 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (--primary_refs)
		return CUDA_SUCCESS;
	r = free_all();
	after_last_release = NULL;
	if (fn)
		fn();
	return r;
}

EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags,
					   int *active)
{
	(void)dev;
	*flags = 0;
	*active = primary_refs > 0;
	return CUDA_SUCCESS;
}

EXPORT int cudaDeviceReset(void)
{
	return free_all() == CUDA_SUCCESS ? 0 : 1;
}

EXPORT CUresult cuMemUnmap(CUdeviceptr p, size_t size)
{
	(void)size;
	return free_range(p, false);
}

EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t size)
{
	uint64_t p = fake_cuda_alloc_host(size);

	*pp = (void *)(uintptr_t)p;
	return p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuMemFreeHost(void *p)
{
	return free_range((uintptr_t)p, true);
}

EXPORT int cudaFreeHost(void *p)
{
	return free_range((uintptr_t)p, true) == CUDA_SUCCESS ? 0 : 1;
}

EXPORT int cudaFree(void *p)
{
	return free_range((uintptr_t)p, true) == CUDA_SUCCESS ? 0 : 1;
}

EXPORT int cudaFreeAsync(void *p, void *stream)
{
	(void)stream;
	return free_range((uintptr_t)p, true) == CUDA_SUCCESS ? 0 : 1;
}

EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size,
					CUdeviceptr p)
{
	atomic_fetch_add(&queries, 1);
	pthread_mutex_lock(&lock);
	struct alloc *a = find(p);

	if (a) {
		if (base)
			*base = a->base;
		if (size)
			*size = a->size;
	}
	pthread_mutex_unlock(&lock);
	return a ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

static CUresult get_attr(void *data, CUpointer_attribute at, CUdeviceptr p,
			 bool lenient)
{
	struct alloc *a = find(p);

	if (!a) {
		if (!lenient)
			return CUDA_ERROR_INVALID_VALUE;
	}
	switch (at) {
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data = !a ? 0 : a->host ? CU_MEMORYTYPE_HOST :
					a->managed ? CU_MEMORYTYPE_UNIFIED :
					CU_MEMORYTYPE_DEVICE;
		break;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		/* Written as a C bool, as the real driver does. */
		*(bool *)data = a && a->managed;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = a ? 0 : -1;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data = a ? a->id : 0;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)data = a ? a->base : 0;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = a ? a->size : 0;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute at,
				      CUdeviceptr p)
{
	CUresult rc;

	atomic_fetch_add(&queries, 1);
	pthread_mutex_lock(&lock);
	rc = get_attr(data, at, p, false);
	pthread_mutex_unlock(&lock);
	return rc;
}

/* Like the real one: unknown pointers succeed with zeroed attributes. */
EXPORT CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *at,
				       void **data, CUdeviceptr p)
{
	CUresult rc = CUDA_SUCCESS;

	atomic_fetch_add(&queries, 1);
	pthread_mutex_lock(&lock);
	for (unsigned int i = 0; i < n && rc == CUDA_SUCCESS; i++)
		rc = get_attr(data[i], at[i], p, true);
	pthread_mutex_unlock(&lock);
	return rc;
}

EXPORT CUresult cuPointerSetAttribute(const void *value, CUpointer_attribute at,
				      CUdeviceptr p)
{
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&lock);
	struct alloc *a = find(p);

	if (a && at == CU_POINTER_ATTRIBUTE_SYNC_MEMOPS &&
	    *(const unsigned int *)value) {
		a->sync++;
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

struct sym {
	const char *name;
	void *fn;
};

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
				    cuuint64_t flags,
				    CUdriverProcAddressQueryResult *st)
{
	static const struct sym syms[] = {
		{ "cuInit", (void *)cuInit },
		{ "cuMemAlloc", (void *)cuMemAlloc_v2 },
		{ "cuMemFree", (void *)cuMemFree_v2 },
		{ "cuMemFreeAsync", (void *)cuMemFreeAsync },
		{ "cuCtxDestroy", (void *)cuCtxDestroy_v2 },
		{ "cuDevicePrimaryCtxReset", (void *)cuDevicePrimaryCtxReset_v2 },
		{ "cuDevicePrimaryCtxRelease", (void *)cuDevicePrimaryCtxRelease_v2 },
		{ "cuMemUnmap", (void *)cuMemUnmap },
		{ "cuMemAllocHost", (void *)cuMemAllocHost_v2 },
		{ "cuMemFreeHost", (void *)cuMemFreeHost },
		{ "cuMemGetAddressRange", (void *)cuMemGetAddressRange_v2 },
		{ "cuPointerGetAttribute", (void *)cuPointerGetAttribute },
		{ "cuPointerGetAttributes", (void *)cuPointerGetAttributes },
		{ "cuPointerSetAttribute", (void *)cuPointerSetAttribute },
	};

	(void)version;
	if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM &&
	    !strcmp(symbol, "cuMemFreeAsync")) {
		*pfn = (void *)cuMemFreeAsync_ptsz;
		if (st)
			*st = CU_GET_PROC_ADDRESS_SUCCESS;
		return CUDA_SUCCESS;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!strcmp(symbol, syms[i].name)) {
			*pfn = syms[i].fn;
			if (st)
				*st = CU_GET_PROC_ADDRESS_SUCCESS;
			return CUDA_SUCCESS;
		}
	*pfn = NULL;
	if (st)
		*st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return CUDA_ERROR_NOT_FOUND;
}

/* Just enough of contexts and copies for the example program. */
EXPORT CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
	static int token;

	(void)dev;
	primary_refs++;
	*ctx = (CUcontext)(void *)&token;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
	(void)ctx;
	return CUDA_SUCCESS;
}

static bool inside(uint64_t p, size_t n)
{
	pthread_mutex_lock(&lock);
	struct alloc *a = find(p);
	bool ok = a && p + n <= a->base + a->size;

	pthread_mutex_unlock(&lock);
	return ok;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	if (!inside(dst, n))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy((void *)(uintptr_t)dst, src, n);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	if (!inside(src, n))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(dst, (const void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}
