#!/bin/sh
# SPDX-License-Identifier: MIT
# cli.sh GDIRECT FIXTURES FAKE_NVML - the gdirect command end to end on the
# fixture trees: what info and stat print, as JSON and as text.
set -u
gd=$1 fx=$2 nvml=$3
. "$(dirname "$0")/../../include/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# No library statistics unless a check puts some there.
export GDIRECT_STATS_DIR="$tmp/shm"

run() { # run TREE [PROC] -- ARGS...: output in $tmp/out, status in $rc
	tree=$1 proc=$2; shift 3
	GDIRECT_LIBNVML=$nvml "$gd" --sysfs "$fx/$tree/sys" --proc "$fx/$tree/$proc" \
		--dev "$tmp/nodev" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}
has() { # has TEXT: the last output contains the line fragment TEXT
	if grep -qF -- "$1" "$tmp/out"; then ok "has '$1'"
	else not_ok "missing '$1' in:"; diag "$(cat "$tmp/out")"; fi
}
hasnt() {
	if grep -qF -- "$1" "$tmp/out"; then not_ok "unexpected '$1'"
	else ok "no '$1'"; fi
}
status() {
	if [ "$rc" = "$1" ]; then ok "exit status $1"
	else not_ok "exit status $rc, want $1"; diag "$(cat "$tmp/err")"; fi
}

# PCIe switches only, no IOMMU; BAR1 from the fake NVML (tests/fakes/fake_nvml.h).
run switch proc -- info --json --peer 0000:04:00.0
status 0
has '"bdf": "0000:03:00.0"'
has '"kind": "nvidia"'
has '"class": "switch"'
has '"common": "0000:01:00.0"'
has '"warning": null'
has '"source": "nvml"'
has '"total": 268435456'
has '"used": 2097152'
has '"free": 266338304'
has '"mode": "off"'
has '"source": null'	# no /dev/gdirect nor /dev/nvp2p_emu: versions unknown

# One CPU: warning about peer-to-peer reads; pass-through IOMMU.
run hostbridge proc -- info --peer 0000:02:00.0
status 0
has 'path to 0000:02:00.0  through one CPU / host bridge (root complex)'
has '0000:01:00.0 -> 0000:00:01.0 -> pci0000:00 -> 0000:00:02.0 -> 0000:02:00.0'
has 'IOMMU           passthrough (identity)'
has 'warning: the path goes through the CPU'
hasnt 'warning: the IOMMU'

# Across sockets, IOMMU translating: both warnings.
run sockets proc -- info --json --peer 0000:81:00.0
status 0
has '"class": "cross_socket"'
has '"mode": "translated"'
has '"domain_type": "DMA-FQ"'
has 'socket interconnect'
has 'the IOMMU translates DMA addresses'

# The emulated machine: GPU found through its driver binding, BAR1 from
# the emulator's debugfs counters; edu is on the same root bus.
run emulated proc -- info --json --peer 0000:00:03.0
status 0
has '"kind": "emulated"'
has '"source": "emulator-debugfs"'
has '"total": 67108864'
has '"reserved": 8388608'
has '"used": 196608'
has '"free": 58523648'
has '"class": "host_bridge"'
has '"name": "nvp2p_emu"'

# The emulator built as NVIDIA's proprietary driver keeps its counters in
# procfs, as a module licensed "NVIDIA" may not use debugfs.
run emulated-prop proc -- info --json --peer 0000:00:03.0
status 0
has '"source": "emulator-procfs"'
has '"used": 196608'
run emulated-prop proc -- stat --json
status 0
has '"bar1_used": 196608'
has '"live_regions": 3'

# An unknown peer is an error, not an empty report.
run switch proc -- info --peer 0000:99:00.0
status 1

