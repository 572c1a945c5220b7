#!/bin/sh
# SPDX-License-Identifier: MIT
# build-initramfs.sh BUILD FLAVOUR OUT
#
# Environment: GUEST_TESTS (names or globs of the tests to run, in order;
# default the tests of the lane named FLAVOUR in tests/TESTS, in its order),
# GUEST_TIMEOUT (seconds per test), KMOD_DIR (modules, default BUILD/kmod/FLAVOUR),
# GUEST_TREE (a directory: see below), GUEST_EXTRA (a folder copied onto the
# initramfs's root, for the peers lane's programs: tests/peers/; the host
# libraries of its ELFs come too).
#
# Packs the test guest's initramfs: busybox, our init, the kernel modules of
# FLAVOUR (BUILD/kmod/FLAVOUR), every program built in a guest/ folder, the
# guest shell tests under their names (tests/TESTS), the other scripts of a
# guest/ folder under their own, our shared libraries (libcuda.so.1 of the
# emulator among them, in /usr/lib/gdirect) and the host libraries they need.
#
# With GUEST_TREE=DIR nothing of BUILD is packed: DIR's tree is copied to
# the root instead (installed files at their installed paths, and its tests
# in DIR/tests), with the harness, busybox and the host libraries its
# programs need (tests/packaging/deb-lane.sh boots the Debian packages'
# files this way).
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

if [ -n "${GUEST_TREE:-}" ]; then
	cp -a "$GUEST_TREE"/. "$root"/
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
	find "$build" \( -path "$build/kmod" -o -path "$build/kmod-debug" -o -path "$build/debug-kernel" -o -path "$build/ucx" -o -path "$build/peers" -o -path "$build/rdma-core" \) -prune -o -path '*/guest/*' -type f \
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
	find "$build" \( -path "$build/kmod" -o -path "$build/kmod-debug" -o -path "$build/debug-kernel" -o -path "$build/ucx" -o -path "$build/peers" -o -path "$build/rdma-core" \) -prune -o \( -name 'lib*.so' -o \
		-name 'lib*.so.*' \) -type f -print | while read -r f; do
		cp "$f" "$root/usr/lib/gdirect/"
	done
	# Keep the SONAME links meson made (libcuda.so.1 -> libcuda.so.1.0.0 ...).
	find "$build" \( -path "$build/kmod" -o -path "$build/kmod-debug" -o -path "$build/debug-kernel" -o -path "$build/ucx" -o -path "$build/peers" -o -path "$build/rdma-core" \) -prune -o -name 'lib*.so*' -type l \
		-print | while read -r f; do
		cp -P "$f" "$root/usr/lib/gdirect/"
	done

	# UCX built by `make ucx` (scripts/ucx-build.sh) as /opt/ucx: the libraries
	# (UCX loads its modules from lib/ucx, next to libucs), ucx_info and
	# ucx_perftest, debug info stripped; our programs that use it in /tests.
	ucx=$build/ucx/prefix
	if [ -f "$ucx/.gdirect-ucx-stamp" ]; then
		mkdir -p "$root/opt/ucx/bin" "$root/opt/ucx/lib/ucx"
		cp "$ucx/bin/ucx_info" "$ucx/bin/ucx_perftest" "$root/opt/ucx/bin/"
		cp -P "$ucx"/lib/lib*.so* "$root/opt/ucx/lib/"
		cp -P "$ucx"/lib/ucx/lib*.so* "$root/opt/ucx/lib/ucx/"
		find "$root/opt/ucx" -type f -exec strip --strip-debug {} +
		for t in "$build"/ucx/guest/*; do
			[ -f "$t" ] && cp "$t" "$root/tests/"
		done
	else
		echo "build-initramfs: no UCX in $build/ucx (make ucx): the UCX guest tests will SKIP" >&2
	fi
fi

if [ -n "${GUEST_EXTRA:-}" ]; then
	[ -d "$GUEST_EXTRA" ] || { echo "build-initramfs: GUEST_EXTRA=$GUEST_EXTRA is not a folder" >&2; exit 1; }
	cp -RP "$GUEST_EXTRA"/. "$root"/
fi

# Host libraries of every ELF we ship, at the same paths (ours, found in
# the tree being packed, are not copied again).
# GUEST_TREE's programs and libraries are every ELF file in it, and its
# libraries are found in their own directories.
libpath=$root/opt/ucx/lib:$root/usr/lib/gdirect
elves=$(ls -d "$root"/tests/* "$root"/usr/lib/gdirect/* "$root"/opt/ucx/bin/* \
	"$root"/opt/ucx/lib/* "$root"/opt/ucx/lib/ucx/* 2>/dev/null || true)
# GUEST_EXTRA's files are the peers lane's programs and libraries.
if [ -n "${GUEST_EXTRA:-}" ]; then
	elves="$elves
$(cd "$GUEST_EXTRA" && find . -type f | sed "s|^\.|$root|")"
fi
if [ -n "${GUEST_TREE:-}" ]; then
	elves=$(find "$root" -type f -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print)
	libpath=$(find "$root" -name 'lib*.so*' -exec dirname {} \; | sort -u | tr '\n' :)
fi
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
