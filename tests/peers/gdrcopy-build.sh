#!/bin/sh
# SPDX-License-Identifier: MIT
# gdrcopy-build.sh BUILD TARBALL KVER - gdrcopy built by its own Makefiles
# against the emulated machine, into BUILD/peers/gdrcopy-2.6/.
#
# The tarball (tests/peers/peers.sh found and checked it) is unpacked into
# BUILD/peers/gdrcopy-2.6/src and built there unchanged:
#   - gdrdrv.ko by src/gdrdrv/Makefile against the guest kernel's headers
#     (/lib/modules/KVER/build), with NVIDIA_SRC_DIR=include/nvidia (our nv-p2p.h, the one
#     nvp2p_emu.ko is built with).  gdrcopy's own nv-p2p-dummy module
#     gives modpost the nvidia_p2p_* symbols and their CRCs, as on a
#     machine with NVIDIA's driver; at load time the kernel checks those
#     CRCs against nvp2p_emu.ko's exports.  NVIDIA_IS_OPENSOURCE=y: the
#     v2 emulator is the open driver (GPL exports).
#   - libgdrapi.so.2 by src/Makefile;
#   - gdrcopy_sanity, gdrcopy_copybw, gdrcopy_copylat and gdrcopy_apiperf
#     by tests/Makefile, with CUDA= a folder holding our include/nvidia
#     (cuda.h) and the emulated libcuda.so (BUILD/emu/cuda): no CUDA
#     toolkit.  gdrcopy_pplat needs nvcc and is not built.
# What the guest needs is gathered in BUILD/peers/gdrcopy-2.6/out:
# modules/gdrdrv.ko, lib/libgdrapi.so.2*, bin/gdrcopy_*.
# A stamp records the tarball's sha256, the kernel headers and our two
# headers; with the same stamp nothing is rebuilt.
set -eu
build=$(cd "$1" && pwd); tarball=$2; kver=$3
kdir=/lib/modules/$kver/build
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$build/peers/gdrcopy-2.6
src=$dir/src/gdrcopy-2.6
out=$dir/out
stamp="$(sha256sum "$tarball" | cut -d' ' -f1) $(readlink -f "$kdir") $(cat "$top/include/nvidia/nv-p2p.h" "$top/include/nvidia/cuda.h" | sha256sum | cut -d' ' -f1)"
if [ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$stamp" ] &&
   [ -f "$out/modules/gdrdrv.ko" ] && [ -x "$out/bin/gdrcopy_apiperf" ]; then
	echo "gdrcopy-build: up to date ($out)"
	exit 0
fi
rm -rf "$dir"
mkdir -p "$dir/src" "$dir/cuda/lib64" "$out/modules" "$out/lib" "$out/bin"
tar -xzf "$tarball" -C "$dir/src"
[ -d "$src" ] || { echo "gdrcopy-build: $tarball holds no gdrcopy-2.6/" >&2; exit 1; }

# The CUDA folder gdrcopy's tests/Makefile expects: include/ and lib64/.
ln -s "$top/include/nvidia" "$dir/cuda/include"
[ -f "$build/emu/cuda/libcuda.so" ] || { echo "gdrcopy-build: no $build/emu/cuda/libcuda.so (make userspace)" >&2; exit 1; }
ln -s "$build/emu/cuda/libcuda.so" "$dir/cuda/lib64/libcuda.so"

# Its Makefile builds in $(PWD), so it runs from its own folder.
(cd "$src/src/gdrdrv" && make KVER="$kver" \
	NVIDIA_SRC_DIR="$top/include/nvidia" NVIDIA_IS_OPENSOURCE=y \
	CONF_SCRIPT_DIR="$src/scripts")
(cd "$src" && make lib)
(cd "$src/tests" && make CUDA="$dir/cuda" NVCC=/bin/false \
	gdrcopy_sanity gdrcopy_copybw gdrcopy_copylat gdrcopy_apiperf)

cp "$src/src/gdrdrv/gdrdrv.ko" "$out/modules/"
cp -P "$src"/src/libgdrapi.so.2* "$out/lib/"
cp "$src"/tests/gdrcopy_sanity "$src"/tests/gdrcopy_copybw \
	"$src"/tests/gdrcopy_copylat "$src"/tests/gdrcopy_apiperf "$out/bin/"
echo "$stamp" >"$dir/stamp"
echo "gdrcopy-build: built $out"
