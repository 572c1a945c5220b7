// SPDX-License-Identifier: MIT
/*
 * cuda-stream-test.c - stream order, context synchronisation, context
 * destruction and sticky errors of the emulated driver, as an H100 shows
 * them (tests/conformance/cuda_emu/, sections order, ctxdestroy, memfree,
 * sticky):
 *  - host functions run on the driver's thread, on the NULL stream too,
 *    after the work queued before them;
 *  - the legacy NULL stream's work follows that of every blocking stream
 *    (the per-thread default stream included) and theirs follows its;
 *    CU_STREAM_NON_BLOCKING streams are exempt both ways;
 *  - in the _ptsz calls the NULL stream is the thread's own default stream;
 *  - cuCtxSynchronize waits for the work of every stream of the context;
 *  - cuCtxDestroy lets the queued work finish, then its streams go, and
 *    with them the worker thread;
 *  - cuMemFree waits for the queued work (a write to the memory lands);
 *  - cuEventRecord and cuStreamWaitEvent queue and return at once (section
 *    event): the event is NOT_READY until every record of it has run,
 *    another stream's work queued after cuStreamWaitEvent waits for it,
 *    cuEventElapsedTime of a pending event is NOT_READY, an event may be
 *    destroyed while its record waits;
 *  - a stream write to memory unmapped while it was queued (cuMemUnmap
 *    does not wait) is the sticky CUDA_ERROR_LAUNCH_FAILED: every later
 *    call that needs a context returns it, in every context, a new one
 *    cannot be made; queries of a context's state still answer; an error
 *    from bad arguments is returned once.  The process cannot use CUDA
 *    after it, so this test is the last;
 *  - after such a fault cuStreamSynchronize and cuCtxSynchronize return
 *    only once the callbacks behind it have run (sticky_late, run alone
 *    by cuda-emu-stream.sh, one process each way).
 * Order is observed by order: each host function, and each release of a
 * waited-on word by another thread, appends a letter.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "stream_order.h"
#include "tap.h"

static CUresult cb_status = (CUresult)-1;
static CUcontext primary;
static volatile uint32_t *word;	/* page-locked host words */
static CUdeviceptr dword;	/* their device address */

static void callback(CUstream s, CUresult status, void *arg)
{
	(void)s;
	cb_status = status;
	order_note((char)(uintptr_t)arg);
}

/*
 * Another thread writes 1 to a word after a pause, noting 'R' first.
 * What must wait for the word is checked with a timed release: it comes
 * after the release however long the pause.  What must NOT wait for the
 * word releases it itself (release_on(), then RELEASE_HOSTFN, which arms
 * the release a pause after its letter, or order_release_now();
 * stream_order.h): on a loaded machine the order stays the one the
 * program fixes.
 */
#define PAUSE_MS 300

/* The test's last release: a failed check leaves it to end_release(). */
static struct order_release *last_release;

static void release_start(struct order_release *r, volatile uint32_t *w, unsigned int ms)
{
	if (order_release_start(r, w, ms))
		TAP_SKIP("no thread for the release");
	last_release = r;
}

/* A release by RELEASE_HOSTFN(@letter), order_release_now() or _arm(). */
static void release_on(struct order_release *r, volatile uint32_t *w, char letter)
{
	if (order_release_prepare(r, w, letter))
		TAP_SKIP("no thread for the release");
	last_release = r;
}

/*
 * After each test: a release a failed check left unjoined is made and its
 * thread ended, so that the next test starts with no thread of ours.
 * After a failed test, every word is released (each wait is for >= 1)
 * and its queued work run, so that none of it is left for a later test
 * to release into that test's order.
 */
static void end_release(int ok)
{
	if (last_release && last_release->started) {
		order_release_now(last_release);
		order_release_join(last_release);
	}
	last_release = NULL;
	if (!ok) {
		for (int i = 0; i < 1024; i++)
			__atomic_store_n(&word[i], 1, __ATOMIC_SEQ_CST);
		cuCtxSetCurrent(primary);	/* where each test starts */
		cuCtxSynchronize();
		order_take();
	}
}

#define STREAM_TEST(fn) end_release(TAP_TEST(fn))

#define CK(call) CHECK_EQ(call, CUDA_SUCCESS)
#define HOSTFN(s, c) CK(cuLaunchHostFunc(s, order_hostfn, (void *)(uintptr_t)(c)))
#define RELEASE_HOSTFN(s, r) CK(cuLaunchHostFunc(s, order_release_hostfn, r))

