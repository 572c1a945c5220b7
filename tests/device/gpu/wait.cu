// SPDX-License-Identifier: MIT
// wait.cu - gdirect_wait/gdirect_signal (and the inline header's
// waits and signals) against a CPU thread through mapped host memory.
#include "gpu_test.h"
#include <gdirect_device_inline.cuh>

#include <unistd.h>

static inline __host__ __device__ uint32_t pp_hash(uint32_t i, uint32_t salt)
{
	return (i ^ salt) * 2654435761u;
}

// pingpong's mode may add PP_INLINE: the inline waits and signals of
// gdirect_device_inline.cuh instead of the library's calls.
#define PP_INLINE 0x10000u

// The CPU writes in[i % 64] before its release of h2d; the GPU checks it
// after the wait (the acquire), writes out[i % 64] and answers on d2h with
// a release; the CPU checks out[i % 64] after its acquire of d2h.  So both
// directions carry a payload that must arrive with the flag.
template <typename T>
__global__ void pingpong_kernel(T *h2d, T *d2h, const uint32_t *in, uint32_t *out,
				int n, T start, uint32_t mode, uint32_t backoff, int *bad)
{
	for (int i = 1; i <= n; i++) {
		T v = start + (T)i;
		int st;

		if (mode & PP_INLINE) {
			// gdirect_device_inline.cuh: spins, no timeout.
			bool geq = mode & GDIRECT_WAIT_GEQ;

			if (sizeof(T) == 4 && geq)
				gdirect_inline_wait_geq_u32((uint32_t *)h2d, (uint32_t)v);
			else if (sizeof(T) == 4)
				gdirect_inline_wait_eq_u32((uint32_t *)h2d, (uint32_t)v);
			else if (geq)
				gdirect_inline_wait_geq_u64((uint64_t *)h2d, (uint64_t)v);
			else
				gdirect_inline_wait_eq_u64((uint64_t *)h2d, (uint64_t)v);
			st = GDIRECT_DEV_OK;
		} else if (sizeof(T) == 4) {
			st = gdirect_wait_u32((uint32_t *)h2d, (uint32_t)v, mode, backoff, 2000000000ull);
		} else {
			st = gdirect_wait_u64((uint64_t *)h2d, (uint64_t)v, mode, backoff, 2000000000ull);
		}
		if (st != GDIRECT_DEV_OK) {
			*bad = i;
			return;
		}
		if (in[i % 64] != pp_hash(i, 2)) {
			*bad = -i;	// the payload did not come with the flag
			return;
		}
		// Payload first, then the release store of the flag.
		out[i % 64] = pp_hash(i, 1);
		if (mode & PP_INLINE) {
			if (sizeof(T) == 4)
				gdirect_inline_signal_u32((uint32_t *)d2h, (uint32_t)v);
			else
				gdirect_inline_signal_u64((uint64_t *)d2h, (uint64_t)v);
		} else if (sizeof(T) == 4) {
			gdirect_signal_u32((uint32_t *)d2h, (uint32_t)v);
		} else {
			gdirect_signal_u64((uint64_t *)d2h, (uint64_t)v);
		}
	}
}

template <typename T>
static void pingpong(const char *name, T start, uint32_t mode, uint32_t backoff)
{
	const int n = 2000;
	T *flags = host_mapped<T>(64);
	uint32_t *in = host_mapped<uint32_t>(64);
	uint32_t *out = host_mapped<uint32_t>(64);
	int *bad = host_mapped<int>(1);
	T *h2d = &flags[0], *d2h = &flags[32];	// separate cache lines
	int late = 0, stale = 0;

	*h2d = start;
	*d2h = start;
	*bad = 0;
	pingpong_kernel<T><<<1, 1>>>(dev_ptr(h2d), dev_ptr(d2h), dev_ptr(in), dev_ptr(out),
				     n, start, mode, backoff, dev_ptr(bad));
	for (int i = 1; i <= n; i++) {
		T v = start + (T)i;

		__atomic_store_n(&in[i % 64], pp_hash(i, 2), __ATOMIC_RELAXED);
		__atomic_store_n(h2d, v, __ATOMIC_RELEASE);
		if (!cpu_wait_eq<T>(d2h, v)) {
			late = i;
			break;
		}
		if (__atomic_load_n(&out[i % 64], __ATOMIC_RELAXED) != pp_hash(i, 1))
			stale++;
	}
	CUDA_OK(cudaDeviceSynchronize());
	check(!late && !*bad && !stale,
	      "%s: %d round trips with a CPU thread (late %d, gpu bad %d, stale payload %d)",
	      name, n, late, *bad, stale);
	cudaFreeHost(flags);
	cudaFreeHost(in);
	cudaFreeHost(out);
	cudaFreeHost(bad);
}

