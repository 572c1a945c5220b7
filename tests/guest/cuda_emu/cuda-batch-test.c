// SPDX-License-Identifier: MIT
/*
 * cuda-batch-test.c - cuStreamBatchMemOp: the operations of a batch run in
 * order on their stream, a wait in a batch holds the stream until another
 * thread writes the word (checked by order, never by time), and bad input
 * is refused before anything runs.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cuda.h>

#include "tap.h"

#define CK(call) ((call) == CUDA_SUCCESS)

static volatile uint32_t *host_word;
static atomic_int released;

/* The host's write that releases a wait, some time after it was queued. */
static void *release_later(void *arg)
{
	(void)arg;
	usleep(200 * 1000);
	atomic_store(&released, 1);
	__atomic_store_n(host_word, 5, __ATOMIC_RELEASE);
	return NULL;
}

static CUstreamBatchMemOpParams op_value(CUstreamBatchMemOpType type, CUdeviceptr a,
					 uint64_t v, unsigned int flags)
{
	CUstreamBatchMemOpParams p;

	memset(&p, 0, sizeof(p));
	p.operation = type;
	if (type == CU_STREAM_MEM_OP_WAIT_VALUE_32 || type == CU_STREAM_MEM_OP_WAIT_VALUE_64) {
		p.waitValue.address = a;
		p.waitValue.flags = flags;
		if (type == CU_STREAM_MEM_OP_WAIT_VALUE_64)
			p.waitValue.value64 = v;
		else
			p.waitValue.value = (cuuint32_t)v;
	} else {
		p.writeValue.address = a;
		p.writeValue.flags = flags;
		if (type == CU_STREAM_MEM_OP_WRITE_VALUE_64)
			p.writeValue.value64 = v;
		else
			p.writeValue.value = (cuuint32_t)v;
	}
	return p;
}

static CUstreamBatchMemOpParams op_flags(int type, unsigned int flags)
{
	CUstreamBatchMemOpParams p;

	memset(&p, 0, sizeof(p));
	p.operation = (CUstreamBatchMemOpType)type;
	p.memoryBarrier.flags = flags;
	return p;
}

static uint32_t read32(CUdeviceptr d)
{
	uint32_t v = 0xdeadbeef;

	cuMemcpyDtoH(&v, d, sizeof(v));
	return v;
}

