#!/bin/sh
# SPDX-License-Identifier: MIT
# t-boundary.sh ROOT - the product never reaches into the emulated machine
# or the tests (docs/layout.md).
#
# The product's folders compile against the interfaces in include/ (the
# NVIDIA ones in include/nvidia, the modules' in include/uapi) and nothing
# else of the tree, so that it builds the same next to NVIDIA's driver as
# next to the emulator.  This test fails on:
#   - an #include of a header that lives only under emu/ or tests/, or an
#     #include path naming emu/ or tests/;
#   - a build file (meson.build, Kbuild, Makefile) that names emu/ or
#     tests/, or a meson object that only they define (inc_emu, inc_tests,
#     the emulator's *_emu_dep and lib*_emu, the tests' libraries).
# It then plants one violation of each kind in a scratch copy of the
# product and checks that each is caught, so that the check cannot pass
# by seeing nothing.
set -u
root=$(cd "${1:?usage: t-boundary.sh ROOT}" && pwd)
. "$root/tests/include/tap.sh"

product="kernel/gdirect kernel/gdirect_edu lib gdrapi tools device ptxabi"

# Headers that exist under emu/ or tests/ and nowhere in the product or
# include/: including one of these by name is reaching across.
foreign_headers() {
	r=$1
	(cd "$r" && find emu tests -name '*.h' 2>/dev/null) | sed 's|.*/||' |
		sort -u > "$tmp/foreign.all"
	(cd "$r" && find include $product -name '*.h' 2>/dev/null) |
		sed 's|.*/||' | sort -u > "$tmp/own"
	comm -23 "$tmp/foreign.all" "$tmp/own"
}

# scan ROOT: print each violation as "file:line: text", nothing if clean.
scan() {
	r=$1
	foreign_headers "$r" > "$tmp/foreign"
	for d in $product; do
		[ -d "$r/$d" ] || continue
		(cd "$r" && find "$d" -type f \( -name '*.c' -o -name '*.h' \
			-o -name '*.cu' -o -name '*.ptx' \) -print) |
		while read -r f; do
			grep -n '^[[:space:]]*#[[:space:]]*include' "$r/$f" |
			while IFS= read -r line; do
				h=$(printf '%s\n' "$line" |
					sed -n 's/.*include[[:space:]]*[<"]\([^>"]*\)[>"].*/\1/p')
				[ -n "$h" ] || continue
				case $h in
				*emu/*|*tests/*) echo "$f:$line"; continue ;;
				esac
				if grep -qxF "$(basename "$h")" "$tmp/foreign"; then
					echo "$f:$line"
				fi
			done
		done
		(cd "$r" && find "$d" -type f \( -name meson.build -o -name Kbuild \
			-o -name Makefile -o -name '*.mk' \) -print) |
		while read -r f; do
			grep -nE "(^|[^[:alnum:]_])(emu|tests)/|\\b(inc_emu|inc_tests|inc_tap|[a-z]+_emu_dep|lib[a-z]+_emu|gdt_lib|tap_dep)\\b" \
				"$r/$f" | grep -v '^[0-9]*:[[:space:]]*#' |
				sed "s|^|$f:|"
		done
	done
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

scan "$root" > "$tmp/found"
if [ -s "$tmp/found" ]; then
	not_ok "no product file includes from or builds against emu/ or tests/"
	diag "$(cat "$tmp/found")"
else
	ok "no product file includes from or builds against emu/ or tests/"
fi

# The same scan on scratch copies, each with one planted violation.
plant() {
	what=$1 file=$2 text=$3
	rm -rf "$tmp/tree"
	mkdir -p "$tmp/tree"
	(cd "$root" && tar -cf - include emu tests/include $product) |
		(cd "$tmp/tree" && tar -xf -)
	printf '%s\n' "$text" >> "$tmp/tree/$file"
	if scan "$tmp/tree" | grep -q .; then
		ok "a planted $what is caught"
	else
		not_ok "a planted $what is caught"
	fi
}
plant "include of an emulator header" lib/src/rcache.c '#include "emu_knob.h"'
plant "include of a test header" kernel/gdirect/pin.c '#include "tap.h"'
plant "include path into emu/" gdrapi/src/gdrapi.c '#include "../../emu/cuda/src/cuda_emu_internal.h"'
plant "meson link with the emulator" tools/meson.build 'x = executable(\x27x\x27, \x27x.c\x27, dependencies : cuda_emu_dep)'
plant "Kbuild include of emu/" kernel/gdirect/Kbuild 'ccflags-y += -I$(src)/../../emu/nvp2p'
tap_done