static void setup_words(void)
{
	memset((void *)word, 0, 4096);
	order_take();
}

/* The NULL stream's host function follows a blocking stream's wait. */
static void null_stream_follows_blocking(void)
{
	CUstream s, nb;
	static struct order_release r;	/* may outlive a failed check */

	setup_words();
	CK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
	CK(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
	release_on(&r, &word[0], 'C');
	CK(cuStreamWaitValue32(s, dword, 1, CU_STREAM_WAIT_VALUE_GEQ));
	HOSTFN(s, 'A');
	HOSTFN(NULL, 'B');
	RELEASE_HOSTFN(nb, &r);
	CK(cuCtxSynchronize());
	order_release_join(&r);
	CHECK_STR(order_take(), "CRAB");
	CHECK_EQ(order_on_caller, 0);
	CK(cuStreamDestroy(s));
	CK(cuStreamDestroy(nb));
}

/* A blocking stream's work follows a wait queued on the NULL stream. */
static void blocking_follows_null_stream(void)
{
	CUstream s, nb;
	static struct order_release r;	/* may outlive a failed check */

	setup_words();
	CK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
	CK(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
	release_on(&r, &word[1], 'E');
	CK(cuStreamWaitValue32(NULL, dword + 4, 1, CU_STREAM_WAIT_VALUE_GEQ));
	order_note('W');	/* the wait was queued, not waited for */
	HOSTFN(s, 'D');
	RELEASE_HOSTFN(nb, &r);
	CK(cuCtxSynchronize());
	order_release_join(&r);
	CHECK_STR(order_take(), "WERD");
	CK(cuStreamDestroy(s));
	CK(cuStreamDestroy(nb));
}

/*
 * The NULL stream does not wait for a non-blocking stream: its host
 * function releases the non-blocking stream's wait (the fallback releases
 * it if that never happens, and the order is then wrong).
 */
static void nonblocking_exempt(void)
{
	CUstream nb;
	static struct order_release r;	/* may outlive a failed check */

	setup_words();
	CK(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
	release_on(&r, &word[2], 'B');
	CK(cuStreamWaitValue32(nb, dword + 8, 1, CU_STREAM_WAIT_VALUE_GEQ));
	HOSTFN(nb, 'A');
	RELEASE_HOSTFN(NULL, &r);
	CK(cuCtxSynchronize());
	order_release_join(&r);
	CHECK_STR(order_take(), "BRA");
	CK(cuStreamDestroy(nb));
}

/* cuCtxSynchronize waits for a non-blocking stream's queued work. */
static void ctx_synchronize_waits(void)
{
	CUstream nb;
	static struct order_release r;	/* may outlive a failed check */

	setup_words();
	CK(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
	release_start(&r, &word[3], PAUSE_MS);
	CK(cuStreamWaitValue32(nb, dword + 12, 1, CU_STREAM_WAIT_VALUE_GEQ));
	HOSTFN(nb, 'G');
	CK(cuStreamWriteValue32(nb, dword + 16, 7, 0));
	CK(cuCtxSynchronize());
	order_note('S');
	order_release_join(&r);
	CHECK_STR(order_take(), "RGS");
	CHECK_EQ(word[4], 7);
	CK(cuStreamDestroy(nb));
}

/*
 * A record behind a wait returns at once and leaves the event pending;
 * another stream waiting for the event runs its work after the record.
 */
static void event_record_queues(void)
{
	CUstream s, s2;
	CUevent e;
	static struct order_release r;	/* may outlive a failed check */

	setup_words();
	CK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
	CK(cuStreamCreate(&s2, CU_STREAM_DEFAULT));
	CK(cuEventCreate(&e, 0));
	release_on(&r, &word[0], 0);
	CK(cuStreamWaitValue32(s, dword, 1, CU_STREAM_WAIT_VALUE_GEQ));
	HOSTFN(s, 'A');
	CK(cuEventRecord(e, s));
	order_note('E');
	CHECK_EQ(cuEventQuery(e), CUDA_ERROR_NOT_READY);
	CK(cuStreamWaitEvent(s2, e, 0));
	order_note('W');
	HOSTFN(s2, 'B');
	CHECK_EQ(cuStreamQuery(s2), CUDA_ERROR_NOT_READY);
	order_release_arm(&r, PAUSE_MS);
	CK(cuEventSynchronize(e));
	CK(cuEventQuery(e));
	CK(cuStreamSynchronize(s2));
	order_release_join(&r);
	CHECK_STR(order_take(), "EWRAB");
	CK(cuEventDestroy(e));
	CK(cuStreamDestroy(s));
	CK(cuStreamDestroy(s2));
}

/*
 * Elapsed time needs both records run.  An event is its latest record, as
 * on the H100 (conformance sections waitearlier and event): recorded again
 * on an idle stream while its earlier record waits, it is complete, and
 * cuEventSynchronize returns, with that earlier record still waiting;
 * recorded again behind a wait after a record that ran, it is NOT_READY.
 * An event destroyed while its record waits goes when the record has run.
 * The waits here are released by this thread, after the checks.
 */
static void event_pending_records(void)
{
	CUstream s, s2;
	CUevent a, b;
	float ms = -1;
	static struct order_release r;	/* may outlive a failed check */

	setup_words();
	CK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
	CK(cuStreamCreate(&s2, CU_STREAM_DEFAULT));
	CK(cuEventCreate(&a, 0));
	CK(cuEventCreate(&b, 0));
	release_on(&r, &word[1], 0);
	CK(cuEventRecord(a, s));
	CK(cuStreamWaitValue32(s, dword + 4, 1, CU_STREAM_WAIT_VALUE_GEQ));
	CK(cuEventRecord(b, s));
	CHECK_EQ(cuEventElapsedTime(&ms, a, b), CUDA_ERROR_NOT_READY);
	order_release_arm(&r, PAUSE_MS);	/* the time between the records */
	CK(cuEventSynchronize(b));
	CK(cuEventElapsedTime(&ms, a, b));
	CHECK(ms >= PAUSE_MS / 2);
	order_release_join(&r);

	CK(cuStreamWaitValue32(s, dword + 8, 1, CU_STREAM_WAIT_VALUE_GEQ));
	CK(cuEventRecord(a, s));
	CK(cuEventRecord(a, s2));
	CK(cuEventQuery(a));	/* first: a failure ends the test, where the
				 * synchronize would not return */
	CK(cuEventSynchronize(a));
	CHECK_EQ(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
	CK(cuEventRecord(b, s));
	CK(cuEventDestroy(b));
	CHECK_EQ(cuEventQuery(b), CUDA_ERROR_INVALID_HANDLE);
	__atomic_store_n(&word[2], 1, __ATOMIC_SEQ_CST);
	CK(cuStreamSynchronize(s));
	CK(cuEventQuery(a));

	CK(cuStreamWaitValue32(s, dword + 12, 1, CU_STREAM_WAIT_VALUE_GEQ));
	CK(cuEventRecord(a, s));
	CHECK_EQ(cuEventQuery(a), CUDA_ERROR_NOT_READY);
	__atomic_store_n(&word[3], 1, __ATOMIC_SEQ_CST);
	CK(cuEventSynchronize(a));
	CK(cuEventQuery(a));
	CK(cuEventDestroy(a));
	CK(cuStreamDestroy(s));
	CK(cuStreamDestroy(s2));
}

/* A synchronous copy is the NULL stream's: it follows blocking streams. */
static void sync_copy_follows_blocking(void)
{
	CUdeviceptr d;
	CUstream s;
	static struct order_release r;	/* may outlive a failed check */
	uint32_t v;

	setup_words();
	CK(cuMemAlloc(&d, 4096));
	CK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
	release_start(&r, &word[5], PAUSE_MS);
	CK(cuStreamWaitValue32(s, dword + 20, 1, CU_STREAM_WAIT_VALUE_GEQ));
	CK(cuMemcpyDtoH(&v, d, 4));
	order_note('M');
	order_release_join(&r);
	CHECK_STR(order_take(), "RM");
	CK(cuStreamDestroy(s));
	CK(cuMemFree(d));
}

/* CU_STREAM_PER_THREAD is a blocking stream; CU_STREAM_LEGACY is NULL's. */
static void default_stream_handles(void)
{
	CUstream s, nb;
	static struct order_release r;	/* may outlive a failed check */
	unsigned int fl = 99;

	setup_words();
	CK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
	CK(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
	CK(cuStreamQuery(CU_STREAM_PER_THREAD));
	CK(cuStreamQuery(CU_STREAM_LEGACY));
	CK(cuStreamGetFlags(CU_STREAM_PER_THREAD, &fl));
	CHECK_EQ(fl, 0);
	release_on(&r, &word[6], 'J');
	CK(cuStreamWaitValue32(CU_STREAM_PER_THREAD, dword + 24, 1, CU_STREAM_WAIT_VALUE_GEQ));
	HOSTFN(CU_STREAM_PER_THREAD, 'H');
	HOSTFN(NULL, 'I');
	RELEASE_HOSTFN(nb, &r);
	CK(cuCtxSynchronize());
	order_release_join(&r);
	CHECK_STR(order_take(), "JRHI");
	release_on(&r, &word[7], 'L');
	CK(cuStreamWaitValue32(CU_STREAM_LEGACY, dword + 28, 1, CU_STREAM_WAIT_VALUE_GEQ));
	HOSTFN(s, 'K');
	RELEASE_HOSTFN(nb, &r);
	CK(cuCtxSynchronize());
	order_release_join(&r);
	CHECK_STR(order_take(), "LRK");
	CHECK_EQ(order_on_caller, 0);
	CK(cuStreamDestroy(s));
	CK(cuStreamDestroy(nb));
}

/* The per-thread default stream variants, which cuda.h does not name. */
CUresult cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *arg);
CUresult cuStreamWaitValue32_v2_ptsz(CUstream s, CUdeviceptr addr,
				     cuuint32_t value, unsigned int flags);

/* @arg: the release, which the host function makes, noting 'T'. */
static void *other_thread(void *arg)
{
	if (cuCtxSetCurrent(primary) ||
	    cuLaunchHostFunc_ptsz(NULL, order_release_hostfn, arg))
		order_note('!');
	return NULL;
}

/*
 * In a _ptsz call NULL is the calling thread's default stream: another
 * thread's host function on its own does not wait for this thread's.
 */
static void ptsz_null_is_per_thread(void)
{
	static struct order_release r;	/* may outlive a failed check */
	pthread_t t;

	setup_words();
	release_on(&r, &word[8], 'T');
	CK(cuStreamWaitValue32_v2_ptsz(NULL, dword + 32, 1, CU_STREAM_WAIT_VALUE_GEQ));
	CK(cuLaunchHostFunc_ptsz(NULL, order_hostfn, (void *)(uintptr_t)'M'));
	CHECK_EQ(cuStreamQuery(NULL), CUDA_SUCCESS);	/* not the legacy one */
	CHECK_EQ(cuStreamQuery(CU_STREAM_PER_THREAD), CUDA_ERROR_NOT_READY);
	if (pthread_create(&t, NULL, other_thread, &r))
		TAP_SKIP("no second thread");
	pthread_join(t, NULL);
	CK(cuCtxSynchronize());
	order_release_join(&r);
	CHECK_STR(order_take(), "TRM");
}

static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The thread count settles at @want within two seconds; the count seen. */
static int threads_settle(int want)
{
	int n = threads();

	for (int i = 0; i < 200 && n != want; i++) {
		usleep(10 * 1000);
		n = threads();
	}
	return n;
}

/*
 * cuCtxDestroy lets the queued work run to its end, then the context's
 * streams go (their handles are no longer valid), and the worker thread
 * that ran them ends.
 */
static void ctx_destroy_ends_streams(void)
{
	CUcontext c, cur;
	CUstream s;
	CUdeviceptr hd;
	volatile uint32_t *w;
	static struct order_release r;	/* may outlive a failed check */
	int base = threads_settle(1);

	order_take();
	CHECK_EQ(base, 1);	/* no worker while no work is queued */
	CK(cuCtxCreate(&c, NULL, 0, 0));
	CK(cuMemAllocHost((void **)&w, 4096));
	*w = 0;
	CK(cuMemHostGetDevicePointer(&hd, (void *)w, 0));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	release_on(&r, w, 0);
	CK(cuStreamWaitValue32(s, hd, 1, CU_STREAM_WAIT_VALUE_GEQ));
	HOSTFN(s, 'A');
	/* the worker (it ends when no work is queued), and the release's */
	CHECK_EQ(threads(), base + 2);
	order_release_arm(&r, PAUSE_MS);
	CK(cuCtxDestroy(c));
	order_note('X');
	order_release_join(&r);
	CHECK_STR(order_take(), "RAX");
	CHECK_EQ(threads_settle(base), base);
	CK(cuCtxGetCurrent(&cur));
	CHECK(cur == primary);
	CHECK_EQ(cuStreamQuery(s), CUDA_ERROR_INVALID_HANDLE);
	CHECK_EQ(cuStreamDestroy(s), CUDA_ERROR_INVALID_HANDLE);
}

/* cuMemFree waits for a queued write to the memory: no fault. */
static void mem_free_waits(void)
{
	CUdeviceptr d;
	CUstream nb;
	static struct order_release r;	/* may outlive a failed check */

	setup_words();
	CK(cuMemAlloc(&d, 4096));
	CK(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
	release_start(&r, &word[0], PAUSE_MS);
	CK(cuStreamWaitValue32(nb, dword, 1, CU_STREAM_WAIT_VALUE_GEQ));
	CK(cuStreamWriteValue32(nb, d, 0x55, 0));
	CK(cuMemFree(d));
	order_note('F');
	order_release_join(&r);
	CHECK_STR(order_take(), "RF");
	CK(cuStreamSynchronize(nb));
	CK(cuCtxSynchronize());
	CK(cuStreamDestroy(nb));
}

/*
 * A stream write to memory unmapped while it was queued: the sticky
 * CUDA_ERROR_LAUNCH_FAILED, from every later call that needs a context,
 * in any context, and to callbacks queued before it (host functions do
 * not run); a context cannot be made any more; the context's state can
 * still be read, and it can be destroyed.  A bad argument's error is
 * returned once.
 */
static void sticky_error(void)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
		.allocFlags = { .gpuDirectRDMACapable = 1 },
	};
	CUmemAccessDesc acc = { .location = prop.location,
				.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUmemGenericAllocationHandle h;
	CUcontext c, c2, cur;
	CUdeviceptr va, d, d2;
	CUdevice dev;
	CUstream s;
	static struct order_release r;	/* may outlive a failed check */
	size_t gran;
	unsigned int flags;
	uint32_t v;

	setup_words();
	CK(cuCtxCreate(&c, NULL, 0, 0));
	CK(cuMemAlloc(&d, 4096));
	CHECK_EQ(cuMemcpyDtoH(&v, 0, 4), CUDA_ERROR_INVALID_VALUE);
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(&v, d, 4));

	CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CK(cuMemCreate(&h, gran, &prop, 0));
	CK(cuMemAddressReserve(&va, gran, 0, 0, 0));
	CK(cuMemMap(va, gran, 0, h, 0));
	CK(cuMemSetAccess(va, gran, &acc, 1));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	/* word[0] is registered in the primary context: any context may wait */
	release_on(&r, &word[0], 0);
	CK(cuStreamWaitValue32(s, dword, 1, CU_STREAM_WAIT_VALUE_GEQ));
	CK(cuStreamWriteValue32(s, va, 0x55, 0));
	CK(cuStreamAddCallback(s, callback, (void *)'C', 0));
	HOSTFN(s, 'Z');
	CK(cuMemUnmap(va, gran));	/* does not wait for the queued write */
	order_note('U');
	order_release_now(&r);
	order_release_join(&r);
	CHECK_EQ(cuStreamSynchronize(s), CUDA_ERROR_LAUNCH_FAILED);
	CHECK_STR(order_take(), "URC");
	CHECK_EQ(cb_status, CUDA_ERROR_LAUNCH_FAILED);
	CHECK_EQ(cuStreamSynchronize(s), CUDA_ERROR_LAUNCH_FAILED);
	CHECK_EQ(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
	CHECK_EQ(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
	CHECK_EQ(cuMemAlloc(&d2, 4096), CUDA_ERROR_LAUNCH_FAILED);
	CHECK_EQ(cuMemcpyDtoH(&v, d, 4), CUDA_ERROR_LAUNCH_FAILED);
	CHECK_EQ(cuLaunchHostFunc(s, order_hostfn, (void *)'Y'), CUDA_ERROR_LAUNCH_FAILED);
	CHECK_EQ(cuStreamQuery(s), CUDA_ERROR_LAUNCH_FAILED);
	CHECK_EQ(cuMemFree(d), CUDA_ERROR_LAUNCH_FAILED);
	CHECK_EQ(cuStreamDestroy(s), CUDA_ERROR_LAUNCH_FAILED);
	CK(cuCtxGetDevice(&dev));
	CK(cuCtxGetFlags(&flags));
	/* the primary context too */
	CK(cuCtxPushCurrent(primary));
	CHECK_EQ(cuMemAlloc(&d2, 4096), CUDA_ERROR_LAUNCH_FAILED);
	CHECK_EQ(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
	CK(cuCtxPopCurrent(&cur));
	CHECK(cur == primary);
	CK(cuCtxDestroy(c));
	CHECK_EQ(cuCtxCreate(&c2, NULL, 0, 0), CUDA_ERROR_LAUNCH_FAILED);
	CHECK_STR(order_take(), "");
}

/* A callback that holds the driver's thread a while, then notes 'S'. */
static void slow_callback(CUstream s, CUresult status, void *arg)
{
	(void)s;
	(void)arg;
	cb_status = status;
	usleep(200 * 1000);
	order_note('S');
}

static bool late_ctx_sync;	/* sticky_late synchronizes the context */

/*
 * After a fault, a synchronize returns the error only once the callbacks
 * queued behind the failed operation have run, with the error, as the
 * driver has them.  The race is made certain rather than lucky: the
 * fault is seen first (cuStreamQuery answers the sticky error), while a
 * slow callback holds the driver's thread ahead of the last one, so a
 * synchronize that does not wait for them returns before 'S' and 'C'.
 * Run alone (`cuda-stream-test sticky-late-stream|sticky-late-ctx`): the
 * process cannot use CUDA after it.
 */
static void sticky_late(void)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
		.allocFlags = { .gpuDirectRDMACapable = 1 },
	};
	CUmemAccessDesc acc = { .location = prop.location,
				.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;
	CUstream s;
	static struct order_release r;	/* may outlive a failed check */
	size_t gran;
	CUresult q = CUDA_SUCCESS;

	setup_words();
	CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CK(cuMemCreate(&h, gran, &prop, 0));
	CK(cuMemAddressReserve(&va, gran, 0, 0, 0));
	CK(cuMemMap(va, gran, 0, h, 0));
	CK(cuMemSetAccess(va, gran, &acc, 1));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	release_on(&r, &word[0], 0);
	CK(cuStreamWaitValue32(s, dword, 1, CU_STREAM_WAIT_VALUE_GEQ));
	CK(cuStreamWriteValue32(s, va, 0x55, 0));
	CK(cuStreamAddCallback(s, slow_callback, NULL, 0));
	CK(cuStreamAddCallback(s, callback, (void *)'C', 0));
	CK(cuMemUnmap(va, gran));
	order_note('U');
	order_release_now(&r);
	order_release_join(&r);
	/* the fault, seen before the callbacks behind it have run */
	for (int i = 0; i < 10000 && q == CUDA_SUCCESS; i++) {
		q = cuStreamQuery(s);
		if (q == CUDA_ERROR_NOT_READY) {
			q = CUDA_SUCCESS;
			usleep(1000);
		}
	}
	CHECK_EQ(q, CUDA_ERROR_LAUNCH_FAILED);
	if (late_ctx_sync)
		CHECK_EQ(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
	else
		CHECK_EQ(cuStreamSynchronize(s), CUDA_ERROR_LAUNCH_FAILED);
	CHECK_STR(order_take(), "URSC");
	CHECK_EQ(cb_status, CUDA_ERROR_LAUNCH_FAILED);
}

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;

	if (only && strcmp(only, "sticky-late-stream") &&
	    strcmp(only, "sticky-late-ctx")) {
		fprintf(stderr, "usage: cuda-stream-test [sticky-late-stream|sticky-late-ctx]\n");
		return 2;
	}
	order_caller = pthread_self();
	if (cuInit(0) || cuDevicePrimaryCtxRetain(&primary, 0) ||
	    cuCtxSetCurrent(primary) || cuMemAllocHost((void **)&word, 4096) ||
	    cuMemHostGetDevicePointer(&dword, (void *)word, 0))
		tap_skip_all("no emulated GPU (cuInit, primary context, host words)");
	if (only) {
		late_ctx_sync = !strcmp(only, "sticky-late-ctx");
		STREAM_TEST(sticky_late);
		return tap_done();
	}
	STREAM_TEST(null_stream_follows_blocking);
	STREAM_TEST(blocking_follows_null_stream);
	STREAM_TEST(nonblocking_exempt);
	STREAM_TEST(ctx_synchronize_waits);
	STREAM_TEST(sync_copy_follows_blocking);
	STREAM_TEST(default_stream_handles);
	STREAM_TEST(ptsz_null_is_per_thread);
	STREAM_TEST(ctx_destroy_ends_streams);
	STREAM_TEST(mem_free_waits);
	STREAM_TEST(event_record_queues);
	STREAM_TEST(event_pending_records);
	STREAM_TEST(sticky_error);	/* last: CUDA is unusable after it */
	cuMemFreeHost((void *)word);
	cuDevicePrimaryCtxRelease(0);
	return tap_done();
}
