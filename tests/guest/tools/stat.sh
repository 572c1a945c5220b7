#!/bin/sh
# SPDX-License-Identifier: MIT
# gdirect stat in the emulated machine shows a live registration exactly as
# gdirect.ko holds it: its process, address, size, state and mapping; and a
# libgdirect process that publishes its statistics, with its cache counters.
. /tests/lib.sh
plan 14
if [ ! -e /modules/gdirect.ko ]; then
	for i in $(seq 1 14); do skip "stat check $i" "no gdirect.ko in /modules"; done
	exit 0
fi
load_module nvp2p_emu bar1_size_mb=64 bar1_reserve_mb=8
check "gdirect.ko loads" load_module gdirect
mkfifo /tmp/hold
# pin-hold keeps its region while the fifo's writer (fd 3 here) is open.
pin-hold 131072 </tmp/hold >/tmp/held &
exec 3>/tmp/hold
i=0; while [ ! -s /tmp/held ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
set -- $(cat /tmp/held)
echo "# pin-hold: $*"
check "a region is pinned and mapped by pin-hold" test "$1" = pinned
pid=$!
gdirect stat --json > /tmp/stat.json
gdirect stat | sed 's/^/# /'
check "stat lists pin-hold's process ($pid)" grep -q "\"pid\": $pid," /tmp/stat.json
check "with its handle ($2) and address ($3)" sh -c \
	"grep -q '\"handle\": $2,' /tmp/stat.json && grep -q '\"addr\": \"$3\",' /tmp/stat.json"
check "128 KiB in 2 pages, pinned, callback mode" sh -c \
	"grep -q '\"size\": 131072,' /tmp/stat.json && grep -q '\"pages\": 2,' /tmp/stat.json && grep -q '\"state\": \"pinned\",' /tmp/stat.json && grep -q '\"mode\": \"callback\",' /tmp/stat.json"
check "mapped 128 KiB" grep -q '"mapped": 131072$' /tmp/stat.json
check "counters: live_regions 1, live_bytes 131072" sh -c \
	"grep -q '\"live_regions\": 1,' /tmp/stat.json && grep -q '\"live_bytes\": 131072,' /tmp/stat.json"
exec 3>&-
wait
gdirect stat --json > /tmp/stat.json
check "after release: no live regions" grep -q '"live_regions": 0,' /tmp/stat.json

# A libgdirect process that opts in: 1 miss and 9 hits, published within
# its interval (100 ms here), and gone from stat when it ends.
mkfifo /tmp/hold2
GDIRECT_PUBLISH_STATS=1 GDIRECT_PUBLISH_INTERVAL_MS=100 lib-hold 131072 10 \
	</tmp/hold2 >/tmp/held2 &
lpid=$!
exec 4>/tmp/hold2
i=0; while [ ! -s /tmp/held2 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
echo "# lib-hold: $(cat /tmp/held2)"
check "lib-hold registered through libgdirect, 9 hits" grep -q ' 9$' /tmp/held2
sdir=/dev/shm/gdirect-$(id -u)
check "its statistics file is in its user's directory $sdir" test -s "$sdir/gdirect-stats.$lpid.1"
check "which nobody else can write (a directory, mode 0700)" sh -c \
	"test -d $sdir && test ! -L $sdir && ls -ld $sdir | grep -q '^drwx------'"
# The first file is written at creation; the 9 hits by the next period.
i=0
while [ $i -lt 300 ]; do
	gdirect stat --json > /tmp/stat.json
	grep -q '"hits": 9,' /tmp/stat.json && break
	sleep 0.1; i=$((i + 1))
done
gdirect stat > /tmp/stat.txt
sed -n '/libgdirect contexts/,$p' /tmp/stat.txt | sed 's/^/# /'
check "stat lists lib-hold ($lpid) as a live library context" \
	grep -q "process $lpid context 1 (updated" /tmp/stat.txt
check "with its cache counters: 9 hits, 1 miss, 1 region of 128 KiB" sh -c \
	"grep -q '\"hits\": 9,' /tmp/stat.json && grep -q '\"misses\": 1,' /tmp/stat.json && grep -q '\"regions\": 1,' /tmp/stat.json && grep -q '\"bytes_pinned\": 131072' /tmp/stat.json"
exec 4>&-
wait $lpid
gdirect stat > /tmp/stat.txt
check "its file goes with its context" sh -c \
	"! test -e $sdir/gdirect-stats.$lpid.1 && ! grep -q 'process $lpid context' /tmp/stat.txt"
unload_module gdirect
unload_module nvp2p_emu
tap_done
