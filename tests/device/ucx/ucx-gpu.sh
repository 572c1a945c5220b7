#!/bin/bash
# SPDX-License-Identifier: MIT
# ucx-gpu.sh SRC.tar.xz OUTDIR - UCX 1.13.1 (Debian's source) on a machine
# with a real NVIDIA GPU: the reference the emulated GPU's UCX runs are
# compared with (docs/cluster.md, "On a real GPU").  TAP on stdout, every
# log under OUTDIR.
#
# SRC.tar.xz comes from `scripts/ucx-build.sh source-tarball` (Debian's
# source with Debian's patches, autogen.sh run: GPU machines often lack
# libtoolize and cannot fetch).  The build: real CUDA (nvcc's toolkit, or
# CUDA_HOME), no gdrcopy, verbs or rdmacm; UCX 1.13's configure hard-codes
# -Werror in BASE_CFLAGS, which newer compilers trip over, so it is dropped
# from configure first.  Then, over loopback (tcp on lo, shared memory),
# with GPU buffers: ucx-xfer (tests/guest/cluster/ucx-xfer.c, built without
# gdrapi, XFER_BAR=0: such a machine has no gdirect or gdrdrv BAR
# mappings) between two processes under both protocol layers, and
# ucx_perftest in loopback and between two processes.  Expected, and
# checked as such: with UCX 1.13's default protocol layer a GPU put over tcp
# dies with SIGSEGV (its software RMA reads the GPU buffer with the CPU),
# `ucp_get` hangs; UCX_PROTO_ENABLE=y passes everything.
#
# Environment: JOBS (make jobs, default: the CPUs), CUDA_HOME.
set -u
[ $# -eq 2 ] || { echo "usage: $0 SRC.tar.xz OUTDIR" >&2; exit 2; }
src_tar=$(readlink -f "$1")
out=$2
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
xfer_c=$top/tests/guest/cluster/ucx-xfer.c
jobs=${JOBS:-$(nproc)}
case "$jobs" in ''|*[!0-9]*) echo "ucx-gpu: JOBS='$jobs': expected a number" >&2; exit 2 ;; esac
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
. "$top/tests/include/tap.sh"
. "$top/tests/guest/ucx/xfer-pair.sh"

[ -f "$src_tar" ] || skip_all "no UCX source tarball '$1' (scripts/ucx-build.sh source-tarball FILE.tar.xz)"
[ -f "$xfer_c" ] || skip_all "no $xfer_c"
if [ -n "${CUDA_HOME:-}" ]; then cuda=$CUDA_HOME
elif command -v nvcc >/dev/null 2>&1; then cuda=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
else cuda=/usr/local/cuda; fi
[ -f "$cuda/include/cuda.h" ] || skip_all "no CUDA toolkit (cuda.h not in $cuda/include; set CUDA_HOME)"
nvidia-smi -L >/dev/null 2>&1 || skip_all "no NVIDIA GPU (nvidia-smi -L fails)"
{
	echo "CUDA=$cuda"; nvidia-smi -L
	nvidia-smi --query-gpu=driver_version --format=csv,noheader
	uname -a; echo "cpus $(nproc)"; gcc --version | head -n1
} >"$out/env.txt" 2>&1
sed 's/^/# /' "$out/env.txt"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# --- the build ---------------------------------------------------------------
tar xJf "$src_tar"
check "the source tarball unpacks to src/ with configure" test -x src/configure
sed -i 's/-g -Wall -Werror"/-g -Wall"/' src/configure
check "configure's hard-coded -Werror dropped" grep -q 'BASE_CFLAGS="-g -Wall"' src/configure
P=$work/prefix
mkdir -p obj
t0=$(date +%s)
(cd obj && ../src/configure --prefix="$P" --disable-static --enable-mt --enable-cma \
	--disable-numa --disable-doxygen-doc --without-java --without-go --without-fuse3 \
	--disable-backtrace-detail --without-knem --without-xpmem --without-ugni --without-rocm \
	--with-cuda="$cuda" --without-gdrcopy --without-verbs --without-rdmacm) >"$out/configure.log" 2>&1
check "configure --with-cuda=$cuda" test $? = 0
grep 'modules:' "$out/configure.log" | sed 's/^/# /'
check "configure kept UCX's CUDA modules" grep -q 'UCT modules:.*< cuda' "$out/configure.log"
built=1
for d in src/ucm src/ucs src/uct src/ucp src/tools/info src/tools/perf; do
	{ make -C "obj/$d" -j"$jobs" && make -C "obj/$d" install; } >>"$out/make.log" 2>&1 || { built=0; echo "# make $d failed"; }
done
echo "# build: $(($(date +%s) - t0)) s"
check "UCX builds and installs (src/, ucx_info, ucx_perftest)" test "$built" = 1
[ "$built" = 1 ] || { tail -n 20 "$out/make.log" | sed 's/^/# /'; tap_done; exit; }

export LD_LIBRARY_PATH=$P/lib:$cuda/lib64
"$P/bin/ucx_info" -v >"$out/ucx_info_v.txt" 2>&1
"$P/bin/ucx_info" -d >"$out/ucx_info_d.txt" 2>&1
for tl in cuda_copy cuda_ipc tcp; do
	check "ucx_info -d lists $tl" grep -q "Transport: $tl\$" "$out/ucx_info_d.txt"
done
gcc -std=gnu11 -O2 -Wall -Wextra -DXFER_CUDA -DXFER_NO_GDRAPI -I"$top/tests/include" -I"$top/emu/include" \
	-I"$P/include" -I"$cuda/include" "$xfer_c" -o ucx-xfer \
	-L"$P/lib" -lucp -lucs -L"$cuda/lib64/stubs" -L"$cuda/lib64" -lcuda >"$out/xfer-build.txt" 2>&1
