#!/bin/bash
# UCX 1.13.1 (Debian's source) on a real GPU: build, list transports, and run
# the cluster's ucx-xfer between two processes on localhost over tcp with
# GPU buffers, under both protocol layers.  Results under $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
here=$PWD
CUDA=$(dirname $(dirname $(readlink -f $(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc))))
echo "CUDA=$CUDA" | tee $OUT/env.txt
nvidia-smi -L >>$OUT/env.txt 2>&1; nvidia-smi --query-gpu=driver_version --format=csv >>$OUT/env.txt 2>&1
uname -a >>$OUT/env.txt; nproc >>$OUT/env.txt
for t in make gcc g++ autoreconf libtoolize; do echo "$t: $(command -v $t)"; done >>$OUT/env.txt
ls $CUDA/include/nvml.h $CUDA/lib64/libcudart.so* $CUDA/lib64/stubs/libnvidia-ml.so 2>&1 >>$OUT/env.txt
rm -rf src obj prefix; tar xJf src.tar.xz && sed -i "s/-g -Wall -Werror\"/-g -Wall\"/" src/configure && grep -c "BASE_CFLAGS=\"-g -Wall\"" src/configure && mkdir -p obj && cd obj
t0=$(date +%s)
../src/configure --prefix=$here/prefix --disable-static --enable-mt --enable-cma \
	--disable-numa --disable-doxygen-doc --without-java --without-go --without-fuse3 \
	--disable-backtrace-detail --without-knem --without-xpmem --without-ugni --without-rocm \
	--with-cuda=$CUDA --without-gdrcopy --without-verbs --without-rdmacm >$OUT/configure.log 2>&1
echo "configure rc=$?" | tee -a $OUT/build.txt
grep 'modules:' $OUT/configure.log >>$OUT/build.txt
for d in src/ucm src/ucs src/uct src/ucp src/tools/info src/tools/perf; do
	make -C $d -j16 >>$OUT/make.log 2>&1 && make -C $d install >>$OUT/make.log 2>&1 || echo "make $d failed" >>$OUT/build.txt
done
echo "build $(( $(date +%s) - t0 )) s" >>$OUT/build.txt
tail -5 $OUT/make.log >>$OUT/build.txt
cd $here
P=$here/prefix
export LD_LIBRARY_PATH=$P/lib:$CUDA/lib64
$P/bin/ucx_info -v >$OUT/ucx_info_v.txt 2>&1
$P/bin/ucx_info -d >$OUT/ucx_info_d.txt 2>&1
gcc -std=gnu11 -O2 -DXFER_CUDA -I. -I$P/include -I$CUDA/include ucx-xfer.c -o ucx-xfer -L$P/lib -lucp -lucs -L$CUDA/lib64/stubs -lcuda >$OUT/xfer-build.txt 2>&1
echo "xfer build rc=$?" >>$OUT/xfer-build.txt
port=13337
# run NAME ENV...: server + client on localhost, both logs, exit codes.
run() {
	name=$1; shift
	port=$((port+1))
	env "$@" timeout 120 ./ucx-xfer server $port >$OUT/$name.server.txt 2>&1 &
	spid=$!
	sleep 2
	env "$@" timeout 120 ./ucx-xfer client 127.0.0.1 $port >$OUT/$name.client.txt 2>&1
	crc=$?
	wait $spid; src=$?
	echo "$name: client rc=$crc server rc=$src  [$*]" | tee -a $OUT/summary.txt >/dev/null
}
S=XFER_SIZES=1,64,4096,65536,1048576,4194304
run host-default $S XFER_MEM=host UCX_TLS=tcp,self UCX_NET_DEVICES=lo
run gpu-default $S XFER_MEM=cuda UCX_TLS=tcp,cuda_copy,self UCX_NET_DEVICES=lo
run gpu-proto $S XFER_MEM=cuda UCX_TLS=tcp,cuda_copy,self UCX_NET_DEVICES=lo UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y
run gpu-default-tagonly XFER_SIZES=1,4096,4194304 XFER_MEM=cuda UCX_TLS=tcp,cuda_copy,self UCX_NET_DEVICES=lo UCX_LOG_LEVEL=info
run gpu-ipc-proto $S XFER_MEM=cuda UCX_TLS=tcp,cuda_copy,cuda_ipc,self UCX_NET_DEVICES=lo UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y
run gpu-ipc-default $S XFER_MEM=cuda UCX_TLS=tcp,cuda_copy,cuda_ipc,self UCX_NET_DEVICES=lo
run gpu-all-proto $S XFER_MEM=cuda UCX_NET_DEVICES=lo UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y
# ucx_perftest between two processes with cuda_ipc, and loopback.
$P/bin/ucx_perftest -l -t tag_bw -m cuda,cuda -s 1048576 -n 100 >$OUT/perftest-loop.txt 2>&1; echo "perftest loop rc=$?" >>$OUT/summary.txt
for tls in "sm,cuda_copy,cuda_ipc" "tcp,cuda_copy"; do
	port=$((port+1))
	UCX_TLS=$tls timeout 60 $P/bin/ucx_perftest -p $port >$OUT/perftest-srv-$tls.txt 2>&1 &
	sleep 2
	UCX_TLS=$tls UCX_LOG_LEVEL=info timeout 60 $P/bin/ucx_perftest -p $port 127.0.0.1 -t tag_bw -m cuda,cuda -s 1048576 -n 100 >$OUT/perftest-cli-$tls.txt 2>&1
	echo "perftest 2proc $tls rc=$?" >>$OUT/summary.txt
	wait
done
for op in ucp_put_bw ucp_get; do
	port=$((port+1))
	UCX_TLS=tcp,cuda_copy timeout 60 $P/bin/ucx_perftest -p $port >$OUT/perftest-srv-$op.txt 2>&1 &
	sleep 2
	UCX_TLS=tcp,cuda_copy timeout 60 $P/bin/ucx_perftest -p $port 127.0.0.1 -t $op -m cuda,cuda -s 4096 -n 100 >$OUT/perftest-cli-$op.txt 2>&1
	echo "perftest 2proc $op tcp,cuda_copy default-proto rc=$?" >>$OUT/summary.txt
	wait
done
cat $OUT/summary.txt; cat $OUT/build.txt
cd $OUT && tar czf /tmp/all.tgz . && find . -mindepth 1 -delete && mv /tmp/all.tgz $OUT/all.tgz
