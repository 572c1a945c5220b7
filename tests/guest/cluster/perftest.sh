#!/bin/sh
# SPDX-License-Identifier: MIT
# perftest.sh - linux-rdma's perftest between the two nodes over
# Soft-RoCE (rxe0, RoCE v2 GID), on host memory and on GPU memory
# (docs/cluster.md).  The emu-cli lane runs it on two nodes through
# gdirect-emu (tests/emu-cli/emu-cli-lane.sh), as a user's CI would run a
# peer's programs.
#
# perftest 26.04.17 is built at test time against our CUDA and rdma-core
# 56.1 with our provider patch (tests/peers/perftest-build.sh,
# emu/rdma-core); node 0 runs each program as the server, node 1 as the
# client, small sizes and few iterations (the guests run under TCG).
# Cases: ib_write_bw and ib_read_lat on host memory (stock rxe does this),
# then with --use_cuda=0 (GPU memory registered by ibv_reg_mr: the
# peer-memory path) and with --use_cuda=0 --use_cuda_dmabuf (exported by
# cuMemGetHandleForAddressRange, registered by ibv_reg_dmabuf_mr); last
# ib_write_bw and ib_read_bw of 1 MiB on host memory, whose figures node
# 1 prints as a READ over WRITE ratio (# FIGURE).  The GPU cases need an rdma_rxe that registers GPU memory (emu/rxe); where
# rdma-probe shows this guest's rxe0 cannot, they are SKIPs naming its
# answer.  ib_write_bw on host memory verifies the data it wrote
# (--data_validation, where the guest CPU has the SIMD perftest's checker
# needs); perftest checks GPU memory only with a CUDA kernel (nvcc), so on
# GPU memory the checks are the exit status and the result lines.
. /tests/lib.sh
. /tests/cluster-lib.sh
cases="write_bw:host read_lat:host write_bw:cuda read_lat:cuda write_bw:dmabuf read_lat:dmabuf write_bw:host1m read_bw:host1m"
ncases=8
skip_all() { echo "1..1"; skip "perftest between the nodes" "$1"; exit 0; }
in_cluster || skip_all "not on a node of two (gdirect-emu run --nodes 2)"
[ -r /etc/cluster-perftest-missing ] &&
	skip_all "perftest is not in this initramfs: $(cat /etc/cluster-perftest-missing)"
command -v ib_write_bw >/dev/null || skip_all "ib_write_bw is not in this initramfs"
# Per case: the exit status and the result line; one more for the data check
# of write_bw on host memory.  Then rdma-core and the probe.
plan $((2 * ncases + 1 + 2))
cluster_gpu_up || echo "# loading nvp2p_emu and gdirect failed"
cluster_up || echo "# cluster_up failed"
gid=$(rxe_gid_index) || gid=1

# The guest's libibverbs and rxe provider are ours (emu/rdma-core), not
# Debian's: their sha256 as the initramfs recorded them, at both paths the
# loader searches (/lib's comes first, and the base archive may hold
# Debian's there).
read -r _ _ want_lib want_rxe </etc/cluster-rdma-core
sum() { sha256sum "$1" 2>/dev/null | cut -d' ' -f1; }
got="$(sum /lib/x86_64-linux-gnu/libibverbs.so.1) $(sum /usr/lib/x86_64-linux-gnu/libibverbs.so.1)"
got="$got $(sum /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so)"
check "libibverbs and librxe are rdma-core 56.1 with emu/rdma-core's patch" \
	test "$got" = "$want_lib $want_lib $want_rxe"

# What this rxe0 registers (rdma-probe): decides the GPU cases.
probe=/tmp/rdma-probe.log
rdma-probe >"$probe" 2>&1; prc=$?
sed 's/^/# rdma-probe: /' "$probe"
check "rdma-probe opens rxe0 and GPU memory" test "$prc" = 0
answer() { sed -n "s/^$1: //p" "$probe"; }
why_not() {
	case $1 in
	cuda) a=$(answer peermem); w="ibv_reg_mr on cuMemAlloc memory" ;;
	dmabuf) a=$(answer dmabuf); w="ibv_reg_dmabuf_mr on a cuMemGetHandleForAddressRange fd" ;;
	*) return 1 ;;
	esac
	[ "$a" = ok ] && return 1
	echo "this guest's rdma_rxe cannot register GPU memory ($w: ${a:-no answer}; the dma-buf probe, fd -1: $(answer dmabuf_probe)); the patched module of emu/rxe can"
}

