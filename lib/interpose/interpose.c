/* SPDX-License-Identifier: MIT */
/*
 * libgdirect_interpose.so - CUDA free interception (GDIRECT_INV_HOOKS).
 *
 * LD_PRELOAD it (or link it before libcuda): it defines the driver's and
 * the runtime's free entry points, reports the range being freed to
 * gdirect_notify_free() *before* the real free runs, calls the real
 * function, and reports the range again once the free succeeded (FREE
 * below).  It also wraps cuGetProcAddress, through which the CUDA runtime
 * and many libraries fetch driver entry points without any symbol lookup
 * an interposer could see, and hands out the wrappers for the frees.
 *
 * Covered: cuMemFree (v1 and _v2), cuMemFreeAsync (and its _ptsz variant
 * through cuGetProcAddress), cuMemUnmap, cudaFree, cudaFreeAsync; the
 * frees of pinned host memory, cuMemFreeHost and cudaFreeHost, whose VA the
 * driver may hand out again as device memory (cached CPU answers of
 * gdirect_classify() must go, GDIRECT_CTX_CACHE_HOST); and the
 * context teardowns that free a context's memory without a free call,
 * cuCtxDestroy (v1 and _v2), cuDevicePrimaryCtxReset (v1 and _v2),
 * cudaDeviceReset, and a cuDevicePrimaryCtxRelease (v1 and _v2) that
 * destroyed the primary context, which invalidate everything.
 * cuMemRelease needs no hook: released memory stays alive while it is
 * mapped, and the VA stops being backed only at cuMemUnmap.
 * Async frees are reported when called and when the call returns, both
 * before the stream frees: early invalidation is safe, late would not be
 * (a registration made after the call and before the stream frees is
 * one of memory the program may no longer use).
 *
 * The hooks do no unpinning themselves (see notify.c).
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <gdirect.h>

#include "cudaload.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * real_<var>: the next definition of the driver's entry field of
 * cudaload's table (RTLD_NEXT, or libcuda if it was dlopened locally, then
 * not in the global scope: gdl_cuload_next()).  Each call site keeps what
 * it found in its own atomic, so a wrapper costs one acquire load after
 * the first call; a NULL is looked up again, since libcuda may come later.
 */
