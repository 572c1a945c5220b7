#!/bin/sh
# SPDX-License-Identifier: MIT
# UCX's cuda_ipc between two processes of one guest (docs/cluster.md, "Two
# processes, one GPU"): ucx-xfer server and client over loopback with GPU
# buffers on both sides, the data checked by the process that received it
# (cuMemcpyDtoH and the BAR); UCX's protocol selection per size printed
# (UCX_PROTO_INFO) and checked to name cuda_ipc for the GPU rendezvous; the
# emulator's IPC imports counted (cuIpcOpenMemHandle in the other process).
# ucx_perftest tag_bw between two processes whose endpoint is on cuda_ipc.
# And UCX 1.13's default protocol layer must fault on the first GPU put, as
# on a real H100 (its software RMA reads the GPU buffer with the CPU): an
# emulated GPU whose memory the CPU could read would not.  Afterwards: 0
# pins, 0 BAR1 bytes, no IPC import left.
. /tests/lib.sh
ucx=/opt/ucx
if [ ! -x "$ucx/bin/ucx_info" ] || [ ! -x /tests/ucx-xfer ]; then
	echo "# UCX IS NOT IN THIS GUEST: run 'make ucx' before packing the initramfs"
	skip "cuda_ipc between two processes" "no UCX build (make ucx) or no ucx-xfer in this initramfs"
	tap_done
	exit 0
fi
lacks=$(ucx_kernel_lacks)
if [ -n "$lacks" ]; then
	skip "cuda_ipc between two processes" "$lacks"
	tap_done
	exit 0
fi
export LD_LIBRARY_PATH="$ucx/lib:${LD_LIBRARY_PATH:-/usr/lib/gdirect}"
unset UCX_MEM_CUDA_HOOK_MODE UCX_TLS UCX_LOG_LEVEL UCX_PROTO_ENABLE UCX_PROTO_INFO
ip link set lo up 2>/dev/null

ours=""
for m in nvp2p_emu gdirect; do
	[ -d "/sys/module/$m" ] && continue
	if ! load_module "$m"; then
		skip "cuda_ipc between two processes" "$m could not be loaded"
		for o in $ours; do rmmod "$o"; done
		tap_done
		exit 0
	fi
	ours="$m $ours"
done
if ! "$ucx/bin/ucx_info" -d 2>/dev/null | grep -q 'Transport: cuda_ipc$'; then
	skip "cuda_ipc between two processes" "this UCX lists no cuda_ipc transport (built without CUDA)"
	for o in $ours; do rmmod "$o"; done
	tap_done
	exit 0
fi

sizes=1,64,4096,65536,1048576,4194304
nsizes=$(echo "$sizes" | tr ',' '\n' | grep -c .)
port=15000

# xfer_pair NAME ENV...: ucx-xfer server and client (xfer-pair.sh), the
# logs in /tmp/NAME.{server,client}.log, the exit codes in $src and $crc.
. /tests/xfer-pair.sh
xfer_bin=/tests/ucx-xfer xfer_logs=/tmp xfer_ext=.log xfer_timeout=300 xfer_grace=20

# The protocol table UCX_PROTO_INFO printed in FILE, timestamps cut.
proto_table() {
	sed -n 's/^\[[0-9.]*\] *\[[^]]*\] *\(|.*\)$/\1/p' "$1"
}

# 1. ucx-xfer with GPU buffers on both sides: tcp over lo for the wire-up
# and small messages, cuda_copy and cuda_ipc for the GPU; UCX's newer
# protocol layer (its default one cannot put or get GPU memory: 3 below).
imp0=$(emu_stat imports_total)
xfer_pair ipc UCX_TLS=tcp,cuda_copy,cuda_ipc,self UCX_NET_DEVICES=lo UCX_PROTO_ENABLE=y \
	UCX_PROTO_INFO=y XFER_MEM=cuda XFER_SIZES=$sizes
imp1=$(emu_stat imports_total)
tap_relay "server" /tmp/ipc.server.log $((3 * nsizes + 1)) ucx-xfer
tap_relay "client" /tmp/ipc.client.log $((3 * nsizes + 1)) ucx-xfer
check "ucx-xfer server exits 0" test "$src" = 0
check "ucx-xfer client exits 0" test "$crc" = 0
# Nothing UCX logs as an error, its exit included (its cuda_ipc cache
# closes the imports from a destructor, after ucx-xfer's main returned).
grep -h 'UCX  ERROR' /tmp/ipc.server.log /tmp/ipc.client.log | sed 's/^/# /'
check "UCX logged no error in either process, to its exit" \
	sh -c "! grep -q 'UCX  ERROR' /tmp/ipc.server.log /tmp/ipc.client.log"
