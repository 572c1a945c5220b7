#!/bin/sh
# SPDX-License-Identifier: MIT
# run-tests.sh BUILD - every test layer, one closing line for them all.
#
#   1. unit tests (meson suite 'unit') built with ASan + UBSan in BUILD-san,
#      and the device library's toolchain checks (suite 'nvcc') with them
#   2. concurrent unit tests (suite 'tsan') built with TSan in BUILD-tsan,
#      then checkpatch and sparse over the kernel code against the accepted
#      warnings of tests/lint/kernel-baseline.txt (scripts/lint-kernel.sh)
#   3. UCX from Debian's source package, GPU-aware over our libraries
#      (scripts/ucx-build.sh; a no-op when built already), for the guest
#      tests that use it (tests/guest/ucx/), which skip, saying so, without it
#   4. the guest suite on the emulated machine, once per page-table flavour,
#      each boot running the tests of its lane in tests/TESTS, in the
#      manifest's order: v2 (0x00020000) every guest test, v1 (0x00010002)
#      the emulator, driver and tools-info tests; then the Tegra interface
#      (guide 13.4) its own; the emulator built as NVIDIA's proprietary
#      driver gdirect's suites on it (lane prop); the emulator of a coherent
#      platform (CPU-cacheable page tables) the suites of gdirect's
#      cacheable paths (lane coherent); and the kernel suites again on
#      bookworm-backports' 6.12 kernel (lane bpo); then the tests of the
#      code that differs per kernel on bullseye's 5.10 and sid's 7.2 (lane
#      boot, tests/harness/boot-lane.sh).  GUEST_V1_TESTS,
#      GUEST_PROP_TESTS, GUEST_COHERENT_TESTS, GUEST_BPO_TESTS and
#      GUEST_BOOT_TESTS replace a boot's list (test names, or globs of
#      them)
#   4a. the peers lane: gdrcopy 2.6 built unchanged from its release
#      tarball and run in every pairing with gdirect, in one guest
#      (tests/peers/gdrcopy-lane.sh, docs/gdrcopy.md); where the tarball is
#      neither in the peers folder nor downloadable, a failure naming it
#      (with GDIRECT_TEST_LANES=available, a SKIP)
#   5. the two-node cluster (tests/harness/cluster.py, docs/cluster.md): two
#      guests linked by e1000 + Soft-RoCE run the lane cluster's tests, UCX
#      between them over rc_verbs and tcp; a loud SKIP when the RDMA user
#      space, the rxe module or UCX is missing; then the cluster's NIC
#      tests (lane cluster-bpo) on two nodes of the 6.12 kernel of lane bpo
#   5a. gdirect-emu, the machine as a command (tests/emu-cli/emu-cli-lane.sh,
#      docs/emulated-ci.md): a COMMAND's status, a hang stopped, GPU memory
#      between two nodes through a program written from its manual page
#
#   5b. the modules of every flavour built against bullseye's 5.10,
#      bookworm-backports' 6.12 and sid's 7.2 headers (7.2's in a sid build
#      root), warning-free (scripts/kernel-builds.sh)
#
#   6. with DEBUG_KERNEL=1, the guest suite again under a KASAN/lockdep/
#      kmemleak/KFENCE/DMA-API-debug kernel built from linux-source-6.1,
#      and the cluster's NIC tests on two nodes booted with it
#
#   7. the GPU suites (meson suite 'gpu', what make test-gpu runs) where
#      this machine has an NVIDIA GPU and meson built them
#
# GDIRECT_TEST_LANES=available (scripts/test.sh sets it on a GPU server)
# skips each lane whose needs are missing here, one line each with the
# reason; with `all` (CI's) every lane runs and a missing need fails it.
# Skips are counted and shown, never folded into passes.  Whatever failed is
# repeated just above the last line, so a log cut to its tail still names it.
# The last line is "N passed, N failed, N skipped".
set -u
build=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
# lane LANE: the names of LANE's tests in tests/TESTS, in its order.
lane() { "$top/tests/harness/manifest.sh" lane "$1" | tr '\n' ' '; }
results="$top/results"
mkdir -p "$results"
# Release names have no spaces or newlines, so ls lists them whole.
# shellcheck disable=SC2010
kver=$(ls -1 /lib/modules 2>/dev/null | grep -- '-amd64$' | sort -V | tail -n1)
kernel=/boot/vmlinuz-$kver
failures="$results/failures.txt"
: >"$failures"
# The totals, the recap's notes and the guest's boots (run_guest).
# shellcheck source-path=SCRIPTDIR source=lanes.sh
. "$top/tests/harness/lanes.sh"

