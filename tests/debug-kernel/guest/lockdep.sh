#!/bin/sh
# SPDX-License-Identifier: MIT
# lockdep.sh - was lockdep still watching when the suite ended?
#
# Lockdep switches itself off for good after its first report, and also when
# it runs out of room (MAX_LOCKDEP_ENTRIES and the like).  A report makes the
# harness fail the run anyway; this test catches the quiet case, where the
# rest of the suite ran unchecked.  The debug-kernel lane runs it last.
. /tests/lib.sh
plan 1
f=/proc/lockdep_stats
if [ ! -r "$f" ]; then
	skip "lockdep still on" "this kernel has no lockdep (CONFIG_PROVE_LOCKING)"
	exit 0
fi
grep -E 'debug_locks|lock-classes|direct dependencies|dependency chains' "$f" | sed 's/^/# /'
check "lockdep still on after the suite" grep -q -E 'debug_locks:[[:space:]]+1$' "$f"
tap_done
