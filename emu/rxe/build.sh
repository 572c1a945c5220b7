#!/bin/sh
# SPDX-License-Identifier: MIT
# build.sh KDIR OUT GDIRECT_DIR - the patched Soft-RoCE module of the
# emulated cluster (README.md here).
#
# Takes drivers/infiniband/sw/rxe from Debian's linux-source tarball of
# the series of the headers at KDIR (6.1 or 6.12: RXE_LINUX_SOURCE, default
# /usr/src/linux-source-SERIES.tar.xz; scripts/deps.sh kernel-bpo-source
# fetches 6.12's), applies rxe-gpu-SERIES.patch (GPU memory regions)
# and rxe-read-pace-SERIES.patch (read replies paced), adds rxe_gpu.c and
# gdirect's kapi header, and builds rdma_rxe.ko with Kbuild against KDIR
# into OUT/rdma_rxe/, linked against gdirect.ko's exports through
# GDIRECT_DIR/Module.symvers (a v2 build against the same headers).  The
# tarball is unpacked once into OUT/pristine, keyed by its name, size and
# date; sources are copied into the Kbuild folder only where they changed,
# so an unchanged module is not rebuilt.
# Exits 77 naming what is missing (no tarball, no gdirect build, headers
# of a series without a patch, a tarball of another kernel version than
# the headers': its rxe would not be the source of their ib_core), 1 when
# the patch or the build fails.
set -eu
kdir=$1; out=$2; gd=$3
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
missing() { echo "emu/rxe/build.sh: cannot build the patched rdma_rxe: $*" >&2; exit 77; }
[ -f "$kdir/Makefile" ] || missing "no kernel headers at $kdir"
# The patch is written against one series' rxe: the headers' series picks
# it (and the tarball).
release=$(cat "$kdir/include/config/kernel.release" 2>/dev/null) ||
	missing "no include/config/kernel.release in $kdir"
series=$(echo "$release" | cut -d. -f1,2)
patchfile=$here/rxe-gpu-$series.patch
[ -r "$patchfile" ] || missing "the headers at $kdir are Linux $series's, and emu/rxe has a patch for 6.1 and 6.12 only"
tarball=${RXE_LINUX_SOURCE:-/usr/src/linux-source-$series.tar.xz}
[ -r "$tarball" ] || missing "no $tarball (Debian package linux-source-$series$([ "$series" = 6.1 ] || echo ': scripts/deps.sh kernel-bpo-source, then RXE_LINUX_SOURCE'))"
[ -f "$gd/Module.symvers" ] || missing "no $gd/Module.symvers (make testbed builds gdirect.ko)"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The rxe directory and the top Makefile (the tarball's kernel version),
# in one pass over the tarball.  A folder unpacked without the version
# (by an older build.sh, from the same tarball) is unpacked again.
pristine=$out/pristine
stamp="$(stat -c '%n %s %Y' "$tarball")"
if [ "$(cat "$pristine/.stamp" 2>/dev/null)" != "$stamp" ] || [ ! -s "$pristine/.version" ]; then
	rm -rf "$pristine"
	mkdir -p "$pristine/top"
	tar -xJf "$tarball" -C "$pristine/top" --strip-components=1 \
		"linux-source-$series/Makefile" "linux-source-$series/drivers/infiniband/sw/rxe"
	sed -n 's/^\(VERSION\|PATCHLEVEL\|SUBLEVEL\) = \([0-9]*\)$/\2/p' \
		"$pristine/top/Makefile" | head -n3 | paste -sd. >"$pristine/.version"
	mv "$pristine/top/drivers/infiniband/sw/rxe"/* "$pristine"/
	rm -rf "$pristine/top"
	echo "$stamp" >"$pristine/.stamp"
fi
# The rxe built must be the source of the ib_core it runs on: the same
# upstream version as the headers (Debian's revision is not compared).
src_ver=$(cat "$pristine/.version")
hdr_ver=$(make -s -C "$kdir" kernelversion 2>/dev/null) || hdr_ver=""
if [ -z "$src_ver" ] || [ "$src_ver" != "$hdr_ver" ]; then
	missing "$tarball is Linux ${src_ver:-(unknown)}, the headers at $kdir ${hdr_ver:-(unknown)}"
fi

stage=$out/stage
rm -rf "$stage"
mkdir -p "$stage"
cp -p "$pristine"/* "$stage"/
for p in "$patchfile" "$here/rxe-read-pace-$series.patch"; do
	patch -s -p1 -d "$stage" <"$p" ||
		{ echo "emu/rxe/build.sh: ${p##*/} does not apply to $tarball" >&2; exit 1; }
done
cp "$here/rxe_gpu.c" "$top/kernel/gdirect/include/gdirect_kapi.h" "$stage"/
dst=$out/rdma_rxe
mkdir -p "$dst"
for f in "$stage"/*; do
	cmp -s "$f" "$dst/${f##*/}" || cp "$f" "$dst"/
done
rm -rf "$stage"
# The rxe Makefile's obj-$(CONFIG_RDMA_RXE): set here, whatever the
# headers' configuration says.
make -s -C "$kdir" M="$dst" KBUILD_EXTRA_SYMBOLS="$(cd "$gd" && pwd)/Module.symvers" \
	CONFIG_RDMA_RXE=m modules ||
	{ echo "emu/rxe/build.sh: building rdma_rxe.ko against $kdir failed" >&2; exit 1; }
