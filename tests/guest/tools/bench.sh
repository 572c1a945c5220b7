#!/bin/sh
# SPDX-License-Identifier: MIT
# gdirect bench and gdirect stat in the emulated machine: the benchmark pins
# through gdirect.ko, copies through the BAR mapping, checks the data, and
# leaves nothing pinned; stat reports what gdirect.ko counted meanwhile.
. /tests/lib.sh
plan 13
if [ ! -e /modules/gdirect.ko ]; then
	echo "# gdirect bench and stat need gdirect.ko; it is not in /modules"
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do skip "bench/stat check $i" "no gdirect.ko"; done
	exit 0
fi
out=/tmp/bench.txt
load_module nvp2p_emu bar1_size_mb=64 bar1_reserve_mb=8
check "gdirect.ko loads" load_module gdirect
check "bench runs (20 pins of 64 KiB and 1 MiB, a 500-access cache trace, copies up to 256 KiB)" sh -c \
	'gdirect bench --iters 20 --pin-sizes 64k,1M --max-size 256k --time-ms 5 \
		--cache-buffers 32 --cache-accesses 500 --cache-max-regions 16 >/tmp/bench.txt 2>/tmp/bench.err'
sed 's/^/# /' "$out"
check "progress went to stderr" grep -q '^bench: pin/unpin 64 KiB x 20' /tmp/bench.err
check "a pin row and an unpin row per size" test "$(grep -c -E '^ +(64 KiB|1 MiB) +pin ' "$out")" = 2 -a "$(grep -c -E '^ +unpin ' "$out")" = 2
check "copy rows from 1 B to 256 KiB (19 sizes)" test "$(grep -c -E '^ +[0-9]+ (B|KiB) +[0-9.]+ ' "$out")" = 19
# "  hits H (P%), misses M, evictions E, pins P, unpins U"
set -- $(sed -n 's/^  hits \([0-9]*\) ([0-9.]*%), misses \([0-9]*\), evictions \([0-9]*\), pins \([0-9]*\), unpins \([0-9]*\)$/\1 \2 \3 \4 \5/p' "$out")
check "cache: every access is a hit or a miss (hits $1 + misses $2 = 500)" test $# = 5 -a $(($1 + $2)) = 500
check "cache: 32 buffers in a 16-region cache evict (evictions ${3:-?})" test "${3:-0}" -gt 0
check "cache: the hot eighth makes most accesses hits" test "${1:-0}" -gt 250
check "data read back through the mapping is what was written" grep -q 'data check: read back what was written' "$out"
check "nothing left pinned in the emulator" test "$(emu_stat pins)" = 0 -a "$(emu_stat bar1_used)" = 0
gdirect stat > "$out"
sed 's/^/# /' "$out"
# 2 sizes x 20 pins, the cache's pins, 1 pin for the copies.
npins=$((41 + ${4:-0}))
check "stat: gdirect.ko counted $npins pins and as many unpins" sh -c \
	"grep -q '^  pins  *$npins$' $out && grep -q '^  unpins  *$npins$' $out"
check "stat: no live regions" grep -q '^  live_regions  *0$' "$out"
unload_module gdirect
check "modules unload" unload_module nvp2p_emu
tap_done
