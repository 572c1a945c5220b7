// SPDX-License-Identifier: MIT
/*
 * stream.c - streams and events, and the calls that need GPU compute
 *
 * Copies, memsets and event records complete before they return.  Stream
 * memory operations (cuStreamWaitValue/WriteValue) are queued on their
 * stream when it must wait: a worker thread polls each waited-on word and
 * runs the stream's queue in order once it is satisfied, so a wait on a
 * word the host writes later really waits.  Any other operation on a
 * stream with queued work, and cuStreamSynchronize, wait for that work
 * first (the calling thread waits: the order is kept).  What is checked
 * is what the driver checks: handles, flags, alignment, timing.  Handles
 * are looked up among the live ones, so a destroyed handle is
 * CUDA_ERROR_INVALID_HANDLE rather than a use after free.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cuda_emu_internal.h"
#include "nvp2p_emu.h"

/* A queued stream memory operation, or host function (fn). */
struct memop {
	struct memop *next;
	bool wait;			/* wait for, else write */
	unsigned int width;		/* 4 or 8 bytes */
	uint64_t addr, value;
	unsigned int flags;
	void (*fn)(CUstream s, void *arg);	/* a host function to call */
	void *arg;
};

struct CUstream_st {
	struct CUstream_st *next;	/* live streams, under emu.lock */
	struct CUctx_st *ctx;
	unsigned int flags;
	int priority;
	/* under qlock */
	struct memop *head, **tail;
	struct CUstream_st *busy_next;	/* on the busy list while queued */
	bool dead;			/* destroyed: freed when drained */
};

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static struct CUstream_st *busy;	/* streams with queued memops */
static bool worker_running;

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

static CUresult stream_lookup(CUstream s)
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

/* A live stream, after its queued memory operations have run. */
CUresult emu_check_stream(CUstream s)
{
	CUresult r = stream_lookup(s);

	if (r || !s)
		return r;
	pthread_mutex_lock(&qlock);
	while (s->head)
		pthread_cond_wait(&qcond, &qlock);
	pthread_mutex_unlock(&qlock);
	return CUDA_SUCCESS;
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
	s->tail = &s->head;
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
	pthread_mutex_lock(&qlock);
	if (s->head) {		/* its work goes on; the worker frees it */
		s->dead = true;
		s = NULL;
	}
	pthread_mutex_unlock(&qlock);
	free(s);
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuStreamQuery(CUstream s)
{
	CUresult r = stream_lookup(s);
	bool queued;

	if (r || !s)
		return r;
	pthread_mutex_lock(&qlock);
	queued = s->head != NULL;
	pthread_mutex_unlock(&qlock);
	return queued ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
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

/* --- stream memory operations -------------------------------------------- */

#define WAIT_GEQ	0x0u
#define WAIT_EQ		0x1u
#define WAIT_AND	0x2u
#define WAIT_NOR	0x3u
#define WAIT_FLUSH	(1u << 30)

/* The word at @addr: GPU memory through the emulator, host memory directly. */
static CUresult read_word(uint64_t addr, unsigned int width, uint64_t *v)
{
	uint64_t x = 0;
	CUresult r = CUDA_SUCCESS;

	if (emu_device_range(addr, width))
		r = emu_copy((uint64_t)(uintptr_t)&x, addr, width, NVP2P_EMU_DTOH);
	else if (width == 4)
		x = __atomic_load_n((uint32_t *)(uintptr_t)addr, __ATOMIC_ACQUIRE);
	else
		x = __atomic_load_n((uint64_t *)(uintptr_t)addr, __ATOMIC_ACQUIRE);
	*v = x;
	return r;
}

static CUresult write_word(uint64_t addr, unsigned int width, uint64_t v)
{
	if (emu_device_range(addr, width))
		return emu_copy(addr, (uint64_t)(uintptr_t)&v, width, NVP2P_EMU_HTOD);
	if (width == 4)
		__atomic_store_n((uint32_t *)(uintptr_t)addr, (uint32_t)v, __ATOMIC_RELEASE);
	else
		__atomic_store_n((uint64_t *)(uintptr_t)addr, v, __ATOMIC_RELEASE);
	return CUDA_SUCCESS;
}

static bool satisfied(const struct memop *o)
{
	uint64_t v;

	if (read_word(o->addr, o->width, &v))
		return true;	/* the memory went: nothing to wait for */
	switch (o->flags & ~WAIT_FLUSH) {
	case WAIT_GEQ:	/* cyclic, as the driver compares */
		return o->width == 4 ? (int32_t)((uint32_t)v - (uint32_t)o->value) >= 0 :
				       (int64_t)(v - o->value) >= 0;
	case WAIT_EQ:
		return v == o->value;
	case WAIT_AND:
		return (v & o->value) != 0;
	default:	/* WAIT_NOR */
		return ~(v | o->value) != 0;
	}
}

/* Runs what can run of every busy stream, every millisecond. */
static void *memop_worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&qlock);
	for (;;) {
		struct CUstream_st **pp = &busy;
		bool progress = false;

		while (*pp) {
			struct CUstream_st *s = *pp;
			struct memop *o = s->head;

			pthread_mutex_unlock(&qlock);
			emu_current_ctx = s->ctx;
			bool go = o->fn || !o->wait || satisfied(o);

			if (o->fn)
				o->fn(s, o->arg);
			else if (go && !o->wait)
				write_word(o->addr, o->width, o->value);
			pthread_mutex_lock(&qlock);
			if (!go) {
				pp = &s->busy_next;
				continue;
			}
			progress = true;
			s->head = o->next;
			free(o);
			if (s->head) {
				continue;
			}
			s->tail = &s->head;
			*pp = s->busy_next;
			if (s->dead)
				free(s);
		}
		pthread_cond_broadcast(&qcond);
		if (!progress) {
			struct timespec t;

			clock_gettime(CLOCK_REALTIME, &t);
			t.tv_nsec += 1000000;
			if (t.tv_nsec >= 1000000000) {
				t.tv_sec++;
				t.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&qcond, &qlock, &t);
		}
	}
	return NULL;
}

