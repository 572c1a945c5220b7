#!/bin/sh
# SPDX-License-Identifier: MIT
# ucx-build.sh BUILD - a GPU-aware UCX from Debian 12's ucx source package,
# built against gdirect's CUDA driver, runtime and NVML libraries and
# libgdrapi (never NVIDIA's), installed into BUILD/ucx/prefix.
#
# Environment: UCX_CACHE (where the source package is kept, default
# /var/cache/gdirect-ucx), JOBS (make jobs, default 2), UCX_FORCE=1
# (rebuild even when the stamp matches), UCX_VERSION (1.13.1, the default,
# or 1.22.0: below).
#
# UCX_VERSION=1.22.0 builds UCX 1.22.0 from its release tarball instead,
# into BUILD/ucx-1.22.0/prefix (the guest still packs BUILD/ucx): the file
# ucx-1.22.0.tar.gz from $GDIRECT_PEERS_DIR, else ../shared/peers beside
# this checkout (UCX_TARBALL names another), whose sha256 must be the one
# of ../shared/peers/README.md.  Its unpacked source, with
# ucx/patches-1.22.0/*.patch applied and autogen.sh run, is cached under
# UCX_CACHE keyed by the tarball's and the patches' sha256; configure and
# make run in BUILD, as they depend on this checkout's headers.  Without
# the tarball (and no cached build of the same inputs) the exit status is
# 77, the reason on stderr.
#
# Steps: stage our headers and libraries as a CUDA tree (BUILD/ucx/cuda)
# and a gdrcopy tree (BUILD/ucx/gdrcopy); fetch the source package with
# `apt-get source` through a private apt configuration (a deb-src entry for
# bookworm under UCX_CACHE; the system's apt sources are never read or
# changed); unpack, apply ucx/patches/*.patch, configure --with-cuda
# --with-gdrcopy --with-verbs --with-rdmacm, build and install src/ and the
# ucx_info and ucx_perftest tools.  Nothing is done when BUILD/ucx/prefix
# holds a build of the same version from the same inputs (our headers, the
# system's verbs.h and rdma_cma.h, the patches, this script and
# scripts/lib-build.sh, and cc --version: their sha256 is in the stamp).
#
# ucx-build.sh source-tarball FILE.tar.xz: only the source, Debian's
# patches and ours applied and autogen.sh run, as a tarball for a machine
# that builds UCX against real CUDA (tests/device/ucx/ucx-gpu.sh).
#
# The source package is cached under UCX_CACHE, outside BUILD: it is the
# same for every checkout and survives `make clean`; the build depends on
# this checkout's headers and lives in BUILD.  The installed prefix is
# cached there too (UCX_CACHE/built, a tarball per version and stamp), so
# a fresh clone with the same inputs restores it instead of building.
set -eu

usage() {
	echo "usage: $0 BUILD | $0 source-tarball FILE.tar.xz" >&2
	exit 2
}
[ $# -ge 1 ] || usage
top=$(cd "$(dirname "$0")/.." && pwd)
# Debian 12's source package; the patches in ucx/patches are made for it.
ucx_pkg=ucx
ucx_ver=1.13.1-1
ucx_upstream=${ucx_ver%-*}
cache=${UCX_CACHE:-/var/cache/gdirect-ucx}
srcdir=$cache/$ucx_ver
# UCX 1.22.0's release tarball (../shared/peers/README.md), and its patches.
ucx122_sha256=d2ae32e86c463b77997369bc62caf49dc165338075056a46fc81434abcbcb8e6
case "${UCX_VERSION:-1.13.1}" in
1.13.1) ucx_from=debian patch_dir=ucx/patches ;;
1.22.0) ucx_from=tarball patch_dir=ucx/patches-1.22.0 ucx_ver=1.22.0 ucx_upstream=1.22.0 ;;
*) echo "ucx-build: UCX_VERSION='$UCX_VERSION': expected 1.13.1 or 1.22.0" >&2; exit 2 ;;
esac
stamp=/nonexistent/.gdirect-ucx-stamp	# BUILD's, once known

say() { echo "ucx-build: $*"; }
# A failure leaves no stamp: the guest packs no half-made or stale UCX.
die() { rm -f "$stamp"; echo "ucx-build: $*" >&2; exit 1; }
. "$top/scripts/lib-build.sh"