lanes=${GDIRECT_TEST_LANES:-all}
case $lanes in
all|available) ;;
*) echo "run-tests.sh: GDIRECT_TEST_LANES='$lanes': expected 'all' or 'available'" >&2; exit 2 ;;
esac
skipped="$results/skipped.txt"
: >"$skipped"
# lane_skip LABEL WHY: a lane that cannot run here, counted as skipped.
lane_skip() {
	echo "$1: SKIPPED: $2"
	echo "$1: $2" >>"$skipped"
	add 0 0 1
}
# Why the emulated machine cannot boot here (nothing when it can): only
# asked with GDIRECT_TEST_LANES=available, since deps.sh installed all of
# it otherwise.
guest_missing() {
	w=""
	command -v qemu-system-x86_64 >/dev/null 2>&1 || w="$w, no qemu-system-x86_64"
	[ -n "$kver" ] && [ -f "$kernel" ] || w="$w, no Debian guest kernel (/boot/vmlinuz-*-amd64)"
	[ -x /bin/busybox ] || [ -x /usr/bin/busybox ] || w="$w, no busybox"
	command -v cpio >/dev/null 2>&1 || w="$w, no cpio"
	[ -f "$build/kmod/v2/gdirect/gdirect.ko" ] || w="$w, no kernel modules built (no kernel headers for the guest)"
	echo "${w#, }"
}
guest_why=""
[ "$lanes" = available ] && guest_why=$(guest_missing)
# Can the compiler build and run a program with these sanitizers?
cc_sanitizes() {
	d=$(mktemp -d)
	echo 'int main(void) { return 0; }' >"$d/t.c"
	${CC:-cc} -fsanitize="$1" "$d/t.c" -o "$d/t" >/dev/null 2>&1 && "$d/t"
	r=$?
	rm -rf "$d"
	return $r
}

# meson's testlog.json has one line per test with its result.
count_meson() { # count_meson BUILDDIR LABEL
	log="$1/meson-logs/testlog.json"
	if [ ! -s "$log" ] && grep -q -E 'No (suitable )?tests defined' "$results/$2.log" 2>/dev/null; then
		echo "$2: no tests in this suite"; return
	fi
	if [ ! -s "$log" ]; then
		echo "$2: no test results"
		note_failure "$2: meson test wrote no results (results/$2.log)"
		add 0 1 0; return
	fi
	p=$(grep -c '"result": "OK"' "$log")
	f=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log")
	s=$(grep -c '"result": "SKIP"' "$log")
	echo "$2: $p passed, $f failed, $s skipped"
	# The totals count meson tests; a TAP test holds many checks, counted
	# here beside them.
	python3 -c 'import json, re, sys
t = c = ok = bad = sk = 0
for l in open(sys.argv[1]):
    out = (json.loads(l).get("stdout") or "").splitlines()
    lines = [x for x in out if re.match(r"(not )?ok [0-9]", x)]
    if not lines:
        continue
    t += 1
    for x in lines:
        c += 1
        if x.startswith("not ok"):
            bad += 1
        elif re.search(r"#\s*SKIP", x, re.I):
            sk += 1
        else:
            ok += 1
print("%s: %d TAP checks in %d of those tests: %d ok, %d not ok, %d skipped" % (sys.argv[2], c, t, ok, bad, sk))' "$log" "$2"
	grep '"result": "SKIP"' "$log" | sed -n 's/.*"name": "\([^"]*\)".*/\1/p' |
		while IFS= read -r t; do
			echo "  skipped: $t (see its log for why)"
			echo "$2 $t: skipped (its reason is in results/$2.log)" >>"$skipped"
		done
	# Each failed test with its first failed check and what that check
	# printed (a few lines), so the recap alone says why.
	python3 -c 'import json, sys
label = sys.argv[2]
for l in open(sys.argv[1]):
    t = json.loads(l)
    if t.get("result") not in ("FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS"):
        continue
    print("%s: %s: %s (results/%s.log)" % (label, t["name"], t["result"], label))
    out = (t.get("stdout") or "").splitlines()
    bad = [i for i, x in enumerate(out) if x.startswith("not ok")]
    shown = out[-6:]
    if bad:
        shown = [out[bad[0]]]
        for x in out[bad[0] + 1:bad[0] + 6]:
            if not x.startswith("#"):
                break
            shown.append(x)
    for x in shown:
        print("    " + x[:200])' "$log" "$2" >>"$failures"
	add "$p" "$f" "$s"
}

