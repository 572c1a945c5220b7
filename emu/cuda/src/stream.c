// SPDX-License-Identifier: MIT
/*
 * stream.c - streams and events, and the calls that need GPU compute
 *
 * Copies and memsets complete before they return.  Stream memory
 * operations (cuStreamWaitValue/WriteValue), host functions, event records
 * and cuStreamWaitEvent are queued on their stream: one worker thread
 * polls each waited-on word and runs each stream's queue in order, calling
 * host functions itself, so a wait on a word the host writes later really
 * waits, a host function never runs on the thread that launched it, and
 * cuEventRecord / cuStreamWaitEvent return at once, as on a GPU.  Any
 * other operation on a stream waits, in the calling thread, for what it
 * must follow, which keeps the order.
 *
 * An event is its latest record, as on the H100 (conformance sections
 * event and waitearlier): complete once that has run, whatever became of
 * earlier ones; cuStreamWaitEvent and cuEventSynchronize wait for the
 * record that was the latest when they were called.
 *
 * Each context has a legacy default stream (the NULL handle and
 * CU_STREAM_LEGACY) and each thread a per-thread one (CU_STREAM_PER_THREAD),
 * queues like any other.  The legacy stream's work follows the work queued
 * before it on every blocking stream of its context (the per-thread ones
 * included), and theirs follows its: a "barrier" in the later queue holds
 * it until the other queue has done what it had when the barrier was
 * queued.  CU_STREAM_NON_BLOCKING streams take no part in this.
 *
 * A queued operation whose memory went meanwhile (cuMemUnmap does not wait
 * for the work queued on it; cuMemFree does) faults: as on the H100, the
 * sticky CUDA_ERROR_LAUNCH_FAILED, which from then on every call that
 * needs a context returns, in every context of the process (emu.sticky,
 * emu_need_ctx); the rest of the queued work is dropped, callbacks
 * (cuStreamAddCallback) are called with that status, host functions not
 * at all.
 *
 * What is checked is what the driver checks: handles, flags, alignment,
 * timing.  Handles are looked up among the live ones, so a destroyed
 * handle is CUDA_ERROR_INVALID_HANDLE rather than a use after free.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cuda_emu_internal.h"
#include "nvp2p_emu.h"

/*
 * A queued stream memory operation, host function (fn), event record (ev,
 * of the event's record number ev_gen), or barrier (dep: the stream whose
 * queue must have run dep_seq operations first).
 */
struct memop {
	struct memop *next;
	bool wait;			/* wait for, else write */
	unsigned int width;		/* 4 or 8 bytes */
	uint64_t addr, value;
	unsigned int flags;
	void (*fn)(CUstream s, void *arg, CUresult status);	/* host function */
	void *arg;
	CUstream handle;		/* the stream, as the caller named it */
	struct CUstream_st *dep;
	uint64_t dep_seq;
	struct CUevent_st *ev;
	uint64_t ev_gen;
};

enum stream_kind { STREAM_USER, STREAM_LEGACY_KIND, STREAM_PER_THREAD_KIND };

struct CUstream_st {
	struct CUstream_st *next;	/* every stream, under qlock */
	struct CUctx_st *ctx;
	unsigned int flags;
	int priority;
	enum stream_kind kind;
	pthread_t owner;		/* of a per-thread stream */
	/* under qlock */
	struct memop *head, **tail;
	uint64_t queued, done;		/* operations queued and run, ever */
	struct CUstream_st *busy_next;	/* on the busy list while queued */
	unsigned int refs;		/* barriers that name it */
	bool dead;			/* destroyed: freed when drained and
					 * no barrier names it */
};

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static struct CUstream_st *streams;	/* under qlock */
static struct CUstream_st *busy;	/* streams with queued operations */
static bool worker_running;
/*
 * This thread is the worker: a host function calling the driver must not
 * wait for the queues it is running (CUDA forbids such calls; here they
 * do not wait).
 */
static __thread bool on_worker;
__thread bool emu_ptds;

struct CUevent_st {
	struct CUevent_st *next;	/* events, under emu.lock */
	unsigned int flags;
	/* under qlock */
	bool recorded;
	struct timespec at;		/* when the latest record ran */
	uint64_t gen;			/* number of the latest record */
	unsigned int pending;		/* records queued, not yet run */
	struct CUstream_st *stream;	/* of the latest record, while queued */
	uint64_t seq;			/* ... its place: done >= seq once run */
	bool dead;			/* destroyed: freed by the last of them */
};

