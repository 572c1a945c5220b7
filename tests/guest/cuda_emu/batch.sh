#!/bin/sh
# SPDX-License-Identifier: MIT
# cuStreamBatchMemOp: order, a wait released by another thread's write,
# bad input refused before anything runs (cuda-batch-test.c).
. /tests/lib.sh
load_module nvp2p_emu || { echo "1..0 # SKIP no emulator"; exit 1; }
/tests/cuda-batch-test
rc=$?
rmmod nvp2p_emu || rc=1
exit $rc