__global__ void wait_once_kernel(uint32_t *f32, uint64_t *f64, uint32_t v32,
				 uint64_t v64, uint32_t mode, uint64_t timeout,
				 int *status, unsigned long long *elapsed_ns)
{
	unsigned long long t0, t1;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	if (f32)
		*status = gdirect_wait_u32(f32, v32, mode, 256, timeout);
	else
		*status = gdirect_wait_u64(f64, v64, mode, 256, timeout);
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
	*elapsed_ns = t1 - t0;
}

static void test_wait_edges(void)
{
	uint32_t *f32 = host_mapped<uint32_t>(32);
	uint64_t *f64 = host_mapped<uint64_t>(16);
	int *st = host_mapped<int>(1);
	unsigned long long *el = host_mapped<unsigned long long>(1);

	// Timeout: nobody writes the flag.
	*f32 = 0;
	wait_once_kernel<<<1, 1>>>(dev_ptr(f32), nullptr, 1, 0, GDIRECT_WAIT_EQ,
				   2000000, dev_ptr(st), dev_ptr(el));
	CUDA_OK(cudaDeviceSynchronize());
	check(*st == GDIRECT_DEV_TIMEDOUT && *el >= 2000000 && *el < 1000000000ull,
	      "u32 wait times out after 2 ms (status %d, %.3f ms)", *st, *el / 1e6);

	// Cyclic greater-or-equal: 0xfffffff0 is "before" 0xfffffff8, and
	// 0x4 (wrapped) is after it.
	*f32 = 0xfffffff0u;
	wait_once_kernel<<<1, 1>>>(dev_ptr(f32), nullptr, 0xfffffff8u, 0,
				   GDIRECT_WAIT_GEQ, 2000000, dev_ptr(st), dev_ptr(el));
	CUDA_OK(cudaDeviceSynchronize());
	check(*st == GDIRECT_DEV_TIMEDOUT, "u32 GEQ: 0xfffffff0 does not satisfy 0xfffffff8");
	wait_once_kernel<<<1, 1>>>(dev_ptr(f32), nullptr, 0xfffffff8u, 0,
				   GDIRECT_WAIT_GEQ, 2000000000ull, dev_ptr(st), dev_ptr(el));
	usleep(2000);
	__atomic_store_n(f32, 4u, __ATOMIC_RELEASE);
	CUDA_OK(cudaDeviceSynchronize());
	check(*st == GDIRECT_DEV_OK, "u32 GEQ: wrapped value 4 satisfies 0xfffffff8 (waited %.3f ms)", *el / 1e6);

	*f64 = ~0ull - 1;
	wait_once_kernel<<<1, 1>>>(nullptr, dev_ptr(f64), 0, 3, GDIRECT_WAIT_GEQ,
				   2000000000ull, dev_ptr(st), dev_ptr(el));
	usleep(2000);
	__atomic_store_n(f64, 5ull, __ATOMIC_RELEASE);
	CUDA_OK(cudaDeviceSynchronize());
	check(*st == GDIRECT_DEV_OK, "u64 GEQ: wrapped value 5 satisfies 3 after 2^64-2");
	*f64 = 7;
	wait_once_kernel<<<1, 1>>>(nullptr, dev_ptr(f64), 0, 8, GDIRECT_WAIT_EQ,
				   1000000, dev_ptr(st), dev_ptr(el));
	CUDA_OK(cudaDeviceSynchronize());
	check(*st == GDIRECT_DEV_TIMEDOUT && *el >= 1000000, "u64 wait times out (%.3f ms)", *el / 1e6);
	cudaFreeHost(f32);
	cudaFreeHost(f64);
	cudaFreeHost(st);
	cudaFreeHost(el);
}

// Round trips through the library's calls and through the inline header,
// then the edges: timeouts and cyclic comparison across the wrap.
void test_wait(void)
{
	pingpong<uint32_t>("u32 EQ, spinning", 0, GDIRECT_WAIT_EQ, 0);
	pingpong<uint32_t>("u32 GEQ, back-off, across the 2^32 wrap", 0xffffff00u, GDIRECT_WAIT_GEQ, 1000);
	pingpong<uint64_t>("u64 EQ, spinning", 1ull << 40, GDIRECT_WAIT_EQ, 0);
	pingpong<uint64_t>("u64 GEQ, back-off", 0, GDIRECT_WAIT_GEQ, 1000);
	pingpong<uint32_t>("inline u32 EQ", 0, GDIRECT_WAIT_EQ | PP_INLINE, 0);
	pingpong<uint32_t>("inline u32 GEQ, across the 2^32 wrap", 0xffffff00u,
			   GDIRECT_WAIT_GEQ | PP_INLINE, 0);
	pingpong<uint64_t>("inline u64 EQ", 1ull << 40, GDIRECT_WAIT_EQ | PP_INLINE, 0);
	pingpong<uint64_t>("inline u64 GEQ, across the 2^64 wrap", ~0ull - 500,
			   GDIRECT_WAIT_GEQ | PP_INLINE, 0);
	test_wait_edges();
}