#define STREAM_FLAGS	0x1u	/* CU_STREAM_NON_BLOCKING */
#define EVENT_BLOCKING_SYNC	0x1u
#define EVENT_DISABLE_TIMING	0x2u
#define EVENT_INTERPROCESS	0x4u

static struct CUevent_st *events;	/* under emu.lock */
static uint64_t event_gen;		/* under qlock */

static bool event_live(struct CUevent_st *e)
{
	for (struct CUevent_st *i = events; i; i = i->next)
		if (i == e)
			return true;
	return false;
}

static CUresult push(struct CUstream_st *s, struct memop *o);
static CUresult enqueue(struct CUstream_st *x, struct memop *o);

/* @e is a live event; qlock held (emu.lock nests inside it). */
static bool event_live_q(struct CUevent_st *e)
{
	bool ok;

	pthread_mutex_lock(&emu.lock);
	ok = e && event_live(e);
	pthread_mutex_unlock(&emu.lock);
	return ok;
}

static bool pending(const struct CUstream_st *s)
{
	return s->done != s->queued;
}

/* Work on @x follows the work queued before it on @d (same context). */
static bool follows(const struct CUstream_st *x, const struct CUstream_st *d)
{
	if (d == x || d->ctx != x->ctx ||
	    ((x->flags | d->flags) & CU_STREAM_NON_BLOCKING))
		return false;
	return (x->kind == STREAM_LEGACY_KIND) != (d->kind == STREAM_LEGACY_KIND);
}

/* Unlinks and frees a dead stream that nothing refers to; qlock held. */
static void stream_reap(struct CUstream_st *s)
{
	struct CUstream_st **pp;

	if (!s->dead || s->head || s->refs)
		return;
	for (pp = &streams; *pp != s; pp = &(*pp)->next)
		;
	*pp = s->next;
	free(s);
}

/*
 * The stream a handle names, with qlock held and a live context current:
 * a stream of ours, or the current context's legacy stream (NULL,
 * CU_STREAM_LEGACY) or this thread's per-thread one (CU_STREAM_PER_THREAD,
 * and NULL in a _ptsz/_ptds call), made at first use.
 */
