# SPDX-License-Identifier: MIT
# gdrcopy-guest-lib.sh - the kernel driver under gdrcopy's programs in the
# guest, for the scripts that run them there (tests/peers/gdrcopy-guest.sh,
# bench/gdrcopy/ratios-guest.sh, pintrace-guest.sh; their host halves pack
# it beside them in /peers/gdrcopy).  Source it after /tests/lib.sh, with
# $peer the folder of gdrcopy's build.
#
#   gdrcopy_load DRV MODE   DRV (gdrdrv: NVIDIA's gdrdrv.ko from
#                           $peer/modules; gdirect: gdirect.ko) in pinning
#                           MODE (1 persistent, 0 traditional: gdrdrv's
#                           use_persistent_mapping, gdirect's use_persistent),
#                           and /dev/gdrdrv
#   gdrcopy_unload DRV      DRV unloaded, and gdrdrv's node removed
#
# gdrdrv registers a bare character device, so its node is made as
# gdrcopy's insmod.sh makes it; gdirect's is a misc device, made by the
# kernel.

gdrcopy_load() {
	if [ "$1" = gdirect ]; then
		load_module gdirect use_persistent="$2"
		return
	fi
	insmod "$peer/modules/gdrdrv.ko" use_persistent_mapping="$2" || return 1
	major=$(awk '$2 == "gdrdrv" { print $1 }' /proc/devices)
	rm -f /dev/gdrdrv
	mknod -m 666 /dev/gdrdrv c "$major" 0
}

gdrcopy_unload() {
	rmmod "$1" || return 1
	[ "$1" = gdrdrv ] && rm -f /dev/gdrdrv
	return 0
}
