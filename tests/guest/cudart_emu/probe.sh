#!/bin/sh
# SPDX-License-Identifier: MIT
# The runtime and NVML probe (tests/conformance/cuda_emu/rt-nvml-probe.c)
# on the emulator: its transcript, one "# rtprobe: " line per observation,
# is compared on the host with an H100's (tests/conformance/cuda_emu/
# compare.py, run by tests/harness/run-tests.sh).
. /tests/lib.sh
plan 3
if ! load_module nvp2p_emu; then
	not_ok "nvp2p_emu loads"
	skip "transcript" "no module"
	skip "module unloads" "no module"
	exit 1
fi
ok "nvp2p_emu loads"
/tests/rt-nvml-probe >/tmp/rt-nvml.txt 2>/tmp/rt-nvml.err
rc=$?
sed 's/^/# rtprobe: /' /tmp/rt-nvml.txt
sed 's/^/# stderr: /' /tmp/rt-nvml.err
if [ "$rc" = 0 ] && grep -q '^nvml.shutdown = ' /tmp/rt-nvml.txt; then
	ok "transcript: $(wc -l </tmp/rt-nvml.txt) lines, runtime and NVML to their end"
else
	not_ok "transcript: rc $rc, $(wc -l </tmp/rt-nvml.txt) lines"
fi
check "nvp2p_emu unloads (nothing left allocated)" rmmod nvp2p_emu
[ "$fails" = 0 ]
