/* SPDX-License-Identifier: MIT */
/*
 * gdirect_device_inline.cuh - the spin wait and the signal of the device
 * library, inlined into the caller.  CUDA C++ only.
 *
 * The library's functions (gdirect_device.h) are PTX .funcs reached through
 * a call.  On the tightest loop there is, a GPU thread spinning on a flag in
 * host memory and answering through another, the call and return around
 * each round trip cost about 0.04 us of 3 (docs/performance.md), as they do
 * for any function that is not inlined, nvcc's own included.  These are the
 * same instructions as the library's spinning wait and its signal, an
 * ld.acquire.sys poll and an st.release.sys store, written as inline PTX so
 * that nvcc inlines them: no call, no parameters, no frame.
 *
 * What they leave out: back-off, timeout and the timeout report.  A wait
 * here spins until the condition holds; use gdirect_wait_u32/u64 where the
 * other side may never answer.  The orderings are those of the library
 * (docs/device.md): a wait is an acquire at system scope, so what the
 * writer stored before its release of the flag is visible after the wait;
 * a signal is a release at system scope.  sm_70 and later.
 */
#ifndef GDIRECT_DEVICE_INLINE_CUH
#define GDIRECT_DEVICE_INLINE_CUH

#include <stdint.h>

#define GDIRECT_INLINE static __device__ __forceinline__

GDIRECT_INLINE uint32_t gdirect_inline_load_acquire_u32(const uint32_t *p)
{
	uint32_t v;

	asm volatile("ld.acquire.sys.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

GDIRECT_INLINE uint64_t gdirect_inline_load_acquire_u64(const uint64_t *p)
{
	uint64_t v;

	asm volatile("ld.acquire.sys.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

/* Spin until *flag == value. */
GDIRECT_INLINE void gdirect_inline_wait_eq_u32(const uint32_t *flag, uint32_t value)
{
	while (gdirect_inline_load_acquire_u32(flag) != value)
		;
}

/* Spin until (int32_t)(*flag - value) >= 0: a counter that may wrap. */
GDIRECT_INLINE void gdirect_inline_wait_geq_u32(const uint32_t *flag, uint32_t value)
{
	while ((int32_t)(gdirect_inline_load_acquire_u32(flag) - value) < 0)
		;
}

GDIRECT_INLINE void gdirect_inline_wait_eq_u64(const uint64_t *flag, uint64_t value)
{
	while (gdirect_inline_load_acquire_u64(flag) != value)
		;
}

GDIRECT_INLINE void gdirect_inline_wait_geq_u64(const uint64_t *flag, uint64_t value)
{
	while ((int64_t)(gdirect_inline_load_acquire_u64(flag) - value) < 0)
		;
}

/* *flag = value, a release at system scope. */
GDIRECT_INLINE void gdirect_inline_signal_u32(uint32_t *flag, uint32_t value)
{
	asm volatile("st.release.sys.b32 [%0], %1;" : : "l"(flag), "r"(value) : "memory");
}

GDIRECT_INLINE void gdirect_inline_signal_u64(uint64_t *flag, uint64_t value)
{
	asm volatile("st.release.sys.b64 [%0], %1;" : : "l"(flag), "l"(value) : "memory");
}

#undef GDIRECT_INLINE

#endif /* GDIRECT_DEVICE_INLINE_CUH */
