/* SPDX-License-Identifier: MIT */
/*
 * gdirect_device.h - the gdirect device library, for CUDA C callers.
 *
 * The functions are written in PTX (the .ptx files of device/ptx) to the
 * PTX ABI and linked as relocatable device code: build callers with
 * nvcc -rdc=true (or -dc) and link libgdirect_device.a, or JIT-link the PTX
 * with nvJitLink.
 * See docs/device.md.
 *
 * Memory is reached through generic pointers: GPU memory, host memory
 * mapped for the GPU (cudaHostAlloc(..., cudaHostAllocMapped)), or GPU
 * memory a third-party device writes through GPUDirect RDMA.  All ordering
 * is at system scope, so a CPU thread or another device may be the other
 * side.
 *
 * The declarations are plain C, one per line, so that tools that read C
 * declarations can check them against the PTX; GDIRECT_DEVICE_FN carries
 * the CUDA-only part.
 */
#ifndef GDIRECT_DEVICE_H
#define GDIRECT_DEVICE_H

#include <stdint.h>

#ifdef __CUDACC__
#define GDIRECT_DEVICE_FN extern "C" __device__
#else
#define GDIRECT_DEVICE_FN extern
#endif

/* mode of gdirect_wait_*: the condition, plus flags. */
#define GDIRECT_WAIT_EQ     0x000u /* *flag == value */
#define GDIRECT_WAIT_GEQ    0x001u /* (intN_t)(*flag - value) >= 0: wraps */
#define GDIRECT_WAIT_REPORT 0x100u /* print a line (vprintf) on timeout */

/* Status returned by gdirect_wait_* and gdirect_ring_consume. */
#define GDIRECT_DEV_OK        0
#define GDIRECT_DEV_TIMEDOUT  1  /* timeout_ns passed first */
#define GDIRECT_DEV_OVERRUN   2  /* ring slot reused before it was read */
#define GDIRECT_DEV_EINVAL  (-1) /* bad ring geometry (after an assert) */

/*
 * A ring of nslots slots of slot_size bytes at base: payload in
 * [0, slot_size - 8), then a uint64_t sequence word; message m lives in
 * slot m % nslots and is complete when its word reads m + 1.
 * nslots: a power of two; slot_size: a multiple of 8, at least 16;
 * base: 8-byte aligned.  Passed by value.
 */
struct gdirect_ring {
	void *base;
	uint32_t slot_size;
	uint32_t nslots;
};

/*
 * Waiting and signalling.  A wait polls with acquire loads until the
 * condition in mode holds; backoff_ns > 0 sleeps between polls (32 ns,
 * doubling, capped at backoff_ns), timeout_ns > 0 bounds the wait.
 * Returns GDIRECT_DEV_OK or GDIRECT_DEV_TIMEDOUT.  A signal is a release
 * store.
 */
GDIRECT_DEVICE_FN int gdirect_wait_u32(const uint32_t *flag, uint32_t value, uint32_t mode, uint32_t backoff_ns, uint64_t timeout_ns);
GDIRECT_DEVICE_FN int gdirect_wait_u64(const uint64_t *flag, uint64_t value, uint32_t mode, uint32_t backoff_ns, uint64_t timeout_ns);
GDIRECT_DEVICE_FN void gdirect_signal_u32(uint32_t *flag, uint32_t value);
GDIRECT_DEVICE_FN void gdirect_signal_u64(uint64_t *flag, uint64_t value);

/*
 * Sequentially consistent operations at system scope, each exactly the PTX
 * ABI's mapping (fence.sc.sys, then ld.acquire / st.release /
 * atom.acq_rel).  Read-modify-writes return the old value; cas stores
 * desired only if the old value equals expected.
 */
GDIRECT_DEVICE_FN void gdirect_fence_sc(void);
GDIRECT_DEVICE_FN uint32_t gdirect_load_sc_u32(const uint32_t *p);
GDIRECT_DEVICE_FN uint64_t gdirect_load_sc_u64(const uint64_t *p);
GDIRECT_DEVICE_FN void gdirect_store_sc_u32(uint32_t *p, uint32_t v);
GDIRECT_DEVICE_FN void gdirect_store_sc_u64(uint64_t *p, uint64_t v);
GDIRECT_DEVICE_FN uint32_t gdirect_fetch_add_sc_u32(uint32_t *p, uint32_t v);
GDIRECT_DEVICE_FN uint64_t gdirect_fetch_add_sc_u64(uint64_t *p, uint64_t v);
GDIRECT_DEVICE_FN uint32_t gdirect_exchange_sc_u32(uint32_t *p, uint32_t v);
GDIRECT_DEVICE_FN uint64_t gdirect_exchange_sc_u64(uint64_t *p, uint64_t v);
GDIRECT_DEVICE_FN uint32_t gdirect_cas_sc_u32(uint32_t *p, uint32_t expected, uint32_t desired);
GDIRECT_DEVICE_FN uint64_t gdirect_cas_sc_u64(uint64_t *p, uint64_t expected, uint64_t desired);

/*
 * Waits for message msg of the ring, copies len bytes of its payload to
 * dst, and checks the slot was not reused meanwhile.  Returns
 * GDIRECT_DEV_OK, GDIRECT_DEV_TIMEDOUT, GDIRECT_DEV_OVERRUN or, after a
 * failed assertion on the geometry, GDIRECT_DEV_EINVAL.  One thread calls
 * it.
 */
GDIRECT_DEVICE_FN int gdirect_ring_consume(struct gdirect_ring ring, uint64_t msg, void *dst, uint32_t len, uint32_t backoff_ns, uint64_t timeout_ns);

#endif /* GDIRECT_DEVICE_H */
