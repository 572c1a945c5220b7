#!/bin/sh
# The differential conformance suite on the emulator: its transcript, one
# "# conf: " line per observation, is compared on the host with the real
# GPU's (tests/conformance/cuda_emu/compare.py, run by tests/harness/run-tests.sh).
. /tests/lib.sh
plan 3
if ! load_module nvp2p_emu; then
	not_ok "nvp2p_emu loads"
	skip "transcript" "no module"
	skip "module unloads" "no module"
	exit 1
fi
ok "nvp2p_emu loads"
/tests/cuda-conformance all >/tmp/conf.txt 2>/tmp/conf.err
rc=$?
sed 's/^/# conf: /' /tmp/conf.txt
sed 's/^/# stderr: /' /tmp/conf.err
# Every section ran to its end (a crash or hang shows as signal N).
ends=$(grep -c '\.end = exit 0$' /tmp/conf.txt)
sections=$(/tests/cuda-conformance list | wc -l)
if [ "$rc" = 0 ] && [ "$ends" = "$sections" ]; then
	ok "transcript: $sections sections ran to their end"
else
	not_ok "transcript: $ends of $sections sections ended normally (rc $rc)"
fi
check "nvp2p_emu unloads (nothing left pinned or allocated)" rmmod nvp2p_emu
tap_done
