#!/bin/sh
# SPDX-License-Identifier: MIT
# ucx.sh - UCX between the two nodes (docs/cluster.md).
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
runs="rc_verbs:host tcp:host rc_verbs:gdr rc_verbs:cuda tcp:cuda"
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
	plan $((2 * (3 * nsizes + 2) + 2 * (3 * nsizes + 5) + (3 * nsizes + 7) + 2))
else
	plan $((2 * (3 * nsizes + 2) + 3 + 2))
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

# gpu_protos LOG: from UCX_PROTO_INFO's tables in LOG, the protocols of
# operations between GPU buffers, one "OPERATION RANGE: PROTOCOL" a line
# (an operation whose memory types name cuda and not host).  UCX 1.13
# names the operation beside "ep_cfg[N]"; 1.22 in a row of its own under
# the "cfg#N" row, above a "Range" header.  A range of 0 bytes moves no
# data and is left out.
gpu_protos() {
	sed -n 's/^\[[0-9.]*\] *\[[^]]*\] *\(|.*\)$/\1/p' "$1" | awk -F'|' '
		$2 ~ /ep_cfg/ { op = $3; gsub(/^ +| +$/, "", op)
				gpu = op ~ /cuda/ && op !~ /host/; next }
		NF == 3 && $2 !~ /cfg#/ { op = $2; gsub(/^ +| +$/, "", op)
				gpu = op ~ /cuda/ && op !~ /host/; next }
		$2 ~ /^ *Range *$/ { next }
		gpu && NF >= 4 { r = $2; p = $3; gsub(/^ +| +$/, "", r); gsub(/^ +| +$/, "", p)
				 if (r != "0") print op " " r ": " p }' | sort -u
}

