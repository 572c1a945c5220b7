#!/bin/sh
# SPDX-License-Identifier: MIT
# make demo-nvp2p inside the guest: load the emulator and the peer driver, run the
# walk-through, check that nothing stays pinned after the process exits.
. /tests/lib.sh
load_module nvp2p_emu bar1_size_mb=64 bar1_reserve_mb=16 || exit 1
load_module nvp2p_selftest || exit 1
echo "1..1"
/tests/demo-flow
rc=$?
echo "after exit: $(emu_stat pins) pins, $(emu_stat bar1_used) bytes of BAR1 used"
rmmod nvp2p_selftest; rmmod nvp2p_emu
if [ $rc = 0 ] && [ "$(emu_stat pins 2>/dev/null || echo 0)" = 0 ]; then echo "ok 1 - demo"; else echo "not ok 1 - demo"; fi
