#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# planted.sh - set off every bug of dk_planted.ko (debug-kernel lane only).
#
# Only the lane debug-planted of tests/TESTS runs it, not the normal suite:
# tests/debug-kernel/run.sh boots it alone, with debug-kernel-kmemleak.sh
# after it, and requires the kernel log to hold the report of each checker;
# this test checks the same in the guest's own log, so the TAP says which checker stayed silent.  The module stays loaded,
# so that kmemleak's backtrace of the leak still names it.
. /tests/lib.sh
plan 7

reported() { dmesg | grep -q -e "$1"; }

if ! load_module dk_planted; then
	not_ok "load dk_planted"
	for c in lockdep KASAN KFENCE atomic-sleep leak; do not_ok "$c: module not loaded"; done
	not_ok "trigger file"
	exit 1
fi
ok "load dk_planted"
trig=/sys/kernel/debug/dk_planted/trigger
check "trigger file" test -w "$trig"

# Each half alone is a valid order; together they are an AB-BA inversion.
echo lock-ab > "$trig" && echo lock-ba > "$trig"
check "lockdep reports the AB-BA inversion" \
	reported "possible circular locking dependency detected"

echo oob > "$trig"
check "KASAN reports the out-of-bounds read" \
	reported "BUG: KASAN: slab-out-of-bounds in dk_oob"

if echo kfence-uaf > "$trig"; then
	check "KFENCE reports the use-after-free" \
		reported "BUG: KFENCE: use-after-free read in dk_kfence_uaf"
else
	not_ok "KFENCE reports the use-after-free # no object came from KFENCE's pool"
fi

echo sleep-atomic > "$trig"
check "DEBUG_ATOMIC_SLEEP reports the might-sleep under a spinlock" \
	reported "BUG: sleeping function called from invalid context"

# kmemleak reports only objects older than 5 s, on its second scan:
# debug-kernel-kmemleak.sh, run next, does that and must find this one.
check "leak planted" sh -c "echo leak > $trig"
tap_done
