#!/bin/sh
# SPDX-License-Identifier: MIT
# c-20-cluster-ucx.sh - UCX between the two nodes (docs/cluster.md).
#
# ucx-xfer runs server on node 0 and client on node 1, once per wire
# transport: rc_verbs over Soft-RoCE (rxe0; wired up through RDMA-CM) and
# tcp over eth0.  Tagged send/receive, put and get at each size, the data
# checked on the node that received it; each run must also show that UCX
# carried the data on the transport asked for (its endpoint configuration).
# Then the same with GPU buffers on both nodes (cuda_copy and gdr_copy
# allowed besides the wire), each received buffer read back with cuMemcpy
# and through the BAR, UCX's memory type of the buffers checked, and the
# emulator's pins and BAR1 use 0 afterwards.  GPU buffers need a UCX built
# with CUDA (make ucx): where ucx_info lists no cuda_copy transport, that
# part is a SKIP that says so.  Node 1 prints the
# figures table at the end.
. /tests/lib.sh
. /tests/cluster-lib.sh
. /tests/xfer-pair.sh	# xfer_wait_listening
sizes=${XFER_SIZES:-1,64,4096,65536,1048576,4194304}
nsizes=$(echo "$sizes" | tr ',' '\n' | grep -c .)
runs="rc_verbs:host tcp:host rc_verbs:cuda tcp:cuda"
skip_all() { echo "1..1"; skip "UCX between the nodes" "$1"; exit 0; }
in_cluster || skip_all "not booted by tests/harness/cluster.py"
command -v ucx-xfer >/dev/null || skip_all "ucx-xfer not built (no UCX headers: libucx-dev)"
# The emulated GPU and gdirect.ko first: UCX lists its CUDA transports
# only where a GPU is there (cudaGetDeviceCount).
gpu_loaded=0
gpu_up() {
	[ "$gpu_loaded" = 1 ] && return 0
	cluster_gpu_up && gpu_loaded=1 && return 0
	echo "# loading nvp2p_emu and gdirect failed"
	return 1
}
gpu_up
gpu_ucx=0
ucx_info -d 2>/dev/null | grep -q 'Transport: cuda_copy' && gpu_ucx=1
# Per run: ucx-xfer's results (one more with GPU memory: UCX's memory type),
# its exit status, the lanes; a GPU run with a UCX without CUDA is one
# SKIP.  Then the fallback detector's check and the emulator's counters.
if [ "$gpu_ucx" = 1 ]; then
	plan $((2 * (3 * nsizes + 2) + 2 * (3 * nsizes + 5) + 2))
else
	plan $((2 * (3 * nsizes + 2) + 2 + 2))
fi
cluster_up || echo "# cluster_up failed"
figures=/tmp/figures
: >"$figures"
echo "# UCX: $(ucx_info -v 2>/dev/null | head -n1); GPU transports: $(ucx_info -d 2>/dev/null | sed -n 's/^# *Transport: \(cuda_copy\|cuda_ipc\|gdr_copy\)$/\1/p' | tr '\n' ' ')"

# figure LABEL LINE: ucx-xfer's "# FIGURE" lines into $figures, labelled
# (tap_relay's hook; the table at the end).
figure() {
	case "$2" in
	"# FIGURE "*) echo "$1 ${2#\# FIGURE }" >>"$figures" ;;
	esac
}

