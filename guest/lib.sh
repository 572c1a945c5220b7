# lib.sh - helpers for guest tests written in busybox sh (source it).
n=0
fails=0
plan() { echo "1..$1"; }
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
# check DESCRIPTION COMMAND...: ok when COMMAND succeeds
check() { d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
load_module() { m=$1; shift; insmod "/modules/$m.ko" "$@"; }
unload_module() { rmmod "$1"; }
# The emulator's counters and knobs: debugfs in the open licence flavour,
# /proc/driver/nvp2p_emu in the proprietary one (guest/emu_knob.h).
emu_knob_dir() {
	if [ -d /proc/driver/nvp2p_emu ]; then echo /proc/driver/nvp2p_emu
	else echo /sys/kernel/debug/nvp2p_emu; fi
}
emu_stat() { cat "$(emu_knob_dir)/$1"; }