run_unit() { # run_unit DIR SANITIZE LABEL SUITE...
	dir=$1 san=$2 label=$3
	shift 3
	# The suites as meson's options, --suite S for each.
	for s; do set -- "$@" --suite "$s"; shift; done
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$top" -Db_sanitize="$san" -Db_lundef=false \
			-Dbuildtype=debug >"$results/$label-setup.log" 2>&1 || {
			echo "$label: meson setup failed (see results/$label-setup.log)"
			note_failure "$label: meson setup failed (results/$label-setup.log)"
			add 0 1 0; return; }
	fi
	if ! ninja -C "$dir" >"$results/$label-build.log" 2>&1; then
		echo "$label: build failed (see results/$label-build.log)"; tail -20 "$results/$label-build.log"
		note_failure "$label: build failed (results/$label-build.log)"
		add 0 1 0; return
	fi
	rm -f "$dir/meson-logs/testlog.json"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		meson test -C "$dir" "$@" --print-errorlogs \
			--num-processes 2 >"$results/$label.log" 2>&1
	grep -E '^ *[0-9]+/[0-9]+ ' "$results/$label.log" | grep -v ' OK ' | sed 's/^/  /'
	count_meson "$dir" "$label"
}

echo "== unit tests (ASan + UBSan)"
if [ "$lanes" = available ] && ! cc_sanitizes address,undefined; then
	lane_skip unit-asan "the compiler cannot build with ASan and UBSan here; the unit tests run without sanitizers instead"
	run_unit "$build-nosan" none unit-nosan unit nvcc
else
	run_unit "$build-san" address,undefined unit-asan unit nvcc
fi
echo "== concurrent unit tests (TSan)"
if [ "$lanes" = available ] && ! cc_sanitizes thread; then
	lane_skip unit-tsan "the compiler cannot build with TSan here"
else
	run_unit "$build-tsan" thread unit-tsan tsan
fi
echo "== checkpatch and sparse over the kernel code (scripts/lint-kernel.sh)"
"$top/scripts/lint-kernel.sh" "$build" >"$results/lint.tap" 2>&1
grep -v -E '^(TAP version|1\.\.)' "$results/lint.tap"
grep '^not ok' "$results/lint.tap" | sed 's|^|lint: |; s|$| (results/lint.tap)|' |
	while IFS= read -r l; do note_failure "$l"; done
grep '^ok .* # SKIP ' "$results/lint.tap" | sed 's/^ok [0-9]* - \(.*\) # SKIP /lint \1: /' >>"$skipped"
tail -n1 "$results/lint.tap" | sed 's/^lint: //' >"$results/lint.summary"
add_summary "$results/lint.summary" "$results/lint.tap"
# The Debian packages (make deb) installed, used, removed and purged in a
# clean Debian 12 chroot (docs/building.md, "Debian packages").
echo "== Debian packages (make deb, tests/packaging/deb-lane.sh)"
deb_t0=$(date +%s)
if [ "$lanes" = available ] && ! "$top/scripts/deps.sh" --check deb >/dev/null 2>&1; then
	lane_skip deb "the packaging tools (debhelper, dh-dkms, lintian) are not installed here"
elif ! { "$top/scripts/deps.sh" deb && "$top/scripts/deps.sh" deb-lane &&
	"$top/packaging/deb.sh" "$build/deb"; } >"$results/deb-build.log" 2>&1; then
	tail -n 15 "$results/deb-build.log" | sed 's/^/  /'
	echo "deb: make deb failed (results/deb-build.log)"
	note_failure "deb: make deb failed (results/deb-build.log)"
	add 0 1 0
else
	"$top/tests/packaging/deb-lane.sh" "$build" >"$results/deb-lane.tap" 2>&1
	grep '^not ok' "$results/deb-lane.tap" | sed 's|^|deb: |; s|$| (results/deb-lane.tap)|' |
		while IFS= read -r l; do note_failure "$l"; done
	# The installed files in the emulated machine, part of the lane.
	sed -n 's/^# \(deb-guest: \)/\1/p' "$results/deb-lane.tap"
	tail -n1 "$results/deb-lane.tap"
	tail -n1 "$results/deb-lane.tap" | sed 's/^deb: //; s/ (.*//' >"$results/deb.summary"
	add_summary "$results/deb.summary" "$results/deb-lane.tap"
