#!/bin/sh
# SPDX-License-Identifier: MIT
# CUDA IPC between two processes, with nv-p2p pins on both sides and an edu
# DMA through the importer's (cuda-ipc-test.c); afterwards nothing is left.
. /tests/lib.sh
load_module nvp2p_emu || { echo "1..0 # SKIP no emulator"; exit 1; }
load_module nvp2p_selftest
/tests/cuda-ipc-test
rc=$?
echo "# after exit: pins=$(emu_stat pins) allocations=$(emu_stat allocations) mem_used=$(emu_stat mem_used)"
[ "$(emu_stat pins)" = 0 ] && [ "$(emu_stat allocations)" = 0 ] && [ "$(emu_stat mem_used)" = 0 ] || rc=1
rmmod nvp2p_selftest && rmmod nvp2p_emu || rc=1
exit $rc
