#!/bin/sh
# SPDX-License-Identifier: MIT
# meson-setup.sh BUILD [meson options...] - configure BUILD, or configure it
# again when an optional dependency came or went since it was configured.
#
# meson looks for optional dependencies (UCX for the benchmark, the CUDA
# toolkit, scripts/find-cuda.sh, for the device library) only when it
# configures; a build directory made
# before `make bench` installed libucx-dev would never gain the benchmark's
# targets.  The state of each optional dependency is kept in
# BUILD/gdirect-optdeps; when it differs, meson is run with --reconfigure.
# Options given (the top-level Makefile's -Demulator and -Dtests) are kept
# in BUILD/gdirect-options and applied the same way when they change; with
# none given, BUILD keeps the options it has.
set -eu
build=$1
shift
top=$(cd "$(dirname "$0")/.." && pwd)

# One line per optional dependency the meson.build files look for.
optdeps() {
	echo "ucx-ucs $(pkg-config --modversion ucx-ucs 2>/dev/null || echo absent)"
	echo "cuda $("$top/scripts/find-cuda.sh" root 2>/dev/null || echo absent)"
	echo "libibverbs $(pkg-config --modversion libibverbs 2>/dev/null || echo absent)"
}

state=$(optdeps)
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$@" "$build" "$top" >/dev/null
elif [ "$state" != "$(cat "$build/gdirect-optdeps" 2>/dev/null || true)" ]; then
	echo "meson-setup: optional dependencies changed since $build was configured: reconfiguring"
	meson setup --reconfigure "$@" "$build" "$top" >/dev/null
elif [ $# -gt 0 ] && [ "$*" != "$(cat "$build/gdirect-options" 2>/dev/null || true)" ]; then
	meson setup --reconfigure "$@" "$build" "$top" >/dev/null
fi
printf '%s\n' "$state" >"$build/gdirect-optdeps"
if [ $# -gt 0 ]; then printf '%s\n' "$*" >"$build/gdirect-options"; fi