fi
echo "deb: $(( $(date +%s) - deb_t0 )) s"
# CI starts from a clean clone: UCX is built here, and a failed build is a
# failure of its own, not only the guest tests' skips.  Two versions: the
# v2 lane's UCX tests run Debian 12's 1.13.1 (BUILD/ucx), the cluster
# lane UCX 1.22.0 (BUILD/ucx-1.22.0; CLUSTER_UCX_VERSION=1.13.1 gives it
# 1.13.1 again), each restored from UCX_CACHE when its inputs are unchanged.
cluster_ucx=${CLUSTER_UCX_VERSION:-1.22.0}
echo "== UCX build (make ucx: scripts/ucx-build.sh, docs/cluster.md)"
ucx_t0=$(date +%s)
ucx_log=$results/ucx-build.log
if [ -n "$guest_why" ]; then
	lane_skip ucx-build "UCX serves only the emulated machine's lanes, which cannot run here ($guest_why)"
	[ "$cluster_ucx" = 1.13.1 ] ||
		lane_skip "ucx-build[$cluster_ucx]" "UCX serves only the emulated machine's lanes, which cannot run here ($guest_why)"
elif "$top/scripts/deps.sh" ucx >"$ucx_log" 2>&1 &&
   JOBS=${JOBS:-2} "$top/scripts/ucx-build.sh" "$build" >>"$ucx_log" 2>&1; then
	grep -e '^ucx-build: UCX .* installed in' -e '^ucx-build: UCX .* up to date' \
		-e '^ucx-build: UCX .* restored from' "$ucx_log"
	echo "ucx-build: $(( $(date +%s) - ucx_t0 )) s"
	add 1 0 0
	# The cluster lane's UCX is a check of its own: without its release
	# tarball it cannot be built here (exit 77), which, as gdrcopy's, is
	# a skip with GDIRECT_TEST_LANES=available and a failure otherwise.
	if [ "$cluster_ucx" != 1.13.1 ]; then
		ucx_t0=$(date +%s)
		UCX_VERSION=$cluster_ucx JOBS=${JOBS:-2} "$top/scripts/ucx-build.sh" "$build" \
			>"$results/ucx-build-$cluster_ucx.log" 2>&1
		ucx_rc=$?
		ucx_last=$(tail -n1 "$results/ucx-build-$cluster_ucx.log")
		if [ "$ucx_rc" = 0 ]; then
			grep -e '^ucx-build: UCX .* installed in' -e '^ucx-build: UCX .* up to date' \
				-e '^ucx-build: UCX .* restored from' "$results/ucx-build-$cluster_ucx.log"
			echo "ucx-build[$cluster_ucx]: $(( $(date +%s) - ucx_t0 )) s"
			add 1 0 0
		elif [ "$ucx_rc" = 77 ] && [ "$lanes" = available ]; then
			lane_skip "ucx-build[$cluster_ucx]" "${ucx_last#ucx-build: }; the cluster lane runs Debian's UCX instead"
		elif [ "$ucx_rc" = 77 ]; then
			echo "ucx-build[$cluster_ucx]: FAILED: ${ucx_last#ucx-build: }"
			note_failure "ucx-build[$cluster_ucx]: ${ucx_last#ucx-build: } (GDIRECT_PEERS_DIR, docs/cluster.md)"
			add 0 1 0
		else
			tail -n 15 "$results/ucx-build-$cluster_ucx.log" | sed 's/^/  /'
			echo "ucx-build[$cluster_ucx]: FAILED ($(( $(date +%s) - ucx_t0 )) s): the cluster lane runs Debian's UCX instead"
			note_failure "ucx-build[$cluster_ucx]: the build of UCX $cluster_ucx failed (results/ucx-build-$cluster_ucx.log)"
			add 0 1 0
		fi
	fi
else
	tail -n 15 "$ucx_log" | sed 's/^/  /'
	echo "ucx-build: FAILED ($(( $(date +%s) - ucx_t0 )) s): the guest's UCX tests will SKIP"
	note_failure "ucx-build: UCX 1.13.1 or its build dependencies failed (results/ucx-build.log)"
	add 0 1 0
	# UCX's build dependencies failed, so the cluster's UCX is not built
	# either: a prefix left from an earlier run is not shipped.
	if [ "$cluster_ucx" != 1.13.1 ]; then
		rm -f "$build/ucx-$cluster_ucx/prefix/.gdirect-ucx-stamp"
		echo "ucx-build[$cluster_ucx]: FAILED: not built, UCX's build dependencies failed"
		note_failure "ucx-build[$cluster_ucx]: not built, UCX's build dependencies failed (results/ucx-build.log)"
		add 0 1 0
	fi
fi
if [ -n "$guest_why" ]; then
	echo "== the emulated machine's lanes: SKIPPED here ($guest_why)"
	for l in "guest[v2]" conformance conformance-64k conformance-13030 conformance-runtime \
		"guest[v1]" "guest[tegra]" "guest[prop]" "guest[coherent]" "guest[bpo]" "guest[boot]" "guest[cluster]" "guest[cluster-bpo]" \
		"peers[gdrcopy-2.6]" emu-cli; do
		lane_skip "$l" "$guest_why"
	done
