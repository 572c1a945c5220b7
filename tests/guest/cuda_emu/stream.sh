#!/bin/sh
# SPDX-License-Identifier: MIT
# Stream order (the legacy NULL stream's implicit synchronisation, host
# functions on the driver's thread), cuCtxSynchronize, cuCtxDestroy and
# sticky errors (cuda-stream-test.c).
. /tests/lib.sh
load_module nvp2p_emu || { echo "1..0 # SKIP no emulator"; exit 1; }
/tests/cuda-stream-test
rc=$?
rmmod nvp2p_emu || rc=1
exit $rc