static CUresult memop(CUstream s, bool wait, unsigned int width, uint64_t addr,
		      uint64_t value, unsigned int flags)
{
	CUresult r = stream_lookup(s);
	struct memop *o;
	bool known;

	if (r)
		return r;
	if (wait ? (flags & ~(WAIT_FLUSH | 3u)) : flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (!addr || addr % width)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&emu.lock);
	known = emu_find_hostmem(addr) != NULL;
	pthread_mutex_unlock(&emu.lock);
	if (!known && !emu_device_range(addr, width))
		return CUDA_ERROR_INVALID_VALUE;
	o = calloc(1, sizeof(*o));
	if (!o)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*o = (struct memop){ .wait = wait, .width = width, .addr = addr,
			     .value = value, .flags = flags };
	pthread_mutex_lock(&qlock);
	/* Nothing queued and nothing to wait for: run it now. */
	if ((!s || !s->head) && (!wait || satisfied(o))) {
		pthread_mutex_unlock(&qlock);
		r = wait ? CUDA_SUCCESS : write_word(addr, width, value);
		free(o);
		return r;
	}
	if (!s) {	/* the NULL stream waits in the caller */
		pthread_mutex_unlock(&qlock);
		while (!satisfied(o))
			usleep(1000);
		free(o);
		return CUDA_SUCCESS;
	}
	if (!worker_running) {
		pthread_t t;
		pthread_attr_t a;

		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &a, memop_worker, NULL)) {
			pthread_attr_destroy(&a);
			pthread_mutex_unlock(&qlock);
			free(o);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		pthread_attr_destroy(&a);
		worker_running = true;
	}
	if (!s->head) {
		s->busy_next = busy;
		busy = s;
	}
	*s->tail = o;
	s->tail = &o->next;
	pthread_cond_broadcast(&qcond);
	pthread_mutex_unlock(&qlock);
	return CUDA_SUCCESS;
}

/*
 * A host function on stream s: called by the stream worker once the
 * stream's earlier work is done, never by the caller (it may hold locks
 * the function takes, as with the driver's own thread); later work on the
 * stream waits for it.  On the NULL stream, where all earlier work is
 * done, it is called before this returns.
 */
CUresult emu_stream_host_fn(CUstream s, void (*fn)(CUstream, void *), void *arg)
{
	CUresult r = stream_lookup(s);
	struct memop *o;

	if (r)
		return r;
	if (!s) {
		fn(s, arg);
		return CUDA_SUCCESS;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return CUDA_ERROR_OUT_OF_MEMORY;
	o->fn = fn;
	o->arg = arg;
	pthread_mutex_lock(&qlock);
	if (!worker_running) {
		pthread_t t;
		pthread_attr_t a;

		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &a, memop_worker, NULL)) {
			pthread_attr_destroy(&a);
			pthread_mutex_unlock(&qlock);
			free(o);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		pthread_attr_destroy(&a);
		worker_running = true;
	}
	if (!s->head) {
		s->busy_next = busy;
		busy = s;
	}
	*s->tail = o;
	s->tail = &o->next;
	pthread_cond_broadcast(&qcond);
	pthread_mutex_unlock(&qlock);
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuStreamWaitValue32_v2(CUstream s, CUdeviceptr addr,
					   cuuint32_t value, unsigned int flags)
{
	return memop(s, true, 4, addr, value, flags);
}

EMU_EXPORT CUresult cuStreamWaitValue64_v2(CUstream s, CUdeviceptr addr,
					   cuuint64_t value, unsigned int flags)
{
	return memop(s, true, 8, addr, value, flags);
}

EMU_EXPORT CUresult cuStreamWriteValue32_v2(CUstream s, CUdeviceptr addr,
					    cuuint32_t value, unsigned int flags)
{
	return memop(s, false, 4, addr, value, flags);
}

EMU_EXPORT CUresult cuStreamWriteValue64_v2(CUstream s, CUdeviceptr addr,
					    cuuint64_t value, unsigned int flags)
{
	return memop(s, false, 8, addr, value, flags);
}

EMU_ALIAS(cuStreamWaitValue32_v2_ptsz, cuStreamWaitValue32_v2);
EMU_ALIAS(cuStreamWaitValue64_v2_ptsz, cuStreamWaitValue64_v2);
EMU_ALIAS(cuStreamWriteValue32_v2_ptsz, cuStreamWriteValue32_v2);
EMU_ALIAS(cuStreamWriteValue64_v2_ptsz, cuStreamWriteValue64_v2);
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
EMU_EXPORT CUresult cuStreamDestroy(CUstream s)
{
	return cuStreamDestroy_v2(s);
}

EMU_EXPORT CUresult cuEventDestroy(CUevent e)
{
	return cuEventDestroy_v2(e);
}

EMU_EXPORT CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end)
{
	return cuEventElapsedTime_v2(ms, start, end);
}
