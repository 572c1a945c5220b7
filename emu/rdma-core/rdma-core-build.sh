#!/bin/sh
# SPDX-License-Identifier: MIT
# rdma-core-build.sh BUILD - libibverbs and the Soft-RoCE provider of
# rdma-core 56.1 with emu/rdma-core/*.patch applied (the provider's
# reg_dmabuf_mr), for the cluster guests, in BUILD/rdma-core/.
#
# Environment: RDMA_CORE_CACHE (where the source package is kept, default
# /var/cache/gdirect-rdma-core), RDMA_CORE_FORCE=1 (rebuild even when the
# stamp matches).
#
# Debian 12's rdma-core 44.0 has ibv_reg_dmabuf_mr, but its rxe provider
# does not implement it (the call answers EOPNOTSUPP before the kernel is
# asked), and its orig tarball is no longer on the mirror; Debian 13's
# 56.1 is, and has the same provider ABI (IBVERBS_PABI_VERSION 34).  The
# source package is fetched with `apt-get source --download-only` through
# a private apt configuration (a trixie deb-src entry under the cache; the
# system's apt sources are never read or changed), its orig tarball is
# checked against the sha256 pinned below, unpacked, patched, configured
# with cmake (no man pages, no pyverbs) and only the targets the guest
# needs are built with ninja -j1: libibverbs.so.1 and librxe-rdmav34.so,
# for the paths Debian uses (/usr/lib/x86_64-linux-gnu, /etc/libibverbs.d),
# and libibumad.so.3, which perftest links (tests/peers/perftest-build.sh;
# Debian 12 has it only with libibumad-dev, which nothing else here needs).
#
# Result: BUILD/rdma-core/out/lib/libibverbs.so.1 and libibumad.so.3 (one
# file each, with libibverbs.so and libibumad.so links to link against),
# out/lib/libibverbs/librxe-rdmav34.so, and out/include/ (the headers a
# program built against this libibverbs uses: infiniband/, rdma/, less the
# vendors' direct-verbs headers).  A stamp holds the
# sha256 of the tarball, the patches, this script and
# scripts/lib-build.sh; with the same stamp
# nothing is rebuilt.
#
# Exit status: 0 built or up to date; 77 something it needs is missing
# (cmake, ninja, libnl, the source package): stderr names it, the caller
# skips loudly; 1 any other failure (a patch that does not apply, a
# compiler error).
set -eu

[ $# -eq 1 ] || { echo "usage: $0 BUILD" >&2; exit 2; }
build=$(cd "$1" 2>/dev/null && pwd) || { echo "rdma-core-build: no build directory '$1'" >&2; exit 1; }
case "${RDMA_CORE_FORCE:-}" in ''|0|1) ;; *) echo "rdma-core-build: RDMA_CORE_FORCE='$RDMA_CORE_FORCE': expected 0 or 1" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
pkg=rdma-core
ver=56.1-1
upstream=${ver%-*}
orig=${pkg}_$upstream.orig.tar.gz
# The orig tarball of Debian 13's rdma-core 56.1-1, as trixie's Sources
# index lists it.
orig_sha=63ce7f2baa7242c2dbc76375dac957c420187dd27f8c5e148efc07971ee522a8
cache=${RDMA_CORE_CACHE:-/var/cache/gdirect-rdma-core}
dir=$build/rdma-core
out=$dir/out
stamp=$dir/stamp

say() { echo "rdma-core-build: $*"; }
missing() { echo "rdma-core-build: missing: $*" >&2; exit 77; }
die() { rm -f "$stamp"; echo "rdma-core-build: $*" >&2; exit 1; }
. "$here/../../scripts/lib-build.sh"

for t in cmake ninja cc pkg-config; do
	command -v $t >/dev/null 2>&1 || missing "$t (scripts/deps.sh test installs it)"
done
for m in libnl-3.0 libnl-route-3.0; do
	pkg-config --exists $m || missing "pkg-config module $m (libnl-3-dev, libnl-route-3-dev)"
done

