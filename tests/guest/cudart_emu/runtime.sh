#!/bin/sh
# SPDX-License-Identifier: MIT
# The emulated CUDA runtime (libcudart.so.13) over the emulated driver and
# GPU (cudart-test.c).
. /tests/lib.sh
load_module nvp2p_emu || exit 1
/tests/cudart-test
rc=$?
rmmod nvp2p_emu || rc=1
exit $rc
