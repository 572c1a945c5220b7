# SPDX-License-Identifier: MIT
# tap.sh - the one shell test helper (source it; POSIX sh, busybox too):
# TAP on standard output, every check one line, a failure counted and the
# test going on, a skip saying why.  The C twin is tests/include/tap.h.
#
#   plan N                       "1..N" up front (else tap_done prints it)
#   ok WHAT / not_ok WHAT        a line
#   skip WHAT WHY                "ok N - WHAT # SKIP WHY": never a pass
#   diag TEXT                    "# TEXT"
#   check WHAT CMD...            ok when CMD succeeds
#   check_rc STATUS WHAT         ok when STATUS is 0 (cmd; check_rc $? WHAT)
#   check_quiet WHAT CMD...      the same, CMD's output kept and shown as
#                                diagnostics only when it fails
#   check_fails WHAT PATTERN CMD...  ok when CMD fails and its output
#                                contains PATTERN (grep -F)
#   skip_all WHY                 "1..0 # SKIP WHY" and exit 0: the whole
#                                test cannot run here (meson: protocol tap)
#   tap_relay LABEL FILE COUNT WHO [HOOK]
#                                a program's TAP (in FILE) as this test's:
#                                each result one line, "LABEL: " before its
#                                text; its plan dropped, other lines kept as
#                                diagnostics; each result short of COUNT
#                                (the program died) a failure, "LABEL: result
#                                N missing (WHO did not finish)".  HOOK, a
#                                command, is called as HOOK LABEL LINE for
#                                every line of FILE first (to collect some)
#   tap_done                     the plan when none was given; status 1 if a
#                                check failed or the plan was not kept
n=0
fails=0
tap_planned=
plan() { tap_planned=$1; echo "1..$1"; }
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
diag() { printf '%s\n' "$*" | sed 's/^/# /'; }
check() { tap_d=$1; shift; if "$@"; then ok "$tap_d"; else not_ok "$tap_d"; fi; }
check_rc() { if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi; }
check_quiet() {
	tap_d=$1; shift
	if tap_out=$("$@" 2>&1); then ok "$tap_d"
	else not_ok "$tap_d"; diag "$tap_out"; fi
}
check_fails() {
	tap_d=$1 tap_p=$2; shift 2
	if tap_out=$("$@" 2>&1); then
		not_ok "$tap_d (it succeeded)"
	elif printf '%s\n' "$tap_out" | grep -qF -- "$tap_p"; then
		ok "$tap_d"
	else
		not_ok "$tap_d (failed, but without: $tap_p)"; diag "$tap_out"
	fi
}
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
tap_relay() {
	tap_got=0
	while IFS= read -r tap_l; do
		[ -z "${5:-}" ] || "$5" "$1" "$tap_l"
		case "$tap_l" in
		"ok "*) tap_got=$((tap_got + 1)); ok "$1: ${tap_l#* - }" ;;
		"not ok "*) tap_got=$((tap_got + 1)); not_ok "$1: ${tap_l#* - }" ;;
		"#"*) echo "$tap_l" ;;
		1..*) ;;
		*) echo "# $tap_l" ;;
		esac
	done <"$2"
	while [ "$tap_got" -lt "$3" ]; do
		tap_got=$((tap_got + 1))
		not_ok "$1: result $tap_got missing ($4 did not finish)"
	done
}
tap_done() {
	if [ -z "$tap_planned" ]; then echo "1..$n"
	elif [ "$tap_planned" -ne "$n" ]; then
		echo "# planned $tap_planned checks, ran $n"; return 1
	fi
	[ "$fails" -eq 0 ]
}
