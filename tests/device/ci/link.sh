#!/bin/sh
# SPDX-License-Identifier: MIT
# The PTX links with CUDA C callers: nvcc -dc on the PTX, nvcc -lib, then a
# caller of every header function linked by nvcc -dlink and the host
# compiler, and by nvcc alone; the ABI probe and the GPU test programs link
# the same way (built here, run only by make test-gpu).  nvlink compares each
# caller's prototypes with our .func definitions, so this fails on a header
# or PTX that disagree.
. "$(dirname "$0")/common.sh"
need_nvcc
scratch

inc="-I$DEVICE_DIR/include -I$DEVICE_DIR/jit -I$DEVICE_TESTS/gpu -I$DEVICE_TESTS/../include"
check_quiet "nvcc -dc + nvcc -lib: libgdirect_device.a" build_lib "$T"
echo 'int main(void) { return 0; }' >"$T/stub.c"
check_quiet "host stub compiles" ${CC:-cc} -c "$T/stub.c" -o "$T/stub.o"
check_quiet "caller (all_calls.cu) nvcc -dc" \
	"$NVCC" $GENCODE $inc -dc "$DEVICE_TESTS/callers/all_calls.cu" -o "$T/all_calls.o"
check_quiet "nvcc -dlink caller + library (objects)" \
	"$NVCC" $GENCODE -dlink "$T/all_calls.o" "$T/flag.o" "$T/seq_cst.o" "$T/ring.o" -o "$T/dlink1.o"
check_quiet "nvcc -dlink caller + libgdirect_device.a" \
	"$NVCC" $GENCODE -dlink "$T/all_calls.o" -L"$T" -lgdirect_device -o "$T/dlink.o"
check_quiet "host compiler links the result (-lcudart)" \
	g++ "$T/stub.o" "$T/all_calls.o" "$T/dlink.o" -L"$T" -lgdirect_device \
	-L"$CUDA_ROOT/lib64" -lcudart -o "$T/prog"
check_quiet "nvcc alone links caller + libgdirect_device.a" \
	"$NVCC" $GENCODE "$T/stub.o" "$T/all_calls.o" -L"$T" -lgdirect_device -o "$T/prog2"
check_quiet "PTX-only build (compute_90) links for JIT at load" sh -c "
	'$NVCC' -gencode arch=compute_90,code=compute_90 -dc '$DEVICE_DIR/ptx/flag.ptx' -o '$T/jf.o' &&
	'$NVCC' -gencode arch=compute_90,code=compute_90 -dc '$DEVICE_DIR/ptx/seq_cst.ptx' -o '$T/js.o' &&
	'$NVCC' -gencode arch=compute_90,code=compute_90 -dc '$DEVICE_DIR/ptx/ring.ptx' -o '$T/jr.o' &&
	'$NVCC' -gencode arch=compute_90,code=compute_90 $inc -dc '$DEVICE_TESTS/callers/all_calls.cu' -o '$T/ja.o' &&
	'$NVCC' -gencode arch=compute_90,code=compute_90 '$T/stub.o' '$T/ja.o' '$T/jf.o' '$T/js.o' '$T/jr.o' -o '$T/prog3'"

# The GPU-only programs: built here so that a GPU run finds no build error.
check_quiet "ABI probe (abi_probe.ptx) nvcc -dc" \
	"$NVCC" $GENCODE -lineinfo -dc "$DEVICE_TESTS/gpu/abi_probe.ptx" -o "$T/abi_probe.o"
check_quiet "the GPU tests (tests/device/gpu.cu, gpu/*.cu) link with the library and the probe" \
	"$NVCC" $GENCODE $inc -rdc=true -lineinfo -o "$T/device-gpu" \
	"$DEVICE_TESTS"/gpu.cu "$DEVICE_TESTS"/gpu/*.cu "$DEVICE_DIR/jit/gdirect_jitlink.c" \
	"$T/abi_probe.o" -L"$T" -lgdirect_device -lcuda -lnvJitLink -L"$CUDA_ROOT/lib64/stubs"
check_quiet "bench/device/wait_lean.ptx nvcc -dc" \
	"$NVCC" $GENCODE -dc "$DEVICE_DIR/../bench/device/wait_lean.ptx" -o "$T/wait_lean.o"
check_quiet "bench/device/roundtrip.cu links with the library" \
	"$NVCC" $GENCODE $inc -rdc=true -O2 -o "$T/roundtrip" \
	"$DEVICE_DIR/../bench/device/roundtrip.cu" "$T/wait_lean.o" -L"$T" -lgdirect_device \
	-lcuda -L"$CUDA_ROOT/lib64/stubs"
tap_done
