#!/bin/sh
# SPDX-License-Identifier: MIT
# The emulated NVML (libnvidia-ml.so.1) against the emulator's counters,
# sysfs and the CUDA driver (nvml-test.c).
. /tests/lib.sh
load_module nvp2p_emu || exit 1
/tests/nvml-test
rc=$?
rmmod nvp2p_emu || rc=1
exit $rc
