# tap.sh - TAP for tests written in POSIX sh (source it): every check
# prints one line, a failure counts and the test goes on, a skip says why.
# The C twin is tests/include/tap.h.  tap_done ends the test: its exit
# status is 1 if any check failed.
n=0
fails=0
plan() { tap_planned=1; echo "1..$1"; }
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
# skip WHAT WHY: counted as skipped by the harness, never as passed.
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
diag() { echo "# $*"; }
# check DESCRIPTION COMMAND...: ok when COMMAND succeeds
check() { d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
# tap_done: the plan when none was given up front, and the exit status.
tap_done() { [ "${tap_planned:-0}" = 1 ] || echo "1..$n"; [ "$fails" -eq 0 ]; }
