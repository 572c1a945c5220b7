#!/bin/sh
# dkms-tree.sh SOURCE OUT VERSION - lay out the DKMS source tree of gdirect's
# modules in OUT (/usr/src/gdirect-VERSION when installed): the modules'
# sources in the repository's layout (gdirect_edu includes
# ../gdirect/include), the uapi headers, the build Makefile and dkms.conf.
set -eu
top=$1 out=$2 version=$3
rm -rf "$out"
for m in nvp2p_emu gdirect gdirect_edu; do
	mkdir -p "$out/kernel/$m"
	(cd "$top/kernel/$m" && find . -type f \
		\( -name '*.c' -o -name '*.h' -o -name Kbuild \) -print |
		cpio -pdm --quiet "$out/kernel/$m")
done
mkdir -p "$out/include/uapi"
cp "$top/include/uapi/gdirect_ioctl.h" "$top/include/uapi/gdrdrv.h" \
	"$top/include/uapi/nvp2p_emu.h" "$top/include/uapi/gdirect_edu.h" \
	"$out/include/uapi/"
cp "$top/packaging/dkms/Makefile" "$out/Makefile"
sed "s/@VERSION@/$version/g" "$top/packaging/dkms.conf.in" > "$out/dkms.conf"
