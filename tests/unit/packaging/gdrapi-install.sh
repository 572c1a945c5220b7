#!/bin/sh
# SPDX-License-Identifier: MIT
# gdrapi-install.sh SOURCE BUILD - TAP: "make install" (install.sh) puts
# libgdrapi.so.2, libgdrapi.so, gdrapi.h and gdrapi.pc in place, and a
# program builds against them through pkg-config and runs; it refuses to
# replace a gdrcopy libgdrapi.so.2 or gdrapi.h unless GDRAPI_OVERWRITE=1,
# then keeps gdrcopy's beside ours; GDRAPI_OVERWRITE is parsed strictly.
set -u
top=$1 build=$2
. "$top/tests/include/tap.sh"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
opt() { meson introspect --buildoptions "$build" | python3 -c \
	'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1"; }
prefix=$(opt prefix) libdir=$(opt libdir)
case "$libdir" in /*) ;; *) libdir=$prefix/$libdir ;; esac
inst() { # inst DESTDIR [VAR=VALUE...]: install.sh's status; log in DESTDIR.log
	dd=$1; shift
	env DESTDIR="$dd" "$@" "$top/packaging/install.sh" "$build" > "$dd.log" 2>&1
}

# 1. a clean install
inst "$d/a"; check_rc $? "install into an empty DESTDIR"
L=$d/a$libdir
[ -f "$L/libgdrapi.so.2" ] && [ -L "$L/libgdrapi.so" ] && [ -f "$d/a$prefix/include/gdrapi.h" ] &&
	[ -f "$L/pkgconfig/gdrapi.pc" ]
check_rc $? "libgdrapi.so.2, libgdrapi.so, gdrapi.h and gdrapi.pc installed"
ver=$(PKG_CONFIG_PATH=$L/pkgconfig pkg-config --define-variable=prefix="$d/a$prefix" --modversion gdrapi 2>&1)
[ "$ver" = 2.6 ]; check_rc $? "pkg-config gdrapi: version '$ver'"
printf '#include <gdrapi.h>\n#include <stdio.h>\nint main(void) { int a, b; gdr_runtime_get_version(&a, &b); printf("%%d.%%d\\n", a, b); return 0; }\n' > "$d/t.c"
flags=$(PKG_CONFIG_PATH=$L/pkgconfig pkg-config --define-variable=prefix="$d/a$prefix" --cflags --libs gdrapi)
# A sanitizer build's library needs the same runtime in the program.
san=$("$(dirname "$0")/sanitize-flags.sh" "$build")
out=$(cc $san -o "$d/t" "$d/t.c" $flags 2>"$d/cc.log" && LD_LIBRARY_PATH=$L "$d/t" 2>&1 ||
	cat "$d/cc.log")
[ "$out" = 2.6 ]; check_rc $? "a program built through pkg-config runs on it: '$out'"
inst "$d/a"; check_rc $? "installing again over our own library needs no option"

# 2. over gdrcopy's library and header
mk_gdrcopy() {
	mkdir -p "$1$libdir" "$1$prefix/include"
	printf 'int gdr_open(void) { return 0; }\n' > "$d/g.c"
	cc -shared -fPIC -Wl,-soname,libgdrapi.so.2 -o "$1$libdir/libgdrapi.so.2.6" "$d/g.c"
	ln -sf libgdrapi.so.2.6 "$1$libdir/libgdrapi.so.2"
	ln -sf libgdrapi.so.2 "$1$libdir/libgdrapi.so"
	printf '/* gdrcopy */\n' > "$1$prefix/include/gdrapi.h"
}
mk_gdrcopy "$d/b"
inst "$d/b"; st=$?
[ $st != 0 ] && grep -q 'GDRAPI_OVERWRITE=1' "$d/b.log"
check_rc $? "refused over gdrcopy's libgdrapi, naming GDRAPI_OVERWRITE=1 (status $st)"
[ "$(readlink "$d/b$libdir/libgdrapi.so.2")" = libgdrapi.so.2.6 ] &&
	! grep -q GDIRECT_LIBGDRAPI "$d/b$libdir/libgdrapi.so.2" &&
	grep -q gdrcopy "$d/b$prefix/include/gdrapi.h" && [ ! -e "$d/b$libdir/libgdirect.so.0" ]
check_rc $? "gdrcopy's files untouched, nothing installed"
inst "$d/b" GDRAPI_OVERWRITE=yes; st=$?
[ $st != 0 ] && grep -q 'GDRAPI_OVERWRITE=yes: want 0 or 1' "$d/b.log"
check_rc $? "GDRAPI_OVERWRITE=yes is an error (status $st)"
inst "$d/b" GDRAPI_OVERWRITE=1; check_rc $? "GDRAPI_OVERWRITE=1 installs"
grep -q GDIRECT_LIBGDRAPI "$d/b$libdir/libgdrapi.so.2" && grep -q "gdirect's libgdrapi" "$d/b$prefix/include/gdrapi.h"
check_rc $? "libgdrapi.so.2 and gdrapi.h are now ours"
[ -f "$d/b$libdir/gdrcopy-saved.libgdrapi.so.2.6" ] && [ -L "$d/b$libdir/gdrcopy-saved.libgdrapi.so.2" ] &&
	[ -f "$d/b$prefix/include/gdrcopy-saved.gdrapi.h" ]
check_rc $? "gdrcopy's kept as gdrcopy-saved.*"
rm -f "$d"/*.log
tap_done
