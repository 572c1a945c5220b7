# SPDX-License-Identifier: MIT
# lanes.sh - what the host's lane scripts share (source it): run-tests.sh
# and boot-lane.sh boot the guest, count its results and name what failed
# through these, so that every boot reaches the same totals and the same
# recap.  The sourcing script sets top (the tree), build (BUILD), results
# (the results folder) and failures (the recap's file, one failure a
# line); the totals are total_p, total_f and total_s, zero when sourced.
# shellcheck shell=sh
# shellcheck disable=SC2154 # top, build, results and failures are the sourcing script's.
total_p=0 total_f=0 total_s=0

# note_failure TEXT: remember what failed, for the recap above the last line.
note_failure() { printf '%s\n' "$*" >>"$failures"; }

add() { # add PASSED FAILED SKIPPED
	total_p=$((total_p + $1)); total_f=$((total_f + $2)); total_s=$((total_s + $3))
}

# note_guest_failures SUMMARY TAP...: each guest program with failures, a
# hang, a timeout or a kernel report, with its first failed check.
note_guest_failures() {
	summary=$1; shift
	grep -E ' [1-9][0-9]* failed|did not finish|timed out|stopped before|kernel log:|no test ran|did not start|NOT REPORTED|failed \(see|could not' \
		"$summary" 2>/dev/null | grep -v -E '^[0-9]+ passed' |
		while IFS= read -r l; do
			note_failure "$l"
			prog=$(echo "$l" | sed -n 's/^guest\[[^]]*\] \([^:]*\): .*/\1/p')
			[ -n "$prog" ] || continue
			cat "$@" 2>/dev/null | awk -v p="=== BEGIN $prog" '$0 == p { on = 1; next }
				/^=== BEGIN / { on = 0 }
				on && /^not ok/ { print "    " substr($0, 1, 200); exit }' >>"$failures"
		done
}

# add_summary FILE [LOG]: add FILE's closing "N passed, N failed, N
# skipped" to the totals, and set summary_counts to those three numbers; a
# file without one counts as a failure (summary_counts empty), named in
# the recap with its last line (a lane that stopped before its summary
# printed its reason last) and LOG, where to read more.
add_summary() {
	sum_file=$1 sum_log=${2:-$1}
	summary_counts=$(tail -n1 "$sum_file" 2>/dev/null |
		sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	# The three counts as words, or none.
	# shellcheck disable=SC2086
	set -- $summary_counts
	if [ $# -eq 3 ]; then add "$1" "$2" "$3"; return; fi
	summary_counts=""
	add 0 1 0
	note_failure "$(basename "$sum_file" .summary): stopped without a summary: $(tail -n1 "$sum_log" 2>/dev/null | cut -c1-200) (${sum_log#"$top"/})"
}

# run_guest NAME FLAVOUR TESTS KERNEL KMOD THREAD [logs]: one boot of the
# guest, named NAME (results/NAME.tap, results/guest-NAME.summary,
# BUILD/guest-NAME.cpio.gz), with FLAVOUR's initramfs (build-initramfs.sh)
# running TESTS, on the kernel image KERNEL, with the modules of the
# folder KMOD (empty: KMOD_DIR's, else BUILD/kmod/FLAVOUR) and TCG's THREAD mode (multi or
# single); its counts are added to the totals and left in summary_counts
# (empty when it stopped without them), and its failures noted for the
# recap.  Without logs, what the initramfs build and run.py print is shown
# and run.py's stderr dropped, as for the lanes of run-tests.sh; with
# logs, for a lane that prints a line of its own per boot (boot-lane.sh),
# the initramfs build's output goes to results/NAME-initramfs.log and
# run.py's stderr to results/NAME.stderr, and run.py's closing count line
# is not shown.
run_guest() {
	rg_name=$1 rg_flavour=$2 rg_tests=$3 rg_kernel=$4 rg_kmod=$5 rg_thread=$6
	rg_logs=${7:-}
	initrd="$build/guest-$rg_name.cpio.gz"
	summary_counts=""
	# An empty KMOD leaves KMOD_DIR as the caller's environment has it.
	rg_kmod=${rg_kmod:-${KMOD_DIR:-}}
	if [ "$rg_logs" = logs ]; then
		rg_err=$results/$rg_name.stderr rg_why=" ($results/$rg_name-initramfs.log)"
		KMOD_DIR=$rg_kmod GUEST_TESTS="$rg_tests" \
			"$top/tests/harness/build-initramfs.sh" "$build" "$rg_flavour" "$initrd" \
			>"$results/$rg_name-initramfs.log" 2>&1
	else
		rg_err=/dev/null rg_why=""
		KMOD_DIR=$rg_kmod GUEST_TESTS="$rg_tests" \
			"$top/tests/harness/build-initramfs.sh" "$build" "$rg_flavour" "$initrd"
	fi || {
		echo "guest[$rg_name]: could not build the initramfs$rg_why"
		note_failure "guest[$rg_name]: could not build the initramfs$rg_why"
		add 0 1 0; return
	}
	python3 "$top/tests/harness/run.py" --initrd "$initrd" --kernel "$rg_kernel" \
		--name "$rg_name" --results "$results" --timeout "${GUEST_TIMEOUT_S:-1500}" \
		--tcg-thread "$rg_thread" \
		2>"$rg_err" | tee "$results/guest-$rg_name.summary" |
		if [ "$rg_logs" = logs ]; then
			grep -v -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$'
		else
			cat
		fi
	note_guest_failures "$results/guest-$rg_name.summary" "$results/$rg_name.tap"
	add_summary "$results/guest-$rg_name.summary"
	if [ -z "$summary_counts" ] && [ "$rg_logs" = logs ]; then
		echo "guest[$rg_name]: stopped without a summary: $(tail -n1 "$results/guest-$rg_name.summary")"
	fi
}
