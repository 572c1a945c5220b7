#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh BUILD - the guest suite under the debug kernel, and proof it bites.
#
#   1. build (or reuse) the debug kernel: tests/debug-kernel/build.sh KOUT,
#      where KOUT is $GDIRECT_DEBUG_KERNEL_DIR if set, else
#      /var/cache/gdirect-debug-kernel when /var/cache is writable (so that
#      every clone on the machine, CI's fresh one included, reuses one
#      build), else BUILD/debug-kernel
#   2. build our modules against it into BUILD/kmod-debug/v2, the Tegra
#      flavour's into BUILD/kmod-debug/tegra, and the planted module
#      (tests/debug-kernel/planted) into BUILD/kmod-debug/planted; and the
#      modules once more against the same kernel configured without the
#      dma-buf core, where they must reference no dma-buf symbol
#   3. boot "debug-v2": the tests of the lane debug-v2 in tests/TESTS, the
#      whole guest suite then debug-kernel-kmemleak.sh and
#      debug-kernel-lockdep.sh (with $GUEST_TESTS, those tests then the two
#      checks); any lockdep, KASAN, KFENCE or kmemleak report in the kernel
#      log fails it (tests/harness/run.py's scan), and so does lockdep
#      having switched itself off; then "debug-tegra" (lane debug-tegra):
#      the Tegra flavour's tests and the same two checks; then
#      "debug-cluster" (lane debug-cluster): two nodes of
#      tests/harness/cluster.py on the debug kernel, with the kernel's own
#      network and InfiniBand modules (its modules_install staging,
#      KOUT/modroot) and the patched rdma_rxe (emu/rxe) built against it
#      into BUILD/kmod-debug/rxe: the NIC's GPU memory-region tests, then
#      the same two checks on each node; a report in either node's kernel
#      log fails it (cluster.py's scan).  It skips, saying why, where the
#      cluster's user space is missing (build-cluster-initramfs.sh's 77)
#   4. boot "debug-planted" (lane debug-planted): debug-kernel-planted.sh
#      sets off one bug per checker, then debug-kernel-kmemleak.sh; here
#      each checker MUST report, or the lane fails
#
# BUILD holds user space built by meson (the test programs).  MODULES
# (default: the top-level Makefile's) names the modules to build, in
# dependency order.  GUEST_TIMEOUT_S bounds each boot (default 3600 s);
# GUEST_TIMEOUT each test (default 1800 s: KASAN and lockdep under TCG are
# several times slower than the stock kernel).  Logs go to results/.
# The last line is "N passed, N failed, N skipped".
set -u
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
# lane LANE: the names of LANE's tests in tests/TESTS, in its order.
lane() { "$top/tests/harness/manifest.sh" lane "$1" | tr '\n' ' '; }
results=${RESULTS:-$top/results}
mkdir -p "$results"
if [ -n "${GDIRECT_DEBUG_KERNEL_DIR:-}" ]; then
	kout=$GDIRECT_DEBUG_KERNEL_DIR
elif [ -w /var/cache ]; then
	kout=/var/cache/gdirect-debug-kernel
else
	kout=$build/debug-kernel
fi
total_p=0 total_f=0 total_s=0
add() { total_p=$((total_p + $1)); total_f=$((total_f + $2)); total_s=$((total_s + $3)); }
finish() {
	echo "results and logs: $results/"
	echo "$total_p passed, $total_f failed, $total_s skipped"
	[ "$total_f" -eq 0 ]
	exit
}

if [ -z "${MODULES:-}" ]; then
	# shellcheck disable=SC2016 # $(MODULES) is make's, not the shell's
	MODULES=$(make -s --no-print-directory -C "$top" \
		--eval 'dk-print-modules: ; @echo $(MODULES)' dk-print-modules)
fi
if [ -z "${TEGRA_MODULES:-}" ]; then
	# shellcheck disable=SC2016
	TEGRA_MODULES=$(make -s --no-print-directory -C "$top" \
		--eval 'dk-print-modules: ; @echo $(TEGRA_MODULES)' dk-print-modules)
fi

echo "== debug kernel"
t0=$(date +%s)
if ! "$top/tests/debug-kernel/build.sh" "$kout"; then
	echo "debug-kernel: kernel build failed (see $kout/build.log)"
	add 0 1 0; finish
fi
echo "debug-kernel: kernel ready after $(( $(date +%s) - t0 )) s"
kdir=$kout/obj
kernel=$kout/bzImage