echo "# UCX's protocols (client, UCX_PROTO_INFO):"
proto_table /tmp/ipc.client.log | sed 's/^/# /'
# The GPU-to-GPU tagged rendezvous is cuda_ipc's: the other process's
# buffer opened with cuIpcOpenMemHandle and written by a device copy.
check "UCX selected cuda_ipc for tagged GPU-to-GPU messages (its protocol table)" sh -c \
	"sed 's/^\\[[^|]*//' /tmp/ipc.client.log | grep -A4 '^| .* tagged message by ucp_tag_send\\*() from cuda' | grep -q 'rendezvous.*| cuda_ipc/cuda'"
check "the emulator counted IPC imports during the run (imports_total $imp0 -> $imp1)" \
	test "$imp1" -gt "$imp0"

# 2. ucx_perftest between two processes, shared memory and the GPU
# transports: the endpoint's tag lanes (UCX_LOG_LEVEL=info) end on
# cuda_ipc.
port=$((port + 1))
imp0=$(emu_stat imports_total)
UCX_TLS=sm,cuda_copy,cuda_ipc timeout 120 "$ucx/bin/ucx_perftest" -p $port >/tmp/perf-srv.log 2>&1 &
spid=$!
wait_tcp_listen $port $spid || echo "# ucx_perftest's server did not listen on port $port"
UCX_TLS=sm,cuda_copy,cuda_ipc UCX_LOG_LEVEL=info timeout 120 "$ucx/bin/ucx_perftest" -p $port \
	127.0.0.1 -t tag_bw -m cuda,cuda -s 1048576 -n 20 -w 2 >/tmp/perf-cli.log 2>&1
prc=$?
k=0
while kill -0 "$spid" 2>/dev/null && [ $k -lt 20 ]; do sleep 1; k=$((k + 1)); done
kill "$spid" 2>/dev/null
wait "$spid"
imp1=$(emu_stat imports_total)
grep 'ep_cfg\|Final:' /tmp/perf-cli.log | sed 's/^.*\(ep_cfg\|Final:\)/\1/; s/^/# /'
if [ "$prc" = 0 ] && grep -q "Final:" /tmp/perf-cli.log; then
	ok "ucx_perftest tag_bw -m cuda,cuda 1 MiB between two processes"
else
	not_ok "ucx_perftest tag_bw -m cuda,cuda 1 MiB between two processes (exit $prc)"
	grep -v '^[|+]' /tmp/perf-cli.log | tail -n 15 | sed 's/^/# /'
	sed 's/^/# server: /' /tmp/perf-srv.log | tail -n 10
fi
check "ucx_perftest's endpoint carries tagged messages on cuda_ipc (ep_cfg ... cuda_ipc/cuda)" \
	grep -q 'ep_cfg\[[0-9]*\]: tag(.*cuda_ipc/cuda' /tmp/perf-cli.log
check "the emulator counted IPC imports during ucx_perftest (imports_total $imp0 -> $imp1)" \
	test "$imp1" -gt "$imp0"

# 3. UCX 1.13's default protocol layer puts through the CPU on the local
# buffer (software RMA over tcp): with a GPU buffer it must fault, as on
# the H100 (tests/reference/gpu-logs/ucx-h100-2026-11-24/).  The 1-byte tagged
# message before it is staged correctly.
xfer_pair default UCX_TLS=tcp,cuda_copy,self UCX_NET_DEVICES=lo XFER_MEM=cuda XFER_SIZES=1
grep -v '^##' /tmp/default.client.log | sed 's/^/# client: /'
check "default protocol layer: the 1-byte tagged message between GPU buffers passes" \
	grep -q '^ok [0-9]* - tag 1 B' /tmp/default.client.log
check "default protocol layer: the first GPU put ends in SIGSEGV, as on a real GPU (client exit $crc)" \
	sh -c "[ '$crc' = 139 ] && grep -q 'Caught signal 11 (Segmentation fault: invalid permissions for mapped object' /tmp/default.client.log"

pins=$(emu_stat pins) bar1=$(emu_stat bar1_used) imp=$(emu_stat imports)
check "0 pins, 0 BAR1 bytes and no IPC import left (pins $pins, bar1_used $bar1, imports $imp)" \
	test "$pins" = 0 -a "$bar1" = 0 -a "$imp" = 0
for o in $ours; do
	check "$o unloads" rmmod "$o"
done
tap_done
