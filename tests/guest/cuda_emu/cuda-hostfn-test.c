// SPDX-License-Identifier: MIT
/*
 * cuda-hostfn-test.c - host functions on streams (cuLaunchHostFunc,
 * cuStreamAddCallback) and managed memory (cuMemAllocManaged) on the
 * emulated driver: a host function waits for the stream's earlier work (a
 * stream wait on a word the host writes later), runs on another thread
 * than the caller, holds up later work on its stream, and the argument
 * errors; managed memory is refused after the argument checks.
 */
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include <cuda.h>

#include "tap.h"

#define CK(call) ((call) == CUDA_SUCCESS)

static pthread_t caller;
static int ran, on_caller, order[4], n_order;
static CUresult cb_status = (CUresult)-1;
static CUstream cb_stream;

static void host_fn(void *arg)
{
	__atomic_store_n(&ran, 1, __ATOMIC_SEQ_CST);
	on_caller = pthread_equal(pthread_self(), caller);
	order[n_order++] = (int)(intptr_t)arg;
}

static void callback(CUstream s, CUresult status, void *arg)
{
	cb_stream = s;
	cb_status = status;
	order[n_order++] = (int)(intptr_t)arg;
}

int main(void)
{
	volatile uint32_t *word;
	CUdeviceptr d = 0, dword;
	CUcontext ctx;
	CUstream s;

	tap_plan(15);
	caller = pthread_self();
	if (!CK(cuInit(0)) || !CK(cuDevicePrimaryCtxRetain(&ctx, 0)) ||
	    !CK(cuCtxSetCurrent(ctx)) || !CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) ||
	    !CK(cuMemAllocHost((void **)&word, 4096)) ||
	    !CK(cuMemHostGetDevicePointer(&dword, (void *)word, 0))) {
		tap_ok(0, "setup: context, stream, page-locked word");
		return tap_done();
	}
	*word = 0;
	tap_ok(CK(cuStreamWaitValue32(s, dword, 1, CU_STREAM_WAIT_VALUE_EQ)),
	       "a stream wait on a word the host writes later");
	tap_ok(CK(cuLaunchHostFunc(s, host_fn, (void *)1)), "cuLaunchHostFunc behind it");
	tap_ok(CK(cuStreamAddCallback(s, callback, (void *)2, 0)), "cuStreamAddCallback behind that");
	usleep(100 * 1000);
	tap_ok(!__atomic_load_n(&ran, __ATOMIC_SEQ_CST), "the host function waits for the wait");
	tap_ok(cuStreamQuery(s) == CUDA_ERROR_NOT_READY, "the stream is not ready meanwhile");
	*word = 1;
	tap_ok(CK(cuStreamSynchronize(s)), "cuStreamSynchronize after the host writes the word");
	tap_ok(ran && !on_caller, "the host function ran, not on the caller's thread");
	tap_ok(n_order == 2 && order[0] == 1 && order[1] == 2,
	       "host function and callback ran in stream order (%d: %d, %d)", n_order,
	       order[0], order[1]);
	tap_ok(cb_status == CUDA_SUCCESS && cb_stream == s,
	       "the callback got the stream and CUDA_SUCCESS");
	ran = 0;
	on_caller = 1;
	tap_ok(CK(cuLaunchHostFunc(NULL, host_fn, (void *)3)) && CK(cuStreamSynchronize(NULL)) &&
	       n_order == 3 && ran && !on_caller,
	       "on the NULL stream too it runs on another thread than the caller's");
	tap_ok(cuLaunchHostFunc(s, NULL, NULL) == CUDA_ERROR_INVALID_VALUE,
	       "cuLaunchHostFunc(NULL function): CUDA_ERROR_INVALID_VALUE");
	tap_ok(cuStreamAddCallback(s, callback, NULL, 1) == CUDA_ERROR_INVALID_VALUE,
	       "cuStreamAddCallback with flags 1: CUDA_ERROR_INVALID_VALUE");
	tap_ok(cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_SINGLE) == CUDA_ERROR_INVALID_VALUE &&
	       cuMemAllocManaged(&d, 0, CU_MEM_ATTACH_GLOBAL) == CUDA_ERROR_INVALID_VALUE,
	       "cuMemAllocManaged: ATTACH_SINGLE, 0 bytes: CUDA_ERROR_INVALID_VALUE");
	tap_ok(cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_GLOBAL) == CUDA_ERROR_NOT_SUPPORTED && !d,
	       "cuMemAllocManaged: CUDA_ERROR_NOT_SUPPORTED (no managed memory)");
	cuStreamDestroy(s);
	cuMemFreeHost((void *)word);
	cuCtxSetCurrent(NULL);
	tap_ok(CK(cuDevicePrimaryCtxRelease(0)) &&
	       cuLaunchHostFunc(NULL, host_fn, NULL) == CUDA_ERROR_INVALID_CONTEXT,
	       "without a context: CUDA_ERROR_INVALID_CONTEXT");
	return tap_done();
}