echo "== modules against the debug kernel: $MODULES"
# shellcheck disable=SC2086
if ! "$top/scripts/build-modules.sh" "$kdir" "$build/kmod-debug/v2" v2 $MODULES \
	>"$results/debug-modules.log" 2>&1 ||
   ! "$top/scripts/build-modules.sh" "$kdir" "$build/kmod-debug/tegra" tegra \
	$TEGRA_MODULES >>"$results/debug-modules.log" 2>&1; then
	echo "debug-kernel: module build failed (see results/debug-modules.log)"
	tail -20 "$results/debug-modules.log"
	add 0 1 0; finish
fi
# The same kernel without the dma-buf core (nothing selects
# CONFIG_DMA_SHARED_BUFFER once CONFIG_SYNC_FILE, DRM and InfiniBand, whose
# user memory imports dma-bufs, are off): the modules must
# build there and reference no dma-buf symbol, since a module that did
# could not be loaded.  Only headers are prepared (modules_prepare), so
# modpost knows no kernel symbol and only warns; the check is on the
# modules' undefined symbols.
echo "== modules against the debug kernel without the dma-buf core"
nodb=$kout/no-dmabuf
mkdir -p "$nodb"
sed -e 's/^CONFIG_SYNC_FILE=y$/# CONFIG_SYNC_FILE is not set/' \
	-e 's/^CONFIG_DMA_SHARED_BUFFER=y$/# CONFIG_DMA_SHARED_BUFFER is not set/' \
	-e 's/^CONFIG_DRM=.*/# CONFIG_DRM is not set/' \
	-e 's/^CONFIG_INFINIBAND=.*/# CONFIG_INFINIBAND is not set/' \
	"$kdir/.config" >"$nodb/config.want"
if ! cmp -s "$nodb/config.want" "$nodb/config.used" 2>/dev/null; then
	cp "$nodb/config.want" "$nodb/.config"
	rm -f "$nodb/config.used"
	make -s -C "$kout/src" O="$nodb" olddefconfig modules_prepare \
		>"$results/debug-nodmabuf.log" 2>&1 && cp "$nodb/config.want" "$nodb/config.used"
