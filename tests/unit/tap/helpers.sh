#!/bin/sh
# SPDX-License-Identifier: MIT
# helpers.sh TAP_DEMO - the test helpers can fail: tests/include/tap.h (through
# tap_demo) and tests/include/tap.sh on purpose-made failures and skips,
# their TAP and exit status checked.
set -u
demo=$1
. "$(dirname "$0")/../../include/tap.sh"

# run MODE: tap_demo's output in $out, its exit status in $rc
run() { out=$("$demo" "$1" 2>/dev/null); rc=$?; }
has() { printf '%s\n' "$out" | grep -qxF -- "$1"; }
lacks() { ! has "$1"; }
has_re() { printf '%s\n' "$out" | grep -qE -- "$1"; }

run pass
check "C: passing checks exit 0" [ "$rc" = 0 ]
check "C: a test function is one line" has "ok 1 - passes"
check "C: a check outside a test function is a line" has_re '^ok 2 - .*tap_demo.c:[0-9]+: argc == 2$'
check "C: a skip says why" has "ok 3 - a skipped check # SKIP not here"
check "C: diagnostics are comments" has "# lines"
check "C: the plan comes last" has "1..4"

run fail
check "C: a failed check exits non-zero" [ "$rc" = 1 ]
check "C: a failed check prints not ok" has "not ok 1 - fails_eq"
check "C: the diagnostic names the check and both values" \
	has_re '^# .*tap_demo.c:[0-9]+: 6 \* 7 == 42 \(0x2a\), expected 41 == 41 \(0x29\)$'
check "C: a failed check ends its test function" has "# after_failure=0"
check "C: the next test function runs" has "ok 2 - passes"
check "C: a string check shows both strings" \
	has_re '^# .*"abc", expected "abd"$'
check "C: every line counted" has "1..3"

run thread
check "C: a check failing in a thread fails the test" has "not ok 1 - fails_in_thread"
check "C: ... and exits non-zero" [ "$rc" = 1 ]
check "C: ... and lets its thread go on" has "# after_failure=1"

run outside
check "C: a failed check outside a test function is its own not ok" \
	has_re '^not ok 1 - .*argc == 2 \(0x2\), expected 7 == 7'
check "C: ... with the context's diagnostic" has "# the library said: no such region"
check "C: ... the next check still runs" has_re '^ok 2 - .*argc == 2$'
check "C: ... and the exit status is non-zero" [ "$rc" = 1 ]

run skip
check "C: a skipped test function says why" has "ok 1 - skips # SKIP no widget here"
check "C: ... stops there" has "# after_failure=0"
check "C: ... and is no failure" [ "$rc" = 0 ]

# Fork mode: each test in a child.  Under ASan or TSan their SEGV handler
# would turn the crash into an exit; it is left to the kernel here, so
# that the signal is the one named.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0" \
TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}handle_segv=0" run fork
check "C fork: a test's state does not reach the next test" has "ok 3 - sees_no_state"
check "C fork: lines printed in the child keep the parent's numbers" \
	has "ok 2 - a line of its own inside a forked test"
check "C fork: a failed check is not ok, with its diagnostic" has "not ok 4 - fails_holding"
check "C fork: ... which names the check" \
	has_re '^# .*tap_demo.c:[0-9]+: 6 \* 7 == 42 \(0x2a\), expected 41 == 41 \(0x29\)$'
check "C fork: ... and ended the child, not the parent's state" has "# after_failure=0"
check "C fork: the test after a failure passes" has "ok 6 - sees_no_state"
check "C fork: a line before a crash is kept" has "ok 7 - a line before the crash"
check "C fork: a crash is not ok" has "not ok 8 - crashes"
check "C fork: ... naming the signal" \
	has_re '^# the test.s process was killed by SIGSEGV .* before the test finished$'
check "C fork: the test after a crash passes" has "ok 10 - sees_no_state"
if has "# asan"; then
	check "C fork: a leak is the leaking test's failure (LeakSanitizer)" has "not ok 11 - leaks"
	check "C fork: ... saying so" has "# LeakSanitizer found a leak (its report is on standard error)"
else
	check "C fork: a leak passes without LeakSanitizer" has "ok 11 - leaks"
fi
check "C fork: the test after a leak passes" has "ok 13 - sees_no_state"
check "C fork: a test over its time limit is not ok" has "not ok 14 - hangs"
check "C fork: ... naming the signal and the limit" \
	has_re '^# .*killed by SIGALRM .*time limit of 1 s$'
check "C fork: a skip in a child says why" has "ok 15 - skips_forked # SKIP no gadget here"
check "C fork: the last test passes" has "ok 16 - passes"
check "C fork: every line counted once" has "1..16"
check "C fork: ... and the failures make the exit status 1" [ "$rc" = 1 ]
run forkstate
check "C fork: a program's tests, forked" has "ok 3 - sees_no_state"
TAP_FORK=0 run forkstate
check "C fork: TAP_FORK=0 runs them in the program (state carries over)" \
	has "not ok 2 - sees_no_state"

ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0" \
TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}handle_segv=0" run child
check "C child: tap_run_child's lines take the parent's numbers" has "ok 2 - in the child"
check "C child: ... its failures too" has "not ok 3 - a failure in the child"
check "C child: ... and those of a forked test inside it" has "ok 4 - passes"
check "C child: the count holds when the child dies" has "ok 5 - the child's status says SIGSEGV"
check "C child: ... every line counted once" has "1..5"
check "C child: ... and the child's failure fails the program" [ "$rc" = 1 ]

