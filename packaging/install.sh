#!/bin/sh
# SPDX-License-Identifier: MIT
# install.sh BUILD [USERSPACE] - what "make install" does; honours DESTDIR
# and PREFIX.  USERSPACE (default BUILD) is the meson build folder whose
# user space is installed (the Makefile's product or testbed folder); BUILD
# is the tree whose modules and libraries make gdirect-emu's machine.
#
#   PREFIX (default: the build's meson prefix, /usr/local unless set up
#   otherwise)  libgdirect, its header and pkg-config file, the gdirect
#               command, man pages, libgdrapi.so.2 with gdrapi.h and
#               gdrapi.pc: meson install, stripped
#   /usr/src/gdirect-VERSION       the modules' source and dkms.conf
#                                  (DKMS only looks in /usr/src)
#   UDEVRULESDIR (default /usr/lib/udev/rules.d)  60-gdirect.rules
#   PREFIX/lib/gdirect-emu, PREFIX/bin/gdirect-emu  the emulated machine as
#               a command, with the modules and libraries built here
#
# Everything goes under DESTDIR when it is set (packaging, tests).  Without
# DESTDIR, as root, it also creates the "gdirect" group the udev rule names
# and reloads udev; with DKMS=1 it registers, builds and installs the
# modules for the running kernel with dkms.
#
# It will not replace gdrcopy's libgdrapi.so.2 or gdrapi.h found where ours
# go, unless GDRAPI_OVERWRITE=1: then gdrcopy's files are kept beside them
# as gdrcopy-saved.NAME.
#
# The emulated GPU's libraries (libcuda.so.1, libcudart.so.13,
# libnvidia-ml.so.1 and their headers cuda.h, cuda_runtime.h,
# cuda_runtime_api.h, nvml.h) bear NVIDIA's names, so they are installed
# only with CUDA_EMU=1, into PREFIX's libdir and includedir, and never over
# NVIDIA's files there unless CUDA_EMU_OVERWRITE=1: then NVIDIA's are kept
# beside them as nvidia-saved.NAME.
set -eu
build=$1
userspace=${2:-$1}
top=$(cd "$(dirname "$0")/.." && pwd)
destdir=${DESTDIR:-}
udevdir=${UDEVRULESDIR:-/usr/lib/udev/rules.d}

version=$(meson introspect --projectinfo "$userspace" | sed -n 's/.*"version": "\([^"]*\)".*/\1/p')
[ -n "$version" ] || { echo "install: cannot read the project version from $userspace" >&2; exit 1; }
prefix_of() {
	meson introspect --buildoptions "$1" | python3 -c \
		'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))'
}
cur_prefix=$(prefix_of "$userspace")
if [ -n "${PREFIX:-}" ] && [ "$PREFIX" != "$cur_prefix" ]; then
	echo "install: prefix $cur_prefix -> $PREFIX"
	meson configure "$userspace" -Dprefix="$PREFIX" >/dev/null
	ninja -C "$userspace" >/dev/null
fi