port=18600
for c in $cases; do
	prog=ib_${c%:*} mem=${c#*:}
	port=$((port + 1))
	size=4096 iters=200
	case $prog in
	ib_write_bw) opts="-s 4096 -n 200 -t 32" ;;
	ib_read_lat) opts="-s 64 -n 200" size=64 ;;
	esac
	# RDMA WRITE against RDMA READ of 1 MiB messages on host memory:
	# the same bytes each way, the responder's pacing of read replies
	# (emu/rxe/rxe-read-pace-*.patch) against the requester's own.
	[ "$mem" = host1m ] && opts="-s 1048576 -n 20" size=1048576 iters=20
	vcheck=0
	case $mem in
	host1m) ;;
	host)
		if [ "$prog" = ib_write_bw ]; then
			vcheck=1
			grep -qw -e avx2 -e sse4_2 /proc/cpuinfo && opts="$opts --data_validation"
		fi ;;
	cuda) opts="$opts --use_cuda=0" ;;
	dmabuf) opts="$opts --use_cuda=0 --use_cuda_dmabuf" ;;
	esac
	label="$prog $mem ($opts)"
	why=$(why_not "$mem") || why=""
	log=/tmp/perftest-$prog-$mem.log
	# The barriers are the same whether a case runs or skips: the two
	# nodes decide alike (same modules), and stay in step either way.
	barrier "perftest-$prog-$mem" || true
	if [ -n "$why" ]; then
		barrier "perftest-$prog-$mem-listening" || true
		skip "$label: exits 0" "$why"
		skip "$label: prints its result line" "$why"
		continue
	fi
	if [ "$node" = 0 ]; then
		timeout 120 $prog -d rxe0 -x "$gid" -F -p $port $opts >"$log" 2>&1 &
		spid=$!
		wait_tcp_listen $port $spid || echo "# $label: the server did not listen"
		barrier "perftest-$prog-$mem-listening" || true
		wait $spid; rc=$?
	else
		barrier "perftest-$prog-$mem-listening" || true
		retry 3 timeout 120 $prog -d rxe0 -x "$gid" -F -p $port $opts "$peer" >"$log" 2>&1; rc=$?
	fi
	sed 's/^/# /' "$log"
	check "$label: exits 0" test "$rc" = 0
	# The result line: size, iterations, then the figures; a latency
	# test prints it on the client only, its server the peer's address.
	if [ "$node" = 0 ] && [ "$prog" = ib_read_lat ]; then
		check "$label: prints its result line (the client does; here: connected)" \
			grep -q 'remote address:' "$log"
	else
		check "$label: prints its result line" grep -Eq "^ *$size +$iters " "$log"
	fi
	if [ "$vcheck" = 1 ]; then
		if ! grep -qw -e avx2 -e sse4_2 /proc/cpuinfo; then
			skip "$label: the data written is verified" "the guest CPU has neither AVX2 nor SSE4.2, which perftest's host checker needs"
		elif [ "$node" = 0 ]; then
			# The server received the writes and checks them.
			check "$label: the data written is verified (VALIDATION: PASSED)" grep -q 'VALIDATION: PASSED' "$log"
		else
			skip "$label: the data written is verified" "the server (node 0) checks what it received and prints VALIDATION; the client has nothing to check"
		fi
	fi
done
# READ over WRITE for 1 MiB on host memory, from each side's own figures
# (a ratio printed, not asserted: the guests run under TCG).
# Columns: bytes, iterations, BW peak, BW average (MiB/s), message rate.
w=$(awk '$1 == 1048576 && $2 == 20 { print $4 }' /tmp/perftest-ib_write_bw-host1m.log 2>/dev/null)
r=$(awk '$1 == 1048576 && $2 == 20 { print $4 }' /tmp/perftest-ib_read_bw-host1m.log 2>/dev/null)
[ -n "$w" ] && [ -n "$r" ] &&
	echo "# FIGURE perftest 1 MiB host memory: ib_write_bw $w MiB/s, ib_read_bw $r MiB/s, read/write $(awk -v r="$r" -v w="$w" 'BEGIN { printf "%.2f", (w > 0 ? r / w : 0) }')"
barrier perftest-done || true
