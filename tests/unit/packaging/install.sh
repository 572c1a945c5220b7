#!/bin/sh
# SPDX-License-Identifier: MIT
# install.sh SOURCE BUILD - "make install" (packaging/install.sh) with
# DESTDIR lays out every file where it belongs, and what it installed works:
# the command runs, and a program builds against the header and library
# found through the installed pkg-config file.
set -u
top=$1 build=$2
. "$(dirname "$0")/../../include/tap.sh"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
exists() { check "installed: ${1#$d}" [ -e "$1" ]; }

if ! DESTDIR="$d" "$top/packaging/install.sh" "$build" > "$d.log" 2>&1; then
	not_ok "install.sh runs"; diag "$(cat "$d.log")"; rm -f "$d.log"; tap_done; exit 1
fi
ok "install.sh runs"; diag "$(cat "$d.log")"; rm -f "$d.log"
prefix=$(meson introspect --buildoptions "$build" | python3 -c \
	'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
version=$(meson introspect --projectinfo "$build" | sed -n 's/.*"version": "\([^"]*\)".*/\1/p')
p="$d$prefix"
diag "installed tree:" "$(cd "$d" && find . -type f -o -type l | sort | sed 's/^/  /')"

exists "$p/bin/gdirect"
exists "$p/include/gdirect.h"
exists "$p/share/man/man1/gdirect.1"
lib=$(find "$p" -name 'libgdirect.so.0' | head -n1)
check "libgdirect.so.0 under $prefix" [ -n "$lib" ]
pc=$(find "$p" -name gdirect.pc | head -n1)
check "gdirect.pc under $prefix" [ -n "$pc" ]
src="$d/usr/src/gdirect-$version"
for f in dkms.conf Makefile include/uapi/gdirect_ioctl.h include/uapi/gdrdrv.h emu/nvp2p/Kbuild \
	include/nvidia/nv-p2p.h kernel/gdirect/Kbuild kernel/gdirect/include/gdirect_kapi.h \
	kernel/gdirect_edu/Kbuild include/uapi/gdirect_edu.h; do
	exists "$src/$f"
done
check "no tests in the DKMS tree" [ ! -e "$src/tests" ]
check "dkms.conf has PACKAGE_VERSION $version" grep -q "^PACKAGE_VERSION=\"$version\"$" "$src/dkms.conf"
check "dkms.conf has AUTOINSTALL" grep -q '^AUTOINSTALL="yes"$' "$src/dkms.conf"
exists "$d/usr/lib/udev/rules.d/60-gdirect.rules"
check "the udev rule gives /dev/gdirect group gdirect, mode 0660" \
	grep -q 'KERNEL=="gdirect".*GROUP="gdirect", MODE="0660"' "$d/usr/lib/udev/rules.d/60-gdirect.rules"
# Nothing outside DESTDIR's prefix, /usr/src and the udev directory.
extra=$(cd "$d" && find . -type f | grep -v -e "^.$prefix/" -e '^./usr/src/' -e '^./usr/lib/udev/')
check "nothing else installed${extra:+: $extra}" [ -z "$extra" ]

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
	check "the installed gdirect says '$out'" [ "$out" = "gdirect $version" ]
	check "gdirect is linked with libgdirect" sh -c 'ldd "$1" | grep -q libgdirect.so.0' _ "$p/bin/gdirect"
fi
# The pkg-config file leads a compiler to the header and the library.
if [ -n "$pc" ] && command -v pkg-config >/dev/null; then
	flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-variable=prefix="$p" --cflags --libs gdirect)
	diag "pkg-config: $flags"
	mod=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-variable=prefix="$p" --modversion gdirect)
	check "pkg-config version '$mod'" [ "$mod" = "$version" ]
	printf '#include <gdirect.h>\nint main(void) { return gdirect_copy_impl()[0] == 0; }\n' > "$d/t.c"
	# A sanitizer build's library needs the same runtime in the program.
	san=$("$(dirname "$0")/sanitize-flags.sh" "$build")
	# shellcheck disable=SC2086
	if cc $san -o "$d/t" "$d/t.c" $flags; then
		ok "a program builds against the installed header and library"
		check "it runs on the installed library" env LD_LIBRARY_PATH="$(dirname "$lib")" "$d/t"
	else
		not_ok "a program builds against the installed header and library"
	fi
fi
tap_done
