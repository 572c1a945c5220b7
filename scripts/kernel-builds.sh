#!/bin/sh
# SPDX-License-Identifier: MIT
# kernel-builds.sh BUILD [SUITE...] - every module in every flavour,
# built against other Debian releases' kernel headers, warnings failing.
#
# SUITE is bullseye (5.10, the oldest kernel supported: its headers from
# scripts/deps.sh kernel-headers), bpo (bookworm-backports' 6.12, from
# scripts/deps.sh kernel-bpo) or sid (7.2, the newest: a sid build root
# from scripts/deps.sh kernel-headers sid, as its headers need gcc 16 and
# sid's glibc; the modules are built in it by chroot, in a mount namespace
# of its own); all three by default.  Each flavour is one TAP
# line: the modules of that flavour (the Makefile's lists) built by
# scripts/build-modules.sh into BUILD/kmod/<release>-<flavour>, which runs
# the interface probes (scripts/kconftest.sh) and, for prop, the check
# that nothing imports a GPL-only symbol.  A line is not ok when the build
# fails or the compiler or Kbuild prints a warning (BTF skipped for want
# of vmlinux is no warning).  Where the compiler the headers were built
# with is not installed (bullseye's gcc-10 on Debian 12) the system's gcc
# builds them, said in a diagnostic.  A kernel whose headers cannot be
# fetched is a failure, or a skip with GDIRECT_TEST_LANES=available.
#
# KERNEL_FLAVOURS names the flavours (default all five); make test builds
# v2, tegra and prop, the three whose kernel code differs (v1 and coherent
# change only the emulator's page-table constants), to spare CI four builds.
# KERNEL_FLAVOURS_SID, where set, replaces it for 7.2, whose builds run in
# the build root and cost the most: make test builds v2 and prop there (the
# product's modules with the emulator's tests, and the GPL-only check).
# Ends with "kernels: N passed, N failed, N skipped"; the logs are
# BUILD/kmod/<release>-<flavour>.log.  Cost on the 2-core build machine
# shared with other jobs, headers already fetched, nothing built yet:
# 5.10 about 5 min, 6.12 about 7 min (its v2 reuses the 6.12 lane's
# build/kmod/bpo-v2, so in make test it is about a minute less), 7.2
# (root made) about 5.5 min for make test's three flavours, 11 min for
# all five (2026-12-07, beside another build).  The sid root, made once
# and kept until sid's headers move to another release, adds the cold
# run's about 104 MiB of packages from deb.debian.org, 502 MiB of disk
# and 3.5 to 5 min.
set -u
build=$1; shift
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$build/kmod"
build=$(cd "$build" && pwd)
suites=${*:-bullseye bpo sid}
pass=0 fail=0 skip=0 n=0
echo "TAP version 13"

flavour_modules() {
	case $1 in
	v2|v1) echo nvp2p_emu nvp2p_selftest gdirect gdirect_edu gdirect_kapitest ;;
	tegra|prop) echo nvp2p_emu gdirect gdirect_edu ;;
	coherent) echo nvp2p_emu nvp2p_selftest gdirect gdirect_edu ;;
	esac
}

# in_root ROOT CMD...: CMD run in the build root ROOT (empty: here), by
# chroot in a mount namespace of its own, so that the mounts it needs (the
# tree and BUILD at their own paths, /dev, /proc) go with it and the cached
# root keeps nothing but the empty directories they are mounted on.
in_root() {
	r=$1; shift
	if [ -z "$r" ]; then "$@"; return; fi
	mkdir -p "$r$top" "$r$build" "$r/dev" "$r/proc" || return
	# The inner script's variables are its own, expanded there.
	# shellcheck disable=SC2016
	unshare -m --propagation private sh -c '
		r=$1 top=$2 build=$3; shift 3
		mount --rbind /dev "$r/dev" && mount -t proc proc "$r/proc" &&
			mount --bind "$top" "$r$top" && mount --bind "$build" "$r$build" &&
			exec chroot "$r" "$@"' sh "$r" "$top" "$build" "$@"
}

