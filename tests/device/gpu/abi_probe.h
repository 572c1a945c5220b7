/* SPDX-License-Identifier: MIT */
// CUDA C declarations of abi_probe.ptx (test only).  The types are what the
// PTX's parameter declarations encode; see the comments there.
#ifndef GDIRECT_ABI_PROBE_H
#define GDIRECT_ABI_PROBE_H

struct gdirect_probe_c3 { signed char a, b, c; };		/* align 1, size 3 */
struct gdirect_probe_id { int i; double d; };			/* align 8, size 16 */
struct __align__(16) gdirect_probe_v4 { unsigned x, y, z, w; };	/* align 16, size 16 */
union gdirect_probe_u { float f; int i; char c[6]; };		/* align 4, size 8 */

extern "C" __device__ int gdirect_probe_s8(signed char v);
extern "C" __device__ unsigned gdirect_probe_u8(unsigned char v);
extern "C" __device__ int gdirect_probe_s16(short v);
extern "C" __device__ unsigned gdirect_probe_u16(unsigned short v);
extern "C" __device__ signed char gdirect_probe_ret_s8(int v);
extern "C" __device__ unsigned short gdirect_probe_ret_u16(unsigned v);
extern "C" __device__ bool gdirect_probe_ret_bool(int v);
extern "C" __device__ long long gdirect_probe_s64(long long a, unsigned long long b);
extern "C" __device__ double gdirect_probe_fp(float a, double b);
extern "C" __device__ int gdirect_probe_ptr(int *p);
extern "C" __device__ long long gdirect_probe_agg(struct gdirect_probe_c3 c3, struct gdirect_probe_id id, struct gdirect_probe_v4 v4, union gdirect_probe_u u);
extern "C" __device__ struct gdirect_probe_id gdirect_probe_agg_ret(int i, double d);
extern "C" __device__ int gdirect_probe_syscalls(int n, int *printf_status);

#endif