static CUresult resolve(CUstream h, struct CUstream_st **out)
{
	bool per_thread = h == CU_STREAM_PER_THREAD || (!h && emu_ptds);
	struct CUctx_st *ctx = emu_current_ctx;
	struct CUstream_st *s;

	if (h && h != CU_STREAM_LEGACY && !per_thread) {
		for (s = streams; s; s = s->next)
			if (s == h && s->kind == STREAM_USER && !s->dead) {
				*out = s;
				return CUDA_SUCCESS;
			}
		return CUDA_ERROR_INVALID_HANDLE;
	}
	for (s = streams; s; s = s->next) {
		if (s->ctx != ctx || s->dead)
			continue;
		if (per_thread ? s->kind == STREAM_PER_THREAD_KIND &&
				 pthread_equal(s->owner, pthread_self()) :
				 s->kind == STREAM_LEGACY_KIND) {
			*out = s;
			return CUDA_SUCCESS;
		}
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->ctx = ctx;
	s->kind = per_thread ? STREAM_PER_THREAD_KIND : STREAM_LEGACY_KIND;
	s->owner = pthread_self();
	s->tail = &s->head;
	s->next = streams;
	streams = s;
	*out = s;
	return CUDA_SUCCESS;
}

/* Nothing that work on @x would follow is left to run; qlock held. */
static bool drained(const struct CUstream_st *x)
{
	if (pending(x))
		return false;
	for (struct CUstream_st *d = streams; d; d = d->next)
		if (follows(x, d) && pending(d))
			return false;
	return true;
}

/* A live context current and a stream named by @h: *out, qlock held. */
static CUresult stream_get(CUstream h, struct CUstream_st **out)
{
	CUresult r = emu_need_ctx();

	if (r)
		return r;
	pthread_mutex_lock(&qlock);
	r = resolve(h, out);
	if (r)
		pthread_mutex_unlock(&qlock);
	return r;
}

static CUresult stream_lookup(CUstream h)
{
	struct CUstream_st *x;
	CUresult r = stream_get(h, &x);

	if (!r)
		pthread_mutex_unlock(&qlock);
	return r;
}

/*
 * A zeroed operation for stream @h (its handle filled in) and the stream,
 * with qlock held; on failure neither.
 */
static CUresult op_get(CUstream h, struct memop **po, struct CUstream_st **px)
{
	struct memop *o = calloc(1, sizeof(*o));
	CUresult r;

	if (!o)
		return CUDA_ERROR_OUT_OF_MEMORY;
	o->handle = h;
	r = stream_get(h, px);
	if (r) {
		free(o);
		return r;
	}
	*po = o;
	return CUDA_SUCCESS;
}

/*
 * Returns @r, the sticky error or another, once every queue has been
 * flushed if @r is the sticky error: after a fault the worker calls the
 * callbacks queued behind it with the error and drops the rest, and a
 * synchronize must not return the error before those callbacks have run
 * (the driver's order; cuda-stream-test's sticky_late).  Nothing new is
 * queued once the error is set, so the busy list empties.  Not on the
 * worker, which would wait for itself.
 */
static CUresult sticky_flushed(CUresult r)
{
	if (!r || r != emu_sticky() || on_worker)
		return r;
	pthread_mutex_lock(&qlock);
	while (busy)
		pthread_cond_wait(&qcond, &qlock);
	pthread_mutex_unlock(&qlock);
	return r;
}

/*
 * A live stream, after everything its next operation follows has run:
 * its own queue and, by the legacy stream's rules, the others'.  After a
 * fault, the sticky error once the callbacks behind it have run.
 */
CUresult emu_check_stream(CUstream h)
{
	struct CUstream_st *x;
	CUresult r = stream_get(h, &x);

	if (r)
		return sticky_flushed(r);
	while (!on_worker && !drained(x))
		pthread_cond_wait(&qcond, &qlock);
	pthread_mutex_unlock(&qlock);
	return emu_sticky();
}

CUresult emu_ctx_synchronize(struct CUctx_st *ctx)
{
	bool idle;

	pthread_mutex_lock(&qlock);
	do {
		idle = true;
		for (struct CUstream_st *s = streams; s; s = s->next)
			if ((!ctx || s->ctx == ctx) && pending(s))
				idle = false;
		if (!idle && !on_worker)
			pthread_cond_wait(&qcond, &qlock);
	} while (!idle && !on_worker);
	pthread_mutex_unlock(&qlock);
	return sticky_flushed(emu_sticky());
}

bool emu_on_worker(void)
{
	return on_worker;
}

void emu_ctx_streams_destroy(struct CUctx_st *ctx)
{
	struct CUstream_st *s, *next;

	emu_ctx_synchronize(ctx);
	pthread_mutex_lock(&qlock);
	for (s = streams; s; s = next) {
		next = s->next;
		if (s->ctx != ctx)
			continue;
		s->dead = true;
		stream_reap(s);
	}
	pthread_mutex_unlock(&qlock);
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
	s->kind = STREAM_USER;
	s->tail = &s->head;
	pthread_mutex_lock(&qlock);
	s->next = streams;
	streams = s;
	pthread_mutex_unlock(&qlock);
	*ps = s;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuStreamCreate(CUstream *ps, unsigned int flags)
{
	return cuStreamCreateWithPriority(ps, flags, 0);
}

/* Its queued work goes on; the worker frees it when that is done. */
EMU_EXPORT CUresult cuStreamDestroy_v2(CUstream h)
{
	CUresult r = emu_check_init();
	struct CUstream_st *s;

	if (!r)
		r = emu_sticky();
	if (r)
		return r;
	pthread_mutex_lock(&qlock);
	for (s = streams; s; s = s->next)
		if (h && s == h && s->kind == STREAM_USER && !s->dead)
			break;
	if (s) {
		s->dead = true;
		stream_reap(s);
	}
	pthread_mutex_unlock(&qlock);
	return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EMU_EXPORT CUresult cuStreamQuery(CUstream h)
{
	struct CUstream_st *x;
	CUresult r = stream_get(h, &x);

	if (r)
		return r;
	r = emu_sticky();
	if (!r && pending(x))
		r = CUDA_ERROR_NOT_READY;
	pthread_mutex_unlock(&qlock);
	return r;
}

EMU_EXPORT CUresult cuStreamSynchronize(CUstream s)
{
	return emu_check_stream(s);
}

EMU_EXPORT CUresult cuStreamGetFlags(CUstream h, unsigned int *flags)
{
	CUresult r = emu_check_stream(h);

	if (r)
		return r;
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&qlock);
	r = resolve(h, &h);
	if (!r)
		*flags = h->flags;
	pthread_mutex_unlock(&qlock);
	return r;
}

EMU_EXPORT CUresult cuStreamGetCtx(CUstream h, CUcontext *pctx)
{
	CUresult r = emu_check_stream(h);

	if (r)
		return r;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&qlock);
	r = resolve(h, &h);
	if (!r)
		*pctx = h->ctx;
	pthread_mutex_unlock(&qlock);
	return r;
}

/*
 * Queues a barrier: the stream's later work waits for the event's latest
 * record, if that has not run; returns at once.
 */
EMU_EXPORT CUresult cuStreamWaitEvent(CUstream h, CUevent e, unsigned int flags)
{
	struct CUstream_st *x;
	struct memop *b;
	CUresult r = op_get(h, &b, &x);

	if (r)
		return r;
	if (flags & ~1u) {	/* CU_EVENT_WAIT_EXTERNAL */
		r = CUDA_ERROR_INVALID_VALUE;
	} else if (!event_live_q(e)) {
		r = CUDA_ERROR_INVALID_HANDLE;
	} else if (e->stream && e->stream != x && e->stream->done < e->seq) {
		b->dep = e->stream;
		b->dep_seq = e->seq;
		r = push(x, b);		/* frees b on failure */
		if (!r)
			e->stream->refs++;
		b = NULL;
	}
	pthread_mutex_unlock(&qlock);
	free(b);
	return r;
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

/* @e's latest record is queued no more; qlock held. */
static void event_unplace(struct CUevent_st *e)
{
	if (!e->stream)
		return;
	e->stream->refs--;
	stream_reap(e->stream);
	e->stream = NULL;
	pthread_cond_broadcast(&qcond);	/* queries may answer otherwise now */
}

/*
 * A queued record of @o->ev ran: the worker, qlock held, @o already off
 * its stream (which stays for the worker to reap).  The latest record
 * dates the event; the last one frees an event destroyed meanwhile.
 */
static void event_record_ran(const struct memop *o)
{
	struct CUevent_st *e = o->ev;

	/* The latest record, unless the event was destroyed (unplaced). */
	if (o->ev_gen == e->gen && e->stream) {
		clock_gettime(CLOCK_MONOTONIC, &e->at);
		e->stream->refs--;
		e->stream = NULL;
	}
	if (!--e->pending && e->dead)
		free(e);
}

/*
 * The sticky error comes first, before the event's handle is checked.
 * With nothing ahead of it on the stream the record is made now, else it
 * is queued and the call returns at once.
 */
EMU_EXPORT CUresult cuEventRecord(CUevent e, CUstream h)
{
	CUresult r = emu_check_init();
	struct CUstream_st *x;
	struct memop *o;

	if (!r)
		r = emu_sticky();
	if (!r)
		r = check_event(e);
	if (r)
		return r;
	r = op_get(h, &o, &x);
	if (r)
		return r;
	if (!event_live_q(e)) {
		pthread_mutex_unlock(&qlock);
		free(o);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	e->gen = ++event_gen;
	e->recorded = true;
	event_unplace(e);
	if (drained(x)) {
		clock_gettime(CLOCK_MONOTONIC, &e->at);
		free(o);
	} else {
		o->ev = e;
		o->ev_gen = e->gen;
		r = enqueue(x, o);	/* frees o on failure */
		if (!r) {
			e->pending++;
			e->stream = x;
			e->seq = x->queued;
			x->refs++;
		}
	}
	pthread_mutex_unlock(&qlock);
	return r;
}

EMU_EXPORT CUresult cuEventQuery(CUevent e)
{
	CUresult r = check_event(e);

	if (r)
		return r;
	pthread_mutex_lock(&qlock);
	if (!event_live_q(e))
		r = CUDA_ERROR_INVALID_HANDLE;
	else if (e->stream)	/* the latest record is still queued */
		r = CUDA_ERROR_NOT_READY;
	pthread_mutex_unlock(&qlock);
	return r;
}

/*
 * Waits until the record of @e that is the latest now has run (not on the
 * worker: see on_worker), as cuStreamWaitEvent does: a record made
 * meanwhile does not move what this call waits for, and an earlier record
 * still queued does not count (the H100; conformance: waitearlier).  The
 * stream of that record is held (refs) so that it outlives the wait.
 */
EMU_EXPORT CUresult cuEventSynchronize(CUevent e)
{
	CUresult r = check_event(e);
	struct CUstream_st *x;
	uint64_t seq;

	if (r)
		return r;
	pthread_mutex_lock(&qlock);
	if (!event_live_q(e)) {
		pthread_mutex_unlock(&qlock);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	x = e->stream;
	seq = e->seq;
	if (x) {
		x->refs++;
		while (x->done < seq && !on_worker)
			pthread_cond_wait(&qcond, &qlock);
		x->refs--;
		stream_reap(x);
	}
	pthread_mutex_unlock(&qlock);
	return CUDA_SUCCESS;
}

/*
 * Both events recorded, with timing, and complete (else NOT_READY); the
 * driver's code otherwise.
 */
EMU_EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end)
{
	CUresult r = check_event(start);

	if (!r)
		r = check_event(end);
	if (r)
		return r;
	pthread_mutex_lock(&qlock);
	if (!event_live_q(start) || !event_live_q(end) || !ms ||
	    !start->recorded || !end->recorded ||
	    ((start->flags | end->flags) & EVENT_DISABLE_TIMING))
		r = CUDA_ERROR_INVALID_HANDLE;
	else if (start->stream || end->stream)
		r = CUDA_ERROR_NOT_READY;
	else
		*ms = (float)((double)(end->at.tv_sec - start->at.tv_sec) * 1e3 +
			      (double)(end->at.tv_nsec - start->at.tv_nsec) / 1e6);
	pthread_mutex_unlock(&qlock);
	return r;
}

int emu_event_flags(CUevent e)
{
	int flags = -1;

	pthread_mutex_lock(&emu.lock);
	if (e && event_live(e))
		flags = (int)e->flags;
	pthread_mutex_unlock(&emu.lock);
	return flags;
}

EMU_EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
	CUresult r = emu_check_init();
	struct CUevent_st **pp;
	bool keep;

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
	/* Records still queued free it when the last has run. */
	pthread_mutex_lock(&qlock);
	event_unplace(e);
	keep = e->pending;
	e->dead = keep;
	pthread_mutex_unlock(&qlock);
	if (!keep)
		free(e);
	return CUDA_SUCCESS;
}

/* --- stream memory operations -------------------------------------------- */

#define WAIT_GEQ	0x0u
#define WAIT_EQ		0x1u
#define WAIT_AND	0x2u
#define WAIT_NOR	0x3u
#define WAIT_FLUSH	(1u << 30)

/*
 * The word at @addr: GPU memory through the emulator, host memory
 * directly.  A queued operation can outlive its memory (freed, a primary
 * context reset): host memory is touched only while emu.lock shows it
 * still registered (its free unlinks it under that lock before unmapping
 * it), and an address that is neither is an error, never dereferenced.
 */
static CUresult read_word(uint64_t addr, unsigned int width, uint64_t *v)
{
	CUresult r = CUDA_SUCCESS;
	uint64_t x = 0;

	pthread_mutex_lock(&emu.lock);
	if (!emu_find_hostmem(addr)) {
		pthread_mutex_unlock(&emu.lock);
		if (!emu_device_range(addr, width))
			return CUDA_ERROR_INVALID_VALUE;
		r = emu_copy((uint64_t)(uintptr_t)&x, addr, width, NVP2P_EMU_DTOH);
	} else {
		if (width == 4)
			x = __atomic_load_n((uint32_t *)(uintptr_t)addr, __ATOMIC_ACQUIRE);
		else
			x = __atomic_load_n((uint64_t *)(uintptr_t)addr, __ATOMIC_ACQUIRE);
		pthread_mutex_unlock(&emu.lock);
	}
	*v = x;
	return r;
}

static CUresult write_word(uint64_t addr, unsigned int width, uint64_t v)
{
	pthread_mutex_lock(&emu.lock);
	if (!emu_find_hostmem(addr)) {
		pthread_mutex_unlock(&emu.lock);
		if (!emu_device_range(addr, width))
			return CUDA_ERROR_INVALID_VALUE;
		return emu_copy(addr, (uint64_t)(uintptr_t)&v, width, NVP2P_EMU_HTOD);
	}
	if (width == 4)
		__atomic_store_n((uint32_t *)(uintptr_t)addr, (uint32_t)v, __ATOMIC_RELEASE);
	else
		__atomic_store_n((uint64_t *)(uintptr_t)addr, v, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&emu.lock);
	return CUDA_SUCCESS;
}

enum check { UNMET, MET, GONE };

static enum check satisfied(const struct memop *o)
{
	uint64_t v;
	bool met;

	if (read_word(o->addr, o->width, &v))
		return GONE;
	switch (o->flags & ~WAIT_FLUSH) {
	case WAIT_GEQ:	/* cyclic, as the driver compares */
		met = o->width == 4 ? (int32_t)((uint32_t)v - (uint32_t)o->value) >= 0 :
				      (int64_t)(v - o->value) >= 0;
		break;
	case WAIT_EQ:
		met = v == o->value;
		break;
	case WAIT_AND:
		met = (v & o->value) != 0;
		break;
	default:	/* WAIT_NOR */
		met = ~(v | o->value) != 0;
		break;
	}
	return met ? MET : UNMET;
}

/*
 * The memory of a queued operation went: a GPU fault, which the H100
 * reports as the sticky CUDA_ERROR_LAUNCH_FAILED.
 */
static void fault(void)
{
	CUresult none = CUDA_SUCCESS;

	__atomic_compare_exchange_n(&emu.sticky, &none, CUDA_ERROR_LAUNCH_FAILED,
				    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/*
 * Runs @o, the head of @s's queue, without qlock: false while it must
 * wait.  After a sticky error (@st) nothing runs but callbacks, which are
 * told.
 */
static bool run_op(struct memop *o, CUresult st)
{
	if (o->fn) {
		o->fn(o->handle, o->arg, st);
		return true;
	}
	if (st)
		return true;
	if (!o->wait) {
		if (write_word(o->addr, o->width, o->value))
			fault();
		return true;
	}
	switch (satisfied(o)) {
	case UNMET:
		return false;
	case GONE:
		fault();
		return true;
	default:
		return true;
	}
}

/*
 * Runs what can run of every busy stream, every millisecond; ends when no
 * stream has work (the next queued operation starts another).
 */
static void *memop_worker(void *arg)
{
	(void)arg;
	on_worker = true;
	pthread_mutex_lock(&qlock);
	while (busy) {
		struct CUstream_st **pp = &busy;
		bool progress = false;

		while (*pp) {
			struct CUstream_st *s = *pp;
			struct memop *o = s->head;
			CUresult st = emu_sticky();
			bool go;

			if (o->dep) {
				go = st || o->dep->done >= o->dep_seq;
			} else if (o->ev) {
				go = true;	/* after a fault too: it completes */
			} else {
				pthread_mutex_unlock(&qlock);
				emu_current_ctx = s->ctx;
				go = run_op(o, st);
				pthread_mutex_lock(&qlock);
			}
			if (!go) {
				pp = &s->busy_next;
				continue;
			}
			progress = true;
			s->head = o->next;
			s->done++;
			if (o->dep) {
				o->dep->refs--;
				stream_reap(o->dep);
			}
			if (o->ev)
				event_record_ran(o);
			free(o);
			if (s->head)
				continue;
			s->tail = &s->head;
			/*
			 * Unlink s where it is now: while qlock was dropped a
			 * stream may have been pushed at the list's head, so
			 * *pp need not be s any more.
			 */
			for (pp = &busy; *pp != s; pp = &(*pp)->busy_next)
				;
			*pp = s->busy_next;
			stream_reap(s);
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
	worker_running = false;
	pthread_mutex_unlock(&qlock);
	return NULL;
}

/*
 * Queue @o on stream @s, starting the worker if none runs; frees @o on
 * failure.  Called with qlock held.
 */
static CUresult push(struct CUstream_st *s, struct memop *o)
{
	if (!worker_running) {
		pthread_t t;
		pthread_attr_t a;
		int err;

		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		err = pthread_create(&t, &a, memop_worker, NULL);
		pthread_attr_destroy(&a);
		if (err) {
			free(o);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		worker_running = true;
	}
	if (!s->head) {
		s->busy_next = busy;
		busy = s;
	}
	*s->tail = o;
	s->tail = &o->next;
	s->queued++;
	pthread_cond_broadcast(&qcond);
	return CUDA_SUCCESS;
}

/*
 * Queue @o on @x behind a barrier for each stream that @x's work follows
 * and that has work queued.  Called with qlock held; frees @o on failure.
 */
static CUresult enqueue(struct CUstream_st *x, struct memop *o)
{
	CUresult r;

	for (struct CUstream_st *d = streams; d; d = d->next) {
		struct memop *b;

		if (!follows(x, d) || !pending(d))
			continue;
		b = calloc(1, sizeof(*b));
		if (!b) {
			free(o);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		b->dep = d;
		b->dep_seq = d->queued;
		r = push(x, b);
		if (r) {
			free(o);
			return r;
		}
		d->refs++;
	}
	return push(x, o);
}

/* The driver's checks of one wait or write, before anything is queued. */
static CUresult memop_check(bool wait, unsigned int width, uint64_t addr,
			    unsigned int flags)
{
	bool known;

	if (wait ? (flags & ~(WAIT_FLUSH | 3u)) : flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (!addr || addr % width)
		return CUDA_ERROR_INVALID_VALUE;
	/* CAN_USE_STREAM_WAIT_VALUE_FLUSH is 0 on the H100 */
	if (flags & WAIT_FLUSH)
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&emu.lock);
	known = emu_find_hostmem(addr) != NULL;
	pthread_mutex_unlock(&emu.lock);
	if (!known && !emu_device_range(addr, width))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

/* Run or queue one checked operation on stream @h. */
static CUresult memop_queue(CUstream h, bool wait, unsigned int width,
			    uint64_t addr, uint64_t value, unsigned int flags)
{
	struct CUstream_st *x;
	struct memop *o;
	CUresult r;

	r = op_get(h, &o, &x);
	if (r)
		return r;
	*o = (struct memop){ .wait = wait, .width = width, .addr = addr,
			     .value = value, .flags = flags, .handle = h };
	/* Nothing to follow and nothing to wait for: run it now. */
	if (drained(x) && (!wait || satisfied(o) == MET)) {
		pthread_mutex_unlock(&qlock);
		r = wait ? CUDA_SUCCESS : write_word(addr, width, value);
		free(o);
		return r;
	}
	r = enqueue(x, o);
	pthread_mutex_unlock(&qlock);
	return r;
}

static CUresult memop(CUstream s, bool wait, unsigned int width, uint64_t addr,
		      uint64_t value, unsigned int flags)
{
	CUresult r = stream_lookup(s);

	if (!r)
		r = memop_check(wait, width, addr, flags);
	return r ? r : memop_queue(s, wait, width, addr, value, flags);
}

/*
 * A host function on stream @h: called by the worker once what it follows
 * is done, never by the caller (it may hold locks the function takes, as
 * with the driver's own thread), on the NULL stream too; later work on the
 * stream waits for it.
 */
CUresult emu_stream_host_fn(CUstream h, void (*fn)(CUstream, void *, CUresult),
			    void *arg)
{
	struct CUstream_st *x;
	struct memop *o;
	CUresult r;

	r = op_get(h, &o, &x);
	if (r)
		return r;
	o->fn = fn;
	o->arg = arg;
	r = enqueue(x, o);
	pthread_mutex_unlock(&qlock);
	return r;
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

#define BATCH_MAX	255u	/* "count ... must be less than 256" */

_Static_assert(sizeof(CUstreamBatchMemOpParams) == 48, "CUDA 13.0's layout");

/*
 * The operations of a batch are checked first, all of them, and queued in
 * order only when every one passes, so a bad batch changes nothing.  A
 * barrier orders nothing here (every operation runs in stream order); a
 * flush of remote writes needs CAN_FLUSH_REMOTE_WRITES, which the H100
 * answers 0: CUDA_ERROR_NOT_SUPPORTED.
 */
static CUresult batch_check(const CUstreamBatchMemOpParams *p)
{
	switch (p->operation) {
	case CU_STREAM_MEM_OP_WAIT_VALUE_32:
		return memop_check(true, 4, p->waitValue.address, p->waitValue.flags);
	case CU_STREAM_MEM_OP_WAIT_VALUE_64:
		return memop_check(true, 8, p->waitValue.address, p->waitValue.flags);
	case CU_STREAM_MEM_OP_WRITE_VALUE_32:
		return memop_check(false, 4, p->writeValue.address, p->writeValue.flags);
	case CU_STREAM_MEM_OP_WRITE_VALUE_64:
		return memop_check(false, 8, p->writeValue.address, p->writeValue.flags);
	case CU_STREAM_MEM_OP_BARRIER:
		return p->memoryBarrier.flags > CU_STREAM_MEMORY_BARRIER_TYPE_GPU ?
		       CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
	case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:	/* whatever the flags */
		return CUDA_ERROR_NOT_SUPPORTED;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

EMU_EXPORT CUresult cuStreamBatchMemOp_v2(CUstream s, unsigned int count,
					  CUstreamBatchMemOpParams *ops,
					  unsigned int flags)
{
	CUresult r = stream_lookup(s);

	if (r)
		return r;
	if (flags || count > BATCH_MAX || (count && !ops))
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < count; i++) {
		r = batch_check(&ops[i]);
		if (r)
			return r;
	}
	for (unsigned int i = 0; i < count && !r; i++) {
		const CUstreamBatchMemOpParams *p = &ops[i];

		switch (p->operation) {
		case CU_STREAM_MEM_OP_WAIT_VALUE_32:
			r = memop_queue(s, true, 4, p->waitValue.address,
					p->waitValue.value, p->waitValue.flags);
			break;
		case CU_STREAM_MEM_OP_WAIT_VALUE_64:
			r = memop_queue(s, true, 8, p->waitValue.address,
					p->waitValue.value64, p->waitValue.flags);
			break;
		case CU_STREAM_MEM_OP_WRITE_VALUE_32:
			r = memop_queue(s, false, 4, p->writeValue.address,
					p->writeValue.value, p->writeValue.flags);
			break;
		case CU_STREAM_MEM_OP_WRITE_VALUE_64:
			r = memop_queue(s, false, 8, p->writeValue.address,
					p->writeValue.value64, p->writeValue.flags);
			break;
		default:	/* a barrier */
			break;
		}
	}
	return r;
}

/*
 * The CUDA 8 entry point needs the legacy stream memory operations
 * (CAN_USE_STREAM_MEM_OPS_V1), which the H100 answers 0: as there,
 * CUDA_ERROR_NOT_SUPPORTED.
 */
#undef cuStreamBatchMemOp
CUresult cuStreamBatchMemOp(CUstream s, unsigned int count,
			    CUstreamBatchMemOpParams *ops, unsigned int flags);
EMU_EXPORT CUresult cuStreamBatchMemOp(CUstream s, unsigned int count,
				       CUstreamBatchMemOpParams *ops,
				       unsigned int flags)
{
	CUresult r = stream_lookup(s);

	(void)count;
	(void)ops;
	(void)flags;
	return r ? r : CUDA_ERROR_NOT_SUPPORTED;
}

EMU_PTDS(cuStreamBatchMemOp_v2_ptsz, cuStreamBatchMemOp_v2,
	 (CUstream s, unsigned int count, CUstreamBatchMemOpParams *ops,
	  unsigned int flags), (s, count, ops, flags))
EMU_PTDS(cuStreamBatchMemOp_ptsz, cuStreamBatchMemOp,
	 (CUstream s, unsigned int count, CUstreamBatchMemOpParams *ops,
	  unsigned int flags), (s, count, ops, flags))
EMU_PTDS(cuStreamWaitValue32_v2_ptsz, cuStreamWaitValue32_v2,
	 (CUstream s, CUdeviceptr addr, cuuint32_t value, unsigned int flags),
	 (s, addr, value, flags))
EMU_PTDS(cuStreamWaitValue64_v2_ptsz, cuStreamWaitValue64_v2,
	 (CUstream s, CUdeviceptr addr, cuuint64_t value, unsigned int flags),
	 (s, addr, value, flags))
EMU_PTDS(cuStreamWriteValue32_v2_ptsz, cuStreamWriteValue32_v2,
	 (CUstream s, CUdeviceptr addr, cuuint32_t value, unsigned int flags),
	 (s, addr, value, flags))
EMU_PTDS(cuStreamWriteValue64_v2_ptsz, cuStreamWriteValue64_v2,
	 (CUstream s, CUdeviceptr addr, cuuint64_t value, unsigned int flags),
	 (s, addr, value, flags))
EMU_PTDS(cuStreamQuery_ptsz, cuStreamQuery, (CUstream s), (s))
EMU_PTDS(cuStreamSynchronize_ptsz, cuStreamSynchronize, (CUstream s), (s))
EMU_PTDS(cuStreamGetFlags_ptsz, cuStreamGetFlags,
	 (CUstream s, unsigned int *flags), (s, flags))
EMU_PTDS(cuStreamGetCtx_ptsz, cuStreamGetCtx, (CUstream s, CUcontext *pctx),
	 (s, pctx))
EMU_PTDS(cuStreamWaitEvent_ptsz, cuStreamWaitEvent,
	 (CUstream s, CUevent e, unsigned int flags), (s, e, flags))
EMU_PTDS(cuEventRecord_ptsz, cuEventRecord, (CUevent e, CUstream s), (e, s))

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
