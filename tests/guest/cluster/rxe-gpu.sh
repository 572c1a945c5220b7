#!/bin/sh
# SPDX-License-Identifier: MIT
# rxe-gpu.sh - Soft-RoCE registers GPU memory (emu/rxe), on node 0:
# rxe-gpu-test.c over an RC queue pair on rxe0 connected to itself
# (peer memory through gdirect, dma-buf of GPU and of system memory, a
# dma-buf whose kernel fence the registration must wait for, revocation, the emulator's counters back to 0).  Node 1 skips: the test needs no peer, and the two
# guests share the host's CPUs.
. /tests/lib.sh
. /tests/cluster-lib.sh
# One SKIP line, so that the harness counts it.
skip_all() { echo "1..1"; skip "GPU memory regions on Soft-RoCE" "$1"; exit 0; }
in_cluster || skip_all "not booted by tests/harness/cluster.py"
[ "$node" = 0 ] || skip_all "runs on node 0 only (one node, loopback)"
[ -x /tests/rxe-gpu-test ] ||
	skip_all "rxe-gpu-test not built (no libibverbs headers: libibverbs-dev)"
cluster_up || { echo "1..1"; echo "not ok 1 - cluster_up (modules, eth0, rxe0)"; exit 1; }
# vgem, for a dma-buf of system memory: without it the test skips that
# check and says why.
if [ -s /etc/cluster-test-modules ]; then
	for mod in $(cat /etc/cluster-test-modules); do
		grep -q "^$mod " /proc/modules ||
			insmod "/modules/cluster-test/$mod.ko" || echo "# insmod $mod failed"
	done
fi
/tests/rxe-gpu-test "$(rxe_gid_index)"