for suite in $suites; do
	t0=$(date +%s)
	# broot: the build root the modules are built in, empty where the
	# headers build here.
	broot=""
	case $suite in
	bullseye) rel=$("$top/scripts/deps.sh" kernel-headers bullseye 2>"$build/kmod/$suite-fetch.log")
		root=${GDIRECT_KERNELS:-/var/cache/gdirect-kernels}/bullseye/root ;;
	bpo) rel=$("$top/scripts/deps.sh" kernel-bpo 2>"$build/kmod/$suite-fetch.log")
		root=${BPO_ROOT:-/var/cache/gdirect-bpo}/root ;;
	sid) rel=""
		if [ "$(id -u)" = 0 ]; then
			rel=$("$top/scripts/deps.sh" kernel-headers sid 2>"$build/kmod/$suite-fetch.log")
		else
			echo "kernel-builds.sh: the sid build root needs root (debootstrap, chroot)" >"$build/kmod/$suite-fetch.log"
		fi
		root=${GDIRECT_KERNELS:-/var/cache/gdirect-kernels}/sid/root
		broot=$root ;;
	*) echo "kernel-builds.sh: suite '$suite': expected bullseye, bpo or sid" >&2; exit 2 ;;
	esac
	if [ -z "$rel" ]; then
		n=$((n + 1))
		why="the $suite kernel headers could not be fetched: $(tail -n1 "$build/kmod/$suite-fetch.log")"
		if [ "${GDIRECT_TEST_LANES:-all}" = available ]; then
			skip=$((skip + 1)); echo "ok $n - $suite # SKIP $why"
		else
			fail=$((fail + 1)); echo "not ok $n - $suite: $why"
		fi
		continue
	fi
	kdir=$root/usr/src/linux-headers-$rel
	cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="*\([^ "]*\).*/\1/p' "$kdir/include/config/auto.conf")
	kcc=""
	if [ -n "$broot" ]; then
		# The root has the compiler the headers name; in it, the
		# tree is at its own path.
		kdir=/usr/src/linux-headers-$rel
		echo "# $rel: built in the $suite build root $broot with its $cc"
	elif [ -n "$cc" ] && ! command -v "$cc" >/dev/null 2>&1; then
		kcc=gcc
		echo "# $rel: built with $(gcc -dumpfullversion 2>/dev/null || echo gcc), for want of its $cc"
	fi
	fls=${KERNEL_FLAVOURS:-v2 v1 tegra prop coherent}
	[ "$suite" = sid ] && fls=${KERNEL_FLAVOURS_SID:-$fls}
	for fl in $fls; do
		n=$((n + 1))
		if [ -z "$(flavour_modules "$fl")" ]; then
			echo "Bail out! KERNEL_FLAVOURS: '$fl': expected v2, v1, tegra, prop or coherent"
			exit 2
		fi
		ft0=$(date +%s)
		out=$build/kmod/$rel-$fl
		# 6.12's v2 is the tree the 6.12 guest lane built: only what
		# changed is compiled again.
		[ "$suite.$fl" = bpo.v2 ] && out=$build/kmod/bpo-v2
		log=$out.log
		# shellcheck disable=SC2046
		if in_root "$broot" env GDIRECT_KCC="$kcc" "$top/scripts/build-modules.sh" "$kdir" "$out" "$fl" \
			$(flavour_modules "$fl") >"$log" 2>&1; then
			warn=$(grep -v -e '^Skipping BTF generation' "$log" | grep -i -c 'warning' || true)
			if [ "$warn" -eq 0 ]; then
				pass=$((pass + 1))
				echo "ok $n - $rel $fl: built, no warnings ($(( $(date +%s) - ft0 )) s)"
			else
				fail=$((fail + 1))
				echo "not ok $n - $rel $fl: $warn warnings (${log#"$top"/})"
				grep -v -e '^Skipping BTF generation' "$log" | grep -i 'warning' | head -n 5 | sed 's/^/#   /'
			fi
		else
			fail=$((fail + 1))
			echo "not ok $n - $rel $fl: the build failed (${log#"$top"/})"
			grep -v -e '^Skipping BTF generation' "$log" | grep -E 'error|warning' | head -n 5 | sed 's/^/#   /'
		fi
	done
	echo "# $rel: $(( $(date +%s) - t0 )) s"
done
echo "1..$n"
echo "kernels: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