# stat: gdirect.ko's counters and registrations, the emulator's counters.
run emulated proc -- stat --json
status 0
has '"live_regions": 3'
has '"pid": 412'
has '"state": "revoked"'
has '"mode": "persistent"'
has '"mapped": 65536'
has '"bar1_used": 196608'
run emulated proc -- stat
status 0
has 'process 412: 2 regions, 128 KiB, 1 revoked by callback'
has '  pin_failures       1'
# Nothing to show: non-zero status.
run switch proc -- stat
status 1
has 'gdirect.ko: no counters'

# Statistics published by libgdirect contexts: one of a live process (this
# shell), one left by a process that has exited, and names that are not
# ours.  Enough to show on their own: status 0.
mkdir -p "$tmp/shm"
now=$(date +%s)
printf 'pid %s\nctx 1\nupdated_ns %s000000000\ninterval_ms 500\nhits 42\nmisses 3\nregions 2\nbytes_pinned 131072\n' \
	$$ "$now" >"$tmp/shm/gdirect-stats.$$.1"
sh -c 'exit 0' &
dead=$!
wait $dead
printf 'pid %s\nctx 2\nupdated_ns 1\ninterval_ms 500\nhits 7\n' $dead >"$tmp/shm/gdirect-stats.$dead.2"
printf 'pid %s\nctx 3\nupdated_ns 1\ninterval_ms 500\nhits 5\n' $$ >"$tmp/shm/gdirect-stats.$$.3"
echo 'hits 1' >"$tmp/shm/gdirect-stats.x.1"
echo 'hits 1' >"$tmp/shm/.gdirect-stats.$$.9.tmp"
printf 'pid 999\nhits 1\n' >"$tmp/shm/gdirect-stats.998.1"	# names another pid
mkfifo "$tmp/shm/gdirect-stats.12345.1"		# must not block the reader
ln -s /etc/passwd "$tmp/shm/gdirect-stats.12346.1"	# nor be followed
# Forged or damaged files of a live process are ignored whole: a period no
# libgdirect has (kept "live" for ever), a time ahead of ours, a name with
# ESC/BEL for the terminal, bytes that are not UTF-8 for JSON, a negative or
# spaced value, a name twice, the ctx line not matching the file's name.
hdr="pid $$\nupdated_ns ${now}000000000"
printf "$hdr\nctx 4\ninterval_ms 99999999\nhits 4\n" >"$tmp/shm/gdirect-stats.$$.4"
printf "pid $$\nctx 5\nupdated_ns 9${now}000000000\ninterval_ms 500\n" >"$tmp/shm/gdirect-stats.$$.5"
printf "$hdr\nctx 6\ninterval_ms 500\nhi\033]0;owned\007ts 1\n" >"$tmp/shm/gdirect-stats.$$.6"
printf "$hdr\nctx 7\ninterval_ms 500\nhits\377\376 1\n" >"$tmp/shm/gdirect-stats.$$.7"
printf "$hdr\nctx 8\ninterval_ms 500\nhits -1\n" >"$tmp/shm/gdirect-stats.$$.8"
printf "$hdr\nctx 10\ninterval_ms 500\nhits  2\n" >"$tmp/shm/gdirect-stats.$$.10"
printf "$hdr\nctx 11\ninterval_ms 500\nhits 1\nhits 2\n" >"$tmp/shm/gdirect-stats.$$.11"
printf "$hdr\nctx 1\ninterval_ms 500\nhits 1\n" >"$tmp/shm/gdirect-stats.$$.12"
run switch proc -- stat --json
status 0
for c in 4 5 6 7 8 10 11 12; do hasnt "\"ctx\": $c,"; done
if python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$tmp/out"; then
	ok "stat --json is valid UTF-8 JSON"
else
	not_ok "stat --json is not valid UTF-8 JSON"
fi
run switch proc -- stat
has "(11 malformed or foreign files ignored)"	# and the 3 above
if LC_ALL=C grep -q "$(printf '[\033\007]')" "$tmp/out"; then
	not_ok "ESC or BEL reached the terminal"
else
	ok "no ESC or BEL reaches the terminal"
