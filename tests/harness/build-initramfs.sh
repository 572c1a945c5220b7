#!/bin/sh
# SPDX-License-Identifier: MIT
# build-initramfs.sh BUILD FLAVOUR OUT
#
# Environment: GUEST_TESTS (names or globs of the tests to run, in order;
# default the tests of the lane named FLAVOUR in tests/TESTS, in its order),
# GUEST_TIMEOUT (seconds per test), KMOD_DIR (modules, default BUILD/kmod/FLAVOUR),
# GUEST_TREE and GUEST_EXTRA (folders copied onto the initramfs's root: see
# below).
#
# Packs the test guest's initramfs: busybox, our init, the kernel modules of
# FLAVOUR (BUILD/kmod/FLAVOUR), every program built in a guest/ folder, the
# guest shell tests under their names (tests/TESTS), the other scripts of a
# guest/ folder under their own, our shared libraries (libcuda.so.1 of the
# emulator among them, in /usr/lib/gdirect) and the host libraries they need.
#
# Extra files come as a folder laid out as the root, copied onto it with
# the host libraries its programs and libraries need (its own libraries
# found in its folders): GUEST_EXTRA=DIR on top of what BUILD gives (the
# peers lane's and the gdrcopy benchmarks' programs, tests/peers/;
# emu/cli/gdirect-emu's launcher), GUEST_TREE=DIR instead of anything of
# BUILD (installed files at their installed paths and its tests in
# DIR/tests, with the harness and busybox: tests/packaging/deb-lane.sh
# boots the Debian packages' files this way).
set -eu
build=$(cd "$1" && pwd); flavour=$2; out=$3
top=$(cd "$(dirname "$0")/../.." && pwd)
root=$(mktemp -d)
lines=$(mktemp)
trap 'rm -rf "$root" "$lines"' EXIT
"$top/tests/harness/manifest.sh" lines >"$lines"
tests=${GUEST_TESTS:-$("$top/tests/harness/manifest.sh" lane "$flavour" | tr '\n' ' ')}
# A glob in GUEST_TESTS matches the names of tests/TESTS' tests, in the
# manifest's order, never the helpers and benchmarks packed beside them in
# /tests; a plain name is kept as it is.
if [ -n "${GUEST_TESTS:-}" ]; then
	set -f
	want=""
	for w in $GUEST_TESTS; do
		case $w in
		*[*?[]*)
			m=$(awk '$1 ~ /^tests\/(guest|debug-kernel)\// && $4 != "helper" { print $3 }' "$lines" |
				while IFS= read -r t; do
					# shellcheck disable=SC2254
					case $t in $w) echo "$t" ;; esac
				done | tr '\n' ' ')
			[ -n "$m" ] || { echo "build-initramfs: GUEST_TESTS: '$w' matches no test of tests/TESTS" >&2; exit 1; }
			want="$want $m" ;;
		*) want="$want $w" ;;
		esac
	done
	set +f
	tests=$want
fi
if [ -z "$tests" ]; then
	echo "build-initramfs: tests/TESTS names no test for the lane '$flavour': set GUEST_TESTS" >&2
	exit 1
fi

mkdir -p "$root/bin" "$root/sbin" "$root/etc" "$root/proc" "$root/sys" \
	"$root/dev" "$root/tests" "$root/modules" "$root/usr/lib/gdirect"
cp /bin/busybox "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$top/tests/harness/init" "$root/init"
cp "$top/tests/harness/lib.sh" "$top/tests/include/tap.sh" \
	"$top/tests/harness/hostcheck" "$root/tests/"

# Host libraries are looked up for the ELF files in $elves, with
# LD_LIBRARY_PATH $libpath; add_tree adds a folder's.
libpath=$root/opt/ucx/lib:$root/usr/lib/gdirect
elves=""

