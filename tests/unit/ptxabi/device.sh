#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks the device library's C header against the .func prototypes of its
# hand-written PTX, with the ptxabi tool: names, parameter count, kind,
# size and alignment of every parameter and return value.
# usage: device.sh PTXABI DEVICE_DIR
exe=$1
dev=$2
. "$(dirname "$0")/../../include/tap.sh"
hdr=$dev/include/gdirect_device.h
set -- "$dev"/ptx/*.ptx
if [ ! -f "$hdr" ] || [ ! -f "$1" ]; then
	skip_all "no device library to check ($hdr, $dev/ptx/*.ptx)"
fi
if out=$("$exe" check "$hdr" "$@" 2>&1); then
	ok "gdirect_device.h matches the .func prototypes of its PTX"
else
	not_ok "gdirect_device.h disagrees with its PTX"
fi
diag "$out"
tap_done