# 0. no silent replacement of gdrcopy's library or header.
case "${GDRAPI_OVERWRITE:-0}" in
0|1) ;;
*) echo "install: GDRAPI_OVERWRITE=${GDRAPI_OVERWRITE}: want 0 or 1" >&2; exit 1 ;;
esac
option() {
	meson introspect --buildoptions "$userspace" | python3 -c \
		'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1"
}
under_prefix() { case "$1" in /*) echo "$destdir$1" ;; *) echo "$destdir$(prefix_of "$userspace")/$1" ;; esac; }
libdir=$(under_prefix "$(option libdir)")
incdir=$(under_prefix "$(option includedir)")
foreign=""
# Ours carry a marker string; anything else by those names is gdrcopy's.
if [ -e "$libdir/libgdrapi.so.2" ] && ! grep -q GDIRECT_LIBGDRAPI "$libdir/libgdrapi.so.2"; then
	foreign="$foreign $libdir/libgdrapi.so.2"
fi
if [ -e "$incdir/gdrapi.h" ] && ! grep -q "gdirect's libgdrapi" "$incdir/gdrapi.h"; then
	foreign="$foreign $incdir/gdrapi.h"
fi
if [ -n "$foreign" ]; then
	if [ "${GDRAPI_OVERWRITE:-0}" != 1 ]; then
		echo "install: gdrcopy's libgdrapi is installed here:$foreign" >&2
		echo "install: not replacing it; GDRAPI_OVERWRITE=1 installs ours and keeps gdrcopy's as gdrcopy-saved.*," >&2
		echo "install: or install ours elsewhere (PREFIX=...) and point LD_LIBRARY_PATH at it (docs/gdrcopy.md)" >&2
		exit 1
	fi
	for f in $foreign; do
		d=$(dirname "$f")
		if [ -L "$f" ]; then
			real=$(readlink -f "$f")
			[ "$(dirname "$real")" = "$d" ] && mv "$real" "$d/gdrcopy-saved.$(basename "$real")"
		fi
		mv "$f" "$d/gdrcopy-saved.$(basename "$f")"
		echo "install: gdrcopy's $(basename "$f") kept as $d/gdrcopy-saved.$(basename "$f")"
	done
	rm -f "$libdir/libgdrapi.so"
fi

# 0b. the emulated GPU's libraries: asked for, and not over NVIDIA's.
for v in CUDA_EMU CUDA_EMU_OVERWRITE; do
	eval "val=\${$v:-0}"
	case "$val" in
	0|1) ;;
	*) echo "install: $v=$val: want 0 or 1" >&2; exit 1 ;;
	esac
done
emu_libs="emu/cuda/libcuda.so.1.0.0:libcuda.so.1:libcuda.so
emu/cudart/libcudart.so.13.0.0:libcudart.so.13:libcudart.so
emu/nvml/libnvidia-ml.so.1.0.0:libnvidia-ml.so.1:libnvidia-ml.so"
emu_headers="include/nvidia/cuda.h include/nvidia/cuda_runtime.h
include/nvidia/cuda_runtime_api.h include/nvidia/nvml.h"
if [ "${CUDA_EMU:-0}" = 1 ]; then
	foreign=""
	for l in $emu_libs; do
		file=${l%%:*} rest=${l#*:}
		for name in "$(basename "$file")" "${rest%%:*}" "${rest#*:}"; do
			f=$libdir/$name
			if [ -e "$f" ] && ! grep -q GDIRECT_EMU_LIB "$f"; then
				foreign="$foreign $f"
			fi
		done
	done
	for h in $emu_headers; do
		f=$incdir/$(basename "$h")
		if [ -e "$f" ] && ! grep -q "gdirect" "$f"; then
			foreign="$foreign $f"
		fi
	done
	if [ -n "$foreign" ] && [ "${CUDA_EMU_OVERWRITE:-0}" != 1 ]; then
		echo "install: NVIDIA's files are installed here:$foreign" >&2
		echo "install: not replacing them; CUDA_EMU_OVERWRITE=1 installs ours and keeps NVIDIA's as nvidia-saved.*," >&2
		echo "install: or install ours elsewhere (PREFIX=...) and point LD_LIBRARY_PATH at it" >&2
		exit 1
	fi
	for f in $foreign; do
		mv "$f" "$(dirname "$f")/nvidia-saved.$(basename "$f")"
		echo "install: NVIDIA's $(basename "$f") kept as $(dirname "$f")/nvidia-saved.$(basename "$f")"
	done
fi

# 1. user space, through meson (DESTDIR as meson's --destdir), stripped:
# debug information names the build tree, which an installed file must not.
if [ -n "$destdir" ]; then
	meson install -C "$userspace" --no-rebuild --quiet --strip --destdir "$destdir"
else
	meson install -C "$userspace" --no-rebuild --quiet --strip
fi

# 1b. the emulated GPU's libraries and headers (CUDA_EMU=1, checked above).
if [ "${CUDA_EMU:-0}" = 1 ]; then
	mkdir -p "$libdir" "$incdir"
	for l in $emu_libs; do
		file=${l%%:*} rest=${l#*:}
		install -m 755 "$userspace/$file" "$libdir/$(basename "$file")"
		ln -sf "$(basename "$file")" "$libdir/${rest%%:*}"
		ln -sf "${rest%%:*}" "$libdir/${rest#*:}"
	done
	for h in $emu_headers; do
		install -m 644 "$top/$h" "$incdir/$(basename "$h")"
	done
	echo "installed the emulated GPU's libcuda.so.1, libcudart.so.13, libnvidia-ml.so.1 in $libdir"
fi

# 1c. gdirect-emu, the emulated machine as a command, with the machine
# built in BUILD (packaging/emu-machine.sh); PREFIX/bin/gdirect-emu links
# to the command.
emu_dir=$(under_prefix lib)/gdirect-emu
"$top/packaging/emu-machine.sh" "$build" "$emu_dir"
mkdir -p "$(under_prefix bin)" "$(under_prefix share/man/man1)"
ln -sf ../lib/gdirect-emu/emu/cli/gdirect-emu "$(under_prefix bin)/gdirect-emu"
install -m 644 "$top/man/man1/gdirect-emu.1" "$(under_prefix share/man/man1)/gdirect-emu.1"

# 2. the DKMS source tree.
src="$destdir/usr/src/gdirect-$version"
"$top/packaging/dkms-tree.sh" "$top" "$src" "$version"

# 3. the udev rule for /dev/gdirect.
mkdir -p "$destdir$udevdir"
cp "$top/packaging/60-gdirect.rules" "$destdir$udevdir/60-gdirect.rules"
chmod 644 "$destdir$udevdir/60-gdirect.rules"

echo "installed gdirect $version: user space under $destdir$(prefix_of "$userspace"), modules' source in $src"

[ -z "$destdir" ] || exit 0
if [ "$(id -u)" = 0 ]; then
	getent group gdirect >/dev/null || groupadd --system gdirect
	command -v udevadm >/dev/null && udevadm control --reload-rules 2>/dev/null || true
	ldconfig 2>/dev/null || true
	if [ "${DKMS:-0}" = 1 ]; then
		dkms remove -m gdirect -v "$version" --all >/dev/null 2>&1 || true
		dkms add -m gdirect -v "$version"
		dkms install -m gdirect -v "$version"
	else
		echo "to build and install the modules for every kernel: dkms install -m gdirect -v $version"
	fi
else
	echo "not root: create the group yourself (groupadd --system gdirect), then dkms install -m gdirect -v $version"
fi
