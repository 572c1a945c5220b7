#!/bin/sh
# SPDX-License-Identifier: MIT
# boundary.sh ROOT - the product never reaches into the emulated machine
# or the tests (docs/layout.md).
#
# The product's folders compile against the interfaces in include/ (the
# NVIDIA ones in include/nvidia, the modules' in include/uapi) and nothing
# else of the tree, so that it builds the same next to NVIDIA's driver as
# next to the emulator.  This test fails on:
#   - an #include of a header that lives only under emu/ or tests/, or an
#     #include path naming emu/ or tests/;
#   - a product source whose preprocessor reads an emulator setting
#     (NVP2P_EMU_*);
#   - a product build file (meson.build, Kbuild, Makefile) that names emu/
#     or tests/, the emulator (nvp2p_emu, NVP2P_EMU_*), or a meson object
#     that only they define (inc_emu, inc_emu_uapi, inc_tests, the
#     emulator's *_emu_dep and lib*_emu, the tests' libraries);
#   - a top-level meson.build that builds emu/, tests/ or the demo's guest
#     programs outside the emulator and tests options (build_emulator,
#     build_tests), so that -Demulator=false -Dtests=false builds the
#     product alone;
#   - a plain `make` (make -n all) whose commands name the emulator, the
#     test modules or emu/, or configure user space with the emulator or
#     the tests.
# One use is allowed, each with its reason (allowed, below).  The test then
# plants one violation of each kind in a scratch copy of the product and
# checks that each is caught, so that the check cannot pass by seeing
# nothing.
set -u
root=$(cd "${1:?usage: boundary.sh ROOT}" && pwd)
. "$root/tests/include/tap.sh"

product="kernel/gdirect kernel/gdirect_edu lib gdrapi tools device ptxabi"