else
echo "== guest suite, page table 0x00020000"
run_guest v2 v2 "${GUEST_TESTS:-$(lane v2)}" "$kernel" "" multi
# The emulator's CUDA transcript (cuda-emu-conformance.sh) against a real
# GPU's: the diff count, and a failure for any difference not listed in tests/conformance/cuda_emu/.
echo "== CUDA conformance, emulator vs. a real GPU (tests/conformance/cuda_emu/)"
conf="$top/tests/conformance/cuda_emu"
if python3 "$conf/compare.py" --quiet --tap "$results/v2.tap" \
	--differences "$conf/differences.txt" \
	>"$results/conformance.txt" 2>&1; then add 1 0 0; else
	add 0 1 0; note_failure "conformance: $(tail -n1 "$results/conformance.txt") (results/conformance.txt)"; fi
tail -n1 "$results/conformance.txt"
# The same with CUDA_EMU_PLACEMENT=64k, whose placement differs on top.
if python3 "$conf/compare.py" --quiet --tap "$results/v2.tap" --tag conf64k \
	--what "conformance (CUDA_EMU_PLACEMENT=64k)" \
	--differences "$conf/differences.txt" --differences "$conf/differences-64k.txt" \
	>"$results/conformance-64k.txt" 2>&1; then add 1 0 0; else
	add 0 1 0; note_failure "conformance 64k: $(tail -n1 "$results/conformance-64k.txt") (results/conformance-64k.txt)"; fi
tail -n1 "$results/conformance-64k.txt"
# The sections init and dmabuf at the driver API version 13.3 (cuda_version).
if python3 "$conf/compare.py" --quiet --tap "$results/v2.tap" --tag conf13030 \
	--what "conformance (cuda_version 13030)" --sections-of-emu \
	--differences "$conf/differences-13030.txt" \
	>"$results/conformance-13030.txt" 2>&1; then add 1 0 0; else
	add 0 1 0; note_failure "conformance 13030: $(tail -n1 "$results/conformance-13030.txt") (results/conformance-13030.txt)"; fi
tail -n1 "$results/conformance-13030.txt"
# The emulated runtime's probe (cudart-emu-probe.sh) against an H100's runtime.
if python3 "$top/tests/conformance/cuda_emu/compare.py" --quiet --tap "$results/v2.tap" \
	--test cudart-emu-probe.sh --tag rtprobe --what runtime \
	--gpu "$top/tests/conformance/cuda_emu/gpu/h100-580.rt-nvml.transcript" \
	--differences "$top/tests/conformance/cuda_emu/rt-differences.txt" \
	>"$results/conformance-runtime.txt" 2>&1; then add 1 0 0; else
	add 0 1 0; note_failure "runtime conformance: $(tail -n1 "$results/conformance-runtime.txt") (results/conformance-runtime.txt)"; fi
tail -n1 "$results/conformance-runtime.txt"
# gdrcopy 2.6 from its release tarball, in every pairing with gdirect.
echo "== peers: gdrcopy 2.6 unchanged, with gdirect (tests/peers/, docs/gdrcopy.md)"
"$top/tests/peers/gdrcopy-lane.sh" "$build" "$results" "$kernel" \
	>"$results/peers.summary" 2>&1
peers_rc=$?
if [ "$peers_rc" = 77 ]; then
	if [ "$lanes" = available ]; then
		lane_skip "peers[gdrcopy-2.6]" "$(tail -n1 "$results/peers.summary")"
	else
		echo "peers[gdrcopy-2.6]: $(tail -n1 "$results/peers.summary")"
		note_failure "peers[gdrcopy-2.6]: $(tail -n1 "$results/peers.summary") (GDIRECT_PEERS_DIR, docs/gdrcopy.md)"
		add 0 1 0
	fi
else
	grep -v -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$results/peers.summary"
	grep -E '^peers\[.*[1-9][0-9]* failed|kernel log:|did not finish|timed out|does not build|could not|gdirect-emu exited' \
		"$results/peers.summary" | while IFS= read -r l; do note_failure "$l"; done
	add_summary "$results/peers.summary"