# fetch_source: Debian's source package into $srcdir (UCX_CACHE), through
# a private apt configuration; once per version.
fetch_source() {
	srcdir=$cache/$ucx_ver
	if [ ! -f "$srcdir/.done" ]; then
		command -v dpkg-source >/dev/null 2>&1 || die "dpkg-source missing (scripts/deps.sh ucx installs dpkg-dev)"
		st=0
		apt_source "$cache" bookworm "$ucx_pkg" "$ucx_ver" || st=$?
		case $st in
		3) die "cannot create $cache (set UCX_CACHE, or run as root)" ;;
		1) die "apt-get update of bookworm's deb-src failed (network?)" ;;
		2) die "apt-get source $ucx_pkg=$ucx_ver failed (is it still in bookworm?)" ;;
		esac
		rm -rf "$srcdir" && mv "$srcdir.tmp" "$srcdir" && touch "$srcdir/.done"
	fi
}

# fetch_tarball: UCX 1.22.0's release tarball, checked, unpacked into
# $srcdir (UCX_CACHE, a directory named by the tarball's and the patches'
# sha256), patched and autogen'd; once per such pair.
fetch_tarball() {
	tarball=${UCX_TARBALL:-}
	if [ -z "$tarball" ]; then
		for d in ${GDIRECT_PEERS_DIR:-} "$top/../shared/peers"; do
			if [ -f "$d/ucx-$ucx_ver.tar.gz" ]; then tarball=$d/ucx-$ucx_ver.tar.gz; break; fi
		done
	fi
	# A missing tarball is exit status 77, which run-tests.sh reads as a
	# lane that cannot run here rather than a failed build.
	if [ -z "$tarball" ] || [ ! -f "$tarball" ]; then
		rm -f "$stamp"
		echo "ucx-build: no ucx-$ucx_ver.tar.gz (in \$GDIRECT_PEERS_DIR or ../shared/peers; UCX_TARBALL names one): get it from https://github.com/openucx/ucx, tag v$ucx_ver" >&2
		exit 77
	fi
	sum=$(sha256sum "$tarball" | cut -d' ' -f1)
	[ "$sum" = "$ucx122_sha256" ] ||
		die "$tarball: sha256 $sum, expected $ucx122_sha256 (../shared/peers/README.md)"
	key=$( { echo "$sum"; [ -z "$patches" ] || cat $patches; } | sha256sum | cut -c1-16)
	srcdir=$cache/$ucx_ver-$key
	[ -f "$srcdir/.done" ] && return 0
	for t in autoreconf libtoolize tar; do
		command -v $t >/dev/null 2>&1 || die "$t missing (scripts/deps.sh ucx installs the build dependencies)"
	done
	mkdir -p "$cache" 2>/dev/null || die "cannot create $cache (set UCX_CACHE, or run as root)"
	rm -rf "$srcdir.tmp" && mkdir -p "$srcdir.tmp" || die "cannot write $cache (set UCX_CACHE)"
	say "unpacking $(basename "$tarball") (sha256 checked)"
	tar -C "$srcdir.tmp" -xzf "$tarball" --strip-components=1 || die "cannot unpack $tarball"
	# shellcheck disable=SC2086 # a list of paths without blanks
	apply_patches "$srcdir.tmp" "$patch_dir" "$ucx_ver" $patches
	say "autogen (autoreconf) of $ucx_ver, cached in $srcdir"
	(cd "$srcdir.tmp" && ./autogen.sh) >"$cache/autogen-$ucx_ver.log" 2>&1 ||
		{ tail -n 30 "$cache/autogen-$ucx_ver.log" >&2; die "autogen.sh of $ucx_ver failed"; }
	rm -rf "$srcdir" && mv "$srcdir.tmp" "$srcdir" && touch "$srcdir/.done"
}

