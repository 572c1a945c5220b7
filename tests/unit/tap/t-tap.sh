#!/bin/sh
# t-tap.sh TAP_DEMO - the test helpers can fail: tests/include/tap.h (through
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
