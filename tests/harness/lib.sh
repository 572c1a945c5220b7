# lib.sh - helpers for guest tests written in busybox sh (source it):
# TAP from tests/include/tap.sh, and the emulated machine's modules and
# counters.
. /tests/tap.sh
load_module() { m=$1; shift; insmod "/modules/$m.ko" "$@"; }
unload_module() { rmmod "$1"; }
# The emulator's counters and knobs: debugfs in the open licence flavour,
# /proc/driver/nvp2p_emu in the proprietary one (tests/include/emu_knob.h).
emu_knob_dir() {
	if [ -d /proc/driver/nvp2p_emu ]; then echo /proc/driver/nvp2p_emu
	else echo /sys/kernel/debug/nvp2p_emu; fi
}
emu_stat() { cat "$(emu_knob_dir)/$1"; }
