#!/bin/sh
# SPDX-License-Identifier: MIT
# symbols.sh LIST LIBRARY - TAP: the dynamic symbols LIBRARY
# defines are exactly the functions of LIST (gdrcopy 2.6's), unversioned,
# and its SONAME is libgdrapi.so.2.
set -u
list=$1 lib=$2
. "$(dirname "$0")/../../include/tap.sh"
want=$(grep -v '^#' "$list" | sort)
got=$(nm -D --defined-only "$lib" | awk '{ print $3 }' | sort)
plan 5
missing=$(for s in $want; do printf '%s\n' "$got" | grep -qx "$s" || echo "$s"; done)
if [ -z "$missing" ]; then ok "every gdrcopy 2.6 symbol is exported"
else not_ok "missing: $(echo $missing)"; fi
extra=$(for s in $got; do printf '%s\n' "$want" | grep -qx "$s" || echo "$s"; done)
if [ -z "$extra" ]; then ok "nothing else is exported"
else not_ok "extra: $(echo $extra)"; fi
types=$(nm -D --defined-only "$lib" | awk '$2 != "T" { print $3 }')
if [ -z "$types" ]; then ok "all are functions"
else not_ok "not functions: $(echo $types)"; fi
vers=$(nm -D --defined-only --with-symbol-versions "$lib" | grep '@' || true)
if [ -z "$vers" ]; then ok "no symbol versions (gdrcopy has none)"
else not_ok "versioned: $(echo $vers)"; fi
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" = libgdrapi.so.2 ]; then ok "SONAME libgdrapi.so.2"
else not_ok "SONAME '$soname'"; fi
tap_done
