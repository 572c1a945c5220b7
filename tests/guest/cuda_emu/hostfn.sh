#!/bin/sh
# SPDX-License-Identifier: MIT
# Host functions on streams and managed memory on the emulated driver
# (cuda-hostfn-test.c).
. /tests/lib.sh
load_module nvp2p_emu || exit 1
/tests/cuda-hostfn-test
rc=$?
rmmod nvp2p_emu || rc=1
exit $rc
