#!/bin/sh
# Checks the device library's C header against the .func prototypes of its
# hand-written PTX, with the ptxabi tool: names, parameter count, kind,
# size and alignment of every parameter and return value.
# usage: check_device.sh PTXABI DEVICE_DIR
exe=$1
dev=$2
hdr=$dev/include/gdirect_device.h
set -- "$dev"/ptx/*.ptx
if [ ! -f "$hdr" ] || [ ! -f "$1" ]; then
	echo "SKIP: no device library to check ($hdr, $dev/ptx/*.ptx)"
	exit 77
fi
"$exe" check "$hdr" "$@"
