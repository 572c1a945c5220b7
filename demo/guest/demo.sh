#!/bin/sh
# SPDX-License-Identifier: MIT
# make demo inside the guest: load the provider, gdirect.ko and the example
# driver, walk the product (demo-walk), then check that nothing stays pinned
# and no BAR1 stays used once the process is gone.
. /tests/lib.sh
load_module nvp2p_emu bar1_size_mb=64 bar1_reserve_mb=16 || exit 1
load_module gdirect || exit 1
load_module gdirect_edu || exit 1
echo "1..1"
GDIRECT_PUBLISH_STATS=1 GDIRECT_PUBLISH_INTERVAL_MS=100 /tests/demo-walk
rc=$?
i=0
while [ "$(emu_stat pins)" != 0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
pins=$(emu_stat pins) bar=$(emu_stat bar1_used)
echo "after exit: $pins pins, $bar bytes of BAR1 used"
unload_module gdirect_edu; unload_module gdirect; unload_module nvp2p_emu
if [ $rc = 0 ] && [ "$pins" = 0 ] && [ "$bar" = 0 ]; then echo "ok 1 - demo"; else echo "not ok 1 - demo"; fi
