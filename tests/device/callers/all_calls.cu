// SPDX-License-Identifier: MIT
// A CUDA C caller of every function in gdirect_device.h, through the
// header.  nvcc emits a .extern prototype for each from the C declaration;
// linking this against the PTX (nvlink or nvJitLink) makes the device linker
// compare every one with our hand-written .func, so a header and a PTX file
// that disagree fail the build.
#include <gdirect_device.h>

extern "C" __global__ void gdirect_all_calls(uint32_t *f32, uint64_t *f64,
					     unsigned char *buf, int *out)
{
	struct gdirect_ring ring = { buf, 64, 4 };

	out[0] = gdirect_wait_u32(f32, 1, GDIRECT_WAIT_GEQ, 100, 0);
	out[1] = gdirect_wait_u64(f64, 1, GDIRECT_WAIT_EQ | GDIRECT_WAIT_REPORT, 0, 1000);
	gdirect_signal_u32(f32 + 1, 2);
	gdirect_signal_u64(f64 + 1, 2);
	gdirect_fence_sc();
	out[2] = (int)gdirect_load_sc_u32(f32);
	out[3] = (int)gdirect_load_sc_u64(f64);
	gdirect_store_sc_u32(f32 + 2, 3);
	gdirect_store_sc_u64(f64 + 2, 3);
	out[4] = (int)gdirect_fetch_add_sc_u32(f32 + 3, 1);
	out[5] = (int)gdirect_fetch_add_sc_u64(f64 + 3, 1);
	out[6] = (int)gdirect_exchange_sc_u32(f32 + 4, 5);
	out[7] = (int)gdirect_exchange_sc_u64(f64 + 4, 5);
	out[8] = (int)gdirect_cas_sc_u32(f32 + 5, 0, 6);
	out[9] = (int)gdirect_cas_sc_u64(f64 + 5, 0, 6);
	out[10] = gdirect_ring_consume(ring, 0, buf + 512, 32, 0, 1000);
}