#define REAL(field, var)						\
	static _Atomic(gdl_cu_##field##_t) var;				\
	gdl_cu_##field##_t real_##var =					\
		atomic_load_explicit(&var, memory_order_acquire);	\
	if (!real_##var) {						\
		real_##var = (gdl_cu_##field##_t)			\
			gdl_cuload_next(GDL_CU_##field);		\
		atomic_store_explicit(&var, real_##var, memory_order_release); \
	}

/* The same for the runtime's functions, which are not libcuda's: the next
 * definition of name after this library. */
#define REAL_RT(type, var, name)					\
	static _Atomic(type) var;					\
	type real_##var = atomic_load_explicit(&var, memory_order_acquire); \
	if (!real_##var) {						\
		real_##var = (type)dlsym(RTLD_NEXT, name);		\
		atomic_store_explicit(&var, real_##var, memory_order_release); \
	}

typedef __typeof__(&cudaFree) rt_free_fn;
typedef __typeof__(&cudaDeviceReset) rt_reset_fn;
/* Not in cuda_runtime_api.h's subset: the product only wraps it. */
typedef cudaError_t (*rt_free_async_fn)(void *, cudaStream_t);

/* A range being freed; size 0: only its first byte is known. */
struct span {
	CUdeviceptr base;
	size_t size;
};

static void report(struct span s)
{
	if (s.base)
		gdirect_notify_free((const void *)(uintptr_t)s.base, s.size);
}

/* The whole allocation holding p, asked before it is freed. */
static struct span span_of(CUdeviceptr p)
{
	REAL(mem_get_address_range, range);
	CUdeviceptr base = 0;
	size_t size = 0;

	if (p && real_range && real_range(&base, &size, p) == CUDA_SUCCESS && size)
		return (struct span){ base, size };
	return (struct span){ p, 0 };
}

/* The pinned host allocation holding p: its range as the pointer
 * attributes give it, else the allocation holding it, else p alone. */
static struct span span_of_host(void *hp)
{
	REAL(pointer_get_attribute, attr);
	CUdeviceptr p = (uintptr_t)hp, base = 0;
	size_t size = 0;

	if (p && real_attr &&
	    real_attr(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p) == CUDA_SUCCESS &&
	    real_attr(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p) == CUDA_SUCCESS &&
	    size && p - base < size)
		return (struct span){ base, size };
	return span_of(p);
}

/*
 * FREE(r, call, s, ok): report s, run the real free into r, and report s
 * again once r is ok.  The first report stops every hit on the range before the
 * memory goes; the second kills what a registration made between the two
 * pinned (it asked the driver while the memory was still there, so it
 * pinned the old pages and tagged them with the old BUFFER_ID, which a
 * new allocation at the address would otherwise hit in hooks mode).
 * For the async frees the second report comes when the call returns, not
 * when the stream frees the memory.
 */
#define FREE(r, call, s, ok)					\
	do {								\
		const struct span s_ = (s);				\
									\
		report(s_);						\
		(r) = (call);						\
		if ((r) == (ok))					\
			report(s_);					\
	} while (0)

EXPORT CUresult cuMemFreeHost(void *p)
{
	REAL(mem_free_host, f);
	CUresult r;

	FREE(r, real_f ? real_f(p) : CUDA_ERROR_NOT_INITIALIZED,
	     span_of_host(p), CUDA_SUCCESS);
	return r;
}

EXPORT cudaError_t cudaFreeHost(void *p)
{
	REAL_RT(rt_free_fn, f, "cudaFreeHost");
	cudaError_t r;

	FREE(r, real_f ? real_f(p) : cudaErrorInitializationError,
	     span_of_host(p), cudaSuccess);
	return r;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	REAL(mem_free, f);
	CUresult r;

	FREE(r, real_f ? real_f(p) : CUDA_ERROR_NOT_INITIALIZED, span_of(p),
	     CUDA_SUCCESS);
	return r;
}

/* The pre-3.2 ABI, still exported by libcuda under its undecorated name. */
#undef cuMemFree
EXPORT CUresult cuMemFree(unsigned int p)
{
	REAL(mem_free_v1, f);
	CUresult r;

	FREE(r, real_f ? real_f(p) : CUDA_ERROR_NOT_INITIALIZED, span_of(p),
	     CUDA_SUCCESS);
	return r;
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
	REAL(mem_free_async, f);
	CUresult r;

	FREE(r, real_f ? real_f(p, s) : CUDA_ERROR_NOT_INITIALIZED, span_of(p),
	     CUDA_SUCCESS);
	return r;
}

EXPORT CUresult cuMemUnmap(CUdeviceptr p, size_t size)
{
	REAL(mem_unmap, f);
	CUresult r;

	FREE(r, real_f ? real_f(p, size) : CUDA_ERROR_NOT_INITIALIZED,
	     ((struct span){ p, size }), CUDA_SUCCESS);
	return r;
}

EXPORT cudaError_t cudaFree(void *p)
{
	REAL_RT(rt_free_fn, f, "cudaFree");
	cudaError_t r;

	FREE(r, real_f ? real_f(p) : cudaErrorInitializationError,
	     span_of((uintptr_t)p), cudaSuccess);
	return r;
}

EXPORT cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
	REAL_RT(rt_free_async_fn, f, "cudaFreeAsync");
	cudaError_t r;

	FREE(r, real_f ? real_f(p, s) : cudaErrorInitializationError,
	     span_of((uintptr_t)p), cudaSuccess);
	return r;
}

/* ---- context teardown: frees the context's memory without a free call */


/*
 * Everything may be freed: the context's allocations are not known here.
 * A range running past the end of the address space means "up to the end"
 * to gdirect_notify_free(), so this is every region of every context with
 * hooks (early invalidation is safe; other devices' regions are pinned
 * again on their next use).
 */
#define SPAN_ALL ((struct span){ 1, SIZE_MAX })

static void report_all(void)
{
	report(SPAN_ALL);
}

#define TEARDOWN(name, field, param, arg)				\
	EXPORT CUresult name(param)					\
	{								\
		REAL(field, f);						\
		CUresult r;						\
									\
		FREE(r, real_f ? real_f(arg) : CUDA_ERROR_NOT_INITIALIZED,	\
		     SPAN_ALL, CUDA_SUCCESS);				\
		return r;						\
	}

#undef cuCtxDestroy
#undef cuDevicePrimaryCtxReset
#undef cuDevicePrimaryCtxRelease
TEARDOWN(cuCtxDestroy_v2, ctx_destroy, CUcontext ctx, ctx)
TEARDOWN(cuCtxDestroy, ctx_destroy_v1, CUcontext ctx, ctx)
TEARDOWN(cuDevicePrimaryCtxReset_v2, primary_reset, CUdevice dev, dev)
TEARDOWN(cuDevicePrimaryCtxReset, primary_reset_v1, CUdevice dev, dev)
/*
 * The last primary-context release destroys the context and frees its
 * memory (measured on an H100, tests/conformance/cuda_emu: primrelease).
 * Which release is the last only the driver knows, and some libraries
 * retain and release around single operations (newer UCX does, to borrow
 * a context that is already active), so invalidating on every release
 * would re-pin every region again and again.  So the release is reported
 * after it returns, when cuDevicePrimaryCtxGetState says the context is
 * inactive now (or cannot say), or when a retain came in meanwhile: a
 * retain just after the last release brings the context back, active, and
 * would hide that the memory went.  Retains are counted (each before it
 * calls the driver); a release reads the count before it calls the
 * driver and again after the state, so a retain that made the context
 * active again before the state was read has changed it.  Retains that
 * bypass the interposer (the CUDA runtime's, through its own
 * cuGetProcAddress) are not counted; the runtime retains once, at its
 * first call, and its cudaDeviceReset reports everything anyway.
 * The report comes only after the memory went, where the other hooks
 * report before and after; with kernel invalidation the status word has
 * told every hit already, and with hooks alone pins are persistent, so a
 * hit in between maps the old pages, never another allocation's.
 */
static _Atomic unsigned long primary_retains;

static void report_if_destroyed(CUdevice dev, unsigned long retains)
{
	REAL(primary_get_state, st);
	unsigned int flags;
	int active = 0;

	if (!real_st || real_st(dev, &flags, &active) != CUDA_SUCCESS || !active ||
	    atomic_load(&primary_retains) != retains)
		report_all();
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	REAL(primary_retain, f);
	atomic_fetch_add(&primary_retains, 1);
	return real_f ? real_f(pctx, dev) : CUDA_ERROR_NOT_INITIALIZED;
}

#define RELEASE(name, field)						\
	EXPORT CUresult name(CUdevice dev)				\
	{								\
		REAL(field, f);						\
		unsigned long n = atomic_load(&primary_retains);	\
		CUresult r = real_f ? real_f(dev) : CUDA_ERROR_NOT_INITIALIZED; \
									\
		if (r == CUDA_SUCCESS)					\
			report_if_destroyed(dev, n);			\
		return r;						\
	}

RELEASE(cuDevicePrimaryCtxRelease_v2, primary_release)
RELEASE(cuDevicePrimaryCtxRelease, primary_release_v1)

EXPORT cudaError_t cudaDeviceReset(void)
{
	REAL_RT(rt_reset_fn, f, "cudaDeviceReset");
	cudaError_t r;

	FREE(r, real_f ? real_f() : cudaErrorInitializationError, SPAN_ALL,
	     cudaSuccess);
	return r;
}

/* ---- cuGetProcAddress: hand out wrappers around what the driver gives -- */

/*
 * One target per (function, variant): the wrapper handed out for a variant
 * calls the first function the driver gave for it, so a later request for
 * another variant (cuMemFreeAsync's _ptsz, through the per-thread default
 * stream flag; the v1 and v2 ABIs, by version) never redirects wrappers
 * already handed out.
 */
#define WRAPPER(name, type, params, args, before)			\
	static _Atomic(type) name##_target;				\
	static CUresult name params					\
	{								\
		before;							\
		return atomic_load(&name##_target) args;		\
	}
/* A free's wrapper: reports @span before and after, as FREE. */
#define FREE_WRAPPER(name, type, params, args, span)			\
	static _Atomic(type) name##_target;				\
	static CUresult name params					\
	{								\
		CUresult r;						\
									\
		FREE(r, atomic_load(&name##_target) args, span,		\
		     CUDA_SUCCESS);					\
		return r;						\
	}

FREE_WRAPPER(w_free_v2, gdl_cu_mem_free_t, (CUdeviceptr p), (p), span_of(p))
FREE_WRAPPER(w_free_v1, gdl_cu_mem_free_v1_t, (unsigned int p), (p),
	     span_of(p))
FREE_WRAPPER(w_free_async, gdl_cu_mem_free_async_t,
	     (CUdeviceptr p, CUstream s), (p, s), span_of(p))
FREE_WRAPPER(w_free_async_ptsz, gdl_cu_mem_free_async_t,
	     (CUdeviceptr p, CUstream s), (p, s), span_of(p))
FREE_WRAPPER(w_unmap, gdl_cu_mem_unmap_t, (CUdeviceptr p, size_t size),
	     (p, size), ((struct span){ p, size }))
FREE_WRAPPER(w_free_host, gdl_cu_mem_free_host_t, (void *p), (p),
	     span_of_host(p))
FREE_WRAPPER(w_ctx_destroy_v2, gdl_cu_ctx_destroy_t, (CUcontext c), (c),
	     SPAN_ALL)
FREE_WRAPPER(w_ctx_destroy_v1, gdl_cu_ctx_destroy_t, (CUcontext c), (c),
	     SPAN_ALL)
FREE_WRAPPER(w_ctx_reset_v2, gdl_cu_primary_reset_t, (CUdevice d), (d),
	     SPAN_ALL)
FREE_WRAPPER(w_ctx_reset_v1, gdl_cu_primary_reset_t, (CUdevice d), (d),
	     SPAN_ALL)
WRAPPER(w_ctx_retain, gdl_cu_primary_retain_t, (CUcontext *pc, CUdevice d),
	(pc, d), atomic_fetch_add(&primary_retains, 1))
#define WRAPPER_RELEASE(name)						\
	static _Atomic(gdl_cu_primary_release_t) name##_target;		\
	static CUresult name(CUdevice d)				\
	{								\
		unsigned long n = atomic_load(&primary_retains);	\
		CUresult r = atomic_load(&name##_target)(d);		\
									\
		if (r == CUDA_SUCCESS)					\
			report_if_destroyed(d, n);			\
		return r;						\
	}

WRAPPER_RELEASE(w_ctx_release_v2)
WRAPPER_RELEASE(w_ctx_release_v1)

/* Set the variant's target if it has none; hand out its wrapper. */
#define HAND_OUT(name, type)						\
	do {								\
		type none_ = NULL;					\
		atomic_compare_exchange_strong(&name##_target, &none_,	\
					       (type)*pfn);		\
		*pfn = (void *)name;					\
	} while (0)

static void wrap(const char *sym, void **pfn, int version, cuuint64_t flags)
{
	if (!*pfn)
		return;
	if (!strcmp(sym, "cuMemFree")) {
		if (version >= 3020)	/* _v2 since CUDA 3.2 */
			HAND_OUT(w_free_v2, gdl_cu_mem_free_t);
		else
			HAND_OUT(w_free_v1, gdl_cu_mem_free_v1_t);
	} else if (!strcmp(sym, "cuMemFreeAsync")) {
		if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
			HAND_OUT(w_free_async_ptsz, gdl_cu_mem_free_async_t);
		else
			HAND_OUT(w_free_async, gdl_cu_mem_free_async_t);
	} else if (!strcmp(sym, "cuMemUnmap")) {
		HAND_OUT(w_unmap, gdl_cu_mem_unmap_t);
	} else if (!strcmp(sym, "cuMemFreeHost")) {
		HAND_OUT(w_free_host, gdl_cu_mem_free_host_t);
	} else if (!strcmp(sym, "cuCtxDestroy")) {
		if (version >= 4000)	/* _v2 since CUDA 4.0 */
			HAND_OUT(w_ctx_destroy_v2, gdl_cu_ctx_destroy_t);
		else
			HAND_OUT(w_ctx_destroy_v1, gdl_cu_ctx_destroy_t);
	} else if (!strcmp(sym, "cuDevicePrimaryCtxReset")) {
		if (version >= 11000)	/* _v2 since CUDA 11.0 */
			HAND_OUT(w_ctx_reset_v2, gdl_cu_primary_reset_t);
		else
			HAND_OUT(w_ctx_reset_v1, gdl_cu_primary_reset_t);
	} else if (!strcmp(sym, "cuDevicePrimaryCtxRetain")) {
		HAND_OUT(w_ctx_retain, gdl_cu_primary_retain_t);
	} else if (!strcmp(sym, "cuDevicePrimaryCtxRelease")) {
		if (version >= 11000)	/* _v2 since CUDA 11.0 */
			HAND_OUT(w_ctx_release_v2, gdl_cu_primary_release_t);
		else
			HAND_OUT(w_ctx_release_v1, gdl_cu_primary_release_t);
	}
}

EXPORT CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int version,
				    cuuint64_t flags,
				    CUdriverProcAddressQueryResult *st)
{
	REAL(get_proc_address, f);
	CUresult rc;

	if (!real_f)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = real_f(sym, pfn, version, flags, st);
	if (rc == CUDA_SUCCESS && sym && pfn)
		wrap(sym, pfn, version, flags);
	return rc;
}

#undef cuGetProcAddress
EXPORT CUresult cuGetProcAddress(const char *sym, void **pfn, int version,
				 cuuint64_t flags)
{
	REAL(get_proc_address_v1, f);
	CUresult rc;

	if (!real_f)
		return CUDA_ERROR_NOT_INITIALIZED;
	rc = real_f(sym, pfn, version, flags);
	if (rc == CUDA_SUCCESS && sym && pfn)
		wrap(sym, pfn, version, flags);
	return rc;
}
