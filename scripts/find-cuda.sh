#!/bin/sh
# SPDX-License-Identifier: MIT
# find-cuda.sh [nvcc|root] - the CUDA toolkit the build uses.  Everything
# that needs nvcc finds it here: meson (once, at configure time, which hands
# it to the tests), the device tests' shell helper, the GPU scripts.
#
#   CUDA_HOME set (meson: -Dcuda_home=DIR, which sets it for this script):
#           DIR/bin/nvcc, and nothing else; a CUDA_HOME without an nvcc is
#           an error, not a reason to look elsewhere
#   else    nvcc on PATH, else /usr/local/cuda/bin/nvcc
#
# Prints nvcc's path (nvcc, the default) or the toolkit's root (root: the
# directory holding include/ and lib64/).  nvcc may be a symbolic link or a
# wrapper script (/usr/local/bin/nvcc running /usr/local/cuda-13.0/bin/nvcc),
# so the root is taken from nvcc's own dry run, not from nvcc's directory.
# Exit status 1 when there is no toolkit, 2 on a bad CUDA_HOME or argument;
# the reason goes to standard error.
set -eu

what=${1:-nvcc}
case "$what" in
nvcc|root) ;;
*) echo "find-cuda.sh: '$what': expected 'nvcc' or 'root'" >&2; exit 2 ;;
esac

if [ -n "${CUDA_HOME:-}" ]; then
	nvcc=$CUDA_HOME/bin/nvcc
	if [ ! -x "$nvcc" ]; then
		echo "find-cuda.sh: CUDA_HOME=$CUDA_HOME has no bin/nvcc" >&2
		exit 2
	fi
elif nvcc=$(command -v nvcc 2>/dev/null); then
	:
elif [ -x /usr/local/cuda/bin/nvcc ]; then
	nvcc=/usr/local/cuda/bin/nvcc
else
	echo "find-cuda.sh: no nvcc (CUDA_HOME unset, none on PATH, none in /usr/local/cuda/bin)" >&2
	exit 1
fi

if [ "$what" = nvcc ]; then
	echo "$nvcc"
	exit 0
fi
top=$("$(readlink -f "$nvcc")" --dryrun -c -x cu /dev/null -o /dev/null 2>&1 |
	sed -n 's/^#\$ TOP=//p' | head -n1)
if [ -n "$top" ] && [ -d "$top" ]; then
	(cd "$top" && pwd -P)
else
	dirname "$(dirname "$(readlink -f "$nvcc")")"
fi