# FILE:NAME pairs the scan lets through.  The gdirect tool reports an
# emulated GPU as it reports NVIDIA's, and reads the emulator's INFO call
# for it: provider.c includes the emulator's interface, which
# tools/meson.build puts on the include path.
allowed="tools/src/provider.c:nvp2p_emu.h tools/meson.build:inc_emu_uapi"

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
# One grep over all the files of each kind, then awk: the tree has a few
# hundred sources, and a process per line would take minutes.
scan() {
	r=$1
	foreign_headers "$r" > "$tmp/foreign"
	: > "$tmp/src"
	: > "$tmp/bld"
	for d in $product; do
		[ -d "$r/$d" ] || continue
		(cd "$r" && find "$d" -type f \( -name '*.c' -o -name '*.h' \
			-o -name '*.cu' -o -name '*.ptx' \) -print) >> "$tmp/src"
		(cd "$r" && find "$d" -type f \( -name meson.build -o -name Kbuild \
			-o -name Makefile -o -name '*.mk' \) -print) >> "$tmp/bld"
	done
	# Includes: a path naming emu/ or tests/, or a header only they have.
	(cd "$r" && tr '\n' '\0' < "$tmp/src" | xargs -0 -r grep -nH \
		'^[[:space:]]*#[[:space:]]*include') |
	awk -v allowed="$allowed" -v foreign="$tmp/foreign" '
	BEGIN {
		while ((getline h < foreign) > 0) bad[h] = 1
		n = split(allowed, a, " ")
		for (i = 1; i <= n; i++) ok[a[i]] = 1
	}
	{
		f = $0; sub(/:.*/, "", f)
		if (!match($0, /include[[:space:]]*[<"][^>"]*[>"]/)) next
		h = substr($0, RSTART, RLENGTH)
		sub(/^include[[:space:]]*[<"]/, "", h); sub(/[>"]$/, "", h)
		if (h ~ /(^|\/)(emu|tests)\//) { print; next }
		b = h; sub(/.*\//, "", b)
		if ((b in bad) && !((f ":" b) in ok)) print
	}'
	# Preprocessor conditions on an emulator setting.
	(cd "$r" && tr '\n' '\0' < "$tmp/src" | xargs -0 -r grep -nHE \
		'^[[:space:]]*#[[:space:]]*(if|ifdef|ifndef|elif).*NVP2P_EMU')
	# Build files naming emu/, tests/, the emulator or their objects.
	(cd "$r" && tr '\n' '\0' < "$tmp/bld" | xargs -0 -r grep -nHE \
		"(^|[^[:alnum:]_])(emu|tests)/|nvp2p_emu|NVP2P_EMU|\\b(inc_emu|inc_emu_uapi|inc_tests|inc_tap|[a-z]+_emu_dep|lib[a-z]+_emu|gdt_lib|tap_dep)\\b") |
	awk -v allowed="$allowed" '
	BEGIN { n = split(allowed, a, " "); for (i = 1; i <= n; i++) ok[a[i]] = 1 }
	{
		f = $0; sub(/:.*/, "", f)
		t = $0; sub(/^[^:]*:[0-9]*:/, "", t)
		if (t ~ /^[[:space:]]*#/) next
		if (((f ":inc_emu_uapi") in ok) && t ~ /inc_emu_uapi/) {
			u = t; gsub(/inc_emu_uapi/, "", u)
			if (u !~ /(^|[^[:alnum:]_])(emu|tests)\/|nvp2p_emu|NVP2P_EMU|(^|[^[:alnum:]_])(inc_emu|inc_tests|inc_tap|[a-z]+_emu_dep|lib[a-z]+_emu|gdt_lib|tap_dep)([^[:alnum:]_]|$)/)
				next
		}
		print
	}'
	scan_meson "$r"
	scan_make "$r"
}

# scan_meson ROOT: each subdir() of the top-level meson.build into emu/,
# tests/ or demo/guest must sit inside an if on its option.
scan_meson() {
	awk '
	function guarded(want,   i) {
		for (i = 1; i <= depth; i++)
			if (cond[i] ~ want) return 1
		return 0
	}
	/^[[:space:]]*#/ { next }
	/^[[:space:]]*if[[:space:]]/ { cond[++depth] = $0; next }
	/^[[:space:]]*(elif|else)/ { cond[depth] = "else"; next }
	/^[[:space:]]*endif/ { depth--; next }
	/subdir\([[:space:]]*\x27(emu|demo\/guest)[\x27\/]/ {
		if (!guarded("build_emulator")) printf "meson.build:%d:%s\n", NR, $0
	}
	/subdir\([[:space:]]*\x27tests[\x27\/]/ {
		if (!guarded("build_tests")) printf "meson.build:%d:%s\n", NR, $0
	}' "$1/meson.build"
}

# scan_make ROOT: what a plain `make` runs, as make -n prints it (with an
# NVIDIA driver named, so the module build is printed too).  It must build
# user space with -Demulator=false -Dtests=false, in the product's build
# folder, and the two product modules, and name nothing of the emulator or
# the tests.
scan_make() {
	if ! make -n -s --no-print-directory -C "$1" all NVIDIA_SRC=/nvidia-src \
		BUILD=/build KDIR=/kdir >"$tmp/make.n" 2>&1; then
		echo "Makefile: make -n all failed: $(tail -n1 "$tmp/make.n")"
		return
	fi
	grep -q -- 'meson-setup.sh /build/product -Demulator=false -Dtests=false' "$tmp/make.n" ||
		echo "Makefile: make all does not configure user space with -Demulator=false -Dtests=false"
	grep -q -- 'build-modules.sh "/kdir" "/build/kmod/nvidia" nvidia gdirect gdirect_edu$' "$tmp/make.n" ||
		echo "Makefile: make all does not build gdirect and gdirect_edu for the NVIDIA driver"
	grep -nE 'nvp2p_emu|NVP2P_EMU|nvp2p_selftest|gdirect_kapitest|(^|[^[:alnum:]_])emu/|-Demulator=true|-Dtests=true' \
		"$tmp/make.n" | sed 's|^|make -n all:|'
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

# The same scan on scratch copies, each with one planted violation; the
# copy without one must scan clean, or a plant would be caught for nothing.
copy() {
	rm -rf "$tmp/tree"
	mkdir -p "$tmp/tree"
	# Of emu/ and tests/, their headers are what the scan reads.
	(cd "$root" && { find emu tests -name '*.h'; echo include; echo meson.build;
		echo Makefile; for d in $product; do echo "$d"; done; } |
		tar -cf - -T -) | (cd "$tmp/tree" && tar -xf -)
}
copy
scan "$tmp/tree" > "$tmp/found"
if [ -s "$tmp/found" ]; then
	not_ok "the scratch copy scans clean"
	diag "$(cat "$tmp/found")"
else
	ok "the scratch copy scans clean"
fi
plant() {
	what=$1 file=$2 text=$3
	copy
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
plant "Kbuild looking for the emulator's symbols" kernel/gdirect/Kbuild \
	'gd_emu := $(findstring nvp2p_emu,$(KBUILD_EXTRA_SYMBOLS))'
plant "Kbuild setting an emulator define" kernel/gdirect/Kbuild 'ccflags-y += -DNVP2P_EMU_TEGRA'
plant "product source reading an emulator define" kernel/gdirect/main.c '#ifdef NVP2P_EMU_TEGRA'
plant "include of the emulator's interface" kernel/gdirect/pin.c '#include "nvp2p_emu.h"'
plant "tool including the emulator's interface outside provider.c" tools/src/main.c '#include <nvp2p_emu.h>'
plant "meson path to the emulator's interface" lib/meson.build 'x = include_directories(inc_emu_uapi)'
plant "emu/ built outside the emulator option" meson.build "subdir('emu')"
plant "tests/ built outside the tests option" meson.build "subdir('tests')"
plant "plain make building the testbed" Makefile 'all: testbed'
plant "plain make building user space with the tests" Makefile 'meson_testbed_0 := -Dtests=true'
tap_done
