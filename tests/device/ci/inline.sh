#!/bin/sh
# SPDX-License-Identifier: MIT
# gdirect_device_inline.cuh compiles for sm_80 and sm_90 and inlines: the
# caller's kernel holds the library's instructions (ld.acquire.sys polls,
# st.release.sys stores), calls nothing and needs no stack frame.
. "$(dirname "$0")/common.sh"
need_nvcc
scratch

src=$DEVICE_TESTS/callers/inline_calls.cu
for a in 80 90; do
	check_quiet "sm_$a: inline_calls.cu compiles to PTX" \
		"$NVCC" -arch=sm_$a -I"$DEVICE_DIR/include" -ptx "$src" -o "$T/inline.$a.ptx"
	check_quiet "sm_$a: 2 acquire polls of 32 bits, 2 of 64" sh -c "
		[ \$(grep -c 'ld.acquire.sys.b32' '$T/inline.$a.ptx') -eq 2 ] &&
		[ \$(grep -c 'ld.acquire.sys.b64' '$T/inline.$a.ptx') -eq 2 ]"
	check_quiet "sm_$a: a release store of 32 bits and one of 64" sh -c "
		[ \$(grep -c 'st.release.sys.b32' '$T/inline.$a.ptx') -eq 1 ] &&
		[ \$(grep -c 'st.release.sys.b64' '$T/inline.$a.ptx') -eq 1 ]"
	check_quiet "sm_$a: no call in the PTX" sh -c "! grep -q -E '^[[:space:]]*call' '$T/inline.$a.ptx'"
	check_quiet "sm_$a: ptxas: no stack frame, no spills" sh -c "
		'$NVCC' -arch=sm_$a -I'$DEVICE_DIR/include' -cubin -Xptxas -v '$src' \
			-o '$T/inline.$a.cubin' >'$T/inline.$a.v' 2>&1 &&
		grep -q ' 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads' '$T/inline.$a.v'"
done
tap_done
