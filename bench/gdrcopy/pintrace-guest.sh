#!/bin/sh
# SPDX-License-Identifier: MIT
# pintrace-guest.sh - the guest half of bench/gdrcopy/pintrace.sh: runs
# gdrcopy_apiperf on NVIDIA's gdrdrv.ko (a) and on gdirect.ko's /dev/gdrdrv
# (b), NVIDIA's libgdrapi in both, in both pinning modes, under ftrace's
# function_graph tracer from each driver's ioctl entry down to DEPTH
# calls, and prints per (pairing, mode, depth, function) the calls and
# their least and mean time (an interrupt inflates the mean, never the least):
#   T PAIRING MODE DEPTH FUNCTION CALLS MIN_US MEAN_US
# Times include the tracer's own cost, which grows with the calls traced
# below a function; compare the two drivers at the same depth.
. /tests/lib.sh
depth=${1:-4}
peer=/peers/gdrcopy
. $peer/gdrcopy-guest-lib.sh
export PATH="$peer/bin:$PATH"
[ -e $peer/modules/gdrdrv.ko ] || skip_all "no gdrcopy build in the guest"
t=/sys/kernel/tracing
[ -e $t/current_tracer ] || mount -t tracefs nodev $t ||
	skip_all "no tracefs"
[ -e $t/current_tracer ] || skip_all "no ftrace in this kernel"

# The pairing's driver (gdrcopy-guest-lib.sh): gdirect.ko in b, else
# NVIDIA's gdrdrv.ko.
drv() { if [ "$1" = b ]; then echo gdirect; else echo gdrdrv; fi; }
load() { gdrcopy_load "$(drv "$1")" "$2"; } # PAIRING MODE (1 persistent)
unload() { gdrcopy_unload "$(drv "$1")"; } # PAIRING
entry() { # PAIRING: the driver's ioctl entry
	case $1 in
	b) echo gd_gdr_ioctl ;;
	*) echo gdrdrv_unlocked_ioctl ;;
	esac
}

run() { # PAIRING MODE
	log=/tmp/pintrace-$1-$2.log
	if ! load "$1" "$2"; then
		not_ok "$1 mode $2: the module loads"
		return
	fi
	fn=$(entry "$1")
	if ! grep -q "^$fn " $t/available_filter_functions; then
		unload "$1"
		not_ok "$1 mode $2: $fn is in available_filter_functions"
		return
	fi
	echo 0 >$t/tracing_on
	echo nop >$t/current_tracer
	echo 16384 >$t/buffer_size_kb
	echo >$t/trace
	echo "$fn" >$t/set_graph_function
	echo "$depth" >$t/max_graph_depth
	echo 1 >$t/options/funcgraph-tail
	echo 0 >$t/options/funcgraph-irqs
	echo function_graph >$t/current_tracer
	echo 1 >$t/tracing_on
	LD_LIBRARY_PATH=$peer/lib:/usr/lib/gdirect timeout 600 \
		gdrcopy_apiperf -s 1048576 -n 50 -w 5 >"$log" 2>&1
	rc=$?
	echo 0 >$t/tracing_on
	awk -v p="$1 $2" -F'|' 'NF >= 2 && $1 ~ / us/ {
		d = $1; sub(/^.*\) */, "", d); gsub(/[^0-9.]/, "", d); d += 0
		f = $2; sub(/^ /, "", f)
		ind = f; sub(/[^ ].*$/, "", ind); dep = int(length(ind) / 2) + 1
		sub(/^ */, "", f)
		if (f ~ /^}/) { sub(/^} *\/\* */, "", f); sub(/ *\*\/.*$/, "", f) }
		else sub(/\(.*$/, "", f)
		sub(/ \[.*\]$/, "", f)
		k = dep " " f; n[k]++; s[k] += d
		if (!(k in lo) || d < lo[k]) lo[k] = d
	} END {
		for (k in n)
			printf "# T %s %s %d %.2f %.2f\n", p, k, n[k], lo[k], s[k] / n[k]
	}' \
		$t/trace | sort -k5,5n -k6
	echo nop >$t/current_tracer
	echo >$t/set_graph_function
	unload "$1" || not_ok "$1 mode $2: the module unloads"
	if [ $rc != 0 ]; then
		not_ok "$1 mode $2 (exit $rc)"
		tail -n 5 "$log" | sed 's/^/# /'
		return
	fi
	ok "$1 mode $2"
	awk -v p="$1 $2" 'NF == 6 && $1 ~ /^[0-9]+$/ {
		print "# R apiperf " p, $1, $2, $3, $4, $5, $6 }' "$log"
}

check "nvp2p_emu.ko loads" load_module nvp2p_emu
for mode in 1 0; do
	run a $mode
	run b $mode
done
check "nvp2p_emu.ko unloads" unload_module nvp2p_emu
tap_done
