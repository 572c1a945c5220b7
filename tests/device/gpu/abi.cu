// SPDX-License-Identifier: MIT
// abi.cu - CUDA C calling hand-written PTX (abi_probe.ptx) with every
// ABI parameter kind: small integers widened by the caller, 64-bit, floating
// point, generic pointers to each state space, aggregates, return values.
#include "gpu_test.h"
#include "abi_probe.h"

struct probe_in {
	signed char s8;
	unsigned char u8;
	short s16;
	unsigned short u16;
	int ret_s8_arg;
	unsigned ret_u16_arg;
	int bool_arg;
	long long a64;
	unsigned long long b64;
	float f;
	double d;
	struct gdirect_probe_c3 c3;
	struct gdirect_probe_id id;
	struct gdirect_probe_v4 v4;
	union gdirect_probe_u u;
};

struct probe_out {
	int s8;
	unsigned u8;
	int s16;
	unsigned u16;
	int ret_s8;
	unsigned ret_u16;
	int ret_bool_t, ret_bool_f;
	long long s64;
	double fp;
	int ptr_old[3], ptr_new[3];
	long long agg;
	struct gdirect_probe_id agg_ret;
	int sum, printf_status;
};

__global__ void probe_kernel(const probe_in *in, probe_out *out, int *global_int)
{
	__shared__ int shared_int;
	int local_int = 9;
	volatile int *lp = &local_int;

	// Small integers come from memory (ld.s8 / ld.u8 ...), so the caller
	// must widen them itself before the call.
	out->s8 = gdirect_probe_s8(in->s8);
	out->u8 = gdirect_probe_u8(in->u8);
	out->s16 = gdirect_probe_s16(in->s16);
	out->u16 = gdirect_probe_u16(in->u16);
	out->ret_s8 = gdirect_probe_ret_s8(in->ret_s8_arg);
	out->ret_u16 = gdirect_probe_ret_u16(in->ret_u16_arg);
	out->ret_bool_t = gdirect_probe_ret_bool(in->bool_arg) ? 1 : 0;
	out->ret_bool_f = gdirect_probe_ret_bool(in->bool_arg - in->bool_arg) ? 1 : 0;
	out->s64 = gdirect_probe_s64(in->a64, in->b64);
	out->fp = gdirect_probe_fp(in->f, in->d);

	shared_int = 7;
	out->ptr_old[0] = gdirect_probe_ptr(global_int);
	out->ptr_old[1] = gdirect_probe_ptr(&shared_int);
	out->ptr_old[2] = gdirect_probe_ptr((int *)lp);
	out->ptr_new[0] = *global_int;
	out->ptr_new[1] = shared_int;
	out->ptr_new[2] = *lp;

	out->agg = gdirect_probe_agg(in->c3, in->id, in->v4, in->u);
	out->agg_ret = gdirect_probe_agg_ret(in->id.i, in->id.d);
	out->sum = gdirect_probe_syscalls(10, &out->printf_status);
}

void test_abi(void)
{
	probe_in *in = host_mapped<probe_in>(1);
	probe_out *out = host_mapped<probe_out>(1);
	int *g;

	CUDA_OK(cudaMalloc(&g, sizeof(int)));
	int five = 5;
	CUDA_OK(cudaMemcpy(g, &five, sizeof(int), cudaMemcpyHostToDevice));
	in->s8 = -5;
	in->u8 = 250;
	in->s16 = -300;
	in->u16 = 65000;
	in->ret_s8_arg = 0x1ff;
	in->ret_u16_arg = 0x12345;
	in->bool_arg = 7;
	in->a64 = -(1LL << 40);
	in->b64 = 1ULL << 62;
	in->f = 1.5f;
	in->d = 0.25;
	in->c3 = { 1, -2, 3 };
	in->id = { 41, 5.75 };
	in->v4 = { 6, 7, 8, 9 };
	in->u.i = 10;
	probe_kernel<<<1, 1>>>(dev_ptr(in), dev_ptr(out), g);
	CUDA_OK(cudaDeviceSynchronize());

	check(out->s8 == -5, "signed char param arrives sign-extended (%d)", out->s8);
	check(out->u8 == 250, "unsigned char param arrives zero-extended (%u)", out->u8);
	check(out->s16 == -300, "short param arrives sign-extended (%d)", out->s16);
	check(out->u16 == 65000, "unsigned short param arrives zero-extended (%u)", out->u16);
	check(out->ret_s8 == -1, "signed char return value (%d)", out->ret_s8);
	check(out->ret_u16 == 0x2345, "unsigned short return value (%#x)", out->ret_u16);
	check(out->ret_bool_t == 1 && out->ret_bool_f == 0, "bool return value");
	check(out->s64 == -(1LL << 40) - (1LL << 61), "64-bit signed and unsigned params, 64-bit return");
	check(out->fp == 3.25, "float and double params, double return (%g)", out->fp);
	check(out->ptr_old[0] == 5 && out->ptr_new[0] == 16, "generic pointer to global memory");
	check(out->ptr_old[1] == 7 && out->ptr_new[1] == 22, "generic pointer to shared memory");
	check(out->ptr_old[2] == 9 && out->ptr_new[2] == 28, "generic pointer to local memory");
	long long want = 1 - 2 * 3 + 3 * 5 + 41 * 7 + 5 * 11 + 6 * 13 + 7 * 17 + 8 * 19 + 9 * 23 + 10 * 29;
	check(out->agg == want, "aggregates by value (align 1/8/16/4) (%lld, want %lld)", out->agg, want);
	check(out->agg_ret.i == 42 && out->agg_ret.d == 11.5, "aggregate return value");
	check(out->sum == 285, "malloc and free from PTX (sum %d)", out->sum);
	check(out->printf_status >= 0, "vprintf from PTX returns a status (%d)", out->printf_status);
	cudaFree(g);
	cudaFreeHost(in);
	cudaFreeHost(out);
}