run errno
check "C: tap_errno passes on the errno wanted" has "ok 1 - close(-1): Bad file descriptor"
check "C: ... and on success wanted" has "ok 2 - nothing: ok"
check "C: ... fails on another errno, naming both" \
	has "not ok 3 - close: got Bad file descriptor (9), want No such file or directory (2)"
check "C: ... and on a success" \
	has "not ok 4 - success where a failure was wanted: got success (0), want Invalid argument (22)"
check "C: CHECK_ERRNO in a test function names both" \
	has_re '^# .*tap_demo.c:[0-9]+: close\(-1\): got Bad file descriptor \(9\), want No such file or directory \(2\)$'

run skipall
check "C: a whole program skipped" has "1..0 # SKIP no widget here"
check "C: ... exits 0 (meson reads the plan)" [ "$rc" = 0 ]

run plan
check "C: fewer lines than planned exit non-zero" [ "$rc" = 1 ]
check "C: ... and say so" has "# planned 3 checks, ran 2"

run noend
check "C: a failed check fails the program that forgot tap_done" [ "$rc" = 1 ]
check "C: ... and its plan is printed" has "1..1"

# The shell helper, in a subshell of its own each time.
tap=$(dirname "$0")/../../include/tap.sh
sh_run() { out=$(sh -c ". '$tap'; $1" 2>&1); rc=$?; }

sh_run 'check "true" true; skip "x" "no x"; tap_done'
check "sh: passing checks exit 0" [ "$rc" = 0 ]
check "sh: a skip says why" has "ok 2 - x # SKIP no x"
check "sh: the plan comes last" has "1..2"
sh_run 'check "false" false; ok "next"; tap_done'
check "sh: a failed check exits non-zero" [ "$rc" = 1 ]
check "sh: ... prints not ok" has "not ok 1 - false"
check "sh: ... and the next check runs" has "ok 2 - next"
sh_run 'check_quiet "ls nothing" ls /nonexistent-tap-test; tap_done'
check "sh: check_quiet shows a failure's output as diagnostics" \
	has_re '^# .*nonexistent-tap-test'
sh_run 'check_fails "refused" "No such" ls /nonexistent-tap-test; check_fails "refused" "xyz" ls /nonexistent-tap-test; check_fails "refused" "x" true; tap_done'
check "sh: check_fails passes on the expected failure" has "ok 1 - refused"
check "sh: ... fails on another message" has "not ok 2 - refused (failed, but without: xyz)"
check "sh: ... fails on success" has "not ok 3 - refused (it succeeded)"
check "sh: ... exits non-zero" [ "$rc" = 1 ]
sh_run 'false; check_rc $? "rc"; true; check_rc $? "rc"; tap_done'
check "sh: check_rc fails on a non-zero status" has "not ok 1 - rc"
check "sh: ... passes on 0" has "ok 2 - rc"
sh_run 'plan 3; ok a; tap_done'
check "sh: fewer lines than planned exit non-zero" [ "$rc" = 1 ]
sh_run 'skip_all "no widget"; echo reached'
check "sh: skip_all" has "1..0 # SKIP no widget"
check "sh: ... ends the test, status 0" sh -c "[ '$rc' = 0 ] && ! printf '%s' \"\$1\" | grep -q reached" _ "$out"
# tap_relay: a child's TAP as the test's own; results it never printed
# (it died) are failures, and a hook sees every line.
relay_in=$(mktemp)
trap 'rm -f "$relay_in"' EXIT
printf '%s\n' '1..9' 'ok 1 - sent' '# FIGURE put 64 1.5' 'noise' 'not ok 2 - received' >"$relay_in"
sh_run "tap_relay kid '$relay_in' 3 child; tap_done"
check "sh: tap_relay relays a child's ok" has "ok 1 - kid: sent"
check "sh: ... and its not ok" has "not ok 2 - kid: received"
check "sh: ... keeps its diagnostics" has "# FIGURE put 64 1.5"
check "sh: ... turns other output into diagnostics" has "# noise"
check "sh: ... drops its plan" lacks "1..9"
check "sh: ... counts a missing result as a failure" has "not ok 3 - kid: result 3 missing (child did not finish)"
check "sh: ... exits non-zero" [ "$rc" = 1 ]
printf '%s\n' 'ok 1 - a' 'ok 2 - b' >"$relay_in"
sh_run "tap_relay kid '$relay_in' 2 child; tap_done"
check "sh: tap_relay of a complete, passing child exits 0" [ "$rc" = 0 ]
check "sh: ... with its results only" has "1..2"
sh_run "tap_relay kid '$relay_in' 3 child; tap_done"
check "sh: tap_relay of a child that stopped short fails" [ "$rc" = 1 ]
check "sh: ... on the result it never printed" has "not ok 3 - kid: result 3 missing (child did not finish)"
printf '%s\n' 'ok 1 - a' '# FIGURE get 8 2.0' >"$relay_in"
sh_run "hook() { echo \"hooked [\$1] [\$2]\"; }; tap_relay kid '$relay_in' 1 child hook; tap_done"
check "sh: tap_relay calls the hook with the label and each line" has "hooked [kid] [ok 1 - a]"
check "sh: ... diagnostics too" has "hooked [kid] [# FIGURE get 8 2.0]"
check "sh: ... and still relays" has "ok 1 - kid: a"
tap_done
