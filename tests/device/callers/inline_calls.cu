// SPDX-License-Identifier: MIT
// inline_calls.cu - a kernel of every gdirect_device_inline.cuh function,
// for tests/ci/inline.sh: its PTX must hold the acquire polls and release
// stores of the library, and no call.
#include <gdirect_device_inline.cuh>

extern "C" __global__ void inline_calls(uint32_t *f32, uint64_t *f64, uint32_t v32, uint64_t v64)
{
	gdirect_inline_wait_eq_u32(f32, v32);
	gdirect_inline_wait_geq_u32(f32 + 1, v32);
	gdirect_inline_wait_eq_u64(f64, v64);
	gdirect_inline_wait_geq_u64(f64 + 1, v64);
	gdirect_inline_signal_u32(f32 + 2, v32);
	gdirect_inline_signal_u64(f64 + 2, v64);
}
