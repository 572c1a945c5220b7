// SPDX-License-Identifier: MIT
// Callers whose declarations disagree with the PTX on purpose, one per
// MISMATCH value: the device link must refuse each of them, naming the
// function.  This is what keeps a wrong prototype from linking silently.
#include <stdint.h>

#if MISMATCH == 1 /* a parameter missing */
#define VICTIM gdirect_wait_u32
extern "C" __device__ int gdirect_wait_u32(const uint32_t *flag, uint32_t value, uint32_t mode, uint32_t backoff_ns);
__device__ int call(void *p) { return gdirect_wait_u32((uint32_t *)p, 1, 0, 0); }
#elif MISMATCH == 2 /* 32-bit where the PTX has 64 */
#define VICTIM gdirect_signal_u64
extern "C" __device__ void gdirect_signal_u64(uint64_t *flag, uint32_t value);
__device__ int call(void *p) { gdirect_signal_u64((uint64_t *)p, 1); return 0; }
#elif MISMATCH == 3 /* a return value where the PTX has none */
#define VICTIM gdirect_signal_u32
extern "C" __device__ int gdirect_signal_u32(uint32_t *flag, uint32_t value);
__device__ int call(void *p) { return gdirect_signal_u32((uint32_t *)p, 1); }
#elif MISMATCH == 4 /* an aggregate of the wrong size (24, not 16) */
#define VICTIM gdirect_ring_consume
struct ring24 { void *base; uint32_t slot_size; uint32_t nslots; uint64_t extra; };
extern "C" __device__ int gdirect_ring_consume(struct ring24 ring, uint64_t msg, void *dst, uint32_t len, uint32_t backoff_ns, uint64_t timeout_ns);
__device__ int call(void *p) { struct ring24 r = { p, 64, 4, 0 }; return gdirect_ring_consume(r, 0, p, 8, 0, 0); }
#elif MISMATCH == 5 /* the aggregate passed by pointer instead of by value */
#define VICTIM gdirect_ring_consume
struct gdirect_ring;
extern "C" __device__ int gdirect_ring_consume(struct gdirect_ring *ring, uint64_t msg, void *dst, uint32_t len, uint32_t backoff_ns, uint64_t timeout_ns);
__device__ int call(void *p) { return gdirect_ring_consume((struct gdirect_ring *)p, 0, p, 8, 0, 0); }
#elif MISMATCH == 6 /* 64-bit return where the PTX returns 32 */
#define VICTIM gdirect_load_sc_u32
extern "C" __device__ uint64_t gdirect_load_sc_u32(const uint32_t *p);
__device__ int call(void *p) { return (int)gdirect_load_sc_u32((uint32_t *)p); }
#else
#error "MISMATCH must be 1..6"
#endif

extern "C" __global__ void gdirect_mismatch(void *p, int *out)
{
	*out = call(p);
}
