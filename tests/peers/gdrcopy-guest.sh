#!/bin/sh
# SPDX-License-Identifier: MIT
# gdrcopy-guest.sh PAIRING - gdrcopy 2.6's programs on the emulated machine,
# one pairing of a kernel module and a libgdrapi (run in the guest by the
# peers lane, tests/peers/gdrcopy-lane.sh, through gdirect-emu; it lies in
# the folder of gdrcopy's build, with gdrcopy-guest-lib.sh and the
# waivers):
#
#   a  NVIDIA's gdrdrv.ko  + NVIDIA's libgdrapi
#   b  gdirect.ko          + NVIDIA's libgdrapi  (no gdrdrv.ko)
#   c  NVIDIA's gdrdrv.ko  + our libgdrapi (gdrcopy's programs unchanged,
#                            our libgdrapi.so.2 found first by the loader)
#   d  gdirect.ko          + our libgdrapi
#   e-nvidia  no kernel module: NVIDIA's libgdrapi on the emulator's
#             dma-bufs (gdrcopy 2.6's dma-buf mmap backend), CUDA 13.3
#   e-ours    the same with our libgdrapi
#
# In each pinning mode the driver offers (persistent, then traditional:
# gdrdrv's use_persistent_mapping, gdirect's use_persistent; the dma-buf
# backend is always persistent) every test of gdrcopy_sanity is one TAP
# line; then gdrcopy_copybw, gdrcopy_copylat
# (sizes up to 64 KiB) and gdrcopy_apiperf, one line each.  After each
# program the emulator's counters must show 0 pins, 0 BAR1 bytes in use
# and 0 allocations, one line each.  A test gdrcopy itself waives (its exit
# status EXIT_WAIVED, "&&&& WAIVED") is a SKIP that says so; a failure
# listed in gdrcopy-2.6.waivers (PAIRING MODE TEST, then the reason) is a
# SKIP with that reason; neither is ever a pass.  A waiver whose test
# passed is reported as a diagnostic, so a stale entry shows.
. /tests/lib.sh
pairing=$1
peer=$(cd "$(dirname "$0")" && pwd)
. "$peer/gdrcopy-guest-lib.sh"
waivers=$peer/gdrcopy-2.6.waivers
export PATH="$peer/bin:$PATH"
case $pairing in
a) drv=gdrdrv lib=nvidia ;;
b) drv=gdirect lib=nvidia ;;
c) drv=gdrdrv lib=ours ;;
d) drv=gdirect lib=ours ;;
e-nvidia) drv=none lib=nvidia ;;
e-ours) drv=none lib=ours ;;
*) echo "1..1"; echo "not ok 1 - pairing '$pairing': expected a, b, c, d, e-nvidia or e-ours"; exit 1 ;;
esac
modes="persistent traditional"
[ $drv = none ] && modes=persistent
# NVIDIA's libgdrapi.so.2 is in $peer/lib, ours in /usr/lib/gdirect with
# the emulated libcuda.so.1: the first folder on the path gives libgdrapi.
if [ $lib = nvidia ]; then
	export LD_LIBRARY_PATH="$peer/lib":/usr/lib/gdirect
	want_lib=$peer/lib/libgdrapi.so.2
else
	export LD_LIBRARY_PATH=/usr/lib/gdirect
	want_lib=/usr/lib/gdirect/libgdrapi.so.2
fi
for f in "$peer/modules/gdrdrv.ko" /modules/gdirect.ko /modules/nvp2p_emu.ko \
	"$peer/bin/gdrcopy_sanity" "$want_lib"; do
	[ -e "$f" ] || skip_all "no $f in the guest"
done

# Without a module, the emulated CUDA driver at 13.3, where its dma-bufs
# can be mmap'ed (the emulator's cuda_version knob, read by each cuInit).
# An emulator without the knob cannot offer the pairing.
if [ $drv = none ]; then
	emu_loaded=0
	if load_module nvp2p_emu cuda_version=13030 2>/dev/null; then
		emu_loaded=1
	elif load_module nvp2p_emu; then
		unload_module nvp2p_emu
		skip_all "nvp2p_emu has no cuda_version parameter: its CUDA driver cannot report 13.3, which the dma-buf backend needs"
	fi
fi

got=$(/lib64/ld-linux-x86-64.so.2 --list "$peer/bin/gdrcopy_sanity" |
	awk '$1 == "libgdrapi.so.2" { print $3 }')
check "gdrcopy_sanity loads $want_lib (got ${got:-none})" \
	[ "$(readlink -f "$got")" = "$(readlink -f "$want_lib")" ]

