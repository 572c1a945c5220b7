/* SPDX-License-Identifier: MIT */
/* fake_cuda.c - the fake CUDA driver (fake_cuda.h has its contract). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cuda.h>

#include "fake_cuda.h"

#define EXPORT __attribute__((visibility("default")))
#define GPU_PAGE 0x10000ULL
#define SMALL_STEP 0x1000ULL

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) & ~(to - 1);
}

struct alloc {
	uint64_t base, size;
	uint64_t end;	/* of the space it holds: rounded size plus its gap */
	uint64_t id;
	unsigned sync;
	bool managed;
	bool host;	/* pinned host memory (cuMemAllocHost) */
	bool vmm;	/* a cuMemCreate + cuMemMap mapping */
	bool rdma;	/* ... created gpuDirectRDMACapable */
};

/* Everything below is under lock, except the per-thread context. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t arena_bytes = 1ULL << 30;
static bool arena_prot_none;
static uint8_t *arena;
static struct alloc *allocs;	/* sorted by base */
static size_t nallocs, cap;
/* allocs[0..packed) leave no free space between them: first fit starts
 * after them, which keeps a benchmark's 65536 allocations linear. */
static size_t packed;
static uint64_t next_id = 100;
static unsigned long queries, frees, ptsz_frees;
static CUresult sync_fail;	/* fake_cuda_fail_sync_memops */
static fake_free_listener listener;
static void *listener_arg;
static int driver_version = CUDA_VERSION;
/* fake_cuda_set_device_attribute's settings, by attribute number. */
static struct { bool set; int v; } dev_attrs[141];
static CUresult dmabuf_fail;
static bool dmabuf_no_mmap;
static unsigned long dmabuf_exports;
static unsigned long long dmabuf_last_flags;
static int primary_refs;
static void (*after_last_release)(void);
static __thread CUcontext current;

EXPORT struct fake_cuda_calls fake_cuda_calls;

