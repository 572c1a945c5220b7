# SPDX-License-Identifier: MIT
# Shared by the device CI tests (sourced; POSIX sh).  Takes the toolkit
# meson found (meson test sets NVCC and CUDA_ROOT), else asks
# scripts/find-cuda.sh, the one place nvcc is looked for, and makes a
# scratch directory; TAP comes from tests/include/tap.sh.
#
#   . common.sh; need_nvcc; check_quiet "what" cmd...; ...; tap_done

DEVICE_DIR=${DEVICE_DIR:-$(cd "$(dirname "$0")/../../../device" && pwd)}
# The device tests themselves (tests/device: gpu/, callers/, ci/).
DEVICE_TESTS=${DEVICE_TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
FIND_CUDA=$(cd "$DEVICE_DIR/.." && pwd)/scripts/find-cuda.sh
. "$DEVICE_TESTS/../include/tap.sh"

need_nvcc() {
	if [ -z "${NVCC:-}" ] || [ -z "${CUDA_ROOT:-}" ]; then
		rc=0
		NVCC=$(sh "$FIND_CUDA" nvcc) || rc=$?
		if [ "$rc" -eq 1 ]; then
			skip_all "no nvcc (scripts/find-cuda.sh: CUDA_HOME, PATH, /usr/local/cuda)"
		fi
		[ "$rc" -eq 0 ] || exit 1
		CUDA_ROOT=$(sh "$FIND_CUDA" root) || exit 1
	fi
	PTXAS=$CUDA_ROOT/bin/ptxas
	diag "nvcc: $NVCC (toolkit: $CUDA_ROOT)"
}

scratch() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/gdirect-device.XXXXXX")
	trap 'rm -rf "$T"' EXIT
}

PTX_LIB="flag seq_cst ring"
ARCHES="sm_80 sm_90"

# sm_80 and sm_90 machine code, plus sm_80 PTX for later GPUs to JIT.
GENCODE="-gencode arch=compute_80,code=[sm_80,compute_80] -gencode arch=compute_90,code=sm_90"

# build_lib DIR: the relocatable device library, as the build makes it.
build_lib() {
	for f in $PTX_LIB; do
		"$NVCC" $GENCODE -lineinfo -dc "$DEVICE_DIR/ptx/$f.ptx" -o "$1/$f.o" || return 1
	done
	"$NVCC" -lib "$1/flag.o" "$1/seq_cst.o" "$1/ring.o" -o "$1/libgdirect_device.a"
}