# add_tree VAR: the contents of the folder named by the environment
# variable VAR copied onto the root; its ELF files join $elves, its libraries' folders
# $libpath.
add_tree() {
	eval "at_dir=\${$1}"
	[ -d "$at_dir" ] || { echo "build-initramfs: $1=$at_dir is not a folder" >&2; exit 1; }
	# Its contents, with their modes and owners; the root keeps its own.
	(cd "$at_dir" && find . -mindepth 1 -maxdepth 1 -exec cp -a {} "$root"/ \;)
	elves="$elves
$(cd "$at_dir" && find . -type f -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print |
	sed "s|^\.|$root|")"
	for at_lib in $(cd "$at_dir" && find . -name 'lib*.so*' -exec dirname {} \; | sort -u); do
		libpath=$libpath:$root${at_lib#.}
	done
}

if [ -n "${GUEST_TREE:-}" ]; then
	add_tree GUEST_TREE
else
	# KMOD_DIR overrides where the modules come from (a debug kernel's build).
	for ko in "${KMOD_DIR:-$build/kmod/$flavour}"/*/*.ko; do
		[ -e "$ko" ] && cp "$ko" "$root/modules/"
	done

	# The guest kernel's own modules for a disk filesystem (ext2 through
	# ext4, on a loop device), for tests that need a file system with a
	# real backing device (gdirect-fadvise): the release is the one
	# our modules were built for, and its modules come from this machine's
	# /lib/modules or the bookworm-backports tree.  Without them those
	# tests skip.
	mkdir -p "$root/modules/hostfs"
	ko1=$(ls "${KMOD_DIR:-$build/kmod/$flavour}"/*/*.ko 2>/dev/null | head -n1)
	rel=$( [ -n "$ko1" ] && modinfo -F vermagic "$ko1" 2>/dev/null | cut -d' ' -f1)
	for d in "/lib/modules/$rel" "${BPO_ROOT:-/var/cache/gdirect-bpo}/root/lib/modules/$rel"; do
		[ -n "$rel" ] && [ -d "$d/kernel" ] || continue
		for m in lib/crc16 fs/mbcache fs/jbd2/jbd2 crypto/crc32c_generic \
			fs/ext4/ext4 drivers/block/loop; do
			if [ -f "$d/kernel/$m.ko" ]; then
				cp "$d/kernel/$m.ko" "$root/modules/hostfs/"
			elif [ -f "$d/kernel/$m.ko.xz" ]; then
				xz -dc "$d/kernel/$m.ko.xz" >"$root/modules/hostfs/${m##*/}.ko"
			fi
		done
		break
	done

	# Programs built by meson in any guest/ folder (tests under their
	# names), and the scripts of guest/ folders in source: a test of
	# tests/TESTS under its name (one copy per variant), any other under
	# its own.
	find "$build" \( -path "$build/kmod" -o -path "$build/kmod-debug" -o -path "$build/debug-kernel" -o -path "$build/ucx" -o -path "$build/ucx-*" -o -path "$build/peers" -o -path "$build/rdma-core" \) -prune -o -path '*/guest/*' -type f \
		-perm -u+x ! -path '*.p/*' -print | while read -r f; do
		cp "$f" "$root/tests/"
	done
	find "$top" -path "$top/build*" -prune -o -path '*/guest/*.sh' -type f \
		-print | while read -r f; do
		names=$(awk -v p="${f#"$top"/}" '$1 == p && $4 != "helper" { print $3 }' "$lines")
		for n in ${names:-$(basename "$f")}; do
			cp "$f" "$root/tests/$n"
		done
	done
	# Our shared libraries, found by LD_LIBRARY_PATH in the guest (not rdma-core
	# of emu/rdma-core: build-cluster-initramfs.sh ships it, at its system paths).
	find "$build" \( -path "$build/kmod" -o -path "$build/kmod-debug" -o -path "$build/debug-kernel" -o -path "$build/ucx" -o -path "$build/ucx-*" -o -path "$build/peers" -o -path "$build/rdma-core" \) -prune -o \( -name 'lib*.so' -o \
		-name 'lib*.so.*' \) -type f -print | while read -r f; do
		cp "$f" "$root/usr/lib/gdirect/"
	done
	# Keep the SONAME links meson made (libcuda.so.1 -> libcuda.so.1.0.0 ...).
	find "$build" \( -path "$build/kmod" -o -path "$build/kmod-debug" -o -path "$build/debug-kernel" -o -path "$build/ucx" -o -path "$build/ucx-*" -o -path "$build/peers" -o -path "$build/rdma-core" \) -prune -o -name 'lib*.so*' -type l \
		-print | while read -r f; do
		cp -P "$f" "$root/usr/lib/gdirect/"
	done

	# UCX built by `make ucx` (scripts/ucx-build.sh) as /opt/ucx: the libraries
	# (UCX loads its modules from lib/ucx, next to libucs), ucx_info and
	# ucx_perftest, debug info stripped; our programs that use it in /tests.
	# UCX_PREFIX names another build of ucx-build.sh (the cluster lane's
	# UCX 1.22 in BUILD/ucx-1.22.0/prefix): one UCX in a guest, never two
	# mixed in /opt/ucx.
	ucx=${UCX_PREFIX:-$build/ucx/prefix}
	if [ -f "$ucx/.gdirect-ucx-stamp" ]; then
		mkdir -p "$root/opt/ucx/bin" "$root/opt/ucx/lib/ucx"
		cp "$ucx/bin/ucx_info" "$ucx/bin/ucx_perftest" "$root/opt/ucx/bin/"
		cp -P "$ucx"/lib/lib*.so* "$root/opt/ucx/lib/"
		cp -P "$ucx"/lib/ucx/lib*.so* "$root/opt/ucx/lib/ucx/"
		find "$root/opt/ucx" -type f -exec strip --strip-debug {} +
		for t in "$(dirname "$ucx")"/guest/*; do
			[ -f "$t" ] && cp "$t" "$root/tests/"
		done
	else
		echo "build-initramfs: no UCX in $ucx (make ucx): the UCX guest tests will SKIP" >&2
	fi
fi

[ -n "${GUEST_EXTRA:-}" ] && add_tree GUEST_EXTRA

# Host libraries of every ELF we ship, at the same paths (ours, found in
# the tree being packed, are not copied again).
elves="$elves
$(ls -d "$root"/tests/* "$root"/usr/lib/gdirect/* "$root"/opt/ucx/bin/* \
	"$root"/opt/ucx/lib/* "$root"/opt/ucx/lib/ucx/* 2>/dev/null || true)"
for f in $elves; do
	[ -f "$f" ] || continue
	LD_LIBRARY_PATH="$libpath" ldd "$f" 2>/dev/null |
		awk '/=> \//{print $3} /^\t\//{print $1}' || true
done | grep -v "^$root/" | sort -u | while read -r lib; do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
mkdir -p "$root/lib64"
cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"

# The tests to run, in order (the guest's init reads them).
echo "$tests" > "$root/etc/gdirect-tests"
# The flavour booted, for tests that check the modules are that flavour's.
echo "$flavour" > "$root/etc/gdirect-flavour"
[ -n "${GUEST_TIMEOUT:-}" ] && echo "$GUEST_TIMEOUT" > "$root/etc/gdirect-timeout"
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out"
