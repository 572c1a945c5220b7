// SPDX-License-Identifier: MIT
/*
 * stream.c - streams and events, and the calls that need GPU compute
 *
 * Every operation completes before it returns, so a stream is never busy
 * and an event is complete once recorded; what is checked is what the
 * driver checks: handles, flags, timing.  Handles are looked up among the
 * live ones, so a destroyed handle is CUDA_ERROR_INVALID_HANDLE rather
 * than a use after free.
 */
#include <stdlib.h>
#include <time.h>

#include "internal.h"

struct CUstream_st {
	struct CUstream_st *next;
	struct CUctx_st *ctx;
	unsigned int flags;
	int priority;
};

struct CUevent_st {
	struct CUevent_st *next;
	unsigned int flags;
	bool recorded;
	struct timespec at;
};

#define STREAM_FLAGS	0x1u	/* CU_STREAM_NON_BLOCKING */
#define EVENT_BLOCKING_SYNC	0x1u
#define EVENT_DISABLE_TIMING	0x2u
#define EVENT_INTERPROCESS	0x4u

static struct CUstream_st *streams;	/* under emu.lock */
static struct CUevent_st *events;

static bool stream_live(struct CUstream_st *s)
{
	for (struct CUstream_st *i = streams; i; i = i->next)
		if (i == s)
			return true;
	return false;
}

static bool event_live(struct CUevent_st *e)
{
	for (struct CUevent_st *i = events; i; i = i->next)
		if (i == e)
			return true;
	return false;
}

