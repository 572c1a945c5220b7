// SPDX-License-Identifier: MIT
// seq_cst.cu - the sequentially consistent atomics under contention.
#include "gpu_test.h"

__global__ void atomics_kernel(uint32_t *c32, uint64_t *c64, int iters)
{
	for (int i = 0; i < iters; i++) {
		gdirect_fetch_add_sc_u32(&c32[0], 1);
		gdirect_fetch_add_sc_u64(&c64[0], 3);
		uint32_t old = gdirect_load_sc_u32(&c32[1]);
		while (true) {	// CAS increment
			uint32_t seen = gdirect_cas_sc_u32(&c32[1], old, old + 1);
			if (seen == old)
				break;
			old = seen;
		}
		uint64_t o64 = gdirect_load_sc_u64(&c64[1]);
		while (true) {
			uint64_t seen = gdirect_cas_sc_u64(&c64[1], o64, o64 + 2);
			if (seen == o64)
				break;
			o64 = seen;
		}
		// Exchange: the values handed around are a permutation, so
		// their sum is kept in c32[3] / c64[3].
		uint32_t mine = blockIdx.x * blockDim.x + threadIdx.x + 1;
		uint32_t got = gdirect_exchange_sc_u32(&c32[2], mine);
		gdirect_fetch_add_sc_u32(&c32[3], got);
		uint64_t got64 = gdirect_exchange_sc_u64(&c64[2], mine);
		gdirect_fetch_add_sc_u64(&c64[3], got64);
		gdirect_fence_sc();
	}
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		gdirect_store_sc_u32(&c32[4], 0xabcdef01u);
		gdirect_store_sc_u64(&c64[4], 0x0123456789abcdefull);
		c32[5] = gdirect_load_sc_u32(&c32[4]);
		c64[5] = gdirect_load_sc_u64(&c64[4]);
	}
}

void test_seq_cst(void)
{
	const int blocks = 32, threads = 128, iters = 16;
	const uint64_t n = (uint64_t)blocks * threads * iters;
	uint32_t *c32, h32[8];
	uint64_t *c64, h64[8];

	CUDA_OK(cudaMalloc(&c32, sizeof(h32)));
	CUDA_OK(cudaMalloc(&c64, sizeof(h64)));
	CUDA_OK(cudaMemset(c32, 0, sizeof(h32)));
	CUDA_OK(cudaMemset(c64, 0, sizeof(h64)));
	atomics_kernel<<<blocks, threads>>>(c32, c64, iters);
	CUDA_OK(cudaDeviceSynchronize());
	CUDA_OK(cudaMemcpy(h32, c32, sizeof(h32), cudaMemcpyDeviceToHost));
	CUDA_OK(cudaMemcpy(h64, c64, sizeof(h64), cudaMemcpyDeviceToHost));
	check(h32[0] == n && h64[0] == 3 * n, "fetch_add_sc u32/u64 under contention (%u, %llu; want %llu)",
	      h32[0], (unsigned long long)h64[0], (unsigned long long)n);
	check(h32[1] == n && h64[1] == 2 * n, "cas_sc u32/u64 increment loops (%u, %llu)",
	      h32[1], (unsigned long long)h64[1]);
	// Each exchange hands back what another put: the total handed back plus
	// what is left equals the total put in.
	uint64_t put = 0;
	for (uint64_t t = 1; t <= (uint64_t)blocks * threads; t++)
		put += t * iters;
	check((uint64_t)h32[3] + h32[2] == (uint32_t)put && h64[3] + h64[2] == put,
	      "exchange_sc u32/u64 lose and duplicate nothing");
	check(h32[5] == 0xabcdef01u && h64[5] == 0x0123456789abcdefull, "store_sc then load_sc");
	cudaFree(c32);
	cudaFree(c64);
}
