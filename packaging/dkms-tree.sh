#!/bin/sh
# SPDX-License-Identifier: MIT
# dkms-tree.sh SOURCE OUT VERSION - lay out the DKMS source tree of gdirect's
# modules in OUT (/usr/src/gdirect-VERSION when installed): the modules'
# sources in the repository's layout (gdirect_edu includes
# ../gdirect/include; the emulator's provider is emu/nvp2p), the uapi
# headers (the emulator's in emu/include/uapi), the NVIDIA interface
# headers the emulator implements (include/nvidia/nv-p2p*.h), the build
# Makefile, the kernel interface probes it runs (scripts/kconftest.sh)
# and dkms.conf.
set -eu
top=$1 out=$2 version=$3
rm -rf "$out"
for d in emu/nvp2p kernel/gdirect kernel/gdirect_edu; do
	mkdir -p "$out/$d"
	# cp --parents, not cpio: make install must work where only
	# coreutils are (a GPU server has no cpio).
	(cd "$top/$d" && find . -type f \
		\( -name '*.c' -o -name '*.h' -o -name Kbuild \) \
		-exec cp -p --parents {} "$out/$d" \;)
done
mkdir -p "$out/include/nvidia"
cp "$top/include/nvidia/nv-p2p.h" "$top/include/nvidia/nv-p2p-tegra.h" \
	"$out/include/nvidia/"
mkdir -p "$out/include/uapi" "$out/emu/include/uapi"
cp "$top/include/uapi/gdirect_ioctl.h" "$top/include/uapi/gdrdrv.h" \
	"$top/include/uapi/gdirect_edu.h" "$out/include/uapi/"
cp "$top/emu/include/uapi/nvp2p_emu.h" "$out/emu/include/uapi/"
cp "$top/packaging/dkms/Makefile" "$out/Makefile"
cp "$top/scripts/kconftest.sh" "$out/kconftest.sh"
sed "s/@VERSION@/$version/g" "$top/packaging/dkms.conf.in" > "$out/dkms.conf"
