#!/bin/sh
# SPDX-License-Identifier: MIT
# The differential conformance suite on the emulator: its transcript, one
# "# conf: " line per observation, is compared on the host with the real
# GPU's (tests/conformance/cuda_emu/compare.py, run by tests/harness/run-tests.sh).
# It runs again with CUDA_EMU_PLACEMENT=64k ("# conf64k: " lines), the
# other placement, compared the same way, and its sections init and dmabuf
# once more with the knob cuda_version at 13030, a 13.3-level driver
# ("# conf13030: " lines, compared with differences-13030.txt on top).
. /tests/lib.sh
plan 6
if ! load_module nvp2p_emu; then
	not_ok "nvp2p_emu loads"
	skip "transcript" "no module"
	skip "transcript, CUDA_EMU_PLACEMENT=64k" "no module"
	skip "transcript of init and dmabuf, cuda_version 13030" "no module"
	skip "CUDA_EMU_PLACEMENT typo" "no module"
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
CUDA_EMU_PLACEMENT=64k /tests/cuda-conformance all >/tmp/conf.txt 2>/tmp/conf.err
rc=$?
sed 's/^/# conf64k: /' /tmp/conf.txt
sed 's/^/# stderr: /' /tmp/conf.err
ends=$(grep -c '\.end = exit 0$' /tmp/conf.txt)
if [ "$rc" = 0 ] && [ "$ends" = "$sections" ]; then
	ok "transcript, CUDA_EMU_PLACEMENT=64k: $sections sections ran to their end"
else
	not_ok "transcript, CUDA_EMU_PLACEMENT=64k: $ends of $sections sections ended normally (rc $rc)"
fi
# The driver API version 13.3: the sections whose answers it changes.
: >/tmp/conf.txt
: >/tmp/conf.err
if echo 13030 >"$(emu_knob_dir)/cuda_version"; then
	for s in init dmabuf; do
		/tests/cuda-conformance "$s" >>/tmp/conf.txt 2>>/tmp/conf.err
		echo "$s.end = exit $?" >>/tmp/conf.txt
	done
	echo 13000 >"$(emu_knob_dir)/cuda_version"
	sed 's/^/# conf13030: /' /tmp/conf.txt
	sed 's/^/# stderr: /' /tmp/conf.err
	ends=$(grep -c '\.end = exit 0$' /tmp/conf.txt)
	if [ "$ends" = 2 ] && [ "$(emu_stat cuda_version)" = 13000 ]; then
		ok "transcript of init and dmabuf, cuda_version 13030 (then 13000 again)"
	else
		not_ok "transcript of init and dmabuf, cuda_version 13030: $ends of 2 sections ended normally"
	fi
else
	not_ok "transcript of init and dmabuf, cuda_version 13030: the knob takes 13030"
fi
# A value the library does not know fails cuInit, never a silent default.
CUDA_EMU_PLACEMENT=h10 /tests/cuda-conformance init >/tmp/conf.txt 2>/tmp/conf.err
if grep -qx 'init.cuInit(0) = INVALID_VALUE' /tmp/conf.txt &&
	grep -q 'CUDA_EMU_PLACEMENT=h10' /tmp/conf.err; then
	ok "CUDA_EMU_PLACEMENT typo: cuInit fails with INVALID_VALUE and says why"
else
	not_ok "CUDA_EMU_PLACEMENT typo: cuInit fails with INVALID_VALUE and says why"
	sed 's/^/# /' /tmp/conf.txt /tmp/conf.err
fi
check "nvp2p_emu unloads (nothing left pinned or allocated)" rmmod nvp2p_emu
tap_done