# waiver MODE TEST: the reason TEST is waived in this pairing and MODE
# (empty when it is not).  Lines: PAIRING MODE TEST REASON..., the first
# three shell patterns; '#' starts a comment line.
waiver() {
	while read -r wp wm wt reason; do
		case $wp in ''|'#'*) continue ;; esac
		# Each field is a shell pattern on purpose.
		# shellcheck disable=SC2254
		case $pairing in $wp) ;; *) continue ;; esac
		# shellcheck disable=SC2254
		case $1 in $wm) ;; *) continue ;; esac
		# shellcheck disable=SC2254
		case $2 in $wt) echo "$reason"; return ;; esac
	done <"$waivers"
}

# excerpt TEST LOG: the last lines LOG holds about TEST as diagnostics:
# gdrcopy_sanity's section between "&&&& RUNNING name" and its verdict,
# else the log's tail.
excerpt() {
	name=${1#sanity:}
	if grep -q "^&&&& RUNNING $name\$" "$2"; then
		awk -v t="$name" '$1 == "&&&&" && $3 == t { on = ($2 == "RUNNING"); next } on' "$2"
	else
		cat "$2"
	fi | tail -n 15 | sed 's/^/# /'
}

# result MODE TEST STATUS [LOG]: one TAP line for a test that PASSED,
# FAILED or was WAIVED by gdrcopy.
result() {
	what="$1 $2"
	w=$(waiver "$1" "$2")
	case $3 in
	PASSED)
		ok "$what"
		[ -z "$w" ] || diag "waiver for $what unused: the test passed ($waivers)" ;;
	WAIVED) skip "$what" "waived by gdrcopy itself (its test exits EXIT_WAIVED)" ;;
	*)
		if [ -n "$w" ]; then
			skip "$what" "waived (gdrcopy-2.6.waivers): $w"
		else
			not_ok "$what"
			[ -n "${4:-}" ] && [ -f "$4" ] && excerpt "$2" "$4"
		fi ;;
	esac
}

# counters MODE AFTER: nothing pinned, mapped through BAR1 or allocated,
# and, without a kernel module, no dma-buf left exported.
counters() {
	cs="pins bar1_used allocations"
	[ $drv = none ] && cs="$cs dmabufs"
	for c in $cs; do
		v=$(emu_stat $c)
		check "$1: $c is 0 after $2 (is $v)" [ "$v" = 0 ]
	done
}

# reap: what a gdrcopy_sanity run left behind.  Each of its tests runs in
# a child in a process group of its own, which timeout does not reach, and
# a failed test can leave its own forked children waiting; their pins and
# allocations go when they exit.  Status 1 when any was left, which is a
# failure unless the test that left it is waived.
reap() {
	left=$(pidof gdrcopy_sanity)
	[ -n "$left" ] || return 0
	diag "killing what gdrcopy_sanity left running: $left"
	for pid in $left; do kill -9 "$pid"; done
	k=0
	while [ -n "$(pidof gdrcopy_sanity)" ] && [ $k -lt 50 ]; do
		sleep 0.2; k=$((k + 1))
	done
	return 1
}

# load MODE: the pairing's module in MODE (1 persistent, 0 traditional),
# and /dev/gdrdrv (gdrcopy-guest-lib.sh).  Without a module (e-*), neither
# library may find a kernel driver: no gdrdrv or gdirect module is loaded
# and neither node exists, so both libraries' first choice fails to open
# and they fall back to dma-bufs.
load() {
	if [ $drv = none ]; then
		! grep -qE '^(gdrdrv|gdirect) ' /proc/modules &&
			[ ! -e /dev/gdrdrv ] && [ ! -e /dev/gdirect ]
	else
		gdrcopy_load $drv "$1"
	fi
}
unload() {
	[ $drv = none ] && return 0
	gdrcopy_unload $drv
}

if [ $drv = none ]; then
	check "nvp2p_emu.ko loads with cuda_version=13030" [ "$emu_loaded" = 1 ]
	v=$(emu_stat cuda_version)
	check "the emulated CUDA driver reports 13030 (is $v)" [ "$v" = 13030 ]
else
	check "nvp2p_emu.ko loads" load_module nvp2p_emu
