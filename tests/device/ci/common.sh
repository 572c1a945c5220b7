# Shared by the device CI tests (sourced; POSIX sh).  Finds nvcc the way the
# build does ($NVCC, then PATH, $CUDA_HOME, /usr/local/cuda) and makes a
# scratch directory; TAP comes from tests/include/tap.sh.
#
#   . common.sh; need_nvcc; check_quiet "what" cmd...; ...; tap_done

DEVICE_DIR=${DEVICE_DIR:-$(cd "$(dirname "$0")/../../../device" && pwd)}
# The device tests themselves (tests/device: gpu/, callers/, ci/).
DEVICE_TESTS=${DEVICE_TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
. "$DEVICE_TESTS/../include/tap.sh"

find_nvcc() {
	if [ -n "${NVCC:-}" ] && [ -x "$NVCC" ]; then
		return 0
	fi
	NVCC=$(command -v nvcc 2>/dev/null || true)
	for d in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
		if [ -z "$NVCC" ] && [ -n "$d" ] && [ -x "$d/bin/nvcc" ]; then
			NVCC=$d/bin/nvcc
		fi
	done
	[ -n "$NVCC" ]
}

need_nvcc() {
	if ! find_nvcc; then
		skip_all "nvcc not found (\$NVCC, PATH, \$CUDA_HOME, /usr/local/cuda)"
	fi
	CUDA_ROOT=$(cuda_root)
	PTXAS=$CUDA_ROOT/bin/ptxas
	diag "nvcc: $NVCC (toolkit: $CUDA_ROOT)"
}

# cuda_root: the toolkit nvcc belongs to.  nvcc may be a symbolic link or a
# wrapper script (/usr/local/bin/nvcc running /usr/local/cuda-13.0/bin/nvcc),
# so its own directory's parent need not hold lib64; nvcc's dry run names
# the real one once links are resolved.
cuda_root() {
	top=$("$(readlink -f "$NVCC")" --dryrun -c -x cu /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p')
	if [ -n "$top" ] && [ -d "$top" ]; then
		(cd "$top" && pwd -P)
	else
		dirname "$(dirname "$NVCC")"
	fi
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
