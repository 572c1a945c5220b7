#!/bin/sh
# SPDX-License-Identifier: MIT
# gdirect.ko and gdirect_edu.ko load next to the emulator in either licence
# flavour (docs/driver.md).  Built as NVIDIA's proprietary driver the
# emulator taints the kernel, gdirect and gdirect_edu inherit the taint, and
# the kernel would refuse either if it used a GPL-only symbol ("module using
# GPL-only symbols uses symbols ... from proprietary module").  Built as the
# open driver nothing is tainted proprietary.  Both publish their counters
# where the flavour allows: gdirect in /proc/driver/gdirect always, the
# emulator in procfs (proprietary) or debugfs (open).
. /tests/lib.sh
plan 9
before=$(dmesg | wc -l)
check "nvp2p_emu loads" load_module nvp2p_emu
check "gdirect loads" load_module gdirect
check "gdirect_edu loads" load_module gdirect_edu
taint() { cat "/sys/module/$1/taint" 2>/dev/null; }
proprietary() { case "$(taint "$1")" in *P*) return 0 ;; esac; return 1; }
open_only() { for m; do proprietary "$m" && return 1; done; return 0; }
if [ -d /proc/driver/nvp2p_emu ]; then
	echo "# proprietary: taints $(taint nvp2p_emu) $(taint gdirect) $(taint gdirect_edu)"
	check "the emulator is proprietary (taint P)" proprietary nvp2p_emu
	inherited() { proprietary gdirect && proprietary gdirect_edu; }
	check "gdirect and gdirect_edu inherit its taint" inherited
	check "the emulator's counters are in procfs" test -r /proc/driver/nvp2p_emu/pins
else
	echo "# open flavour: taints $(taint nvp2p_emu) $(taint gdirect) $(taint gdirect_edu)"
	check "the emulator is not proprietary" open_only nvp2p_emu
	check "neither are gdirect and gdirect_edu" open_only gdirect gdirect_edu
	check "the emulator's counters are in debugfs" test -r /sys/kernel/debug/nvp2p_emu/pins
fi
check "gdirect's statistics are in /proc/driver/gdirect" \
	grep -q '^live_regions 0$' /proc/driver/gdirect/stats
new=$(dmesg | tail -n +$((before + 1)))
echo "$new" | grep -i -E 'gpl|taint|unknown symbol' | sed 's/^/# /'
no_refusal() { ! echo "$new" | grep -q -i -E 'GPL-only symbols|Unknown symbol'; }
check "no GPL-only symbol refusal in the kernel log" no_refusal
for m in gdirect_edu gdirect nvp2p_emu; do unload_module $m; done
check "modules unload" test ! -e /sys/module/nvp2p_emu
tap_done