static bool arena_init(void)
{
	if (!arena) {
		void *p = mmap(NULL, arena_bytes, arena_prot_none ? PROT_NONE :
			       PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		arena = p == MAP_FAILED ? NULL : p;
	}
	return arena != NULL;
}

/* Allocations start on a 64 KiB boundary, like GPU allocations. */
static uint64_t arena_base(void)
{
	return round_up((uint64_t)(uintptr_t)arena, GPU_PAGE);
}

/* The index of the first allocation ending after a. */
static size_t lower(uint64_t a)
{
	size_t lo = 0, hi = nallocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (allocs[mid].base + allocs[mid].size <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct alloc *find(uint64_t a)
{
	size_t i = lower(a);

	return i < nallocs && allocs[i].base <= a ? &allocs[i] : NULL;
}

static void extend_packed(void)
{
	while (packed < nallocs &&
	       allocs[packed].base == (packed ? allocs[packed - 1].end :
						arena_base()))
		packed++;
}

enum kind { K_DEVICE, K_MANAGED, K_HOST, K_VMM, K_VMM_RDMA };

static uint64_t do_alloc(size_t size, uint64_t gap, uint64_t align,
			 enum kind k)
{
	uint64_t hold = round_up(size, SMALL_STEP) + gap, cand;
	size_t i;

	pthread_mutex_lock(&lock);
	if (!size || !arena_init())
		goto fail;
	if (nallocs == cap) {
		size_t ncap = cap ? 2 * cap : 4096;
		struct alloc *n = realloc(allocs, ncap * sizeof(*n));

		if (!n)
			goto fail;
		allocs = n;
		cap = ncap;
	}
	i = packed;
	cand = i ? allocs[i - 1].end : arena_base();
	for (;; i++) {
		cand = round_up(cand, align);
		if (i == nallocs || cand + hold <= allocs[i].base)
			break;
		if (allocs[i].end > cand)
			cand = allocs[i].end;
	}
	if (cand + hold > (uint64_t)(uintptr_t)arena + arena_bytes)
		goto fail;
	memmove(&allocs[i + 1], &allocs[i], (nallocs - i) * sizeof(allocs[0]));
	allocs[i] = (struct alloc){ .base = cand, .size = size,
				    .end = cand + hold, .id = next_id++,
				    .managed = k == K_MANAGED,
				    .host = k == K_HOST,
				    .vmm = k == K_VMM || k == K_VMM_RDMA,
				    .rdma = k == K_VMM_RDMA };
	nallocs++;
	extend_packed();
	pthread_mutex_unlock(&lock);
	return cand;
fail:
	pthread_mutex_unlock(&lock);
	return 0;
}

static uint64_t step_for(size_t size)
{
	return size >= GPU_PAGE ? GPU_PAGE : SMALL_STEP;
}

EXPORT int fake_cuda_set_arena(uint64_t bytes, bool address_only)
{
	int rc = 0;

	pthread_mutex_lock(&lock);
	if (arena) {
		rc = -EBUSY;
	} else {
		arena_bytes = bytes;
		arena_prot_none = address_only;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

EXPORT uint64_t fake_cuda_alloc(size_t size)
{
	return do_alloc(size, 0, step_for(size), K_DEVICE);
}

EXPORT uint64_t fake_cuda_alloc_spaced(size_t size, size_t gap)
{
	return do_alloc(size, round_up(gap, GPU_PAGE), GPU_PAGE, K_DEVICE);
}

EXPORT uint64_t fake_cuda_alloc_managed(size_t size)
{
	return do_alloc(size, 0, step_for(size), K_MANAGED);
}

EXPORT uint64_t fake_cuda_alloc_host(size_t size)
{
	return do_alloc(size, 0, step_for(size), K_HOST);
}

EXPORT uint64_t fake_cuda_alloc_vmm(size_t size, bool rdma)
{
	return do_alloc(round_up(size, GPU_PAGE), 0, GPU_PAGE,
			rdma ? K_VMM_RDMA : K_VMM);
}

EXPORT void fake_cuda_fail_sync_memops(CUresult r)
{
	pthread_mutex_lock(&lock);
	sync_fail = r;
	pthread_mutex_unlock(&lock);
}

EXPORT void fake_cuda_reset(void)
{
	pthread_mutex_lock(&lock);
	nallocs = 0;
	packed = 0;
	sync_fail = CUDA_SUCCESS;
	pthread_mutex_unlock(&lock);
}

EXPORT void fake_cuda_set_driver_version(int v)
{
	pthread_mutex_lock(&lock);
	driver_version = v;
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

static unsigned long read_counter(const unsigned long *c)
{
	unsigned long v;

	pthread_mutex_lock(&lock);
	v = *c;
	pthread_mutex_unlock(&lock);
	return v;
}

EXPORT unsigned long fake_cuda_queries(void)
{
	return read_counter(&queries);
}

EXPORT unsigned long fake_cuda_frees(void)
{
	return read_counter(&frees);
}

EXPORT unsigned long fake_cuda_ptsz_frees(void)
{
	return read_counter(&ptsz_frees);
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
		if (packed > i)
			packed = i;
	}
	frees++;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuInit(unsigned int flags)
{
	__atomic_add_fetch(&fake_cuda_calls.inits, 1, __ATOMIC_RELAXED);
	return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
	pthread_mutex_lock(&lock);
	*v = driver_version;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

/* ---- the device ---------------------------------------------------------- */

EXPORT CUresult cuDeviceGetCount(int *n)
{
	*n = 1;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	if (dev)
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "fake GPU");
	return CUDA_SUCCESS;
}

EXPORT void fake_cuda_set_device_attribute(CUdevice_attribute a, int v)
{
	if ((unsigned int)a >= sizeof(dev_attrs) / sizeof(dev_attrs[0]))
		return;
	pthread_mutex_lock(&lock);
	dev_attrs[a].set = true;
	dev_attrs[a].v = v;
	pthread_mutex_unlock(&lock);
}

EXPORT void fake_cuda_clear_device_attributes(void)
{
	pthread_mutex_lock(&lock);
	memset(dev_attrs, 0, sizeof(dev_attrs));
	pthread_mutex_unlock(&lock);
}

EXPORT CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice dev)
{
	if (dev)
		return CUDA_ERROR_INVALID_DEVICE;
	if ((unsigned int)a > 140)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	*v = dev_attrs[a].set ? dev_attrs[a].v : (int)a;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice dev)
{
	(void)dev;
	*b = 1ULL << 30;
	return CUDA_SUCCESS;
}

/* ---- contexts ------------------------------------------------------------ */

static struct CUctx_st { int dummy; } primary_ctx;

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

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
	if (dev)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&lock);
	primary_refs++;
	fake_cuda_calls.retains++;
	pthread_mutex_unlock(&lock);
	*ctx = &primary_ctx;
	return CUDA_SUCCESS;
}

EXPORT void fake_cuda_after_last_release(void (*fn)(void))
{
	pthread_mutex_lock(&lock);
	after_last_release = fn;
	pthread_mutex_unlock(&lock);
}

/* Retains are counted; the last release frees the memory, as NVIDIA's does. */
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	void (*fn)(void);
	CUresult r;

	(void)dev;
	pthread_mutex_lock(&lock);
	if (primary_refs <= 0) {
		pthread_mutex_unlock(&lock);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	if (--primary_refs) {
		pthread_mutex_unlock(&lock);
		return CUDA_SUCCESS;
	}
	fn = after_last_release;
	after_last_release = NULL;
	pthread_mutex_unlock(&lock);
	r = free_all();
	if (fn)
		fn();
	return r;
}

EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags,
					   int *active)
{
	(void)dev;
	*flags = 0;
	pthread_mutex_lock(&lock);
	*active = primary_refs > 0;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	(void)dev;
	return free_all();
}

EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	(void)ctx;
	return free_all();
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
	*ctx = current;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
	current = ctx;
	return CUDA_SUCCESS;
}

EXPORT int cudaDeviceReset(void)
{
	return free_all() == CUDA_SUCCESS ? 0 : 1;
}

/* ---- memory -------------------------------------------------------------- */

/* Like the real driver, it needs the calling thread's current context. */
EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size)
{
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	*p = fake_cuda_alloc(size);
	pthread_mutex_lock(&lock);
	fake_cuda_calls.allocs++;
	fake_cuda_calls.last_alloc = *p;
	pthread_mutex_unlock(&lock);
	return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	pthread_mutex_lock(&lock);
	fake_cuda_calls.free_calls++;
	fake_cuda_calls.last_free = p;
	pthread_mutex_unlock(&lock);
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

/* The per-thread-default-stream variant (cuGetProcAddress with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM), counted apart. */
EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s)
{
	(void)s;
	pthread_mutex_lock(&lock);
	ptsz_frees++;
	pthread_mutex_unlock(&lock);
	return free_range(p, true);
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
	pthread_mutex_lock(&lock);
	queries++;
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

/* Under lock.  lenient: an unknown pointer gives zeroed values. */
static CUresult get_attr(void *data, CUpointer_attribute at, CUdeviceptr p,
			 bool lenient)
{
	struct alloc *a = find(p);

	if (!a && !lenient)
		return CUDA_ERROR_INVALID_VALUE;
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
	/* Managed memory reads 1 before any setting; VMM mappings, which
	 * refuse the setting, read 0. */
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
		*(unsigned int *)data = a && (a->managed || a->sync);
		break;
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
		*(unsigned int *)data = a && (a->vmm ? a->rdma :
					      !a->managed && !a->host);
		break;
	default:
		/* An attribute the fake does not model: the runtime's test
		 * asks for some of these about memory no driver knows. */
		if (!a)
			break;
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute at,
				      CUdeviceptr p)
{
	CUresult rc;

	pthread_mutex_lock(&lock);
	queries++;
	rc = get_attr(data, at, p, false);
	pthread_mutex_unlock(&lock);
	return rc;
}

/* Like the real one: unknown pointers succeed with zeroed attributes. */
EXPORT CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *at,
				       void **data, CUdeviceptr p)
{
	CUresult rc = CUDA_SUCCESS;

	pthread_mutex_lock(&lock);
	queries++;
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
		if (a->vmm) {
			rc = CUDA_ERROR_NOT_SUPPORTED;
		} else if (sync_fail) {
			rc = sync_fail;
		} else {
			a->sync++;
			rc = CUDA_SUCCESS;
		}
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

/* The handle of a VMM mapping is its BUFFER_ID; nothing is counted. */
EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *h,
					    void *addr)
{
	CUresult rc = CUDA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&lock);
	struct alloc *a = find((uint64_t)(uintptr_t)addr);

	if (a && a->vmm) {
		*h = a->id;
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
	return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- copies -------------------------------------------------------------- */

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

/* Records the stream it was given; copies nothing. */
EXPORT CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
	(void)d, (void)s, (void)n;
	pthread_mutex_lock(&lock);
	fake_cuda_calls.last_stream = st;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

/* ---- dma-bufs ------------------------------------------------------------ */

EXPORT void fake_cuda_fail_dmabuf(CUresult r)
{
	pthread_mutex_lock(&lock);
	dmabuf_fail = r;
	pthread_mutex_unlock(&lock);
}

EXPORT void fake_cuda_set_dmabuf_mmap(bool ok)
{
	pthread_mutex_lock(&lock);
	dmabuf_no_mmap = !ok;
	pthread_mutex_unlock(&lock);
}

EXPORT unsigned long fake_cuda_dmabuf_exports(void)
{
	return read_counter(&dmabuf_exports);
}

EXPORT unsigned long long fake_cuda_dmabuf_last_flags(void)
{
	unsigned long long f;

	pthread_mutex_lock(&lock);
	f = dmabuf_last_flags;
	pthread_mutex_unlock(&lock);
	return f;
}

/* A memfd of size bytes, read-only when the driver refuses mmap; -1. */
static int dmabuf_fd(size_t size, bool no_mmap)
{
	char path[64];
	int fd = memfd_create("fake_dmabuf", MFD_CLOEXEC), ro;

	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)size)) {
		close(fd);
		return -1;
	}
	if (!no_mmap)
		return fd;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	close(fd);
	return ro;
}

