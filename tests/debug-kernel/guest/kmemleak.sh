#!/bin/sh
# SPDX-License-Identifier: MIT
# kmemleak.sh - kmemleak's verdict on everything the tests before it did.
#
# The debug-kernel lane runs it last.  kmemleak reports an object only when
# it is at least 5 s old and unreferenced in two scans in a row (the second
# confirms that its contents did not change), so: scan, wait, scan, read.
# Every report goes to the TAP log as diagnostics, and its first line to the
# kernel log at error level, where the harness counts it.
. /tests/lib.sh
plan 1
f=/sys/kernel/debug/kmemleak
if [ ! -e "$f" ]; then
	skip "kmemleak found no leaks" "this kernel has no kmemleak (CONFIG_DEBUG_KMEMLEAK)"
	exit 0
fi
echo scan > "$f"
sleep 6
echo scan > "$f"
cat "$f" > /tmp/kmemleak.txt
if [ -s /tmp/kmemleak.txt ]; then
	sed 's/^/# /' /tmp/kmemleak.txt
	grep '^unreferenced object' /tmp/kmemleak.txt | while read -r l; do
		echo "<3>kmemleak: $l" > /dev/kmsg
	done
	not_ok "kmemleak found $(grep -c '^unreferenced object' /tmp/kmemleak.txt) leaks"
else
	ok "kmemleak found no leaks"
fi
tap_done
