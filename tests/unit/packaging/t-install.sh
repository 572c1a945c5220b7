#!/bin/sh
# t-install.sh SOURCE BUILD - "make install" (packaging/install.sh) with
# DESTDIR lays out every file where it belongs, and what it installed works:
# the command runs, and a program builds against the header and library
# found through the installed pkg-config file.
set -u
top=$1 build=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
exists() { [ -e "$1" ] || fail "missing ${1#$d}"; }

if ! DESTDIR="$d" "$top/packaging/install.sh" "$build" > "$d.log" 2>&1; then
	cat "$d.log"; rm -f "$d.log"; echo "FAIL: install.sh failed"; exit 1
fi
cat "$d.log"; rm -f "$d.log"
prefix=$(meson introspect --buildoptions "$build" | python3 -c \
	'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
version=$(meson introspect --projectinfo "$build" | sed -n 's/.*"version": "\([^"]*\)".*/\1/p')
p="$d$prefix"
echo "installed tree:"; (cd "$d" && find . -type f -o -type l | sort | sed 's/^/  /')

exists "$p/bin/gdirect"
exists "$p/include/gdirect.h"
exists "$p/share/man/man1/gdirect.1"
lib=$(find "$p" -name 'libgdirect.so.0' | head -n1)
[ -n "$lib" ] || fail "no libgdirect.so.0 under $prefix"
pc=$(find "$p" -name gdirect.pc | head -n1)
[ -n "$pc" ] || fail "no gdirect.pc under $prefix"
src="$d/usr/src/gdirect-$version"
for f in dkms.conf Makefile include/uapi/gdirect_ioctl.h include/uapi/gdrdrv.h kernel/nvp2p_emu/Kbuild \
	kernel/nvp2p_emu/nv-p2p.h kernel/gdirect/Kbuild kernel/gdirect/include/gdirect_kapi.h \
	kernel/gdirect_edu/Kbuild include/uapi/gdirect_edu.h; do
	exists "$src/$f"
done
[ -e "$src/tests" ] && fail "tests copied into the DKMS tree"
grep -q "^PACKAGE_VERSION=\"$version\"$" "$src/dkms.conf" || fail "dkms.conf has no PACKAGE_VERSION $version"
grep -q '^AUTOINSTALL="yes"$' "$src/dkms.conf" || fail "dkms.conf lacks AUTOINSTALL"
exists "$d/usr/lib/udev/rules.d/60-gdirect.rules"
grep -q 'KERNEL=="gdirect".*GROUP="gdirect", MODE="0660"' "$d/usr/lib/udev/rules.d/60-gdirect.rules" ||
	fail "udev rule does not give /dev/gdirect group gdirect, mode 0660"
# Nothing outside DESTDIR's prefix, /usr/src and the udev directory.
extra=$(cd "$d" && find . -type f | grep -v -e "^.$prefix/" -e '^./usr/src/' -e '^./usr/lib/udev/')
[ -z "$extra" ] || fail "unexpected files: $extra"

# Nothing installed leads back to the trees it was built in: no source or
# build path in the command or the library (a script run from there, a
# path in debug information), no script named by the command.
text() { if command -v strings >/dev/null; then strings -a "$1"; else LC_ALL=C tr -c '[:print:]' '\n' <"$1"; fi; }
for f in "$p/bin/gdirect" ${lib:+"$lib"}; do
	for t in "$(cd "$top" && pwd -P)" "$(cd "$build" && pwd -P)"; do
		hits=$(text "$f" | grep -F "$t" | head -n2 | tr '\n' ' ')
		[ -z "$hits" ] || fail "${f#$d} embeds $t: $hits"
	done
done
hits=$(text "$p/bin/gdirect" | grep -E 'scripts/|\.sh\b' | head -n2 | tr '\n' ' ')
[ -z "$hits" ] || fail "gdirect names a script: $hits"

# The installed command runs with the installed library.
if [ -n "$lib" ]; then
	out=$(LD_LIBRARY_PATH=$(dirname "$lib") "$p/bin/gdirect" version 2>&1)
	[ "$out" = "gdirect $version" ] || fail "installed gdirect says '$out'"
	ldd "$p/bin/gdirect" | grep -q libgdirect.so.0 || fail "gdirect not linked with libgdirect"
fi
# The pkg-config file leads a compiler to the header and the library.
if [ -n "$pc" ] && command -v pkg-config >/dev/null; then
	flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-variable=prefix="$p" --cflags --libs gdirect)
	echo "pkg-config: $flags"
	mod=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-variable=prefix="$p" --modversion gdirect)
	[ "$mod" = "$version" ] || fail "pkg-config version '$mod'"
	printf '#include <gdirect.h>\nint main(void) { return gdirect_copy_impl()[0] == 0; }\n' > "$d/t.c"
	# A sanitizer build's library needs the same runtime in the program.
	san=$(meson introspect --buildoptions "$build" | python3 -c \
		'import json,sys; v=next(o["value"] for o in json.load(sys.stdin) if o["name"] == "b_sanitize"); print("" if v == "none" else "-fsanitize=" + v)')
	# shellcheck disable=SC2086
	if cc $san -o "$d/t" "$d/t.c" $flags; then
		LD_LIBRARY_PATH=$(dirname "$lib") "$d/t" || fail "program against the installed library failed"
	else
		fail "cannot build against the installed header and library"
	fi
fi
if [ $fails -ne 0 ]; then echo "$fails checks failed"; exit 1; fi
echo "install layout: all checks passed"
