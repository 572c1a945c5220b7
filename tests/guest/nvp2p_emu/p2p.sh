#!/bin/sh
# SPDX-License-Identifier: MIT
# nv-p2p behaviours from a third-party driver's side; then, after the test
# program exits (its CUDA fd closes), every pin it left must be revoked.
. /tests/lib.sh
load_module nvp2p_emu bar1_size_mb=64 bar1_reserve_mb=8 || { not_ok "nvp2p_emu loads"; tap_done; exit 1; }
load_module nvp2p_selftest
/tests/p2p-test
rc=$?
diag "after exit: pins=$(emu_stat pins) bar1_used=$(emu_stat bar1_used) allocations=$(emu_stat allocations)"
[ "$(emu_stat pins)" = 0 ] && [ "$(emu_stat bar1_used)" = 0 ] && [ "$(emu_stat allocations)" = 0 ] || rc=1
rmmod nvp2p_selftest && rmmod nvp2p_emu || rc=1
exit $rc