check "ucx-xfer builds (no gdrapi: XFER_BAR=0)" test -x ucx-xfer

# --- ucx-xfer between two processes over lo ------------------------------------
port=13400
# xfer NAME ENV...: server and client (xfer_pair, xfer-pair.sh), logs
# NAME.{server,client}.txt; $src and $crc their exit codes.  A server whose
# client died is stopped.
xfer_bin=./ucx-xfer xfer_logs=$out xfer_ext=.txt xfer_timeout=120 xfer_grace=10
xfer() {
	xfer_pair "$@"
	name=$1; shift
	echo "# $name: client rc=$crc server rc=$src [$*]" | tee -a "$out/summary.txt"
}
fails_of() { grep -c '^not ok' "$1"; }
S=XFER_SIZES=1,64,4096,65536,1048576,4194304
G="XFER_MEM=cuda XFER_BAR=0 UCX_NET_DEVICES=lo"
xfer host-default $S XFER_MEM=host UCX_TLS=tcp,self UCX_NET_DEVICES=lo
check "host buffers, tcp, default layer: both sides pass" \
	test "$crc" = 0 -a "$src" = 0
xfer gpu-proto $S $G UCX_TLS=tcp,cuda_copy,self UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y
check "GPU buffers, tcp+cuda_copy, UCX_PROTO_ENABLE=y: both sides pass" \
	test "$crc" = 0 -a "$src" = 0
xfer gpu-ipc-proto $S $G UCX_TLS=tcp,cuda_copy,cuda_ipc,self UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y
check "GPU buffers, tcp+cuda_copy+cuda_ipc, UCX_PROTO_ENABLE=y: both sides pass" \
	test "$crc" = 0 -a "$src" = 0
check "... and UCX selected cuda_ipc for GPU-to-GPU tagged messages" \
	sh -c "sed 's/^\\[[^|]*//' '$out/gpu-ipc-proto.client.txt' | grep -A4 '^| .* tagged message by ucp_tag_send\\*() from cuda' | grep -q 'rendezvous.*| cuda_ipc/cuda'"
for tls in tcp,cuda_copy,self tcp,cuda_copy,cuda_ipc,self; do
	name=gpu-default-$(echo "$tls" | tr ',' '-')
	xfer "$name" XFER_SIZES=1 $G UCX_TLS=$tls
	check "GPU buffers, $tls, UCX 1.13's default layer: the 1 B tagged message passes" \
		grep -q '^ok [0-9]* - tag 1 B' "$out/$name.client.txt"
	check "... and the first GPU put dies with SIGSEGV in software RMA (expected: UCX 1.13)" \
		sh -c "[ '$crc' = 139 ] && grep -q 'Caught signal 11 (Segmentation fault: invalid permissions for mapped object' '$out/$name.client.txt'"
	check "... in ucp_put_nbx -> uct_tcp_ep_am_bcopy (UCX's backtrace)" \
		sh -c "grep -q 'libuct.so.0(uct_tcp_ep_am_bcopy+' '$out/$name.client.txt' && grep -q 'libucp.so.0(ucp_put_nbx+' '$out/$name.client.txt'"
done

# --- ucx_perftest -----------------------------------------------------------------
"$P/bin/ucx_perftest" -l -t tag_bw -m cuda,cuda -s 1048576 -n 100 >"$out/perftest-loop.txt" 2>&1
check "ucx_perftest -l tag_bw -m cuda,cuda 1 MiB" grep -q Final: "$out/perftest-loop.txt"
# perf NAME TLS TEST SIZE WANT: server and client; WANT ok, segv or hang.
perf() {
	port=$((port + 1))
	UCX_TLS=$2 timeout 30 "$P/bin/ucx_perftest" -p $port >"$out/perftest-srv-$1.txt" 2>&1 &
	spid=$!
	sleep 2
	UCX_TLS=$2 UCX_LOG_LEVEL=info timeout 30 "$P/bin/ucx_perftest" -p $port 127.0.0.1 \
		-t "$3" -m cuda,cuda -s "$4" -n 100 >"$out/perftest-cli-$1.txt" 2>&1
	prc=$?
	kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
	echo "# perftest $1 ($2 $3 $4): rc=$prc; $(grep -o 'ep_cfg.*' "$out/perftest-cli-$1.txt" | head -n1); $(grep Final: "$out/perftest-cli-$1.txt")" |
		tee -a "$out/summary.txt"
	case $5 in
	ok) check "ucx_perftest $3 $2 between two processes" test "$prc" = 0 ;;
	segv) check "ucx_perftest $3 $2, default layer: SIGSEGV (expected: UCX 1.13)" test "$prc" = 139 ;;
	hang) check "ucx_perftest $3 $2, default layer: no completion (expected: UCX 1.13)" test "$prc" = 124 ;;
	esac
}
perf sm-ipc sm,cuda_copy,cuda_ipc tag_bw 1048576 ok
check "... its endpoint: tagged messages on cuda_ipc (ep_cfg ... cuda_ipc/cuda)" \
	grep -q 'ep_cfg\[[0-9]*\]: tag(.*cuda_ipc/cuda' "$out/perftest-cli-sm-ipc.txt"
perf tcp-copy tcp,cuda_copy tag_bw 1048576 ok
perf put tcp,cuda_copy ucp_put_bw 4096 segv
perf get tcp,cuda_copy ucp_get 4096 hang
tap_done
