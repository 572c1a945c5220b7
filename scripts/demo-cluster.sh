#!/bin/sh
# SPDX-License-Identifier: MIT
# demo-cluster.sh BUILD - two emulated GPU nodes running UCX between them.
#
# Boots two guests (tests/harness/cluster.py), each with its own emulated
# GPU and edu device, linked by an e1000 pair over qemu's stream netdev with
# Soft-RoCE (rxe0, patched to register GPU memory: emu/rxe) on top; checks
# the link with ibv_rc_pingpong, then runs every cluster test: GPUDirect
# RDMA between the GPUs with plain verbs (cluster-gpudirect) and with
# perftest (cluster-perftest), and UCX (ucx-xfer) over rc_verbs and over tcp, host memory, GPU memory
# staged, and GPU memory with GPUDirect RDMA: tagged send/receive, put and
# get from 1 B to 4 MiB, each checked on the receiving node.  It prints
# GPUDirect RDMA's results first (which path, the bytes staged), then the
# bandwidth/latency table and its ratios.  UCX is build/ucx/prefix when `make ucx` built
# it, else Debian's libucx0 (host memory only).  docs/cluster.md.
set -eu
build=$1
top=$(cd "$(dirname "$0")/.." && pwd)
kver=$(ls -1 /lib/modules | grep -- '-amd64$' | sort -V | tail -n1)
if [ -x "$build/ucx/prefix/bin/ucx_perftest" ]; then
	UCX_PREFIX=$(cd "$build/ucx/prefix" && pwd); export UCX_PREFIX
	echo "demo-cluster: UCX from $UCX_PREFIX (make ucx)"
else
	echo "demo-cluster: UCX from Debian (libucx0: host memory only; make ucx builds a GPU-aware one)"
fi
echo "demo-cluster: booting two emulated machines (qemu TCG, Debian $kver), linked by e1000 + Soft-RoCE..."
"$top/tests/harness/build-cluster-initramfs.sh" "$build" "$build/guest-cluster.cpio.gz"
# The verdict is cluster.py's exit status; the filter only tidies.
rcf=$(mktemp)
trap 'rm -f "$rcf"' EXIT
{ python3 "$top/tests/harness/cluster.py" --initrd "$build/guest-cluster.cpio.gz" \
	--kernel "/boot/vmlinuz-$kver" --name demo-cluster --results "$top/results" \
	--timeout 900 2>/dev/null; echo $? >"$rcf"; } | grep -v -E '^guest\[.*\]: [0-9]+ programs' || true
rc=$(cat "$rcf")
t1=$top/results/demo-cluster-node1.tap
# GPUDirect RDMA first: the NIC (the patched Soft-RoCE) moving GPU memory
# between the nodes itself, by each registration path, with the staged
# bytes the emulator counted on both nodes (cluster-gpudirect); then UCX
# doing the same (cluster-ucx's rc_verbs gdr run): the protocols it chose
# between GPU buffers.
echo "demo-cluster: GPUDirect RDMA between the nodes, verbs on GPU memory (cluster-gpudirect, node 1):"
grep -E '^(not )?ok [0-9]+ - (peer|dmabuf): ' "$t1" |
	grep -E '4194304 B|cuMemFree|dereg|0 pins' | sed 's/^\(not \)\{0,1\}ok [0-9]* - /  /'
echo "demo-cluster: UCX with GPUDirect RDMA (rc_verbs gdr), its protocols between GPU buffers (node 1):"
sed -n 's/^# GPU to GPU: /  /p' "$t1"
grep -E '^(not )?ok [0-9]+ - rc_verbs gdr: (the NIC|every protocol|no GPU byte)' "$t1" | sed 's/^\(not \)\{0,1\}ok [0-9]* - /  /'
# The table node 1 printed, and which transport lanes UCX chose.
echo "demo-cluster: UCX endpoint lanes and thresholds (node 1), then the figures:"
awk '/^# (rc_verbs|tcp) [a-z]+: UCX_TLS/ { print "  " substr($0, 3) }
     /^## +lane\[|^## +tag_send:|^## +(put|get)\[/ { print "  " substr($0, 3) }
     /^# figures/ { on = 1 } /^=== END/ { on = 0 } on && /^# / { print "  " substr($0, 3) }' \
	"$t1"
[ "$rc" = 0 ] || echo "demo-cluster: FAILED (the machines' logs: results/demo-cluster-node*)"
exit "$rc"