CUresult emu_check_stream(CUstream s)
{
	CUresult r = emu_need_ctx();
	bool ok;

	if (r || !s)
		return r;
	pthread_mutex_lock(&emu.lock);
	ok = stream_live(s);
	pthread_mutex_unlock(&emu.lock);
	return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EMU_EXPORT CUresult cuStreamCreateWithPriority(CUstream *ps, unsigned int flags,
					       int priority)
{
	CUresult r = emu_need_ctx();
	struct CUstream_st *s;

	if (!ps || (flags & ~STREAM_FLAGS))
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	s = calloc(1, sizeof(*s));
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->ctx = emu_current_ctx;
	s->flags = flags;
	s->priority = priority;
	pthread_mutex_lock(&emu.lock);
	s->next = streams;
	streams = s;
	pthread_mutex_unlock(&emu.lock);
	*ps = s;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuStreamCreate(CUstream *ps, unsigned int flags)
{
	return cuStreamCreateWithPriority(ps, flags, 0);
}

EMU_EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
	CUresult r = emu_check_init();
	struct CUstream_st **pp;

	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	for (pp = &streams; *pp && *pp != s; pp = &(*pp)->next)
		;
	if (!s || !*pp) {
		pthread_mutex_unlock(&emu.lock);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	*pp = s->next;
	pthread_mutex_unlock(&emu.lock);
	free(s);
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuStreamQuery(CUstream s)
{
	return emu_check_stream(s);
}

EMU_EXPORT CUresult cuStreamSynchronize(CUstream s)
{
	return emu_check_stream(s);
}

EMU_EXPORT CUresult cuStreamGetFlags(CUstream s, unsigned int *flags)
{
	CUresult r = emu_check_stream(s);

	if (r)
		return r;
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = s ? s->flags : 0;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuStreamGetCtx(CUstream s, CUcontext *pctx)
{
	CUresult r = emu_check_stream(s);

	if (r)
		return r;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = s ? s->ctx : emu_current_ctx;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
	CUresult r = emu_check_stream(s);
	bool ok;

	if (r)
		return r;
	if (flags & ~1u)	/* CU_EVENT_WAIT_EXTERNAL */
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&emu.lock);
	ok = e && event_live(e);
	pthread_mutex_unlock(&emu.lock);
	return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EMU_EXPORT CUresult cuEventCreate(CUevent *pe, unsigned int flags)
{
	CUresult r = emu_need_ctx();
	struct CUevent_st *e;

	if (!pe || (flags & ~(EVENT_BLOCKING_SYNC | EVENT_DISABLE_TIMING |
			      EVENT_INTERPROCESS)))
		return CUDA_ERROR_INVALID_VALUE;
	if ((flags & EVENT_INTERPROCESS) && !(flags & EVENT_DISABLE_TIMING))
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->flags = flags;
	pthread_mutex_lock(&emu.lock);
	e->next = events;
	events = e;
	pthread_mutex_unlock(&emu.lock);
	*pe = e;
	return CUDA_SUCCESS;
}

static CUresult check_event(CUevent e)
{
	CUresult r = emu_check_init();
	bool ok;

	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	ok = e && event_live(e);
	pthread_mutex_unlock(&emu.lock);
	return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EMU_EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
	CUresult r = check_event(e);

	if (!r)
		r = emu_check_stream(s);
	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	clock_gettime(CLOCK_MONOTONIC, &e->at);
	e->recorded = true;
	pthread_mutex_unlock(&emu.lock);
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuEventQuery(CUevent e)
{
	return check_event(e);
}

EMU_EXPORT CUresult cuEventSynchronize(CUevent e)
{
	return check_event(e);
}

/* Both events recorded, with timing; the driver's code otherwise. */
EMU_EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end)
{
	CUresult r = check_event(start);

	if (!r)
		r = check_event(end);
	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	if (!ms || !start->recorded || !end->recorded ||
	    ((start->flags | end->flags) & EVENT_DISABLE_TIMING)) {
		pthread_mutex_unlock(&emu.lock);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	*ms = (float)((double)(end->at.tv_sec - start->at.tv_sec) * 1e3 +
		      (double)(end->at.tv_nsec - start->at.tv_nsec) / 1e6);
	pthread_mutex_unlock(&emu.lock);
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
	CUresult r = emu_check_init();
	struct CUevent_st **pp;

	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	for (pp = &events; *pp && *pp != e; pp = &(*pp)->next)
		;
	if (!e || !*pp) {
		pthread_mutex_unlock(&emu.lock);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	*pp = e->next;
	pthread_mutex_unlock(&emu.lock);
	free(e);
	return CUDA_SUCCESS;
}

EMU_ALIAS(cuStreamQuery_ptsz, cuStreamQuery);
EMU_ALIAS(cuStreamSynchronize_ptsz, cuStreamSynchronize);
EMU_ALIAS(cuStreamGetFlags_ptsz, cuStreamGetFlags);
EMU_ALIAS(cuStreamGetCtx_ptsz, cuStreamGetCtx);
EMU_ALIAS(cuStreamWaitEvent_ptsz, cuStreamWaitEvent);
EMU_ALIAS(cuEventRecord_ptsz, cuEventRecord);

/*
 * No GPU code runs here: loading a module or launching a kernel is
 * CUDA_ERROR_NOT_SUPPORTED, after the argument checks the driver makes.
 */
EMU_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	CUresult r = emu_need_ctx();

	if (!module || !image)
		return CUDA_ERROR_INVALID_VALUE;
	return r ? r : CUDA_ERROR_NOT_SUPPORTED;
}

EMU_EXPORT CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
	CUresult r = emu_need_ctx();

	if (!module || !fname)
		return CUDA_ERROR_INVALID_VALUE;
	return r ? r : CUDA_ERROR_NOT_SUPPORTED;
}

EMU_EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule module,
					const char *name)
{
	CUresult r = emu_need_ctx();

	if (!f || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	return module ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_HANDLE;
}

EMU_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy,
				   unsigned int gz, unsigned int bx, unsigned int by,
				   unsigned int bz, unsigned int shmem, CUstream s,
				   void **params, void **extra)
{
	CUresult r = emu_need_ctx();

	(void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz;
	(void)shmem; (void)s; (void)params; (void)extra;
	if (r)
		return r;
	return f ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_HANDLE;
}
EMU_ALIAS(cuLaunchKernel_ptsz, cuLaunchKernel);

/* The names of the first versions, exported as NVIDIA's library does. */
#undef cuStreamDestroy
#undef cuEventDestroy
#undef cuEventElapsedTime
EMU_ALIAS(cuStreamDestroy, cuStreamDestroy_v2);
EMU_ALIAS(cuEventDestroy, cuEventDestroy_v2);
EMU_ALIAS(cuEventElapsedTime, cuEventElapsedTime_v2);
