#!/bin/sh
# SPDX-License-Identifier: MIT
# A program written only against the CUDA driver API, on the emulator.
. /tests/lib.sh
load_module nvp2p_emu || exit 1
/tests/cuda-api-test
rc=$?
rmmod nvp2p_emu || rc=1
exit $rc
