#!/bin/sh
# SPDX-License-Identifier: MIT
# ratios-guest.sh ROUNDS - the guest half of bench/gdrcopy/ratios.sh: runs
# gdrcopy 2.6's gdrcopy_apiperf and gdrcopy_copylat in the pairings the
# host half compares, ROUNDS times in turn so that a slow spell of the host
# falls on every pairing alike.  Each figure is one diagnostic line,
#   R apiperf PAIRING MODE ROUND SIZE PIN MAP GET_INFO UNMAP UNPIN
#   R copylat PAIRING MODE ROUND to|from SIZE MEDIAN
# (times in microseconds, as gdrcopy prints them), and each program run is
# one TAP line, so a run that fails shows instead of a missing figure.
#
#   a  NVIDIA's gdrdrv.ko + NVIDIA's libgdrapi  (the reference)
#   b  gdirect.ko's /dev/gdrdrv + NVIDIA's libgdrapi  (apiperf: the driver)
#   c  NVIDIA's gdrdrv.ko + our libgdrapi  (copylat: the library)
. /tests/lib.sh
rounds=$1
peer=/peers/gdrcopy
. $peer/gdrcopy-guest-lib.sh
export PATH="$peer/bin:$PATH"
[ -e $peer/modules/gdrdrv.ko ] || skip_all "no gdrcopy build in the guest"

# The pairing's driver (gdrcopy-guest-lib.sh): gdirect.ko in b, else
# NVIDIA's gdrdrv.ko.
drv() { if [ "$1" = b ]; then echo gdirect; else echo gdrdrv; fi; }
load() { gdrcopy_load "$(drv "$1")" "$2"; } # PAIRING MODE (1 persistent)
unload() { gdrcopy_unload "$(drv "$1")"; } # PAIRING
libpath() { # PAIRING: the folder whose libgdrapi.so.2 the loader takes
	case $1 in
	c) echo /usr/lib/gdirect ;;
	*) echo "$peer/lib:/usr/lib/gdirect" ;;
	esac
}

# run KIND PAIRING MODE ROUND: one program run, its figures as R lines.
run() {
	log=/tmp/bench-$1-$2-$3-$4.log
	case $1 in
	apiperf) cmd="gdrcopy_apiperf -s 1048576 -n 200 -w 20" ;;
	copylat) cmd="gdrcopy_copylat -s 65536 -w 2000 -r 200" ;;
	esac
	if ! load "$2" "$3"; then
		not_ok "$1 $2 mode $3 round $4: the module loads"
		return
	fi
	# $cmd is the program and its arguments, split on purpose.
	# shellcheck disable=SC2086
	LD_LIBRARY_PATH=$(libpath "$2") timeout 600 $cmd >"$log" 2>&1
	rc=$?
	unload "$2" || not_ok "$1 $2 mode $3 round $4: the module unloads"
	if [ $rc != 0 ]; then
		not_ok "$1 $2 mode $3 round $4 (exit $rc)"
		tail -n 5 "$log" | sed 's/^/# /'
		return
	fi
	ok "$1 $2 mode $3 round $4"
	case $1 in
	apiperf)
		awk -v p="$2 $3 $4" 'NF == 6 && $1 ~ /^[0-9]+$/ {
			print "# R apiperf " p, $1, $2, $3, $4, $5, $6 }' "$log" ;;
	copylat)
		awk -v p="$2 $3 $4" '
			$1 == "gdr_copy_to_mapping" { print "# R copylat " p, "to", $2, $3 }
			$1 == "gdr_copy_from_mapping" { print "# R copylat " p, "from", $2, $3 }' "$log" ;;
	esac
}

check "nvp2p_emu.ko loads" load_module nvp2p_emu
r=1
while [ $r -le "$rounds" ]; do
	for mode in 1 0; do
		run apiperf a $mode $r
		run apiperf b $mode $r
	done
	run copylat a 1 $r
	run copylat c 1 $r
	r=$((r + 1))
done
check "nvp2p_emu.ko unloads" unload_module nvp2p_emu
tap_done