# fetch: the source package's orig tarball into $cache/$ver, once.  Only
# the orig tarball is used, and apt checks each file it fetches against the
# signed index; the mirror has answered 404 for the .dsc while serving the
# tarballs, so apt-get source's exit status is not the test.
fetch() {
	if [ -f "$cache/$ver/$orig" ]; then return 0; fi
	st=0
	apt_source "$cache" trixie "$pkg" "$ver" || st=$?
	case $st in
	3) missing "a writable $cache (set RDMA_CORE_CACHE, or run as root)" ;;
	1) missing "trixie's deb-src index (apt-get update failed: network?)" ;;
	esac
	[ -f "$cache/$ver.tmp/$orig" ] ||
		missing "$orig (apt-get source $pkg=$ver failed: is it still in trixie?)"
	rm -rf "$cache/$ver" && mv "$cache/$ver.tmp" "$cache/$ver"
}
fetch
tarball=$cache/$ver/$orig
got=$(sha256sum "$tarball" | cut -d' ' -f1)
[ "$got" = "$orig_sha" ] || die "$tarball has sha256 $got, not $orig_sha"

patches=$(ls "$here"/*.patch)
want="$pkg $ver $( { echo "$got"; cat $patches "$0" "$here/../../scripts/lib-build.sh"; } | sha256sum | cut -d' ' -f1)"
if [ "${RDMA_CORE_FORCE:-0}" != 1 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
   [ -f "$out/lib/libibverbs.so.1" ] && [ -f "$out/lib/libibverbs/librxe-rdmav34.so" ] && [ -f "$out/lib/libibumad.so.3" ]; then
	say "rdma-core $upstream (patched) in $out is up to date"
	exit 0
fi

rm -rf "$dir"
mkdir -p "$dir/src" "$dir/obj" "$out/lib/libibverbs" "$out/include"
tar -xzf "$tarball" -C "$dir/src" || die "cannot unpack $tarball"
src=$dir/src/$pkg-$upstream
[ -d "$src" ] || die "$tarball holds no $pkg-$upstream/"
# shellcheck disable=SC2086 # a list of paths without blanks
apply_patches "$src" emu/rdma-core "$upstream" $patches

log_start "$dir/build.log"
run "cmake (NO_MAN_PAGES, NO_PYVERBS)" cmake -S "$src" -B "$dir/obj" -G Ninja \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
	-DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu -DCMAKE_INSTALL_SYSCONFDIR=/etc \
	-DCMAKE_INSTALL_RUNDIR=/run -DNO_MAN_PAGES=1 -DNO_PYVERBS=1 -DENABLE_STATIC=0 \
	-DCMAKE_SKIP_BUILD_RPATH=ON
run "ninja -j1 libibverbs.so.1 librxe-rdmav34.so libibumad.so.3" ninja -C "$dir/obj" -j1 \
	lib/libibverbs.so.1 lib/librxe-rdmav34.so lib/libibumad.so.3
cp -L "$dir/obj/lib/libibverbs.so.1" "$out/lib/libibverbs.so.1"
ln -s libibverbs.so.1 "$out/lib/libibverbs.so"
cp -L "$dir/obj/lib/libibumad.so.3" "$out/lib/libibumad.so.3"
ln -s libibumad.so.3 "$out/lib/libibumad.so"
cp -L "$dir/obj/lib/librxe-rdmav34.so" "$out/lib/libibverbs/" ||
	die "the rxe provider was not built (see $log)"
# The public headers, as the build tree links them.
cp -RL "$dir/obj/include/infiniband" "$dir/obj/include/rdma" "$out/include/"
# Less the vendors' direct-verbs headers: their libraries are not built,
# and a program's configure that finds the header alone (perftest's mlx5
# DEVX check) builds code it cannot link.
rm -f "$out"/include/infiniband/*dv.h "$out"/include/infiniband/mlx5_*.h
echo "$want" >"$stamp"
say "built rdma-core $upstream with $(echo "$patches" | wc -w) patch(es) in $out"
