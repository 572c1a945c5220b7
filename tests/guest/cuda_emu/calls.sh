#!/bin/sh
# SPDX-License-Identifier: MIT
# The emulated driver's calls beyond the transcript: threads, stale handles,
# data through host memory, primary context state (cuda-calls-test.c).
. /tests/lib.sh
load_module nvp2p_emu || exit 1
/tests/cuda-calls-test
rc=$?
rmmod nvp2p_emu || rc=1
exit $rc
