#!/bin/sh
# SPDX-License-Identifier: MIT
# ucx-perftest.sh - UCX's own benchmark, ucx_perftest, between the two
# nodes over Soft-RoCE (rc_verbs on rxe0), with CUDA memory on both sides
# and with host memory in the same run (docs/cluster.md).
#
# Node 0 runs each case's server, node 1 its client, which prints the
# figures.  Cases: tag_bw and tag_lat (tagged messages), ucp_put_bw and
# ucp_put_lat (put), ucp_get (get), each on host memory and on CUDA
# memory (-m cuda,cuda), few iterations (the guests run under TCG).
#
# With CUDA memory the transports are rc_verbs and cuda_copy, not
# gdr_copy: the NIC must register the GPU buffers itself, and any byte UCX
# staged through host memory would go through cuda_copy's copies, which
# the emulator counts (htod_bytes, dtoh_bytes) and gdr_copy's BAR copies
# it cannot.  UCX 1.22 registers CUDA memory with an IB device through
# dma-buf where both sides can (cuMemGetHandleForAddressRange, then
# ibv_reg_dmabuf_mr): its debug log says rxe0 takes dma-bufs, and the
# emulator's dma-buf mappings during the run show the NIC mapped them.
# One more run allows gdr_copy beside the wire and shows it pinned GPU
# memory through our libgdrapi and gdirect.ko (the emulator's pins).
# Needs UCX 1.22 or later (make test builds 1.22 for the cluster lane):
# an older UCX skips the whole test, since 1.13.1 cannot wire ucx_perftest
# up over rxe0 and its log has no cfg# lines to check.  A host-only UCX
# 1.22 makes the CUDA cases SKIPs that say so.
. /tests/lib.sh
. /tests/cluster-lib.sh
cases="tag_bw tag_lat ucp_put_bw ucp_put_lat ucp_get"
ncases=5
size=${UCX_PERFTEST_SIZE:-65536}
skip_all() { echo "1..1"; skip "ucx_perftest between the nodes" "$1"; exit 0; }
in_cluster || skip_all "not booted by tests/harness/cluster.py"
command -v ucx_perftest >/dev/null || skip_all "ucx_perftest is not in this initramfs"
# "# Library version: 1.22.0" (1.13.1: "# UCT version=1.13.1 ...").
ver=$(ucx_info -v 2>/dev/null | head -n1 | grep -o '[0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*' | head -n1)
major=${ver%%.*} minor=${ver#*.} minor=${minor%%.*}
if [ -z "$ver" ] || [ "$major" -lt 1 ] || { [ "$major" -eq 1 ] && [ "$minor" -lt 22 ]; }; then
	skip_all "UCX ${ver:-of unknown version} predates 1.22, which the lane's ucx_perftest over rxe0 needs (1.13.1 cannot wire it up: docs/cluster.md)"
fi
cluster_gpu_up || echo "# loading nvp2p_emu and gdirect failed"
cluster_up || echo "# cluster_up failed"
echo "# UCX $ver: $(ucx_info -v 2>/dev/null | sed -n 's/^# Configured with: //p' | grep -o -E -e '--with-(cuda|gdrcopy)' | tr '\n' ' ')"
gpu_ucx=0
ucx_info -d 2>/dev/null | grep -q 'Transport: cuda_copy' && gpu_ucx=1
# Per case: host memory, CUDA memory (each the exit status with its
# Final line).  Then, with CUDA memory: rxe0 takes dma-bufs (UCX's log),
# the NIC mapped the emulator's dma-bufs, nothing staged on this node, the
# gdr_copy run and its pins, and the emulator's pins and BAR1 at 0 after.
plan $((2 * ncases + 6))

# md_line: ucx_info -d's md section of rxe0 (its registration line says
# "dmabuf" where the md takes dma-bufs).
ucx_info -d 2>/dev/null | awk '/Memory domain: rxe0/ { p = 1 } p && /Transport:/ { exit } p' |
	grep -e 'Memory domain' -e 'register' -e 'memory types' | sed 's/^#/# ucx_info -d:/'

# sample_max KNOB FILE: the largest value of the emulator's KNOB, sampled into
# FILE every half second until killed; prints the sampler's pid.
sample_max() {
	echo 0 >"$2"
	(m=0; while :; do v=$(emu_stat "$1"); [ "$v" -gt "$m" ] && m=$v && echo "$m" >"$2"; sleep 0.5; done) >/dev/null 2>&1 &
	echo $!
}
staged() { echo $(( $(emu_stat htod_bytes) + $(emu_stat dtoh_bytes) )); }

# perf NAME ENV ARGS...: one ucx_perftest case, server on node 0 and
# client on node 1, with ENV (space-separated assignments) on both.  The
# client's log is /tmp/perf-NAME.log; $prc its exit status.
port=15000
perf() {
	pname=$1 penv=$2; shift 2
	port=$((port + 1))
	plog=/tmp/perf-$pname.log
	barrier "perf-$pname" || true
	if [ "$node" = 0 ]; then
		env $penv timeout 300 ucx_perftest -p $port >"$plog" 2>&1 &
		spid=$!
		wait_tcp_listen $port $spid || echo "# $pname: the server did not listen on port $port"
		barrier "perf-$pname-listening" || true
		wait $spid; prc=$?
	else
		barrier "perf-$pname-listening" || true
		env $penv timeout 300 ucx_perftest "$peer" -p $port "$@" >"$plog" 2>&1; prc=$?
	fi
}

# result LABEL: the case's check; node 1 prints its Final line as a FIGURE
# (one-way latency in microseconds and bandwidth in MB/s, both overall).
result() {
	if [ "$node" = 0 ]; then
		check_rc "$prc" "$1: ucx_perftest server exits 0"
		[ "$prc" = 0 ] || tail -n 5 "$plog" | sed 's/^/# /'
		return
	fi
	fin=$(awk '$1 == "Final:" { printf "latency %.3f us, bandwidth %.2f MB/s", $5, $7 }' "$plog")
	# UCX's endpoint configurations ("perftest inter-node cfg#0
	# tag(rc_verbs/rxe0:1) ..."), and with UCX_PROTO_INFO the protocol
	# per size range of each operation from or to CUDA memory.
	grep 'INFO .*cfg#[0-9]' "$plog" | sed 's/^.* UCX  INFO  *//; s/^/# UCX: /' | sort -u
	awk -F'|' 'NF == 3 && $2 !~ /cfg#/ { t = $2; gsub(/^ +| +$/, "", t); gpu = t ~ /cuda/ }
		   gpu && NF == 5 && $2 !~ /Range/ { r = $2 " " $3 " " $4; gsub(/  +/, " ", r); print "# UCX: " t ":" r }' "$plog"
	if [ "$prc" = 0 ] && [ -n "$fin" ] && grep -q 'cfg#[0-9].*rc_verbs/rxe0:1' "$plog"; then
		ok "$1: $fin"
		echo "# FIGURE ucx_perftest $1 $fin"
	else
		not_ok "$1: ucx_perftest exits $prc (and its lanes on rc_verbs/rxe0:1, a Final line)"
		grep -v '^[|+]' "$plog" | tail -n 10 | sed 's/^/# /'
	fi
}

# ucx_perftest wires its endpoints up through worker addresses, which
# needs an auxiliary transport beside rc_verbs (ucx-xfer's RDMA-CM
# listener does not): UD on rxe0 (UCX_PERFTEST_AUX names another).  The
# data must still go on rc_verbs: each client's endpoint lanes
# (UCX_LOG_LEVEL=info, "ep_cfg") are printed and checked.
aux=${UCX_PERFTEST_AUX:-ud_verbs}
wire="UCX_NET_DEVICES=rxe0:1 UCX_LOG_LEVEL=info"
[ "$aux" = tcp ] && wire="UCX_NET_DEVICES=rxe0:1,eth0 UCX_LOG_LEVEL=info"
for t in $cases; do
	perf "$t-host" "UCX_TLS=rc_verbs,$aux,self $wire" -t "$t" -m host,host -s "$size" -n 50 -w 5
	result "$t host memory $size B"
done

if [ "$gpu_ucx" = 0 ]; then
	for t in $cases; do
		skip "$t CUDA memory" "UCX $ver has no CUDA transports (the cluster lane builds 1.22 with CUDA: docs/cluster.md)"
	done
	for w in "rxe0 takes dma-bufs" "the NIC mapped GPU dma-bufs" "nothing staged" "gdr_copy run" "gdr_copy pins"; do
		skip "$w" "UCX $ver has no CUDA transports"
	done
else
	maps=/tmp/perf-maxmaps
	tag_staged=0 rma_staged=0
	sampler=$(sample_max dmabuf_maps "$maps")
	# Rendezvous from the first byte: UCX 1.22 sends tagged messages up to
	# about 110 KiB eagerly and copies them out of a host bounce buffer
	# on the receiver (eager zero-copy copy-out), which stages.
	genv="UCX_TLS=rc_verbs,$aux,self,cuda_copy $wire UCX_IB_GPU_DIRECT_RDMA=yes UCX_RNDV_THRESH=0 UCX_PROTO_INFO=y"
	first=1
	for t in $cases; do
		# The first CUDA case logs at debug level: UCX's own word on
		# how it registers GPU memory with rxe0.
		e=$genv; [ "$first" = 1 ] && e=$(echo "$e" | sed 's/UCX_LOG_LEVEL=info/UCX_LOG_LEVEL=debug/')
		c0=$(staged)
		perf "$t-cuda" "$e" -t "$t" -m cuda,cuda -s "$size" -n 50 -w 5
		result "$t CUDA memory $size B"
		c1=$(( $(staged) - c0 ))
		echo "# $t CUDA memory: $c1 GPU bytes through host memory by cuda_copy on this node"
		case $t in
		tag_*) tag_staged=$((tag_staged + c1)) ;;
		*) [ "$c1" -gt "$rma_staged" ] && rma_staged=$c1 ;;
		esac
		if [ "$first" = 1 ]; then
			cp "$plog" /tmp/perf-debug.log
			first=0
		fi
	done
	kill "$sampler"; wait "$sampler" 2>/dev/null
	grep -i -e 'dmabuf' -e 'dma.buf' -e 'cuMemGetHandleForAddressRange' /tmp/perf-debug.log |
		sed 's/^\[[0-9.]*\] *\[[^]]*\] *//; s/^/# UCX log: /' | sort | uniq -c | head -n 12
	check "UCX $ver registers CUDA memory with rxe0 through dma-buf (its log: \"rxe0: dmabuf is supported\")" \
		grep -q 'rxe0: dmabuf is supported' /tmp/perf-debug.log
	check "the NIC mapped the emulated GPU's dma-bufs during the CUDA runs (at most $(cat "$maps") mappings)" \
		test "$(cat "$maps")" -gt 0
	# Put and get: ucx_perftest itself reads and writes its sequence
	# number in the last bytes of the GPU buffers (read_sn, write_sn:
	# ucp_get_nbx on its own endpoint and the allocator's cudaMemcpy), a
	# few bytes per iteration; a staged message would be 64 KiB at once.
	check "nothing staged on this node in the CUDA runs: tagged $tag_staged GPU bytes through host memory, put and get at most $rma_staged (ucx_perftest's own sequence numbers; a message is $size)" \
		test "$tag_staged" = 0 -a "$rma_staged" -lt "$size"

	# gdr_copy: allowed beside the wire, with zero-copy and rendezvous
	# off, so that UCX copies each message in and out of GPU memory, which
	# it does through gdr_copy's BAR mapping (libgdrapi, gdirect.ko).
	pins=/tmp/perf-maxpins
	sampler=$(sample_max pins "$pins")
	perf gdr "UCX_TLS=rc_verbs,$aux,self,cuda_copy,gdr_copy $wire UCX_ZCOPY_THRESH=inf UCX_RNDV_THRESH=inf UCX_PROTO_INFO=y" -t tag_bw -m cuda,cuda -s 1024 -n 50 -w 5
	kill "$sampler"; wait "$sampler" 2>/dev/null
	result "tag_bw CUDA memory 1024 B with gdr_copy"
	grep -i 'gdr_copy' "$plog" | sed 's/^\[[0-9.]*\] *\[[^]]*\] *//; s/^/# /' | sort -u | head -n 6
	# The receiver (node 0) copies each message into GPU memory with
	# gdr_copy; the sender may pack from GPU memory with cuda_copy
	# instead (seen both ways), so only the receiver is checked.
	if [ "$node" = 0 ]; then
		check "gdr_copy pinned GPU memory through libgdrapi and gdirect.ko during the run (at most $(cat "$pins") pins)" \
			test "$(cat "$pins")" -gt 0
	else
		skip "gdr_copy pinned GPU memory during the run (at most $(cat "$pins") pins here)" \
			"checked on the receiving node (node 0), which copies each message into GPU memory with gdr_copy; the sender may pack with cuda_copy instead"
	fi
fi

pins=$(emu_stat pins) bar1=$(emu_stat bar1_used)
check "after the runs: 0 pins and 0 BAR1 bytes in use on this node (pins $pins, bar1_used $bar1)" \
	test "$pins" = 0 -a "$bar1" = 0
barrier perf-done || true