EXPORT CUresult cuMemGetHandleForAddressRange(void *handle, CUdeviceptr p,
					      size_t size,
					      CUmemRangeHandleType type,
					      unsigned long long flags)
{
	struct alloc *a;
	CUresult rc;
	bool no_mmap;
	int fd;

	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!handle || type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD ||
	    (flags & ~(unsigned long long)CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE) ||
	    !size || (p | size) % SMALL_STEP)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	a = find(p);
	rc = dmabuf_fail;
	if (!rc && (!a || a->host || a->managed ||
		    p + size > round_up(a->base + a->size, SMALL_STEP)))
		rc = CUDA_ERROR_INVALID_VALUE;
	no_mmap = dmabuf_no_mmap;
	pthread_mutex_unlock(&lock);
	if (rc)
		return rc;
	fd = dmabuf_fd(size, no_mmap);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&lock);
	dmabuf_exports++;
	dmabuf_last_flags = flags;
	pthread_mutex_unlock(&lock);
	*(int *)handle = fd;
	return CUDA_SUCCESS;
}

/* ---- cuGetProcAddress ---------------------------------------------------- */

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
				    cuuint64_t flags,
				    CUdriverProcAddressQueryResult *st)
{
	/* cuMemcpy, cuMemAllocManaged and the IPC calls are missing on
	 * purpose (fake_cuda.h). */
	static const struct {
		const char *name;
		void *fn;
	} syms[] = {
		{ "cuInit", (void *)cuInit },
		{ "cuDriverGetVersion", (void *)cuDriverGetVersion },
		{ "cuDeviceGetCount", (void *)cuDeviceGetCount },
		{ "cuDeviceGetName", (void *)cuDeviceGetName },
		{ "cuDeviceGetAttribute", (void *)cuDeviceGetAttribute },
		{ "cuDeviceTotalMem", (void *)cuDeviceTotalMem_v2 },
		{ "cuDevicePrimaryCtxRetain", (void *)cuDevicePrimaryCtxRetain },
		{ "cuDevicePrimaryCtxRelease", (void *)cuDevicePrimaryCtxRelease_v2 },
		{ "cuDevicePrimaryCtxReset", (void *)cuDevicePrimaryCtxReset_v2 },
		{ "cuCtxDestroy", (void *)cuCtxDestroy_v2 },
		{ "cuCtxGetCurrent", (void *)cuCtxGetCurrent },
		{ "cuCtxSetCurrent", (void *)cuCtxSetCurrent },
		{ "cuMemAlloc", (void *)cuMemAlloc_v2 },
		{ "cuMemFree", (void *)cuMemFree_v2 },
		{ "cuMemFreeAsync", (void *)cuMemFreeAsync },
		{ "cuMemUnmap", (void *)cuMemUnmap },
		{ "cuMemAllocHost", (void *)cuMemAllocHost_v2 },
		{ "cuMemFreeHost", (void *)cuMemFreeHost },
		{ "cuMemcpyAsync", (void *)cuMemcpyAsync },
		{ "cuMemGetAddressRange", (void *)cuMemGetAddressRange_v2 },
		{ "cuMemGetHandleForAddressRange",
		  (void *)cuMemGetHandleForAddressRange },
		{ "cuPointerGetAttribute", (void *)cuPointerGetAttribute },
		{ "cuPointerGetAttributes", (void *)cuPointerGetAttributes },
		{ "cuPointerSetAttribute", (void *)cuPointerSetAttribute },
		{ "cuMemRetainAllocationHandle",
		  (void *)cuMemRetainAllocationHandle },
		{ "cuMemRelease", (void *)cuMemRelease },
	};

	(void)version;
	*pfn = NULL;
	if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM &&
	    !strcmp(symbol, "cuMemFreeAsync"))
		*pfn = (void *)cuMemFreeAsync_ptsz;
	for (size_t i = 0; !*pfn && i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!strcmp(symbol, syms[i].name))
			*pfn = syms[i].fn;
	if (st)
		*st = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS :
			     CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