int main(void)
{
	static CUstreamBatchMemOpParams ops[300];
	CUresult (*legacy)(CUstream, unsigned int, CUstreamBatchMemOpParams *, unsigned int);
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr d, hd;
	CUstream s, dead;
	uint64_t v64 = 0;
	uint32_t *m;
	pthread_t t;

	tap_plan(28);
	if (!tap_ok(CK(cuInit(0)) && CK(cuDeviceGet(&dev, 0)) && CK(cuDevicePrimaryCtxRetain(&ctx, dev)) &&
		    CK(cuCtxSetCurrent(ctx)) && CK(cuMemAlloc(&d, 4096)) && CK(cuMemsetD8(d, 0, 4096)) &&
		    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)), "context, 4 KiB of GPU memory, a stream"))
		return tap_done();
	tap_ok(sizeof(CUstreamBatchMemOpParams) == 48, "CUstreamBatchMemOpParams is 48 bytes, as CUDA 13.0's");

	ops[0] = op_value(CU_STREAM_MEM_OP_WRITE_VALUE_32, d, 0x1234, 0);
	ops[1] = op_value(CU_STREAM_MEM_OP_WRITE_VALUE_64, d + 8, 0x1122334455667788ull, 0);
	ops[2] = op_value(CU_STREAM_MEM_OP_WAIT_VALUE_32, d, 0x1234, CU_STREAM_WAIT_VALUE_EQ);
	ops[3] = op_value(CU_STREAM_MEM_OP_WAIT_VALUE_64, d + 8, 0x1122334455667788ull, CU_STREAM_WAIT_VALUE_EQ);
	ops[4] = op_flags(CU_STREAM_MEM_OP_BARRIER, CU_STREAM_MEMORY_BARRIER_TYPE_SYS);
	ops[5] = op_flags(CU_STREAM_MEM_OP_BARRIER, CU_STREAM_MEMORY_BARRIER_TYPE_GPU);
	ops[6] = op_value(CU_STREAM_MEM_OP_WRITE_VALUE_32, d + 16, 7, 0);
	tap_ok(CK(cuStreamBatchMemOp(s, 7, ops, 0)) && CK(cuStreamSynchronize(s)), "a batch of writes, satisfied waits and barriers");
	cuMemcpyDtoH(&v64, d + 8, 8);
	tap_ok(read32(d) == 0x1234 && v64 == 0x1122334455667788ull && read32(d + 16) == 7, "its writes landed (0x%x 0x%llx %u)",
	       read32(d), (unsigned long long)v64, read32(d + 16));
	tap_ok(CK(cuStreamBatchMemOp(NULL, 1, ops, 0)), "on the NULL stream");
	tap_ok(CK(cuStreamBatchMemOp(s, 0, ops, 0)) && CK(cuStreamBatchMemOp(s, 0, NULL, 0)), "count 0, with or without an array: CUDA_SUCCESS (as the H100)");

	/* bad input: refused, and nothing of the batch runs */
	tap_ok(cuStreamBatchMemOp(s, 1, NULL, 0) == CUDA_ERROR_INVALID_VALUE, "a NULL array: CUDA_ERROR_INVALID_VALUE (the H100's library crashes)");
	tap_ok(cuStreamBatchMemOp(s, 1, ops, 1) == CUDA_ERROR_INVALID_VALUE, "flags 1: CUDA_ERROR_INVALID_VALUE");
	for (int i = 0; i < 300; i++)
		ops[i] = op_value(CU_STREAM_MEM_OP_WRITE_VALUE_32, d + 20, (uint64_t)i, 0);
	tap_ok(CK(cuStreamBatchMemOp(s, 255, ops, 0)) && CK(cuStreamSynchronize(s)) && read32(d + 20) == 254,
	       "255 operations run in order (last value %u)", read32(d + 20));
	tap_ok(cuStreamBatchMemOp(s, 256, ops, 0) == CUDA_ERROR_INVALID_VALUE && read32(d + 20) == 254,
	       "256: CUDA_ERROR_INVALID_VALUE (\"must be less than 256\"), nothing written");
	ops[0] = op_flags(0, 0);
	tap_ok(cuStreamBatchMemOp(s, 1, ops, 0) == CUDA_ERROR_INVALID_VALUE, "operation 0: CUDA_ERROR_INVALID_VALUE");
	ops[0] = op_flags(7, 0);
	tap_ok(cuStreamBatchMemOp(s, 1, ops, 0) == CUDA_ERROR_INVALID_VALUE, "operation 7: CUDA_ERROR_INVALID_VALUE");
	ops[0] = op_flags(CU_STREAM_MEM_OP_BARRIER, 2);
	tap_ok(cuStreamBatchMemOp(s, 1, ops, 0) == CUDA_ERROR_INVALID_VALUE, "a barrier of type 2: CUDA_ERROR_INVALID_VALUE");
	ops[0] = op_flags(CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES, 0);
	tap_ok(cuStreamBatchMemOp(s, 1, ops, 0) == CUDA_ERROR_NOT_SUPPORTED,
	       "flush of remote writes: CUDA_ERROR_NOT_SUPPORTED (CAN_FLUSH_REMOTE_WRITES is 0)");
	ops[0] = op_value(CU_STREAM_MEM_OP_WRITE_VALUE_32, d, 1, 1);
	tap_ok(cuStreamBatchMemOp(s, 1, ops, 0) == CUDA_ERROR_INVALID_VALUE, "a write with flags 1: CUDA_ERROR_INVALID_VALUE");
	ops[0] = op_value(CU_STREAM_MEM_OP_WAIT_VALUE_32, d, 0, 9);
	tap_ok(cuStreamBatchMemOp(s, 1, ops, 0) == CUDA_ERROR_INVALID_VALUE, "a wait with flags 9: CUDA_ERROR_INVALID_VALUE");
	ops[0] = op_value(CU_STREAM_MEM_OP_WRITE_VALUE_64, d + 4, 1, 0);
	tap_ok(cuStreamBatchMemOp(s, 1, ops, 0) == CUDA_ERROR_INVALID_VALUE, "a 64-bit write at 4 mod 8: CUDA_ERROR_INVALID_VALUE");
	ops[0] = op_value(CU_STREAM_MEM_OP_WRITE_VALUE_32, 0, 1, 0);
	tap_ok(cuStreamBatchMemOp(s, 1, ops, 0) == CUDA_ERROR_INVALID_VALUE, "a write to address 0: CUDA_ERROR_INVALID_VALUE");
	ops[0] = op_value(CU_STREAM_MEM_OP_WRITE_VALUE_32, d, 0x77, 0);
	ops[1] = op_value(CU_STREAM_MEM_OP_WRITE_VALUE_32, d + 2, 1, 0);
	tap_ok(cuStreamBatchMemOp(s, 2, ops, 0) == CUDA_ERROR_INVALID_VALUE && CK(cuStreamSynchronize(s)) && read32(d) == 0x1234,
	       "a good write before a bad one: refused whole, the good one not run");
	tap_ok(CK(cuStreamCreate(&dead, 0)) && CK(cuStreamDestroy(dead)) &&
	       cuStreamBatchMemOp(dead, 1, ops, 0) == CUDA_ERROR_INVALID_HANDLE, "a destroyed stream: CUDA_ERROR_INVALID_HANDLE");
	tap_ok(CK(cuGetProcAddress("cuStreamBatchMemOp", (void **)&legacy, 8000, 0, NULL)) && legacy &&
	       legacy(s, 1, ops, 0) == CUDA_ERROR_NOT_SUPPORTED,
	       "the CUDA 8 entry point: CUDA_ERROR_NOT_SUPPORTED (no legacy stream memory operations, as the H100)");

	/* a wait in a batch, released by a write of another thread */
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!tap_ok(m != MAP_FAILED && CK(cuMemHostRegister(m, 4096, CU_MEMHOSTREGISTER_DEVICEMAP)) &&
		    CK(cuMemHostGetDevicePointer(&hd, m, 0)), "a registered host word"))
		return tap_done();
	host_word = m;
	ops[0] = op_value(CU_STREAM_MEM_OP_WAIT_VALUE_32, hd, 5, CU_STREAM_WAIT_VALUE_GEQ);
	ops[1] = op_value(CU_STREAM_MEM_OP_WRITE_VALUE_32, d, 0xabcd, 0);
	ops[2] = op_value(CU_STREAM_MEM_OP_WRITE_VALUE_32, hd + 4, 9, 0);
	tap_ok(CK(cuStreamBatchMemOp(s, 3, ops, 0)) && cuStreamQuery(s) == CUDA_ERROR_NOT_READY,
	       "wait, write, write: queued, the stream not ready");
	usleep(50 * 1000);
	tap_ok(read32(d) == 0x1234 && m[1] == 0, "the writes behind the wait have not run");
	pthread_create(&t, NULL, release_later, NULL);
	tap_ok(CK(cuStreamSynchronize(s)) && atomic_load(&released) == 1,
	       "cuStreamSynchronize returned after the host's write, not before");
	pthread_join(t, NULL);
	tap_ok(read32(d) == 0xabcd && m[1] == 9, "then both writes ran, in order");

	/* the NULL stream queues it as any other stream */
	atomic_store(&released, 0);
	*m = 0;
	ops[0] = op_value(CU_STREAM_MEM_OP_WAIT_VALUE_32, hd, 5, CU_STREAM_WAIT_VALUE_EQ);
	tap_ok(CK(cuStreamBatchMemOp(NULL, 1, ops, 0)) && cuStreamQuery(NULL) == CUDA_ERROR_NOT_READY,
	       "on the NULL stream: queued, the stream not ready");
	pthread_create(&t, NULL, release_later, NULL);
	tap_ok(CK(cuStreamSynchronize(NULL)) && atomic_load(&released) == 1,
	       "cuStreamSynchronize(NULL) returned after the host's write, not before");
	pthread_join(t, NULL);
	cuMemHostUnregister(m);
	cuStreamDestroy(s);
	cuMemFree(d);
	return tap_done();
}