fi
# shellcheck disable=SC2086
if [ -f "$nodb/config.used" ] && ! grep -q '^CONFIG_DMA_SHARED_BUFFER=y' "$nodb/.config" &&
   KBUILD_MODPOST_WARN=1 "$top/scripts/build-modules.sh" "$nodb" "$build/kmod-debug/no-dmabuf" v2 \
	$MODULES >>"$results/debug-nodmabuf.log" 2>&1; then
	refs=$(for ko in "$build"/kmod-debug/no-dmabuf/*/*.ko; do
		nm -u "$ko" | sed -n "s|.* \(dma_buf_[a-z_]*\)$|$(basename "$ko"): \1|p"; done)
	if [ -z "$refs" ]; then
		echo "debug-kernel: the modules build without the dma-buf core and use none of it"
		add 1 0 0
	else
		echo "debug-kernel: without the dma-buf core the modules still reference it:"
		echo "$refs"
		add 0 1 0
	fi
else
	echo "debug-kernel: no module build without the dma-buf core (see results/debug-nodmabuf.log)"
	tail -20 "$results/debug-nodmabuf.log"
	add 0 1 0
fi

planted=$build/kmod-debug/planted/dk_planted
mkdir -p "$planted"
cp -up "$top/tests/debug-kernel/planted/Kbuild" "$top/tests/debug-kernel/planted/dk_planted.c" "$planted/"
if ! make -s -C "$kdir" M="$planted" modules >>"$results/debug-modules.log" 2>&1; then
	echo "debug-kernel: planted module build failed (see results/debug-modules.log)"
	add 0 1 0; finish
fi

# boot NAME TESTS KMOD_DIR: one guest run; leaves its summary in
# results/NAME.summary and returns run.py's status.
boot() {
	initrd=$build/guest-$1.cpio.gz
	if ! GUEST_TESTS="$2" GUEST_TIMEOUT="${GUEST_TIMEOUT:-1800}" KMOD_DIR="$3" \
		"$top/tests/harness/build-initramfs.sh" "$build" v2 "$initrd"; then
		echo "guest[$1]: could not build the initramfs" > "$results/$1.summary"
		return 1
	fi
	# kasan_multi_shot: every KASAN report, not only the first.
	python3 "$top/tests/harness/run.py" --initrd "$initrd" --kernel "$kernel" \
		--name "$1" --results "$results" --timeout "${GUEST_TIMEOUT_S:-3600}" \
		--append "kasan_multi_shot" 2>/dev/null | tee "$results/$1.summary"
}

echo "== guest suite under the debug kernel"
t0=$(date +%s)
if [ -n "${GUEST_TESTS:-}" ]; then
	boot debug-v2 "$GUEST_TESTS debug-kernel-kmemleak.sh debug-kernel-lockdep.sh" "$build/kmod-debug/v2"
else
	boot debug-v2 "$(lane debug-v2)" "$build/kmod-debug/v2"
fi
echo "debug-kernel: suite took $(( $(date +%s) - t0 )) s"
# count NAME: add the last line of results/NAME.summary to the totals.
count() {
	last=$(tail -n1 "$results/$1.summary")
	# shellcheck disable=SC2046 # the three numbers, split on purpose
	set -- $(echo "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	if [ $# -eq 3 ]; then add "$1" "$2" "$3"; else add 0 1 0; fi
}
count debug-v2

if [ -z "${GUEST_TESTS:-}" ]; then
	echo "== the Tegra flavour under the debug kernel"
	t0=$(date +%s)
	boot debug-tegra "$(lane debug-tegra)" "$build/kmod-debug/tegra"
	echo "debug-kernel: Tegra boot took $(( $(date +%s) - t0 )) s"
	count debug-tegra

	echo "== the cluster's NIC under the debug kernel (two nodes)"
	t0=$(date +%s)
	initrd=$build/guest-debug-cluster.cpio.gz
	# The GPU-aware UCX of make ucx where it built, as the cluster lane
	# (tests/harness/run-tests.sh); the tests here do not use UCX.
	ucx=""
	[ -x "$build/ucx/prefix/bin/ucx_perftest" ] && ucx=$(cd "$build/ucx/prefix" && pwd)
	why=$(GUEST_TESTS="$(lane debug-cluster)" GUEST_TIMEOUT="${GUEST_TIMEOUT:-1800}" \
		KVER="$(cat "$kdir/include/config/kernel.release")" MODULE_ROOT="$kout/modroot" \
		KDIR="$kdir" RXE_BUILD="$build/kmod-debug/rxe" KMOD_DIR="$build/kmod-debug/v2" \
		UCX_PREFIX="$ucx" "$top/tests/harness/build-cluster-initramfs.sh" "$build" "$initrd" \
		2>&1 >/dev/null)
	case $? in
	0)
		# acpi=noirq: PCI interrupts routed by the BIOS's tables, not
		# ACPI's _PRT, which this kernel's AML interpreter runs past
		# ACPICA's 30-second loop limit (AE_AML_LOOP_TIMEOUT), leaving
		# the e1000 with no interrupt.
		python3 "$top/tests/harness/cluster.py" --initrd "$initrd" --kernel "$kernel" \
			--name debug-cluster --results "$results" \
			--timeout "${DEBUG_CLUSTER_TIMEOUT_S:-900}" --append "kasan_multi_shot acpi=noirq" \
			2>/dev/null | tee "$results/debug-cluster.summary"
		count debug-cluster ;;
	77)
		echo "guest[debug-cluster]: SKIPPED, the cluster cannot run here: $why" |
			tee "$results/debug-cluster.summary"
		add 0 0 1 ;;
	*)
		echo "guest[debug-cluster]: could not build the initramfs: $why" |
			tee "$results/debug-cluster.summary"
		add 0 1 0 ;;
	esac
	echo "debug-kernel: cluster boot took $(( $(date +%s) - t0 )) s"
fi

echo "== planted bugs: every checker must report"
t0=$(date +%s)
boot debug-planted "$(lane debug-planted)" "$build/kmod-debug/planted" >/dev/null
echo "debug-kernel: planted boot took $(( $(date +%s) - t0 )) s"
con=$results/debug-planted.console.log
tap=$results/debug-planted.tap
# expect WHAT FILE PATTERN...: every pattern must occur in FILE.
expect() {
	what=$1 file=$2; shift 2
	for pat in "$@"; do
		if ! grep -q -e "$pat" "$file" 2>/dev/null; then
			echo "planted: $what: NOT REPORTED (no '$pat' in $(basename "$file"))"
			add 0 1 0; return
		fi
	done
	echo "planted: $what: reported"
	add 1 0 0
}
expect "lockdep, AB-BA inversion" "$con" \
	"WARNING: possible circular locking dependency detected" \
	"dk_planted_a" "dk_planted_b"
expect "KASAN, out-of-bounds read" "$con" "BUG: KASAN: slab-out-of-bounds in dk_oob"
expect "KFENCE, use-after-free" "$con" "BUG: KFENCE: use-after-free read in dk_kfence_uaf"
expect "DEBUG_ATOMIC_SLEEP, might-sleep under a spinlock" "$con" \
	"BUG: sleeping function called from invalid context" "dk_sleep_atomic"
# kmemleak's report is read from debugfs by debug-kernel-kmemleak.sh, into
# the TAP log: its backtrace names the function that dropped the pointer.
expect "kmemleak, dropped allocation" "$tap" "^# unreferenced object" "dk_leak"
finish