port=14000
for run in $runs; do
	wire=${run%:*} mem=${run#*:}
	label="$wire $mem"
	count=$((3 * nsizes)); [ "$mem" = cuda ] && count=$((count + 1))
	if [ "$mem" = cuda ] && [ "$gpu_ucx" = 0 ]; then
		skip "$label: GPU buffers on both nodes" "this UCX has no cuda_copy transport (Debian's libucx0 is built without CUDA; make ucx builds one)"
		continue
	fi
	case $wire in
	rc_verbs) tls=rc_verbs,self dev=rxe0:1 want="rc_verbs/rxe0:1" ;;
	tcp)      tls=tcp,self dev=eth0 want="tcp/eth0" ;;
	esac
	# GPU buffers: the GPU transports allowed too (gdr_copy over
	# gdirect.ko, which also serves ucx-xfer's BAR reads).
	[ "$mem" = cuda ] && tls=$tls,cuda_copy,gdr_copy
	# GPU buffers: UCX 1.13's newer protocol layer (UCX_PROTO_ENABLE=y).
	# The default one moves put and get through the CPU, which faults on
	# a GPU source or target (signal 11 in put); the newer one stages GPU
	# memory for them as for tagged messages (docs/cluster.md).
	env="UCX_TLS=$tls UCX_NET_DEVICES=$dev XFER_MEM=$mem"
	# ... and its protocol choice per memory type and size range printed
	# (UCX_PROTO_INFO): the table of docs/cluster.md.
	[ "$mem" = cuda ] && env="$env UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y"
	port=$((port + 1))
	log=/tmp/xfer-$wire-$mem.log
	echo "# $label: $env"
	barrier "ucx-$wire-$mem" || true
	# With GPU buffers the emulator's pins are sampled during the run:
	# ucx-xfer pins its two buffers for its BAR reads, so more than two
	# means UCX's gdr_copy pinned GPU memory through gdirect too.
	maxpins=/tmp/maxpins-$wire
	if [ "$mem" = cuda ]; then
		echo 0 >"$maxpins"
		(m=0; while :; do p=$(emu_stat pins); [ "$p" -gt "$m" ] && m=$p && echo "$m" >"$maxpins"; sleep 0.5; done) &
		sampler=$!
	fi
	# The client starts once the server listens (a clock would let a
	# late server refuse it).
	if [ "$node" = 0 ]; then
		env $env XFER_SIZES=$sizes timeout 300 ucx-xfer server $port >"$log" 2>&1 &
		spid=$!
		xfer_wait_listening "$log" $port $spid || echo "# $label: the server did not listen"
		barrier "ucx-$wire-$mem-listening" || true
		wait $spid; rc=$?
	else
		barrier "ucx-$wire-$mem-listening" || true
		env $env XFER_SIZES=$sizes timeout 300 ucx-xfer client "$peer" $port >"$log" 2>&1; rc=$?
	fi
	[ "$mem" = cuda ] && { kill "$sampler"; wait "$sampler" 2>/dev/null; }
	tap_relay "$label" "$log" "$count" ucx-xfer figure
	check "$label: ucx-xfer exits 0" test "$rc" = 0
	if [ "$mem" = cuda ]; then
		# UCX_PROTO_INFO's table (timestamps cut): per operation and
		# size range, the protocol and the transport on the wire.
		echo "# $label: UCX's protocols on this node (UCX_PROTO_INFO):"
		sed -n 's/^\[[0-9.]*\] *\[[^]]*\] *\(|.*\)$/# \1/p' "$log"
		check "$label: UCX printed its protocol selection for GPU memory (UCX_PROTO_INFO)" \
			grep -q '| .* from cuda' "$log"
		check "$label: gdr_copy pinned GPU memory through gdirect during the run (at most $(cat "$maxpins") pins; ucx-xfer's own: 2)" \
			test "$(cat "$maxpins")" -gt 2
	fi
	# UCX's endpoint configuration: a connection-manager lane and data
	# lanes, every one of them on the transport asked for.
	check "$label: UCX carried the data on $want (its endpoint lanes)" sh -c \
		"grep -q 'lane\\[[0-9]*\\]: .*$want' '$log' && ! grep 'lane\\[[0-9]*\\]:' '$log' | grep -v -e ': cm ' -e '$want'"
done

# The detector of a silent fallback must itself work: a UCX without CUDA
# given GPU buffers reports them as host memory, and ucx-xfer says so.
if [ "$gpu_ucx" = 0 ]; then
	port=$((port + 1))
	log=/tmp/xfer-fallback.log
	barrier ucx-fallback || true
	if [ "$node" = 0 ]; then
		env UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 XFER_MEM=cuda XFER_SIZES=4096 \
			timeout 120 ucx-xfer server $port >"$log" 2>&1 &
		spid=$!
		xfer_wait_listening "$log" $port $spid || echo "# fallback: the server did not listen"
		barrier ucx-fallback-listening || true
		wait $spid
	else
		barrier ucx-fallback-listening || true
		env UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 XFER_MEM=cuda XFER_SIZES=4096 \
			timeout 120 ucx-xfer client "$peer" $port >"$log" 2>&1
	fi
	sed 's/^/# fallback: /' "$log" | grep -v '^# fallback: ##'
	check "a UCX without CUDA is caught treating GPU buffers as host memory" \
		grep -q "^not ok .* UCX sees this node's GPU buffer as CUDA memory" "$log"
else
	skip "a UCX without CUDA is caught treating GPU buffers as host memory" "this UCX has CUDA (the check above ran on it)"
fi

if [ "$gpu_loaded" = 1 ]; then
	pins=$(emu_stat pins) bar1=$(emu_stat bar1_used)
	check "after the GPU runs: 0 pins and 0 BAR1 bytes in use on this node (pins $pins, bar1_used $bar1)" \
		test "$pins" = 0 -a "$bar1" = 0
	unload_module gdirect; unload_module nvp2p_emu
else
	not_ok "after the GPU runs: the emulated GPU's modules did not load"
fi

if [ "$node" = 1 ] && [ -s "$figures" ]; then
	echo "# figures (client side; MB/s, latency in microseconds):"
	awk '{ key = $3 " " $4; if (!(key in seen)) { seen[key] = 1; order[n++] = key }
	       c = $1 " " $2; if (!(c in cols)) { cols[c] = 1; col[nc++] = c }
	       v[key, c] = sprintf("%10.3f %12.1f", $5, $6) }
	     END { hdr = sprintf("%-4s %8s", "op", "bytes")
	           for (i = 0; i < nc; i++) hdr = hdr sprintf(" | %23s", col[i] " MB/s, us")
	           print "# " hdr
	           for (k = 0; k < n; k++) { split(order[k], p, " ")
	             line = sprintf("%-4s %8s", p[1], p[2])
	             for (i = 0; i < nc; i++) line = line " | " v[order[k], col[i]]
	             print "# " line } }' "$figures"
fi
barrier ucx-done || true
