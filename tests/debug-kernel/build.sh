#!/bin/sh
# SPDX-License-Identifier: MIT
# build.sh [OUTDIR] - the debug guest kernel (KASAN, lockdep, kmemleak, KFENCE)
#
# Builds Debian's linux-source-6.1 from allnoconfig plus debug.config into
# OUTDIR (default build/debug-kernel) and prints the paths the lane needs:
#
#   OUTDIR/bzImage          the kernel tests/harness/run.py boots (--kernel)
#   OUTDIR/obj              the build tree: KDIR for our out-of-tree modules
#   OUTDIR/modroot          its modules, installed there (INSTALL_MOD_PATH):
#                           lib/modules/RELEASE, for modinfo -b and the
#                           cluster's initramfs (build-cluster-initramfs.sh)
#   OUTDIR/config           the resulting .config, for reading
#   OUTDIR/stamp            hash of what the build depends on
#
# Cached: a second run with the same fragment, the same linux-source-6.1
# package and the same compiler does nothing.  A new fragment rebuilds in the
# same tree (make's own dependency tracking); a new source version starts
# from a fresh tree.  JOBS (default 2) is make's -j: the machine is shared.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/build/debug-kernel}
jobs=${JOBS:-2}
tarball=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
fragment=$top/tests/debug-kernel/debug.config

if [ ! -f "$tarball" ]; then
	echo "debug-kernel: no $tarball; run: scripts/deps.sh debug-kernel" >&2
	exit 1
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

# One build at a time per OUTDIR (the lane may be started twice).
exec 9>"$out/.lock"
flock 9

# What the kernel depends on.  The package version names the source (Debian
# patches included); the tarball's size and time catch a rebuilt package.
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo unpackaged)
srcid="$srcver $(stat -c '%s %Y' "$tarball")"
ccver=$(${CC:-gcc} --version | head -n1)
stamp=$( { echo "$srcid"; echo "$ccver"; cat "$fragment"; } | sha256sum | cut -d' ' -f1)

if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$stamp" ] &&
   [ -f "$out/bzImage" ] && [ -f "$out/obj/Module.symvers" ] &&
   [ -f "$out/modroot/lib/modules/$(cat "$out/obj/include/config/kernel.release")/modules.dep" ]; then
	echo "debug-kernel: cached ($stamp)"
	echo "debug-kernel: bzImage $out/bzImage"
	echo "debug-kernel: KDIR $out/obj"
	echo "debug-kernel: modules $out/modroot"
	exit 0
fi

start=$(date +%s)
# A different source version: start over (objects of another source would
# only confuse make).
if [ "$(cat "$out/src.id" 2>/dev/null)" != "$srcid" ]; then
	echo "debug-kernel: unpacking $tarball ($srcver)"
	rm -rf "$out/src" "$out/obj" "$out/stamp" "$out/bzImage"
	mkdir -p "$out/src"
	tar -xJf "$tarball" -C "$out/src" --strip-components=1
	echo "$srcid" > "$out/src.id"
fi
src=$out/src
mkdir -p "$out/obj"
rm -f "$out/stamp"

echo "debug-kernel: configuring (allnoconfig + debug.config)"
log=$out/build.log
# merge_config.sh -n: allnoconfig with the fragment forced on top, then a
# report of every requested value that did not survive (a dependency missing
# from the fragment, or a symbol renamed in this version).
(cd "$src" && ARCH=x86_64 scripts/kconfig/merge_config.sh -n -O "$out/obj" \
	"$fragment") >"$log" 2>&1 || { tail -30 "$log"; exit 1; }
if grep -q '^Value requested for ' "$log"; then
	echo "debug-kernel: debug.config asks for values the kernel did not take:" >&2
	grep -A3 '^Value requested for ' "$log" >&2
	exit 1
fi

echo "debug-kernel: building with make -j$jobs (log: $log)"
if ! make -C "$src" O="$out/obj" ARCH=x86_64 -j"$jobs" all modules_prepare \
	>>"$log" 2>&1; then
	grep -E 'error|Error' "$log" | tail -20 >&2
	exit 1
fi
# The modules, installed where nothing else looks (not /lib/modules): the
# cluster's initramfs takes them from there.
rm -rf "$out/modroot"
if ! make -C "$src" O="$out/obj" ARCH=x86_64 INSTALL_MOD_PATH="$out/modroot" \
	DEPMOD=/sbin/depmod modules_install >>"$log" 2>&1; then
	grep -E 'error|Error' "$log" | tail -20 >&2
	exit 1
fi
cp "$out/obj/arch/x86/boot/bzImage" "$out/bzImage"
cp "$out/obj/.config" "$out/config"
echo "$stamp" > "$out/stamp"
echo "debug-kernel: built in $(( $(date +%s) - start )) s ($stamp)"
echo "debug-kernel: bzImage $out/bzImage"
echo "debug-kernel: KDIR $out/obj"
echo "debug-kernel: modules $out/modroot"
