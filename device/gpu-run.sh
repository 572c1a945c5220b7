#!/bin/sh
# SPDX-License-Identifier: MIT
# gpu-run.sh [OUTDIR] - the device library's whole GPU plan in one go, for a
# machine with an NVIDIA GPU and the CUDA toolkit: environment, build (make
# userspace TESTBED=1, the build test-gpu uses: meson builds the GPU
# programs when scripts/find-cuda.sh finds nvcc), make test-gpu, the
# round-trip benchmark (with the distribution of every round trip, and its
# plots where gnuplot is), and the SASS of the waits being compared.  Logs
# go to OUTDIR (default: $OUT if set, else build/gpu-run); the exit status
# is test-gpu's.  BUILD (default build) is the build directory.
set -u
cd "$(dirname "$0")/.." || exit 1
build=${BUILD:-build}
out=${1:-${OUT:-$build/gpu-run}}
mkdir -p "$out"

{
	nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
	"$(scripts/find-cuda.sh)" --version | tail -2
	date -u
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

if ! make userspace TESTBED=1 BUILD="$build" JOBS="$(nproc)" >"$out/build.log" 2>&1; then
	tail -40 "$out/build.log"
	exit 1
fi

make test-gpu BUILD="$build" >"$out/test-gpu.log" 2>&1
rc=$?
grep -v '^ok' "$out/test-gpu.log"

# Two invocations, one after the other: figures move together between runs
# on the same machine, so compare only within one, and see that the
# comparison holds in both.
# Each run also writes every round trip's distribution (dist-RUN.txt), for
# bench/plot.sh --roundtrip LOG OUT DIST, drawn here where gnuplot is.
for run in a b; do
	timeout 300 "$build/bench/device/roundtrip" 20000 ${REPEATS:-15} "$out/dist-$run.txt" \
		>"$out/bench-$run.log" 2>&1
	cat "$out/bench-$run.log"
	if command -v gnuplot >/dev/null 2>&1; then
		bench/plot.sh --roundtrip "$out/bench-$run.log" "$out/plots-$run" "$out/dist-$run.txt"
	fi
done

# The functions whose cost the benchmark compares, for reading side by side
# in one file, since some runners hand back only a few files.
cuobjdump -sass "$build/bench/device/roundtrip" >"$out/sass-roundtrip.txt" 2>&1
awk '/Function :/ { on = $0 ~ /gdirect_wait|gdirect_signal_u32|gdirect_bench_wait|cxx_wait|cxx_signal|libcxx_kernel|inline_kernel|x_ws_kernel/ }
     on && (/Function :/ || /^[ \t]+\/\*[0-9a-f]+\*\//)' \
	"$out/sass-roundtrip.txt" >"$out/sass-waits.txt"
exit $rc
