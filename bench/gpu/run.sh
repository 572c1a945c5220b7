#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/gpu/run.sh [OUTDIR [ARGS...]] - build and run classify_gpu on a
# machine with an NVIDIA GPU and the CUDA toolkit (found by
# scripts/find-cuda.sh).  It is built by the project's own meson build, in
# a build folder of its own (BUILD, default build/bench-gpu), so that it
# builds exactly as make test-gpu's short run does, with or without
# libibverbs.  ARGS go to classify_gpu (--repeats N).  The log (GPU,
# driver, figures) goes to stdout and OUTDIR/classify_gpu.log.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/scripts/find-cuda.sh" root >/dev/null || {
	echo "bench/gpu/run.sh: no CUDA toolkit (scripts/find-cuda.sh says why above)" >&2
	exit 1
}
out=${1:-.}
[ $# -gt 0 ] && shift
mkdir -p "$out"
build=${BUILD:-$root/build/bench-gpu}
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$root" -Dbuildtype=release >"$out/classify_gpu-build.log" 2>&1 || {
		tail -20 "$out/classify_gpu-build.log"; exit 1; }
fi
ninja -C "$build" bench/classify_gpu >>"$out/classify_gpu-build.log" 2>&1 || {
	tail -20 "$out/classify_gpu-build.log"; exit 1; }
[ -x "$build/bench/classify_gpu" ] || {
	echo "bench/gpu/run.sh: meson did not build bench/classify_gpu: it found no CUDA driver library (see $build/meson-logs/meson-log.txt)" >&2
	exit 1
}

# classify_gpu's status is the script's (77: no GPU; 1: a wrong answer).
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -n1), $(nproc) cores"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null |
		sed 's/^/nvidia-smi: /' || true
	rc=0
	"$build/bench/classify_gpu" "$@" || rc=$?
	echo "classify_gpu: exit $rc"
} 2>&1 | tee "$out/classify_gpu.log"
rc=$(sed -n 's/^classify_gpu: exit //p' "$out/classify_gpu.log")
exit "${rc:-1}"
