#!/bin/sh
# t-gdrapi-symbols.sh LIST LIBRARY - TAP: the dynamic symbols LIBRARY
# defines are exactly the functions of LIST (gdrcopy 2.6's), unversioned,
# and its SONAME is libgdrapi.so.2.
set -u
list=$1 lib=$2
want=$(grep -v '^#' "$list" | sort)
got=$(nm -D --defined-only "$lib" | awk '{ print $3 }' | sort)
echo "1..5"
missing=$(for s in $want; do printf '%s\n' "$got" | grep -qx "$s" || echo "$s"; done)
[ -z "$missing" ] && echo "ok 1 - every gdrcopy 2.6 symbol is exported" ||
	echo "not ok 1 - missing: $(echo $missing)"
extra=$(for s in $got; do printf '%s\n' "$want" | grep -qx "$s" || echo "$s"; done)
[ -z "$extra" ] && echo "ok 2 - nothing else is exported" ||
	echo "not ok 2 - extra: $(echo $extra)"
types=$(nm -D --defined-only "$lib" | awk '$2 != "T" { print $3 }')
[ -z "$types" ] && echo "ok 3 - all are functions" ||
	echo "not ok 3 - not functions: $(echo $types)"
vers=$(nm -D --defined-only --with-symbol-versions "$lib" | grep '@' || true)
[ -z "$vers" ] && echo "ok 4 - no symbol versions (gdrcopy has none)" ||
	echo "not ok 4 - versioned: $(echo $vers)"
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libgdrapi.so.2 ] && echo "ok 5 - SONAME libgdrapi.so.2" ||
	echo "not ok 5 - SONAME '$soname'"