fi
for mode in $modes; do
	case $mode in persistent) m=1 ;; *) m=0 ;; esac
	what="$drv.ko loads"
	[ $drv = none ] && what="no kernel driver: no gdrdrv or gdirect module, no /dev/gdrdrv or /dev/gdirect"
	if ! load $m; then
		not_ok "$mode: $what"
		continue
	fi
	ok "$mode: $what"
	log=/tmp/sanity-$pairing-$mode.log
	tests=$(gdrcopy_sanity -l 2>/dev/null | awk '/^List of all available tests/ { on = 1; next } /^List/ { on = 0 } on && NF == 1 { print $1 }')
	[ -n "$tests" ] || not_ok "$mode: gdrcopy_sanity -l lists its tests"
	# The tests without a waiver in one process; a hang ends it at the
	# timeout, and the tests left without a result are then run one by
	# one.  A waived test runs on its own with a short timeout, since
	# some waived tests hang (the waiver says why).
	args=""
	for t in $tests; do
		[ -n "$(waiver $mode "sanity:$t")" ] || args="$args -t $t"
	done
	rc=0
	if [ -n "$args" ]; then
		# $args is a list of options, split on purpose.
		# shellcheck disable=SC2086
		timeout 600 gdrcopy_sanity -v $args >"$log" 2>&1
		rc=$?
		reap || not_ok "$mode: gdrcopy_sanity left processes running (tests without a waiver)"
	fi
	for t in $tests; do
		st=$(awk -v t="$t" '$1 == "&&&&" && $3 == t { print $2 }' "$log" 2>/dev/null | tail -n1)
		case $st in RUNNING) st="" ;; esac
		tlog=$log
		if [ -z "$st" ]; then
			tlog=/tmp/sanity-$pairing-$mode-$t.log
			limit=60 waived=""
			waived=$(waiver $mode "sanity:$t")
			[ -n "$waived" ] && limit=10
			timeout $limit gdrcopy_sanity -v -t "$t" >"$tlog" 2>&1
			trc=$?
			st=$(awk -v t="$t" '$1 == "&&&&" && $3 == t && $2 != "RUNNING" { print $2 }' "$tlog" | tail -n1)
			[ "$trc" = 124 ] && echo "timed out after $limit s" >>"$tlog"
			reap || [ -n "$waived" ] ||
				not_ok "$mode: sanity:$t left processes running"
		fi
		result $mode "sanity:$t" "${st:-FAILED}" "$tlog"
	done
	[ "$rc" = 124 ] && diag "$mode: gdrcopy_sanity ran past 600 s; the tests left were run one by one"
	counters $mode gdrcopy_sanity
	# Small sizes and few iterations: the point is the code path, not the
	# emulator's speed.
	for prog in "gdrcopy_copybw -s 65536 -w 100 -r 10" \
		"gdrcopy_copylat -s 65536 -w 100 -r 10" \
		"gdrcopy_apiperf -s 1048576 -n 10 -w 2"; do
		name=${prog%% *}
		plog=/tmp/$name-$pairing-$mode.log
		# $prog is the command and its arguments, split on purpose.
		# shellcheck disable=SC2086
		if timeout 300 $prog >"$plog" 2>&1; then st=PASSED; else st=FAILED; fi
		result $mode "$name" $st "$plog"
		counters $mode "$name"
	done
	if [ $drv = none ]; then
		# The runs above chose dma-bufs by themselves, no module being
		# there; GDRCOPY_USE_DMABUF_MMAP=1 asks for them outright.
		plog=/tmp/gdrcopy_copybw-$pairing-forced.log
		if GDRCOPY_USE_DMABUF_MMAP=1 timeout 300 gdrcopy_copybw -s 65536 -w 10 -r 2 >"$plog" 2>&1; then st=PASSED; else st=FAILED; fi
		result $mode "gdrcopy_copybw GDRCOPY_USE_DMABUF_MMAP=1" $st "$plog"
		counters $mode "gdrcopy_copybw GDRCOPY_USE_DMABUF_MMAP=1"
		# A value gdrcopy reads as "not forced" is an error to ours.
		if [ $lib = ours ]; then
			plog=/tmp/gdrcopy_copybw-$pairing-typo.log
			GDRCOPY_USE_DMABUF_MMAP=yes timeout 60 gdrcopy_copybw -s 65536 -w 10 -r 2 >"$plog" 2>&1
			check "$mode: GDRCOPY_USE_DMABUF_MMAP=yes: our gdr_open() refuses it" \
				grep -q 'GDRCOPY_USE_DMABUF_MMAP="yes"' "$plog"
		fi
	else
		check "$mode: $drv.ko unloads" unload
	fi
done
check "nvp2p_emu.ko unloads" unload_module nvp2p_emu
tap_done
