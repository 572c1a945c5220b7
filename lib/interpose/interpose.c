/* SPDX-License-Identifier: MIT */
/*
 * libgdirect_interpose.so - CUDA free interception (GDIRECT_INV_HOOKS).
 *
 * LD_PRELOAD it (or link it before libcuda): it defines the driver's and
 * the runtime's free entry points, reports the range being freed to
 * gdirect_notify_free() *before* the real free runs, then calls the real
 * function.  It also wraps cuGetProcAddress, through which the CUDA runtime
 * and many libraries fetch driver entry points without any symbol lookup
 * an interposer could see, and hands out the wrappers for the frees.
 *
 * Covered: cuMemFree (v1 and _v2), cuMemFreeAsync, cuMemUnmap, cudaFree,
 * cudaFreeAsync.  cuMemRelease needs no hook: released memory stays alive
 * while it is mapped, and the VA stops being backed only at cuMemUnmap.
 * Async frees are reported when called, before the stream frees: early
 * invalidation is safe, late would not be.
 *
 * The hooks do no unpinning themselves (see notify.c).
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include <cuda.h>
#include <gdirect.h>

#define EXPORT __attribute__((visibility("default")))

typedef int cudaError_t;
typedef struct CUstream_st *cudaStream_t;

typedef CUresult (*free_v2_fn)(CUdeviceptr);
typedef CUresult (*free_v1_fn)(unsigned int);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);
typedef CUresult (*unmap_fn)(CUdeviceptr, size_t);
typedef CUresult (*range_fn)(CUdeviceptr *, size_t *, CUdeviceptr);
typedef cudaError_t (*rt_free_fn)(void *);
typedef cudaError_t (*rt_free_async_fn)(void *, cudaStream_t);
typedef CUresult (*gpa_v2_fn)(const char *, void **, int, cuuint64_t,
			      CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa_v1_fn)(const char *, void **, int, cuuint64_t);

/* The next definition of name: RTLD_NEXT, or libcuda if it was dlopened
 * locally (then it is not in the global scope). */
static void *next(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);

		if (h) {
			f = dlsym(h, name);
			dlclose(h);
		}
	}
	return f;
}

#define REAL(type, var, name)						\
	static _Atomic(type) var;					\
	type real_##var = atomic_load_explicit(&var, memory_order_acquire); \
	if (!real_##var) {						\
		real_##var = (type)next(name);				\
		atomic_store_explicit(&var, real_##var, memory_order_release); \
	}

/* Report the whole allocation holding p. */
static void report(CUdeviceptr p)
{
	REAL(range_fn, range, "cuMemGetAddressRange_v2");
	CUdeviceptr base = 0;
	size_t size = 0;

	if (!p)
		return;
	if (real_range && real_range(&base, &size, p) == CUDA_SUCCESS && size)
		gdirect_notify_free((const void *)(uintptr_t)base, size);
	else
		gdirect_notify_free((const void *)(uintptr_t)p, 0);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	REAL(free_v2_fn, f, "cuMemFree_v2");
	report(p);
	return real_f ? real_f(p) : CUDA_ERROR_NOT_INITIALIZED;
}

/* The pre-3.2 ABI, still exported by libcuda under its undecorated name. */
#undef cuMemFree
EXPORT CUresult cuMemFree(unsigned int p)
{
	REAL(free_v1_fn, f, "cuMemFree");
	report(p);
	return real_f ? real_f(p) : CUDA_ERROR_NOT_INITIALIZED;
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
	REAL(free_async_fn, f, "cuMemFreeAsync");
	report(p);
	return real_f ? real_f(p, s) : CUDA_ERROR_NOT_INITIALIZED;
}

EXPORT CUresult cuMemUnmap(CUdeviceptr p, size_t size)
{
	REAL(unmap_fn, f, "cuMemUnmap");
	gdirect_notify_free((const void *)(uintptr_t)p, size);
	return real_f ? real_f(p, size) : CUDA_ERROR_NOT_INITIALIZED;
}

EXPORT cudaError_t cudaFree(void *p)
{
	REAL(rt_free_fn, f, "cudaFree");
	report((uintptr_t)p);
	return real_f ? real_f(p) : 3 /* cudaErrorInitializationError */;
}

EXPORT cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
	REAL(rt_free_async_fn, f, "cudaFreeAsync");
	report((uintptr_t)p);
	return real_f ? real_f(p, s) : 3;
}

/* ---- cuGetProcAddress: hand out wrappers around what the driver gives -- */

static _Atomic(free_v2_fn) gpa_free_v2;
static _Atomic(free_v1_fn) gpa_free_v1;
static _Atomic(free_async_fn) gpa_free_async;
static _Atomic(unmap_fn) gpa_unmap;

static CUresult w_free_v2(CUdeviceptr p)
{
	report(p);
	return atomic_load(&gpa_free_v2)(p);
}

static CUresult w_free_v1(unsigned int p)
{
	report(p);
	return atomic_load(&gpa_free_v1)(p);
}

static CUresult w_free_async(CUdeviceptr p, CUstream s)
{
	report(p);
	return atomic_load(&gpa_free_async)(p, s);
}

static CUresult w_unmap(CUdeviceptr p, size_t size)
{
	gdirect_notify_free((const void *)(uintptr_t)p, size);
	return atomic_load(&gpa_unmap)(p, size);
}

static void wrap(const char *sym, void **pfn, int version)
{
	if (!*pfn)
		return;
	if (!strcmp(sym, "cuMemFree")) {
		if (version >= 3020) {	/* _v2 since CUDA 3.2 */
			atomic_store(&gpa_free_v2, (free_v2_fn)*pfn);
			*pfn = (void *)w_free_v2;
		} else {
			atomic_store(&gpa_free_v1, (free_v1_fn)*pfn);
			*pfn = (void *)w_free_v1;
		}
	} else if (!strcmp(sym, "cuMemFreeAsync")) {
		atomic_store(&gpa_free_async, (free_async_fn)*pfn);
		*pfn = (void *)w_free_async;
	} else if (!strcmp(sym, "cuMemUnmap")) {
		atomic_store(&gpa_unmap, (unmap_fn)*pfn);
		*pfn = (void *)w_unmap;
	}
}

EXPORT CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int version,
				    cuuint64_t flags,
				    CUdriverProcAddressQueryResult *st)
{
	REAL(gpa_v2_fn, f, "cuGetProcAddress_v2");
	CUresult rc;

	if (!real_f)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = real_f(sym, pfn, version, flags, st);
	if (rc == CUDA_SUCCESS && sym && pfn)
		wrap(sym, pfn, version);
	return rc;
}

#undef cuGetProcAddress
EXPORT CUresult cuGetProcAddress(const char *sym, void **pfn, int version,
				 cuuint64_t flags)
{
	REAL(gpa_v1_fn, f, "cuGetProcAddress");
	CUresult rc;

	if (!real_f)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = real_f(sym, pfn, version, flags);
	if (rc == CUDA_SUCCESS && sym && pfn)
		wrap(sym, pfn, version);
	return rc;
}
