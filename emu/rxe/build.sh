#!/bin/sh
# SPDX-License-Identifier: MIT
# build.sh KDIR OUT GDIRECT_DIR - the patched Soft-RoCE module of the
# emulated cluster (README.md here).
#
# Takes drivers/infiniband/sw/rxe from Debian's linux-source-6.1 tarball
# (RXE_LINUX_SOURCE, default /usr/src/linux-source-6.1.tar.xz), applies
# rxe-gpu.patch, adds rxe_gpu.c and gdirect's kapi header, and builds
# rdma_rxe.ko with Kbuild against KDIR into OUT/rdma_rxe/, linked against
# gdirect.ko's exports through GDIRECT_DIR/Module.symvers (a v2 build of
# `make testbed`).  The tarball is unpacked once into OUT/pristine, keyed
# by its name, size and date; sources are copied into the Kbuild folder
# only where they changed, so an unchanged module is not rebuilt.
# Exits 77 naming what is missing (no tarball, no gdirect build, headers
# of another kernel series), 1 when the patch or the build fails.
set -eu
kdir=$1; out=$2; gd=$3
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
tarball=${RXE_LINUX_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
missing() { echo "emu/rxe/build.sh: cannot build the patched rdma_rxe: $*" >&2; exit 77; }
[ -r "$tarball" ] || missing "no $tarball (Debian package linux-source-6.1)"
[ -f "$gd/Module.symvers" ] || missing "no $gd/Module.symvers (make testbed builds gdirect.ko)"
[ -f "$kdir/Makefile" ] || missing "no kernel headers at $kdir"
# The patch is written against 6.1's rxe: headers of another series would
# build it against a different ib core.
case $(cat "$kdir/include/config/kernel.release" 2>/dev/null) in
6.1.*) ;;
*) missing "the headers at $kdir are not Linux 6.1's" ;;
esac
mkdir -p "$out"
out=$(cd "$out" && pwd)

pristine=$out/pristine
stamp="$(stat -c '%n %s %Y' "$tarball")"
if [ "$(cat "$pristine/.stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$pristine"
	mkdir -p "$pristine"
	tar -xJf "$tarball" -C "$pristine" --strip-components=5 \
		linux-source-6.1/drivers/infiniband/sw/rxe
	echo "$stamp" >"$pristine/.stamp"
fi

stage=$out/stage
rm -rf "$stage"
mkdir -p "$stage"
cp -p "$pristine"/* "$stage"/
patch -s -p1 -d "$stage" <"$here/rxe-gpu.patch" ||
	{ echo "emu/rxe/build.sh: rxe-gpu.patch does not apply to $tarball" >&2; exit 1; }
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