port=14000
for run in $runs; do
	wire=${run%:*} mem=${run#*:}
	label="$wire $mem"
	count=$((3 * nsizes)); [ "$mem" != host ] && count=$((count + 1))
	if [ "$mem" != host ] && [ "$gpu_ucx" = 0 ]; then
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
	# GPUDirect RDMA (gdr): the NIC registers the GPU buffers itself
	# (ibv_reg_mr on the device address: the patched Soft-RoCE pins them
	# through gdirect's kernel API).  UCX 1.13 turns that on where the
	# peer-memory client's sysfs directory exists
	# (/sys/kernel/mm/memory_peers/nv_mem, which the patched module
	# creates); UCX_IB_GPU_DIRECT_RDMA=yes makes a missing one an error
	# instead of a silent fallback.  UCX 1.22 registers through dma-buf
	# instead, where the buffer's pages export (cuMemGetHandleForAddressRange)
	# and rxe0 takes dma-bufs.  cuda_copy stays allowed, so any
	# staging would go through the emulator's counted copies; gdr_copy,
	# whose BAR copies the emulator cannot count, does not.
	[ "$mem" = gdr ] && tls=$tls,cuda_copy
	# GPU buffers: UCX 1.13's newer protocol layer (UCX_PROTO_ENABLE=y).
	# The default one moves put and get through the CPU, which faults on
	# a GPU source or target (signal 11 in put); the newer one stages GPU
	# memory for them as for tagged messages (docs/cluster.md).
	env="UCX_TLS=$tls UCX_NET_DEVICES=$dev XFER_MEM=cuda"
	case $mem in
	host) env="UCX_TLS=$tls UCX_NET_DEVICES=$dev XFER_MEM=host" ;;
	gdr) env="$env UCX_IB_GPU_DIRECT_RDMA=yes UCX_RNDV_THRESH=0" ;;
	esac
	# ... and its protocol choice per memory type and size range printed
	# (UCX_PROTO_INFO): the table of docs/cluster.md.
	[ "$mem" != host ] && env="$env UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y"
	port=$((port + 1))
	log=/tmp/xfer-$wire-$mem.log
	echo "# $label: $env"
	barrier "ucx-$wire-$mem" || true
	# With GPU buffers the emulator's pins are sampled during the run:
	# ucx-xfer pins its two buffers for its BAR reads, so more than two
	# means UCX's gdr_copy pinned GPU memory through gdirect too.
	# The dma-buf mappings too: UCX 1.22 has the NIC register GPU memory
	# through dma-buf, which pins nothing.
	maxpins=/tmp/maxpins-$wire maxmaps=/tmp/maxmaps-$wire
	if [ "$mem" != host ]; then
		echo 0 >"$maxpins"; echo 0 >"$maxmaps"
		(m=0 d=0; while :; do p=$(emu_stat pins); [ "$p" -gt "$m" ] && m=$p && echo "$m" >"$maxpins"
		 q=$(emu_stat dmabuf_maps); [ "$q" -gt "$d" ] && d=$q && echo "$d" >"$maxmaps"; sleep 0.5; done) &
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
	[ "$mem" != host ] && { kill "$sampler"; wait "$sampler" 2>/dev/null; }
	tap_relay "$label" "$log" "$count" ucx-xfer figure
	check "$label: ucx-xfer exits 0" test "$rc" = 0
	if [ "$mem" != host ]; then
		# UCX_PROTO_INFO's table (timestamps cut): per operation and
		# size range, the protocol and the transport on the wire.
		echo "# $label: UCX's protocols on this node (UCX_PROTO_INFO):"
		sed -n 's/^\[[0-9.]*\] *\[[^]]*\] *\(|.*\)$/# \1/p' "$log"
		check "$label: UCX printed its protocol selection for GPU memory (UCX_PROTO_INFO)" \
			grep -q '| .* from cuda' "$log"
	fi
	if [ "$mem" = cuda ]; then
		check "$label: gdr_copy pinned GPU memory through gdirect during the run (at most $(cat "$maxpins") pins; ucx-xfer's own: 2)" \
			test "$(cat "$maxpins")" -gt 2
	fi
	if [ "$mem" = gdr ]; then
		# Zero-copy: the NIC registered the GPU buffers (pins beyond
		# ucx-xfer's own two can only be the NIC's, gdr_copy being
		# out), every protocol UCX chose between GPU buffers is
		# zero-copy but one, and no GPU byte went through host memory
		# but in that one.  The one: UCX 1.13.1 reads 64 B and less
		# into GPU memory by software emulation over active messages
		# (it has no zero-copy get that small on rc_verbs), which
		# stages those bytes; docs/cluster.md has the table.
		gpu_protos "$log" >/tmp/gdr-protos
		sed 's/^/# GPU to GPU: /' /tmp/gdr-protos
		check "$label: the NIC registered GPU memory (peer memory: at most $(cat "$maxpins") pins, ucx-xfer's own: 2; dma-buf: at most $(cat "$maxmaps") mappings)" \
			test "$(cat "$maxpins")" -gt 2 -o "$(cat "$maxmaps")" -gt 0
		# A protocol is zero-copy when it says so and copies nothing
		# in or out ("eager zero-copy copy-out" stages at the
		# receiver), or moves no data at all.
		nonzc=$(grep -v -e 'no data fetch' /tmp/gdr-protos | grep -v -e ': [^:]*zero-copy[^:]*$' -e 'copy-in' -e 'copy-out' ;
			grep -e 'copy-in' -e 'copy-out' /tmp/gdr-protos)
		if [ "$node" = 1 ]; then
			check "$label: every protocol UCX chose between GPU buffers is zero-copy, but get of 64 B and less ($(echo "$nonzc" | tr '\n' ';'))" \
				sh -c "grep -q . /tmp/gdr-protos && ! echo \"\$1\" | grep . | grep -v '^remote memory read .* [01]\\.\\.64: software emulation\$'" _ "$nonzc"
		else
			skip "$label: every protocol UCX chose between GPU buffers is zero-copy" \
				"the client (node 1) prints UCX's protocol table after its run; the server has none"
		fi
		check "$label: no GPU byte staged through host memory on this node but by get of 64 B and less ($(sed -n 's/^# STAGED //p' "$log" | awk '$3 != 0' | tr '\n' ';'))" \
			sh -c "grep -q '^# STAGED ' '$log' && ! awk '\$2 == \"STAGED\" && \$5 != 0 && !(\$3 == \"get\" && \$4 <= 64)' '$log' | grep -q ."
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
	# The emulated link gives no absolute meaning: what GPUDirect RDMA
	# changes shows as ratios of bandwidth measured in this same run.
	echo "# ratios in this run: GPUDirect RDMA (rc_verbs gdr) against staged (rc_verbs cuda) and against host memory (rc_verbs host), bandwidth and latency:"
	awk '{ k = $3 " " $4; c = $1 " " $2; bw[k, c] = $5; lat[k, c] = $6
	       if (!(k in seen)) { seen[k] = 1; order[n++] = k } }
	     function r(a, b) { return (a > 0 && b > 0) ? sprintf("%.2f", a / b) : "-" }
	     END { printf "# %-4s %8s | %12s | %12s | %12s | %12s\n", "op", "bytes",
	                  "bw / staged", "bw / host", "lat / staged", "lat / host"
	           for (i = 0; i < n; i++) { k = order[i]; split(k, p, " ")
	             printf "# %-4s %8s | %12s | %12s | %12s | %12s\n", p[1], p[2],
	                    r(bw[k, "rc_verbs gdr"], bw[k, "rc_verbs cuda"]),
	                    r(bw[k, "rc_verbs gdr"], bw[k, "rc_verbs host"]),
	                    r(lat[k, "rc_verbs gdr"], lat[k, "rc_verbs cuda"]),
	                    r(lat[k, "rc_verbs gdr"], lat[k, "rc_verbs host"]) } }' "$figures"
fi
barrier ucx-done || true
