#!/bin/sh
# SPDX-License-Identifier: MIT
# emu-cli-lane.sh BUILD RESULTS - gdirect-emu (emu/cli/) as its users run
# it, four boots: one node whose COMMAND prints, reads a knob and exits 3
# (gdirect-emu must exit 3, the output on its stdout); one whose COMMAND
# writes a WARNING into the kernel log (exit 123, reported); one whose
# COMMAND hangs (stopped at --timeout, said, exit 124); two nodes running
# gpu-rdma-pair (tests/emu-cli/gpu-rdma-pair.c, written from gdirect-emu(1))
# from a folder given with --with, through peer memory and through
# dma-buf, each node checking the data it got; then two nodes running
# perftest's programs (tests/guest/cluster/perftest.sh), the peer's results
# counted from gdirect-emu's output.  TAP on stdout, then
# "emu-cli: N passed, N failed, N skipped" for run-tests.sh.
# EMU_CLI_NO_CLUSTER=WHY skips the two nodes (run-tests.sh sets it when
# build-cluster-initramfs.sh says the cluster cannot run here).
set -u
build=$(cd "$1" && pwd); results=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
emu=$top/emu/cli/gdirect-emu
. "$top/tests/include/tap.sh"
mkdir -p "$results"
out=$results/emu-cli
rm -rf "$out"
mkdir -p "$out"
t0=$(date +%s)
skips=0

"$emu" run --build "$build" --results "$out/exit3" --knob bar1_size_mb=64 -- \
	sh -c 'echo "out: $(cat /sys/kernel/debug/nvp2p_emu/bar1_total)"; exit 3' \
	>"$out/exit3.out" 2>"$out/exit3.err"
rc=$?
check "COMMAND's status 3 is gdirect-emu's (got $rc)" [ "$rc" = 3 ]
check "COMMAND's output on stdout, the knob bar1_size_mb=64 applied" \
	grep -qx "out: $((64 << 20))" "$out/exit3.out"
check "the console is kept in --results" grep -q "nvp2p_emu" "$out/exit3/node0.console.log"
[ "$rc" = 3 ] || diag "$(cat "$out/exit3.out" "$out/exit3.err")"

# A kernel report (here a WARNING line COMMAND writes into the kernel log,
# which the console shows) turns a COMMAND that succeeded into exit 123.
"$emu" run --build "$build" --results "$out/warn" -- \
	sh -c 'echo "<4>WARNING: planted by emu-cli-lane.sh" >/dev/kmsg' \
	>"$out/warn.out" 2>"$out/warn.err"
rc=$?
check "a kernel WARNING fails a COMMAND that succeeded: exit 123 (got $rc)" [ "$rc" = 123 ]
check "the WARNING is reported" grep -qF "kernel log: " "$out/warn.err"
[ "$rc" = 123 ] || diag "$(cat "$out/warn.out" "$out/warn.err")"

"$emu" run --build "$build" --results "$out/hang" --timeout 90 -- \
	sh -c 'echo started; exec sleep 100000' >"$out/hang.out" 2>"$out/hang.err"
rc=$?
check "a hung COMMAND is stopped: exit 124 (got $rc)" [ "$rc" = 124 ]
check "the hang is said" grep -qF "did not finish within 90 s: stopped" "$out/hang.err"
check "the hung COMMAND had started" grep -qx started "$out/hang.out"
[ "$rc" = 124 ] || diag "$(cat "$out/hang.out" "$out/hang.err")"

if [ -n "${EMU_CLI_NO_CLUSTER:-}" ]; then
	skip "two nodes move GPU data over RDMA" "the cluster cannot run here: $EMU_CLI_NO_CLUSTER"
	skips=1
elif [ ! -x "$build/tests/emu-cli/gpu-rdma-pair" ]; then
	skip "two nodes move GPU data over RDMA" "gpu-rdma-pair was not built (no libibverbs headers: libibverbs-dev)"
	skips=1
else
	# The user's folder, under /tmp as CI's often are (the guest's /tmp
	# is a tmpfs of its own: gdirect-emu shows the folder over it).
	mine=$(mktemp -d)
	cp "$build/tests/emu-cli/gpu-rdma-pair" "$mine/"
	"$emu" run --build "$build" --results "$out/pair" --nodes 2 --with "$mine" -- \
		sh -c "$mine/gpu-rdma-pair peer && $mine/gpu-rdma-pair dmabuf" \
		>"$out/pair.out" 2>"$out/pair.err"
	rc=$?
	rm -rf "$mine"
	check "gdirect-emu run --nodes 2 -- gpu-rdma-pair exits 0 (got $rc)" [ "$rc" = 0 ]
	# Not $n: tap.sh counts with it.
	for nd in 0 1; do
		for how in peer dmabuf; do
			check "node $nd: GPU data moved and checked ($how)" \
				grep -qF "[node$nd] gpu-rdma-pair node $nd ($how): passed" "$out/pair.out"
		done
	done
	[ "$rc" = 0 ] || diag "$(cat "$out/pair.out" "$out/pair.err")"

	# A peer's own programs between the nodes, through the tool: perftest
	# (tests/guest/cluster/perftest.sh, shown with --with; the cluster's
	# initramfs holds perftest's build).  Its TAP comes back on
	# gdirect-emu's stdout, each line prefixed with its node.
	"$emu" run --build "$build" --results "$out/perftest" --nodes 2 \
		--with "$top/tests/guest/cluster" -- sh "$top/tests/guest/cluster/perftest.sh" \
		>"$out/perftest.out" 2>"$out/perftest.err"
	rc=$?
	check "gdirect-emu run --nodes 2 -- perftest.sh exits 0 (got $rc)" [ "$rc" = 0 ]
	[ "$rc" = 0 ] || diag "$(cat "$out/perftest.err")"
	for nd in 0 1; do
		counts=$(sed -n "s/^\[node$nd\] //p" "$out/perftest.out" |
			python3 "$top/tests/harness/tapcount.py" "node $nd" \
			2>>"$out/perftest.fail")
		# shellcheck disable=SC2086 # the three counts, split on purpose
		set -- $counts
		if [ "$1" = 0 ] && [ "$2" = 0 ] && [ "$rc" != 0 ]; then
			not_ok "node $nd: perftest's results (none: gdirect-emu exited $rc)"
		elif [ "$1" = 0 ] && [ "$2" = 0 ]; then
			skip "node $nd: perftest between the nodes" \
				"$(sed -n "s/^\[node$nd\] ok .*# SKIP //p" "$out/perftest.out" | head -n1)"
			skips=$((skips + 1))
		else
			check "node $nd: perftest's $1 checks passed, $2 failed, $3 skipped" [ "$2" = 0 ]
		fi
	done
	[ -s "$out/perftest.fail" ] && diag "$(cat "$out/perftest.fail")"
fi
tap_done
st=$?
echo "# emu-cli: $(( $(date +%s) - t0 )) s"
echo "emu-cli: $((n - fails - skips)) passed, $fails failed, $skips skipped"
exit $st