fi
echo "== guest suite, page table 0x00010002"
run_guest v1 v1 "${GUEST_V1_TESTS:-$(lane v1)}" "$kernel" "" multi
echo "== guest suite, Tegra interface (guide 13.4)"
run_guest tegra tegra "$(lane tegra)" "$kernel" "" multi
echo "== guest suite, emulator as NVIDIA's proprietary driver (licence NVIDIA)"
run_guest prop prop "${GUEST_PROP_TESTS:-$(lane prop)}" "$kernel" "" multi
# Grace Hopper's page tables: CPU-cacheable, FORCE_BAR1 the PCIe path.  The
# emulator's own tables (nvp2p-emu-p2p.sh, which also checks that the
# flavour is coherent), then gdirect's pins, mappings, REGION_INFO, gdrdrv
# personality and DMA, libgdrapi over both devices and libgdirect's copies
# on them.
echo "== guest suite, emulator of a coherent platform (CPU-cacheable page tables)"
run_guest coherent coherent "${GUEST_COHERENT_TESTS:-$(lane coherent)}" "$kernel" "" multi

# The newest kernel Debian 12 offers (bookworm-backports, 6.12): the
# modules rebuilt against its headers (page table 2.0), and the suites that
# exercise kernel code (emulator, gdirect, edu) booted on it (lane bpo).
# User-space suites (lib, gdrapi, ucx, tools) do not depend on the kernel
# and stay on 6.1 only.
echo "== guest suite, kernel from bookworm-backports (docs/testing.md)"
bpo_kmod=""
if ! bpo_rel=$("$top/scripts/deps.sh" kernel-bpo); then
	echo "guest[bpo]: could not fetch the bookworm-backports kernel"
	note_failure "guest[bpo]: could not fetch the bookworm-backports kernel (scripts/deps.sh kernel-bpo)"
	add 0 1 0
else
	bpo=${BPO_ROOT:-/var/cache/gdirect-bpo}/root
	echo "kernel $bpo_rel"
	if ! "$top/scripts/build-modules.sh" "$bpo/usr/src/linux-headers-$bpo_rel" \
		"$build/kmod/bpo-v2" v2 nvp2p_emu nvp2p_selftest gdirect gdirect_edu \
		gdirect_kapitest >"$results/kmod-bpo.log" 2>&1; then
		grep -v BTF "$results/kmod-bpo.log" | tail -20
		echo "guest[$bpo_rel]: the modules do not build against $bpo_rel (results/kmod-bpo.log)"
		note_failure "guest[$bpo_rel]: the modules do not build against $bpo_rel (results/kmod-bpo.log)"
		add 0 1 0
	else
		bpo_kmod=$build/kmod/bpo-v2
		# All vCPUs on one host thread: under qemu 7.2's multi-threaded
		# TCG the 6.12 kernel's static-key patching (int3, then the new
		# bytes) can leave another vCPU running a stale int3, an
		# "Oops: int3" in CI that no 6.1 run has shown.  One thread
		# costs little here: few tests keep both CPUs busy.
		bpo_series=$(echo "$bpo_rel" | cut -d. -f1,2)
		run_guest "$bpo_series" "$bpo_series" "${GUEST_BPO_TESTS:-$(lane bpo)}" \
			"$bpo/boot/vmlinuz-$bpo_rel" "$bpo_kmod" single
	fi
fi

# The oldest and the newest kernel the modules support, bullseye's 5.10
# and sid's 7.2, booted: the v2 modules built against each, and the tests
# of the code that differs per kernel (lane boot, tests/harness/boot-lane.sh).
echo "== guest suite, kernels 5.10 and 7.2 (lane boot, docs/testing.md)"
rm -f "$results"/guest-boot-*.summary
# Its failures are noted in this recap by boot-lane.sh itself (run_guest).
GDIRECT_TEST_LANES=$lanes GDIRECT_FAILURES=$failures \
	"$top/tests/harness/boot-lane.sh" "$build" "$results" 2>&1 |
	tee "$results/boot.summary" | grep -v -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$'
sed -n 's/^\(guest\[boot-[^]]*\]\): SKIPPED: /\1: /p' "$results/boot.summary" >>"$skipped"
add_summary "$results/boot.summary"

# Two guests and a network: the lane cluster's tests (tests/guest/cluster/).
# The GPU-aware UCX $cluster_ucx of ucx-build.sh where it built, else
# Debian's (host memory).  ucx-build.sh writes its stamp last and removes
# it on any failure, so only a prefix with the stamp is complete and of
# this run's inputs.
echo "== two-node cluster: Soft-RoCE and UCX between two guests (docs/cluster.md)"
cl_t0=$(date +%s)
cl_ucx=$build/ucx-$cluster_ucx/prefix
[ "$cluster_ucx" != 1.13.1 ] || cl_ucx=$build/ucx/prefix
if [ -f "$cl_ucx/.gdirect-ucx-stamp" ]; then
	UCX_PREFIX=$(cd "$cl_ucx" && pwd); export UCX_PREFIX
