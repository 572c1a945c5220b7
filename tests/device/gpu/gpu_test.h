/* SPDX-License-Identifier: MIT */
// gpu_test.h - what the GPU tests of the device library share: the TAP
// counters, host memory mapped for the GPU, waiting on the CPU side.
// One binary, device-gpu (tests/device/gpu.cu has its main), runs every
// family in turn:
//
//   abi.cu       CUDA C calling hand-written PTX with every ABI parameter kind
//   syscalls.cu  vprintf, malloc, free, __assertfail from PTX (child processes)
//   wait.cu      wait / signal against a CPU thread, library and inline
//   seq_cst.cu   the seq_cst functions under contention
//   ring.cu      the ring consumer against a CPU producer
//   jit.cu       nvJitLink, and the cubin's line information and SASS
#ifndef GDIRECT_GPU_TEST_H
#define GDIRECT_GPU_TEST_H

#include <gdirect_device.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tap.h"

// common.cu: TAP through tests/include/tap.h.  check() is a line and goes
// on; summary() prints the plan and "N passed, N failed", and returns the
// exit status.
void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void skip(const char *what, const char *why);
int summary(void);

// Prints each line of TEXT as a TAP comment.
void show(const std::string &text);
// Runs CMD through the shell; its output (stderr too) in OUT; true if it exited 0.
bool run_tool(const std::string &cmd, std::string &out);
double now_s(void);

#define CUDA_OK(call)                                                        \
	do {                                                                 \
		cudaError_t e_ = (call);                                     \
		if (e_ != cudaSuccess) {                                     \
			printf("# %s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
			       cudaGetErrorString(e_));                      \
			check(false, "CUDA call failed, stopping");          \
			summary();                                           \
			exit(1);                                             \
		}                                                            \
	} while (0)

template <typename T> static inline T *host_mapped(size_t n)
{
	void *p = nullptr;

	if (cudaHostAlloc(&p, n * sizeof(T), cudaHostAllocMapped) != cudaSuccess)
		return nullptr;
	memset(p, 0, n * sizeof(T));
	return (T *)p;
}

template <typename T> static inline T *dev_ptr(T *host)
{
	void *d = nullptr;

	cudaHostGetDevicePointer(&d, host, 0);
	return (T *)d;
}

// Spin on a host word written by the GPU; false after timeout_s.
template <typename T>
static inline bool cpu_wait_eq(volatile T *p, T v, double timeout_s = 5.0)
{
	double end = now_s() + timeout_s;

	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != v)
		if (now_s() > end)
			return false;
	return true;
}

// The families, in the order main() runs them.
void test_abi(void);
int child(const char *what);		// device-gpu --child printf|assert
void test_syscalls(const char *self);
void test_wait(void);
void test_seq_cst(void);
void test_ring(void);
void test_jit(const char *ptxdir, const char *caller);

#endif
