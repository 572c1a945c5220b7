#!/bin/sh
# SPDX-License-Identifier: MIT
# The hand-written PTX assembles with ptxas for sm_80 and sm_90, and line
# information (.loc) reaches the object as .debug_line for a debugger.
. "$(dirname "$0")/common.sh"
need_nvcc
scratch

for f in $PTX_LIB; do
	for a in $ARCHES; do
		check_quiet "ptxas -arch=$a $f.ptx" \
			"$PTXAS" -arch="$a" -c -lineinfo "$DEVICE_DIR/ptx/$f.ptx" -o "$T/$f.$a.cubin"
	done
done
for a in $ARCHES; do
	check_quiet "ptxas -arch=$a tests/device/gpu/abi_probe.ptx" \
		"$PTXAS" -arch="$a" -c -lineinfo "$DEVICE_TESTS/gpu/abi_probe.ptx" -o "$T/probe.$a.cubin"
done

for a in $ARCHES; do
	check_quiet "ptxas -arch=$a bench/device/wait_lean.ptx" \
		"$PTXAS" -arch="$a" -c "$DEVICE_DIR/../bench/device/wait_lean.ptx" -o "$T/lean.$a.cubin"
done

if command -v readelf >/dev/null 2>&1; then
	for f in $PTX_LIB; do
		check_quiet "$f.ptx: .loc gives .debug_line" \
			sh -c "readelf -S '$T/$f.sm_90.cubin' 2>/dev/null | grep -q '\.debug_line'"
	done
else
	echo "# readelf not found: .debug_line not checked"
fi
tap_done
