#!/bin/sh
# SPDX-License-Identifier: MIT
# verbs-symbols.sh LIB present|absent - libgdirect's verbs API is there
# exactly when the build found libibverbs: gdirect_mr_get, _put, _addr,
# _flush and the old gdirect_mr_info in node GDIRECT_0.2, gdirect_mr_flush_pd
# and the default gdirect_mr_info in GDIRECT_0.3 (two functions: the old
# one writes the smaller struct gdirect_mr_info of GDIRECT_0.2), and
# nothing of libibverbs needed otherwise.
set -u
lib=$1 want=$2
echo "1..3"
dyn=$(nm -D --defined-only "$lib")
syms=$(printf '%s\n' "$dyn" | grep -c -E \
	' gdirect_mr_((get|put|addr|flush)@@GDIRECT_0\.2|info@GDIRECT_0\.2|(flush_pd|info)@@GDIRECT_0\.3|get_dmabuf@@GDIRECT_0\.4)$')
all=$(printf '%s\n' "$dyn" | grep -c ' gdirect_mr_')
old=$(printf '%s\n' "$dyn" | sed -n 's/ T gdirect_mr_info@GDIRECT_0\.2$//p')
new=$(printf '%s\n' "$dyn" | sed -n 's/ T gdirect_mr_info@@GDIRECT_0\.3$//p')
needs=$(readelf -d "$lib" | grep -c 'NEEDED.*libibverbs')
case $want in
present) n=8 v=1 ;;
absent) n=0 v=0 ;;
*) echo "Bail out! usage: $0 LIB present|absent"; exit 1 ;;
esac
if [ "$syms" = "$n" ] && [ "$all" = "$n" ]; then
	echo "ok 1 - gdirect_mr_* $want ($syms of 8, $all in all)"
else echo "not ok 1 - gdirect_mr_*: $syms of 8 ($all in all), expected $n"; fi
if [ "$want" = absent ]; then
	echo "ok 2 - no gdirect_mr_info versions without verbs"
elif [ -n "$old" ] && [ -n "$new" ] && [ "$old" != "$new" ]; then
	echo "ok 2 - gdirect_mr_info@GDIRECT_0.2 ($old) is not @@GDIRECT_0.3 ($new)"
else echo "not ok 2 - gdirect_mr_info versions: old '$old', new '$new'"; fi
if [ "$needs" = "$v" ]; then echo "ok 3 - libibverbs needed: $needs"
else echo "not ok 3 - libibverbs needed: $needs, expected $v"; fi
