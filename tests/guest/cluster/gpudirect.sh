#!/bin/sh
# SPDX-License-Identifier: MIT
# gpudirect.sh - GPUDirect RDMA between the nodes: the NIC
# (rxe0, the project's patched Soft-RoCE, emu/rxe/) reads and writes GPU
# memory on both ends, with no byte staged through host memory
# (docs/cluster.md, "GPUDirect RDMA").
#
# gpu-rdma runs server on node 0 and client on node 1, once per
# registration path: peer memory (ibv_reg_mr on the device address,
# pinned through gdirect.ko's kernel API) and dma-buf (ibv_reg_dmabuf_mr
# of a cuMemGetHandleForAddressRange export).  RDMA WRITE, READ and
# SEND/RECV at each size, the data checked on the GPU that received it,
# the emulator's staging counters unchanged on both nodes around every
# transfer, and the free case of each path.  Before that, the dma-buf
# capability probe (fd -1: EBADF), and after each path, 0 pins, 0 BAR1
# bytes and 0 allocations on this node.
. /tests/lib.sh
. /tests/cluster-lib.sh
sizes=${RDMA_SIZES:-1,4097,65536,1048576,4194304}
nsizes=$(echo "$sizes" | tr ',' '\n' | grep -c .)
skip_all() { echo "1..1"; skip "GPUDirect RDMA between the nodes" "$1"; exit 0; }
in_cluster || skip_all "not booted by tests/harness/cluster.py"
command -v gpu-rdma >/dev/null || skip_all "gpu-rdma not built (no libibverbs headers: libibverbs-dev)"
paths="peer dmabuf"
if [ "$node" = 1 ]; then per_path=$((3 * nsizes + 3 + 2)); else per_path=2; fi
plan $((2 + 2 * per_path))

# cluster_up loads the emulated GPU and gdirect.ko before rdma_rxe.
cluster_up || echo "# cluster_up failed"
check "rdma_rxe is the project's patched Soft-RoCE (emu/rxe; version $(cat /sys/module/rdma_rxe/version 2>/dev/null || echo none))" \
	grep -q gdirect /sys/module/rdma_rxe/version
gid=$(rxe_gid_index)
gpu-rdma probe >/tmp/probe.log 2>&1; probe=$?
cat /tmp/probe.log
check "the dma-buf probe (ibv_reg_dmabuf_mr with fd -1) answers EBADF: dma-buf memory regions supported" \
	test "$probe" = 0

port=15000
for p in $paths; do
	port=$((port + 1))
	log=/tmp/gpu-rdma-$p.log
	if [ "$p" = dmabuf ] && [ "$probe" != 0 ]; then
		i=0
		while [ "$i" -lt "$per_path" ]; do
			skip "dma-buf path: check $((i + 1)) of $per_path" \
				"the dma-buf probe failed: $(grep '^# probe' /tmp/probe.log | cut -c10-)"
			i=$((i + 1))
		done
		continue
	fi
	barrier "gpudirect-$p" || true
	if [ "$node" = 0 ]; then
		env RDMA_PATH=$p RDMA_GID_INDEX=$gid RDMA_SIZES=$sizes \
			timeout 600 gpu-rdma server $port >"$log" 2>&1 &
		spid=$!
		k=0
		until grep -q "^# listening on $port" "$log" 2>/dev/null; do
			k=$((k + 1))
			kill -0 $spid 2>/dev/null && [ $k -le 600 ] || break
			sleep 0.1
		done
		barrier "gpudirect-$p-listening" || true
		wait $spid; rc=$?
		sed 's/^\([^#]\)/# \1/' "$log"
		check "$p: gpu-rdma server: every check on this node passed (exit $rc)" test "$rc" = 0
	else
		barrier "gpudirect-$p-listening" || true
		env RDMA_PATH=$p RDMA_GID_INDEX=$gid RDMA_SIZES=$sizes \
			timeout 600 gpu-rdma client "$peer" $port >"$log" 2>&1; rc=$?
		tap_relay "$p" "$log" $((3 * nsizes + 3)) gpu-rdma
		check "$p: gpu-rdma client exits 0" test "$rc" = 0
	fi
	barrier "gpudirect-$p-done" || true
	k=0
	while [ "$(emu_stat pins)" != 0 ] || [ "$(emu_stat bar1_used)" != 0 ] ||
	      [ "$(emu_stat allocations)" != 0 ]; do
		k=$((k + 1)); [ $k -le 50 ] || break; sleep 0.1
	done
	left="pins $(emu_stat pins), bar1_used $(emu_stat bar1_used), allocations $(emu_stat allocations)"
	check "$p: 0 pins, 0 BAR1 bytes, 0 allocations on this node afterwards ($left)" \
		test "$left" = "pins 0, bar1_used 0, allocations 0"
done
tap_done
