#!/bin/sh
# SPDX-License-Identifier: MIT
# gdirect-emu-run.sh - what gdirect-emu runs in the guest, as the guest's
# one test program (tests/harness/init runs it, its output on ttyS1).
#
# /etc/gdirect-emu/ holds what the host decided (emu/cli/gdirect-emu):
#   with      the user's folders, one absolute path a line, packed under
#             /.gdirect-emu-with: bound at their own paths here, after
#             init's tmpfs on /tmp, so a folder under /tmp shows too
#   load      "yes": load nvp2p_emu.ko with the module parameters of
#             params (one NAME=VALUE a line), then gdirect.ko; "no": none
#   runtime   knobs written after the load, "NAME VALUE..." a line, into
#             the emulator's knob folder (debugfs, or procfs in the
#             proprietary flavour)
#   nodes     1 or 2: with 2, the cluster's network and Soft-RoCE come up
#             (tests/guest/cluster/cluster-lib.sh's cluster_up)
#   cwd       the folder COMMAND starts in
#   mode      "run": command.sh runs COMMAND; "shell": an interactive
#             shell on ttyS2, which the host joins to its terminal
# A failure to set the machine up prints one line starting
# "gdirect-emu-guest: setup failed:", which the host reports, and exits
# 125; otherwise the exit status is COMMAND's (or the shell's).
conf=/etc/gdirect-emu
fail() { echo "gdirect-emu-guest: setup failed: $*"; exit 125; }

while IFS= read -r d; do
	[ -n "$d" ] || continue
	mkdir -p "$d" && mount -o bind "/.gdirect-emu-with$d" "$d" ||
		fail "cannot show $d at its path"
done <"$conf/with"

. /tests/lib.sh
if [ "$(cat "$conf/load")" = yes ]; then
	# shellcheck disable=SC2046
	load_module nvp2p_emu $(cat "$conf/params") ||
		fail "insmod nvp2p_emu $(tr '\n' ' ' <"$conf/params")failed (console log)"
	load_module gdirect || fail "insmod gdirect failed (console log)"
	while read -r name value; do
		[ -n "$name" ] || continue
		echo "$value" >"$(emu_knob_dir)/$name" ||
			fail "knob $name: the emulator refused '$value'"
	done <"$conf/runtime"
fi

GDIRECT_EMU_NODE=0
GDIRECT_EMU_PEER=
# cluster-lib.sh sets node and peer from the kernel command line
# (gdirect.node=N, which gdirect-emu passes).
# shellcheck disable=SC2154
if [ "$(cat "$conf/nodes")" = 2 ]; then
	. /tests/cluster-lib.sh
	cluster_up || fail "the cluster's network or Soft-RoCE did not come up (console log)"
	GDIRECT_EMU_NODE=$node
	GDIRECT_EMU_PEER=$peer
fi
export GDIRECT_EMU_NODE GDIRECT_EMU_PEER
export PATH="$PATH:/usr/bin:/usr/sbin"

cd "$(cat "$conf/cwd")" || fail "no folder $(cat "$conf/cwd") in the guest"
if [ "$(cat "$conf/mode")" = shell ]; then
	stty -F /dev/ttyS2 sane
	setsid -c sh -i </dev/ttyS2 >/dev/ttyS2 2>&1
	exit $?
fi
exec sh "$conf/command.sh"
