#!/bin/sh
# SPDX-License-Identifier: MIT
# verbs-symbols.sh LIB present|absent - libgdirect's verbs API is there
# exactly when the build found libibverbs: its five functions in node
# GDIRECT_0.2 and gdirect_mr_flush_pd in GDIRECT_0.3, and nothing of
# libibverbs needed otherwise.
set -u
lib=$1 want=$2
echo "1..2"
syms=$(nm -D --defined-only "$lib" |
	grep -c -E ' gdirect_mr_([a-z]*@@GDIRECT_0\.2|flush_pd@@GDIRECT_0\.3)$')
needs=$(readelf -d "$lib" | grep -c 'NEEDED.*libibverbs')
case $want in
present) n=6 v=1 ;;
absent) n=0 v=0 ;;
*) echo "Bail out! usage: $0 LIB present|absent"; exit 1 ;;
esac
if [ "$syms" = "$n" ]; then echo "ok 1 - gdirect_mr_* $want ($syms of 6)"
else echo "not ok 1 - gdirect_mr_*: $syms of 6, expected $n"; fi
if [ "$needs" = "$v" ]; then echo "ok 2 - libibverbs needed: $needs"
else echo "not ok 2 - libibverbs needed: $needs, expected $v"; fi
