#!/bin/sh
# SPDX-License-Identifier: MIT
# boot-lane.sh BUILD RESULTS [SUITE...] - the lane boot of make test: the
# v2 guest booted on the oldest and the newest kernel the modules support,
# bullseye's 5.10 and sid's 7.2 (SUITE bullseye or sid; both by default),
# running the tests of lane boot in tests/TESTS: those of the code that
# differs per kernel (the interface probes of scripts/kconftest.sh).
#
# For each kernel: its headers and its image (scripts/deps.sh
# kernel-headers and kernel-image, cached under GDIRECT_KERNELS, default
# /var/cache/gdirect-kernels), the v2 modules built against it by
# scripts/kernel-builds.sh into BUILD/kmod/<release>-v2, the tree the
# kernels lane builds again later (only what changed is compiled then),
# and one boot (tests/harness/run.py, named boot-<X.Y>, its TAP and
# console in RESULTS).  GUEST_BOOT_TESTS replaces the lane's tests.
#
# One line per kernel, "guest[boot-X.Y]: ...", then its cost in seconds,
# then "N passed, N failed, N skipped" over both for run-tests.sh.  A
# kernel whose headers or image cannot be fetched is a failure, or with
# GDIRECT_TEST_LANES=available a skip ("guest[boot-SUITE]: SKIPPED: why").
# Each boot is run_guest's of tests/harness/lanes.sh, as run-tests.sh's
# other boots are, and each failure is noted for the recap: appended to
# GDIRECT_FAILURES, the recap's file, where run-tests.sh names it; run
# alone, into RESULTS/boot-failures.txt, shown as "== what failed" above
# the last line.
#
# 7.2 boots with all vCPUs on one host thread, as 6.12 does in lane bpo
# (run-tests.sh says why): its suite takes as long there as on one thread
# per vCPU (docs/testing.md).  5.10 runs one thread per vCPU.
set -u
if [ $# -lt 2 ]; then
	echo "usage: $0 BUILD RESULTS [bullseye|sid]..." >&2
	exit 2
fi
build=$(cd "$1" && pwd) || exit 2
results=$2
shift 2
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$results"
suites=${*:-bullseye sid}
lanes=${GDIRECT_TEST_LANES:-all}
tests=${GUEST_BOOT_TESTS:-$("$top/tests/harness/manifest.sh" lane boot | tr '\n' ' ')}
failures=${GDIRECT_FAILURES:-$results/boot-failures.txt}
[ -n "${GDIRECT_FAILURES:-}" ] || : >"$failures"
# The totals, the recap's notes and the guest's boots (run_guest).
# shellcheck source-path=SCRIPTDIR source=lanes.sh
. "$top/tests/harness/lanes.sh"
t0=$(date +%s)

# missing LABEL WHY: a kernel that cannot be booted here.
missing() {
	if [ "$lanes" = available ]; then
		echo "guest[$1]: SKIPPED: $2"
		add 0 0 1
	else
		echo "guest[$1]: could not run: $2"
		note_failure "guest[$1]: could not run: $2"
		add 0 1 0
	fi
}

for suite in $suites; do
	kt0=$(date +%s)
	case $suite in
	bullseye|sid) ;;
	*) echo "boot-lane.sh: suite '$suite': expected bullseye or sid" >&2; exit 2 ;;
	esac
	if ! img=$("$top/scripts/deps.sh" kernel-image "$suite" 2>"$results/boot-$suite-fetch.log"); then
		missing "boot-$suite" "the $suite kernel could not be fetched: $(tail -n1 "$results/boot-$suite-fetch.log")"
		continue
	fi
	rel=${img##*/vmlinuz-}
	series=$(echo "$rel" | cut -d. -f1,2)
	kmod=$build/kmod/$rel-v2
	# The v2 modules as the kernels lane builds them (in sid's build
	# root for 7.2); its warnings are that lane's to count, not this one's.
	KERNEL_FLAVOURS=v2 KERNEL_FLAVOURS_SID=v2 GDIRECT_TEST_LANES=$lanes \
		"$top/scripts/kernel-builds.sh" "$build" "$suite" >"$results/boot-$series-kmod.tap" 2>&1
	# A build that could not run here (no root for sid's build root, say)
	# is the lane's skip; one that failed must not boot the modules an
	# earlier build left in $kmod (a build with warnings is booted: the
	# kernels lane counts them).
	why=$(sed -n 's/^ok [0-9]* - .*# SKIP //p' "$results/boot-$series-kmod.tap" | head -n1)
	if [ -n "$why" ]; then
		missing "boot-$series" "the v2 modules could not be built here: $why"
		continue
	fi
	if grep -q '^not ok .*: the build failed' "$results/boot-$series-kmod.tap" ||
	   ! [ -f "$kmod/gdirect/gdirect.ko" ] || ! [ -f "$kmod/gdirect_kapitest/gdirect_kapitest.ko" ]; then
		grep -E '^(not ok|#)' "$results/boot-$series-kmod.tap" | head -n 8
		echo "guest[boot-$series]: the v2 modules do not build against $rel (${kmod#"$top"/}.log)"
		note_failure "guest[boot-$series]: the v2 modules do not build against $rel (${kmod#"$top"/}.log)"
		add 0 1 0
		continue
	fi
	thread=multi
	[ "$suite" = sid ] && thread=single
	echo "kernel $rel ($suite), TCG thread=$thread"
	run_guest "boot-$series" v2 "$tests" "$img" "$kmod" "$thread" logs
	if [ -n "$summary_counts" ]; then
		# shellcheck disable=SC2086 # the three counts as words
		set -- $summary_counts
		echo "guest[boot-$series]: $1 passed, $2 failed, $3 skipped ($(( $(date +%s) - kt0 )) s)"
	fi
done
echo "boot: $(( $(date +%s) - t0 )) s"
if [ -z "${GDIRECT_FAILURES:-}" ] && [ -s "$failures" ]; then
	echo "== what failed"
	sed 's/^/  /' "$failures"
fi
echo "$total_p passed, $total_f failed, $total_s skipped"