fi
why=$("$top/tests/harness/build-cluster-initramfs.sh" "$build" \
	"$build/guest-cluster.cpio.gz" 2>&1 >/dev/null)
case $? in
0) cl_rc=0 ;;
77)
	echo "guest[cluster]: SKIPPED, the cluster cannot run here: $why"
	echo "guest[cluster]: SKIPPED ($why)" >"$results/guest-cluster.summary"
	add 0 0 1; cl_rc=77 ;;
*)
	echo "guest[cluster]: could not build the initramfs: $why"
	note_failure "guest[cluster]: could not build the initramfs"
	add 0 1 0; cl_rc=1 ;;
esac
if [ "$cl_rc" = 0 ]; then
	python3 "$top/tests/harness/cluster.py" --initrd "$build/guest-cluster.cpio.gz" \
		--kernel "$kernel" --results "$results" --timeout "${GUEST_TIMEOUT_S:-1500}" \
		2>/dev/null | tee "$results/guest-cluster.summary"
	note_guest_failures "$results/guest-cluster.summary" "$results/cluster-node0.tap" \
		"$results/cluster-node1.tap"
	add_summary "$results/guest-cluster.summary"
fi
unset UCX_PREFIX
echo "cluster: $(( $(date +%s) - cl_t0 )) s"

# The cluster's NIC tests (lane cluster-bpo) on two nodes booted with the
# 6.12 kernel of lane bpo, with its modules and 6.12's own patched rxe
# (emu/rxe/rxe-gpu-6.12.patch on Debian's linux-source-6.12 of that
# kernel's version, scripts/deps.sh kernel-bpo-source).
echo "== two-node cluster on bookworm-backports' kernel: the NIC's tests (docs/cluster.md)"
clb_t0=$(date +%s)
if [ -z "$bpo_kmod" ]; then
	echo "guest[cluster-bpo]: no 6.12 modules (lane bpo, above)"
	note_failure "guest[cluster-bpo]: no 6.12 modules (lane bpo)"
	add 0 1 0
elif ! rxe_src=$("$top/scripts/deps.sh" kernel-bpo-source 2>"$results/cluster-bpo-source.log"); then
	echo "guest[cluster-bpo]: could not fetch linux-source of $bpo_rel (results/cluster-bpo-source.log)"
	note_failure "guest[cluster-bpo]: could not fetch linux-source of $bpo_rel (scripts/deps.sh kernel-bpo-source)"
	add 0 1 0
else
	why=$(KVER=$bpo_rel MODULE_ROOT=$bpo KMOD_DIR=$bpo_kmod RXE_LINUX_SOURCE=$rxe_src \
		GUEST_TESTS="${GUEST_CLUSTER_BPO_TESTS:-$(lane cluster-bpo)}" \
		"$top/tests/harness/build-cluster-initramfs.sh" "$build" \
		"$build/guest-cluster-bpo.cpio.gz" 2>&1 >/dev/null)
	case $? in
	0)
		python3 "$top/tests/harness/cluster.py" --initrd "$build/guest-cluster-bpo.cpio.gz" \
			--kernel "$bpo/boot/vmlinuz-$bpo_rel" --name cluster-bpo --results "$results" \
			--timeout "${GUEST_TIMEOUT_S:-1500}" \
			2>/dev/null | tee "$results/guest-cluster-bpo.summary"
		note_guest_failures "$results/guest-cluster-bpo.summary" \
			"$results/cluster-bpo-node0.tap" "$results/cluster-bpo-node1.tap"
		add_summary "$results/guest-cluster-bpo.summary" ;;
	77)
		echo "guest[cluster-bpo]: SKIPPED, the cluster cannot run here: $why"
		echo "guest[cluster-bpo]: $why" >>"$skipped"
		add 0 0 1 ;;
	*)
		echo "guest[cluster-bpo]: could not build the initramfs: $why"
		note_failure "guest[cluster-bpo]: could not build the initramfs"
		add 0 1 0 ;;
	esac
fi
echo "cluster-bpo: $(( $(date +%s) - clb_t0 )) s"

# gdirect-emu (emu/cli/) as other projects' CI runs it: a COMMAND's status,
# a hang, and two nodes moving GPU memory (docs/emulated-ci.md).
echo "== gdirect-emu: a user's program on one and two nodes (tests/emu-cli/)"
emu_t0=$(date +%s)
[ "$cl_rc" = 77 ] && EMU_CLI_NO_CLUSTER=$why && export EMU_CLI_NO_CLUSTER
"$top/tests/emu-cli/emu-cli-lane.sh" "$build" "$results" >"$results/emu-cli.tap" 2>&1
unset EMU_CLI_NO_CLUSTER
grep '^not ok' "$results/emu-cli.tap" | sed 's|^|emu-cli: |; s|$| (results/emu-cli.tap)|' |
	while IFS= read -r l; do note_failure "$l"; done
