#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/gpu/run.sh [OUTDIR] - build and run classify_gpu on a machine with an
# NVIDIA GPU and the CUDA toolkit (found by scripts/find-cuda.sh).
# Built with the C compiler alone (no meson, no UCX needed there):
# libgdirect's sources, the fake pinning backend (tests/fakes/), the program.
# The log (GPU, driver, figures) goes to stdout and OUTDIR/classify_gpu.log.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cuda=$("$root/scripts/find-cuda.sh" root)
out=${1:-.}
[ $# -gt 0 ] && shift
obj=$(mktemp -d)
trap 'rm -rf "$obj"' EXIT
cc=${CC:-cc}
flags="-std=c11 -O2 -D_GNU_SOURCE -Wall -Wextra -Werror -pthread"

# libgdirect, compiled against the project's CUDA subset header as in its
# meson build (it dlopens the real libcuda.so.1 at run time).
for f in "$root"/lib/src/*.c; do
	$cc $flags -I"$root/lib/include" -I"$root/lib/src" -I"$root/include" \
		-I"$root/include/nvidia" -c "$f" -o "$obj/gdl_$(basename "$f" .c).o"
done
$cc $flags -I"$root/lib/src" -c "$root/tests/fakes/fake_backend.c" \
	-o "$obj/fake_backend.o"
$cc $flags -I"$root/lib/include" -I"$root/lib/src" -I"$root/tests/fakes" \
	-I"$cuda/include" -c "$root/bench/gpu/classify_gpu.c" -o "$obj/classify_gpu.o"
libdir=$cuda/lib64
[ -e "$libdir/libcuda.so" ] || libdir=$cuda/lib64/stubs
$cc -pthread -o "$obj/classify_gpu" "$obj"/*.o -L"$libdir" -lcuda -ldl

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -n1), $(nproc) cores"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null |
		sed 's/^/nvidia-smi: /' || true
	"$obj/classify_gpu" "$@"
} 2>&1 | tee "$out/classify_gpu.log"