fi
rm -f "$tmp/shm/gdirect-stats.$$.4" "$tmp/shm/gdirect-stats.$$.5" "$tmp/shm/gdirect-stats.$$.6" \
	"$tmp/shm/gdirect-stats.$$.7" "$tmp/shm/gdirect-stats.$$.8" "$tmp/shm/gdirect-stats.$$.10" \
	"$tmp/shm/gdirect-stats.$$.11" "$tmp/shm/gdirect-stats.$$.12"
run switch proc -- stat --json
status 0
has '"library": ['
has '"pid": '"$$"','
has '"alive": true,'
has '"hits": 42,'
has '"bytes_pinned": 131072'
has '"pid": '"$dead"','
has '"alive": false,'
has '"stale": true,'
hasnt '"ctx": 9'
hasnt '"pid": 998'
hasnt '"pid": 12345'
hasnt '"pid": 12346'
run switch proc -- stat
status 0
has "process $$ context 1 (updated"
has '    misses             3'
has "process $dead context 2: exited; its file gdirect-stats.$dead.2 is stale"
has "process $$ context 3: not updated for"
# Stale files alone are nothing to show.
rm "$tmp/shm/gdirect-stats.$$.1"
run switch proc -- stat
status 1
rm -rf "$tmp/shm"

# bench without /dev/gdirect: says why and exits 77 (skipped).
run switch proc -- bench --iters 5
status 77
has 'needs gdirect.ko'

# bench arguments are parsed strictly (lib/src/parse.c): each of these is
# refused with exit 2 and a message naming the option, before any device.
for bad in "--iters 0" "--iters 5x" "--iters 99999999999999999999" \
	"--iters -1" "--iters 1e3" "--time-ms inf" "--time-ms nan" \
	"--time-ms 1.5" "--time-ms -20" "--time-ms 0" "--time-ms 99999999999" \
	"--max-size 99999999999g" "--max-size 1.5M" "--max-size inf" \
	"--max-size 0" "--max-size 4Mx" "--max-size 128G" \
	"--pin-sizes 64k,,1M" "--pin-sizes 18446744073709551616" \
	"--pin-sizes 64k,-1" "--cache-buffers 0" "--cache-accesses 2x" \
	"--cache-max-regions -1"; do
	# shellcheck disable=SC2086 # word splitting wanted: option and value
	run switch proc -- bench $bad
	status 2
	opt=${bad%% *}
	if grep -qF -- "gdirect bench: $opt:" "$tmp/err"; then
		ok "bench $bad: the message names $opt"
	else
		not_ok "bench $bad: no message naming $opt"; diag "$(cat "$tmp/err")"
	fi
done
# Good values pass the parser (and then skip: no device).
run switch proc -- bench --iters 3 --time-ms 5 --max-size 1M --pin-sizes 64k,2m \
	--cache-buffers 8 --cache-accesses 100 --cache-max-regions 0
status 77

run switch proc -- nonsense
status 2

# A root longer than the tools' path buffers is refused, never cut short
# (a cut path would inspect another directory): by option and by variable.
long=$(printf '/x%.0s' $(seq 1 3000))
run switch proc -- --sysfs "$long" info
status 2
if grep -qF -- "gdirect: --sysfs is 6000 bytes long" "$tmp/err"; then
	ok "a too long --sysfs: said"
else
	not_ok "a too long --sysfs: no message"; diag "$(cat "$tmp/err")"
fi
GDIRECT_PROC_ROOT=$long "$gd" info >"$tmp/out" 2>"$tmp/err"
rc=$?
status 2
if grep -qF -- "gdirect: GDIRECT_PROC_ROOT is 6000 bytes long" "$tmp/err"; then
	ok "a too long GDIRECT_PROC_ROOT: said"
else
	not_ok "a too long GDIRECT_PROC_ROOT: no message"; diag "$(cat "$tmp/err")"
fi
tap_done