tail -n1 "$results/emu-cli.tap"
grep '^ok .* # SKIP ' "$results/emu-cli.tap" | sed 's/^ok [0-9]* - \(.*\) # SKIP /emu-cli \1: /' >>"$skipped"
tail -n1 "$results/emu-cli.tap" | sed 's/^emu-cli: //' >"$results/emu-cli.summary"
add_summary "$results/emu-cli.summary" "$results/emu-cli.tap"
echo "emu-cli: $(( $(date +%s) - emu_t0 )) s"

fi

# The modules of every flavour built against the other kernels Debian
# ships (bullseye's 5.10, bookworm-backports' 6.12, sid's 7.2 in a sid
# build root; all cached under /var/cache), a warning failing (scripts/kernel-builds.sh,
# docs/building.md).  The v2 modules of 5.10 and 7.2 were built by lane
# boot already, and 6.12's by lane bpo: only what changed is compiled again.
echo "== the modules against other kernels (scripts/kernel-builds.sh)"
kb_t0=$(date +%s)
# 7.2's builds run in a chroot and cost the most: there v2 and prop only
# (the product's modules with the tests', and the GPL-only import check).
KERNEL_FLAVOURS=${KERNEL_FLAVOURS:-v2 tegra prop} \
KERNEL_FLAVOURS_SID=${KERNEL_FLAVOURS_SID:-v2 prop} GDIRECT_TEST_LANES=$lanes \
	"$top/scripts/kernel-builds.sh" "$build" >"$results/kernels.tap" 2>&1
grep -v -E '^(TAP version|1\.\.)' "$results/kernels.tap"
grep '^not ok' "$results/kernels.tap" | sed 's|^|kernels: |; s|$| (results/kernels.tap)|' |
	while IFS= read -r l; do note_failure "$l"; done
grep '^ok .* # SKIP ' "$results/kernels.tap" | sed 's/^ok [0-9]* - \(.*\) # SKIP /kernels \1: /' >>"$skipped"
tail -n1 "$results/kernels.tap" | sed 's/^kernels: //' >"$results/kernels.summary"
add_summary "$results/kernels.summary" "$results/kernels.tap"
echo "kernels: $(( $(date +%s) - kb_t0 )) s"

if [ "${DEBUG_KERNEL:-0}" = 1 ] && [ -n "$guest_why" ]; then
	lane_skip debug-kernel "$guest_why"
elif [ "${DEBUG_KERNEL:-0}" = 1 ]; then
	echo "== guest suite under the debug kernel (docs/debug-kernel.md)"
	"$top/scripts/deps.sh" debug-kernel || {
		note_failure "debug-kernel: its packages could not be installed (scripts/deps.sh debug-kernel, above)"
		add 0 1 0; }
	RESULTS="$results" MODULES="${MODULES:-}" "$top/tests/debug-kernel/run.sh" "$build" | tee "$results/debug-kernel.summary"
	note_guest_failures "$results/debug-kernel.summary" "$results/debug-v2.tap" \
		"$results/debug-tegra.tap" "$results/debug-cluster-node0.tap" \
		"$results/debug-cluster-node1.tap"
	sed -n 's/^guest\[debug-cluster\]: SKIPPED, /debug-cluster: /p' \
		"$results/debug-kernel.summary" >>"$skipped"
	add_summary "$results/debug-kernel.summary"
fi

# The GPU suites (make test-gpu), where there is a GPU to run them on.
echo "== GPU suites (make test-gpu; docs/device.md)"
if ! "$top/scripts/deps.sh" nvidia-present; then
	lane_skip gpu "no NVIDIA driver here (make test-gpu runs these on a GPU server)"
elif [ ! -e "$build/tests/device/device-gpu" ]; then
	lane_skip gpu "meson found no CUDA toolkit, so the GPU tests were not built (scripts/find-cuda.sh says why)"
else
	rm -f "$build/meson-logs/testlog.json"
	meson test -C "$build" --no-rebuild --suite gpu --print-errorlogs \
		>"$results/gpu.log" 2>&1
	count_meson "$build" gpu
fi

echo "results and logs: $results/"
if [ -s "$skipped" ]; then
	echo "== what was skipped, and why"
	sed 's/^/  /' "$skipped"
fi
if [ -s "$failures" ]; then
	echo "== what failed"
	sed 's/^/  /' "$failures"
fi
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
