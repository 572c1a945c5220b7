#!/bin/sh
# SPDX-License-Identifier: MIT
# perftest-build.sh BUILD TARBALL - linux-rdma's perftest 26.04.17 built
# by its own autotools against the emulated machine, into
# BUILD/peers/perftest-26.04.17/.
#
# The tarball (tests/peers/peers.sh found and checked it) is unpacked into
# BUILD/peers/perftest-26.04.17/src and built there unchanged, against:
#   - our CUDA: a folder (cuda/) holding include/nvidia's headers as
#     include/ and the emulated libcuda.so (BUILD/emu/cuda) as lib64/, the
#     way scripts/ucx-build.sh stages "our CUDA tree"; configure is given
#     CUDA_H_PATH=cuda/include/cuda.h and finds cuMemGetHandleForAddressRange
#     in that libcuda, so --use_cuda and --use_cuda_dmabuf are built in.
#     --disable-cudart: the runtime is only for perftest's GPU validation
#     kernel, which needs nvcc.
#   - rdma-core 56.1 as emu/rdma-core/rdma-core-build.sh built it (its
#     headers, libibverbs and libibumad; librdmacm is Debian's): the
#     libibverbs the cluster guests run, so what configure detects
#     (ibv_reg_dmabuf_mr among it) is what the binary finds there.
#     Vendor direct-verbs libraries (mlx5, hns, efa) and libnuma are
#     configured out: rxe is the only NIC, and the guest carries less.
# ib_write_bw, ib_read_bw, ib_read_lat and ib_send_bw are built, into
# BUILD/peers/perftest-26.04.17/out/bin.  A stamp records the sha256 of the
# tarball, our CUDA headers and libcuda, rdma-core's stamp, this
# script and scripts/lib-build.sh; with the same stamp nothing is rebuilt.
#
# Exit status: 0 built or up to date; 77 a build tool or rdma-core's build
# is missing (stderr names it); 1 any other failure.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 BUILD TARBALL" >&2; exit 2; }
build=$(cd "$1" && pwd); tarball=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
name=perftest-26.04.17
dir=$build/peers/$name
src=$dir/src/$name
out=$dir/out
rc=$build/rdma-core/out
libcuda=$build/emu/cuda/libcuda.so
progs="ib_write_bw ib_read_bw ib_read_lat ib_send_bw"

missing() { echo "perftest-build: missing: $*" >&2; exit 77; }
say() { echo "perftest-build: $*"; }
die() { echo "perftest-build: $*" >&2; exit 1; }
. "$top/scripts/lib-build.sh"
for t in autoreconf libtoolize make cc pkg-config; do
	command -v $t >/dev/null 2>&1 || missing "$t (scripts/deps.sh test installs it)"
done
pkg-config --exists libpci || missing "libpci (libpci-dev: perftest's configure requires it)"
[ -f "$build/rdma-core/stamp" ] && [ -f "$rc/lib/libibverbs.so.1" ] ||
	missing "rdma-core 56.1 in $rc (emu/rdma-core/rdma-core-build.sh)"
[ -f "$libcuda" ] || { echo "perftest-build: no $libcuda (make userspace)" >&2; exit 1; }

stamp="$(sha256sum "$tarball" | cut -d' ' -f1) $( { cat "$top"/include/nvidia/*.h "$libcuda" \
	"$build/rdma-core/stamp" "$0" "$top/scripts/lib-build.sh"; } | sha256sum | cut -d' ' -f1)"
if [ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$stamp" ] && [ -x "$out/bin/ib_read_bw" ]; then
	echo "perftest-build: up to date ($out)"
	exit 0
fi
rm -rf "$dir"
mkdir -p "$dir/src" "$dir/cuda/include" "$dir/cuda/lib64" "$out/bin"
tar -xzf "$tarball" -C "$dir/src"
[ -d "$src" ] || { echo "perftest-build: $tarball holds no $name/" >&2; exit 1; }
cp -R "$top/include/nvidia/." "$dir/cuda/include/"
ln -s "$libcuda" "$dir/cuda/lib64/libcuda.so"
# configure decides mlx5 DEVX support from the header alone, and Debian's
# libibverbs-dev puts mlx5dv.h in /usr/include: a header of that name
# that stops the compiler, found first, keeps the mlx5 code out.
mkdir -p "$dir/no-dv/infiniband"
for h in mlx5dv.h efadv.h hnsdv.h; do
	echo "#error \"$h: no vendor direct verbs for the emulated machine (tests/peers/perftest-build.sh)\"" \
		>"$dir/no-dv/infiniband/$h"
done

log_start "$dir/build.log"
run "autogen" sh -c "cd '$src' && ./autogen.sh"
run "configure (our CUDA, rdma-core 56.1)" sh -c "cd '$src' && ./configure \
	CUDA_H_PATH='$dir/cuda/include/cuda.h' --disable-cudart \
	CPPFLAGS='-I$dir/no-dv -I$rc/include' \
	LDFLAGS='-L$rc/lib -L$dir/cuda/lib64 -Wl,-rpath-link,$rc/lib' \
	ac_cv_lib_mlx5_mlx5dv_create_qp=no ac_cv_lib_hns_hnsdv_query_device=no \
	ac_cv_lib_efa_efadv_create_qp_ex=no ac_cv_lib_efa_efadv_create_driver_qp=no \
	ac_cv_lib_numa_numa_available=no"
# configure leaves out what it cannot find, silently: the GPU paths must be in.
for d in HAVE_CUDA HAVE_CUDA_DMABUF HAVE_REG_DMABUF_MR; do
	grep -q "^#define $d 1" "$src/config.h" ||
		{ echo "perftest-build: configure did not define $d (see $src/config.log)" >&2; exit 1; }
done
run "make $progs" make -C "$src" -j1 $progs
for p in $progs; do cp "$src/$p" "$out/bin/"; done
echo "$stamp" >"$dir/stamp"
echo "perftest-build: built $out"