# source-tarball FILE: the source as configure wants it, for a machine
# that can neither fetch it nor run autogen (a GPU machine without
# libtoolize): Debian's source with Debian's patches and ours, autogen.sh
# run, in one tarball (top directory src/).  UCX's own .gitignore hides
# configure and Makefile.in, so a tarball rather than a copied tree.
# tests/device/ucx/ucx-gpu.sh builds it against real CUDA.
if [ "$1" = source-tarball ]; then
	[ $# -eq 2 ] || usage
	[ $ucx_from = debian ] || { echo "ucx-build: source-tarball makes UCX 1.13.1's (UCX_VERSION=1.22.0 has a release tarball already)" >&2; exit 2; }
	case "$2" in *.tar.xz) ;; *) echo "ucx-build: source-tarball '$2': expected FILE.tar.xz" >&2; exit 2 ;; esac
	for t in dpkg-source autoreconf libtoolize tar xz; do
		command -v $t >/dev/null 2>&1 || die "$t missing (scripts/deps.sh ucx installs the build dependencies)"
	done
	fetch_source
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	say "unpacking $ucx_pkg $ucx_ver (with Debian's patches)"
	dpkg-source --no-check -x "$srcdir/${ucx_pkg}_$ucx_ver.dsc" "$tmp/src" >/dev/null ||
		die "dpkg-source could not unpack $srcdir/${ucx_pkg}_$ucx_ver.dsc"
	# shellcheck disable=SC2046 # a list of paths without blanks
	apply_patches "$tmp/src" ucx/patches "$ucx_ver" $(ls "$top"/ucx/patches/*.patch 2>/dev/null || true)
	say "autogen (autoreconf)"
	(cd "$tmp/src" && ./autogen.sh) >"$tmp/autogen.log" 2>&1 ||
		{ tail -n 30 "$tmp/autogen.log" >&2; die "autogen.sh failed"; }
	rm -rf "$tmp/src/.pc" "$tmp/src/autom4te.cache"
	tar -C "$tmp" -cJf "$2.tmp" src || { rm -f "$2.tmp"; die "cannot write $2"; }
	mv "$2.tmp" "$2"
	say "wrote $2 ($ucx_pkg $ucx_ver, autogen'd, $(du -h "$2" | cut -f1))"
	exit 0
fi
[ $# -eq 1 ] || usage
build=$(cd "$1" 2>/dev/null && pwd) || { echo "ucx-build: no build directory '$1' (run make userspace first)" >&2; exit 1; }
jobs=${JOBS:-2}
case "$jobs" in ''|*[!0-9]*) echo "ucx-build: JOBS='$jobs': expected a number" >&2; exit 2 ;; esac
case "${UCX_FORCE:-}" in ''|0|1) ;; *) echo "ucx-build: UCX_FORCE='$UCX_FORCE': expected 0 or 1" >&2; exit 2 ;; esac

# 1.13.1 is what the guest packs (BUILD/ucx); another version lives beside it.
if [ $ucx_from = debian ]; then out=$build/ucx; else out=$build/ucx-$ucx_ver; fi
prefix=$out/prefix
stamp=$prefix/.gdirect-ucx-stamp
# Any failure from here on, die's or set -e's, leaves no stamp: run-tests.sh
# ships a prefix only with one, so an earlier run's UCX is never taken for
# this run's.
trap '[ $? = 0 ] || rm -f "$stamp"' EXIT

# --- 1. our CUDA tree and gdrcopy tree -------------------------------------

missing=""
# find_lib VAR NAME WHAT: VAR=the file or link NAME that meson built in
# BUILD, or NAME is added to $missing.
find_lib() {
	found=$(find "$build" \( -path "$out" -o -path "$build/kmod" -o -path "$build/kmod-debug" \
		-o -path "$build/debug-kernel" \) -prune -o -name "$2" -print | head -n1)
	[ -n "$found" ] || missing="$missing
  $2 in $build: $3"
	eval "$1=\$found"
}
# find_hdr VAR NAME WHAT DIRS...: VAR=the first DIR of this checkout
# holding NAME, or NAME is added to $missing.
find_hdr() {
	v=$1 n=$2 w=$3; shift 3
	eval "$v="
	for d in "$@"; do
		if [ -f "$top/$d/$n" ]; then eval "$v=\$top/\$d"; return 0; fi
	done
	missing="$missing
  $n in $*: $w"
}

find_hdr cuda_inc cuda.h "the emulated driver's header" include/nvidia
find_hdr rt_inc cuda_runtime.h "the emulated CUDA runtime's header" include/nvidia
find_hdr nvml_inc nvml.h "the emulated NVML's header" include/nvidia
find_lib libcuda libcuda.so.1 "the emulated driver library (make userspace)"
find_lib libcudart libcudart.so.13 "the emulated CUDA runtime (make userspace)"
find_lib libnvml libnvidia-ml.so.1 "the emulated NVML (make userspace)"
cuda_missing=$missing
find_hdr gdr_inc gdrapi.h "our gdrcopy header" gdrapi/include
find_lib libgdrapi libgdrapi.so.2 "our libgdrapi (make userspace)"
[ "$missing" = "$cuda_missing" ] || die "missing:$missing"

stage=$out/cuda.new
rm -rf "$stage" "$out/gdrcopy.new"
mkdir -p "$stage/include" "$stage/lib64" "$out/gdrcopy.new/include" "$out/gdrcopy.new/lib64"
if [ -z "$cuda_missing" ]; then
	gpu=gpu
	# Every header of the directories the three come from: cuda_runtime.h
	# may include others of its own.
	for d in "$cuda_inc" "$rt_inc" "$nvml_inc"; do
		case "$d" in "$top"/?*) ;; *) die "internal: header directory '$d'" ;; esac
		cp -R "$d"/. "$stage/include/"
	done
	# What UCX 1.13's CUDA modules name from the driver's header: a
	# missing one is named here rather than as a compiler error.
	lacks=""
	for n in CUDA_CB CUDA_ERROR_ALREADY_MAPPED CUipcMemHandle cuCtxGetCurrent \
		cuCtxGetDevice cuDeviceGet cuDeviceGetAttribute cuDeviceGetCount \
		cuDeviceGetName cuDeviceGetUuid cuDeviceTotalMem cuEventCreate \
		cuEventQuery cuEventRecord cuGetErrorString cuInit cuIpcCloseMemHandle \
		cuIpcGetMemHandle cuIpcOpenMemHandle cuLaunchHostFunc cuMemAlloc \
		cuMemAllocManaged cuMemAllocPitch cuMemFree cuMemFreeHost \
		cuMemGetAddressRange cuMemcpyAsync cuMemcpyDtoDAsync \
		cuPointerGetAttribute cuPointerGetAttributes cuPointerSetAttribute \
		cuStreamAddCallback cuStreamCreate cuStreamDestroy; do
		grep -q "\b$n\b" "$stage/include/cuda.h" || lacks="$lacks $n"
	done
	# What UCX 1.22's CUDA modules name besides (src/uct/cuda, src/ucm/cuda).
	if [ $ucx_from = tarball ]; then
		for n in cuCtxGetId cuMemRangeGetAttribute cuMemExportToShareableHandle \
			cuMemImportFromShareableHandle CU_DEVICE_CPU CU_DEVICE_INVALID \
			CU_CTX_SYNC_MEMOPS CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION \
			CUmemoryPool CUlibrary; do
			grep -q "\b$n\b" "$stage/include/cuda.h" || lacks="$lacks $n"
		done
		for n in cudaGetSymbolSize cudaMemPool_t; do
			grep -q "\b$n\b" "$stage/include/cuda_runtime_api.h" || lacks="$lacks $n"
		done
		grep -q "\bPFN_cuMemGetHandleForAddressRange_v11070\b" "$stage/include/cudaTypedefs.h" 2>/dev/null ||
			lacks="$lacks cudaTypedefs.h:PFN_cuMemGetHandleForAddressRange_v11070"
	fi
	[ -z "$lacks" ] || die "include/nvidia/ lacks what UCX $ucx_upstream's CUDA modules use:$lacks"
	ln -s "$libcuda" "$stage/lib64/libcuda.so"
	ln -s "$libcudart" "$stage/lib64/libcudart.so"
	ln -s "$libnvml" "$stage/lib64/libnvidia-ml.so"
	cuda_opts="--with-cuda=$out/cuda --with-gdrcopy=$out/gdrcopy"
else
	# Without our CUDA runtime and NVML, UCX can only be built for host
	# memory: said loudly, and the guest tests of GPU transports fail.
	gpu=host-only
	echo "ucx-build: WARNING: our CUDA pieces are missing:$cuda_missing" >&2
	echo "ucx-build: WARNING: building a HOST-MEMORY-ONLY UCX (no cuda_copy, cuda_ipc, gdr_copy)" >&2
	cuda_opts="--without-cuda --without-gdrcopy"
fi
cp "$gdr_inc/gdrapi.h" "$out/gdrcopy.new/include/"
ln -s "$libgdrapi" "$out/gdrcopy.new/lib64/libgdrapi.so"

# The inputs the build depends on: headers (ours, and the system's verbs
# and rdmacm ones that configure builds the ib and rdmacm modules
# against), patches, this script and its library, and the compiler.
patches=$(ls "$top/$patch_dir"/*.patch 2>/dev/null || true)
self=$top/scripts/ucx-build.sh
hash=$( { (cd "$stage/include" && find . -type f | LC_ALL=C sort | xargs -r cat);
	cat "$out/gdrcopy.new/include/gdrapi.h" "$self" "$top/scripts/lib-build.sh";
	[ -z "$patches" ] || cat $patches;
	for h in /usr/include/infiniband/verbs.h /usr/include/rdma/rdma_cma.h; do
		[ ! -f "$h" ] || cat "$h"
	done
	cc --version 2>/dev/null || true; } | sha256sum | cut -d' ' -f1)
want="$ucx_pkg $ucx_ver $gpu $hash"

# Our guest programs that use UCX (tests/guest/ucx/*.c), built against the
# prefix, into BUILD/ucx/guest (packed into the guest's /tests); their
# t-NN scripts find UCX in /opt/ucx/lib.
build_tests() {
	mkdir -p "$out/guest"
	[ $gpu = gpu ] || { say "no GPU-aware UCX: the UCP test program is not built"; return 0; }
	for c in "$top"/tests/guest/ucx/*.c; do
		[ -f "$c" ] || continue
		t=$out/guest/$(basename "$c" .c)
		say "building $(basename "$t")"
		# UCX's headers are included as system headers: -Wextra
		# finds sign comparisons in UCX 1.22's own macros (UCS_MASK in
		# ucp.h), which are not ours to fix.
		cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o "$t" "$c" \
			-isystem "$prefix/include" -I"$cuda_inc" -I"$gdr_inc" -I"$top/tests/include" -I"$top/emu/include" \
			-L"$prefix/lib" -lucp -lucs -lucm \
			"$libcuda" "$libgdrapi" || die "building $c failed"
	done
}

if [ "${UCX_FORCE:-0}" != 1 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   [ -x "$prefix/bin/ucx_info" ]; then
	rm -rf "$stage" "$out/gdrcopy.new"
	build_tests
	say "UCX $ucx_upstream ($gpu) in $prefix is up to date (inputs ${hash%"${hash#????????????}"})"
	exit 0
fi
rm -rf "$out/cuda" "$out/gdrcopy"
mv "$stage" "$out/cuda"
mv "$out/gdrcopy.new" "$out/gdrcopy"

# The installed prefix is kept under UCX_CACHE as a tarball named by the
# stamp's inputs, so a fresh clone of the same sources unpacks it in
# seconds instead of building (CI starts every run from a fresh clone).
# It holds only what the inputs decide: the prefix is read through
# LD_LIBRARY_PATH and UCX finds its modules beside libucs, so the build
# path recorded in its .la and .pc files does not matter to the guests.
built=$cache/built/$ucx_ver-$gpu-$hash.tar
if [ "${UCX_FORCE:-0}" != 1 ] && [ -f "$built" ]; then
	# Unpacked beside the prefix and moved into place, so that a bad
	# tarball leaves no partial prefix.
	unpacked=$(mktemp -d "$prefix.XXXXXX") || die "cannot write beside $prefix"
	if ! tar -C "$unpacked" -xf "$built" || ! rm -rf "$prefix" || ! mv "$unpacked" "$prefix"; then
		rm -rf "$unpacked"
		die "cannot unpack $built (remove it to rebuild)"
	fi
	echo "$want" >"$stamp"
	build_tests
	say "UCX $ucx_upstream ($gpu) in $prefix restored from $built"
	exit 0
fi

# --- 2. the source: Debian's package or the release tarball (above) --------

if [ $ucx_from = debian ]; then fetch_source; else fetch_tarball; fi

# --- 3. unpack, patch, configure, build, install ---------------------------

for t in autoreconf libtoolize make cc c++; do
	command -v $t >/dev/null 2>&1 || die "$t missing (scripts/deps.sh ucx installs the build dependencies)"
done
for h in infiniband/verbs.h rdma/rdma_cma.h; do
	[ -f "/usr/include/$h" ] || die "/usr/include/$h missing (scripts/deps.sh ucx: libibverbs-dev, librdmacm-dev)"
done

src=$out/src
rm -rf "$src" "$out/obj" "$prefix"
log_start "$out/build.log"
if [ $ucx_from = debian ]; then
	say "unpacking $ucx_pkg $ucx_ver (with Debian's patches)"
	dpkg-source --no-check -x "$srcdir/${ucx_pkg}_$ucx_ver.dsc" "$src" >/dev/null ||
		die "dpkg-source could not unpack $srcdir/${ucx_pkg}_$ucx_ver.dsc"
	# shellcheck disable=SC2086 # a list of paths without blanks
	apply_patches "$src" ucx/patches "$ucx_ver" $patches
	run "autogen (autoreconf)" sh -c "cd '$src' && ./autogen.sh"
else
	# The cached source is patched and autogen'd already; configure builds
	# out of tree, so the cache is only read.
	src=$srcdir
fi
mkdir -p "$out/obj"
# Release build as Debian's (mt, cma), logging kept so that
# UCX_LOG_LEVEL=debug names the transports; NUMA, FUSE, Java, Go off: the
# guest carries only what it needs.
# 1.22 has no NUMA option (it needs no libnuma), names the BFD backtrace
# --without-bfd, and has GDA-KI (mlx5 GPU-initiated transfers, which need
# DOCA) and the Level Zero and Gaudi modules, all off.  It also builds
# ucx_perftest's CUDA kernels with any nvcc it finds on PATH; NVCC names
# one that answers no version, so configure leaves device code out: no GPU
# code runs on the emulated GPU, and nothing of NVIDIA's toolkit is read.
if [ $ucx_from = debian ]; then
	ver_opts="--disable-numa --disable-backtrace-detail"
else
	ver_opts="--without-bfd --without-gda --without-ze --without-gaudi NVCC=/bin/false"
fi
run "configure $cuda_opts --with-verbs --with-rdmacm" sh -c "cd '$out/obj' && '$src/configure' \
	--prefix='$prefix' --disable-static --enable-mt --enable-cma \
	--disable-doxygen-doc --without-java --without-go --without-fuse3 \
	--without-knem --without-xpmem --without-ugni --without-rocm $ver_opts \
	$cuda_opts --with-verbs --with-rdmacm"
# configure turns a piece it cannot find into a missing module, silently.
if [ $gpu = gpu ]; then
	grep -q 'UCT modules:.*< cuda ib rdmacm' "$log" && grep -q 'CUDA modules:.*< gdrcopy' "$log" &&
		grep -q 'UCM modules:.*< cuda' "$log" && grep -q 'Perf modules:.*< cuda' "$log"
else
	grep -q 'UCT modules:.*< ib rdmacm' "$log"
fi || { grep 'modules:' "$log" >&2; die "configure left out cuda, gdrcopy, ib or rdmacm (see $out/obj/config.log)"; }
for d in src/ucm src/ucs src/uct src/ucp src/tools/info src/tools/perf; do
	run "make -j$jobs $d" make -C "$out/obj/$d" -j"$jobs"
	run "install $d" make -C "$out/obj/$d" install
done
mods="libuct_ib.so libuct_rdmacm.so"
[ $gpu = host-only ] || mods="$mods libuct_cuda.so libuct_cuda_gdrcopy.so libucm_cuda.so"
for m in $mods; do
	[ -e "$prefix/lib/ucx/$m" ] || die "$m was not built (see $log)"
done
echo "$want" >"$stamp"
# A cache that cannot be written costs the next clone a build, no more.
# The tarball is written under a name of its own and renamed, since every
# checkout that uses this cache may write the same one at once.
packed=""
if mkdir -p "$cache/built" 2>/dev/null && packed=$(mktemp "$built.XXXXXX" 2>/dev/null) &&
   tar -C "$prefix" -cf "$packed" . 2>/dev/null && chmod a+r "$packed" && mv "$packed" "$built"; then
	# The four newest of this version stay: other checkouts' inputs.
	ls -t "$cache/built/$ucx_ver-"*.tar | tail -n +5 | xargs -r rm -f
else
	[ -z "$packed" ] || rm -f "$packed"
	echo "ucx-build: WARNING: could not cache the build in $cache/built" >&2
fi
build_tests
say "UCX $ucx_upstream ($gpu) installed in $prefix"
