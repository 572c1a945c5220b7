// SPDX-License-Identifier: MIT
// ring.cu - gdirect_ring_consume against a CPU producer, with flow
// control, overrun and timeout.
#include "gpu_test.h"
#include <thread>

static inline uint8_t pattern(uint64_t m, uint32_t j)
{
	return (uint8_t)(m * 131 + j * 7 + 1);
}

__global__ void ring_kernel(struct gdirect_ring ring, uint64_t n, uint64_t *consumed,
			    int *statuses, int *errors)
{
	__align__(8) uint8_t buf[72];

	for (uint64_t m = 0; m < n; m++) {
		// Odd messages take the byte path: unaligned dst, odd length.
		uint8_t *dst = (m & 1) ? buf + 1 : buf;
		uint32_t len = (m & 1) ? ring.slot_size - 8 - 3 : ring.slot_size - 8;
		int st = gdirect_ring_consume(ring, m, dst, len, 0, 2000000000ull);

		if (st != GDIRECT_DEV_OK) {
			statuses[0] = st;
			statuses[1] = (int)m;
			return;
		}
		for (uint32_t j = 0; j < len; j++)
			if (dst[j] != (uint8_t)(m * 131 + j * 7 + 1))
				atomicAdd(errors, 1);
		gdirect_signal_u64(consumed, m + 1);
	}
}

static void ring_produce(uint8_t *base, uint32_t slot_size, uint32_t nslots,
			 uint64_t m, uint32_t payload)
{
	uint8_t *slot = base + (m % nslots) * slot_size;

	for (uint32_t j = 0; j < payload; j++)
		slot[j] = pattern(m, j);
	__atomic_store_n((uint64_t *)(slot + slot_size - 8), m + 1, __ATOMIC_RELEASE);
}

__global__ void ring_once_kernel(struct gdirect_ring ring, uint64_t m, uint64_t timeout, int *status)
{
	__align__(8) uint8_t buf[64];

	*status = gdirect_ring_consume(ring, m, buf, 16, 0, timeout);
}

void test_ring(void)
{
	const uint32_t slot_size = 72, nslots = 8, payload = slot_size - 8;
	const uint64_t n = 5000;
	uint8_t *base = host_mapped<uint8_t>(slot_size * nslots);
	uint64_t *consumed = host_mapped<uint64_t>(16);
	int *st = host_mapped<int>(4);
	int *errors = host_mapped<int>(1);
	struct gdirect_ring ring = { dev_ptr(base), slot_size, nslots };
	int stalled = 0;

	st[0] = 0;
	ring_kernel<<<1, 1>>>(ring, n, dev_ptr(consumed), dev_ptr(st), dev_ptr(errors));
	std::thread producer([&] {
		for (uint64_t m = 0; m < n; m++) {
			// Flow control: slot m % nslots is free once message
			// m - nslots was consumed.
			double end = now_s() + 5;
			while (m >= nslots &&
			       __atomic_load_n(consumed, __ATOMIC_ACQUIRE) < m - nslots + 1)
				if (now_s() > end) {
					stalled = (int)m;
					return;
				}
			ring_produce(base, slot_size, nslots, m, payload);
		}
	});
	producer.join();
	CUDA_OK(cudaDeviceSynchronize());
	check(!stalled && st[0] == 0 && *errors == 0 && *consumed == n,
	      "ring: %llu messages from a CPU thread, aligned and byte copies (status %d at %d, bad bytes %d, stalled %d)",
	      (unsigned long long)n, st[0], st[1], *errors, stalled);

	// Overrun: two slots, four messages written before the consumer looks.
	memset(base, 0, slot_size * nslots);
	struct gdirect_ring small = { dev_ptr(base), slot_size, 2 };
	for (uint64_t m = 0; m < 4; m++)
		ring_produce(base, slot_size, 2, m, payload);
	ring_once_kernel<<<1, 1>>>(small, 0, 1000000, dev_ptr(st));
	CUDA_OK(cudaDeviceSynchronize());
	check(st[0] == GDIRECT_DEV_OVERRUN, "ring: a reused slot is reported as overrun (%d)", st[0]);
	ring_once_kernel<<<1, 1>>>(small, 3, 1000000, dev_ptr(st));
	CUDA_OK(cudaDeviceSynchronize());
	check(st[0] == GDIRECT_DEV_OK, "ring: the latest message reads fine (%d)", st[0]);
	ring_once_kernel<<<1, 1>>>(small, 4, 1000000, dev_ptr(st));
	CUDA_OK(cudaDeviceSynchronize());
	check(st[0] == GDIRECT_DEV_TIMEDOUT, "ring: a message not yet written times out (%d)", st[0]);
	cudaFreeHost(base);
	cudaFreeHost(consumed);
	cudaFreeHost(st);
	cudaFreeHost(errors);
}
