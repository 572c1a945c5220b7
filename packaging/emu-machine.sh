#!/bin/sh
# SPDX-License-Identifier: MIT
# emu-machine.sh BUILD DIR - gdirect-emu, the emulated machine as a command
# (docs/emulated-ci.md), installed into DIR: the command and the harness it
# drives at their source tree's paths (the command finds them beside
# itself), and the machine built in BUILD as DIR/machine, a build tree's
# shape: each flavour's modules, our libraries (the emulated CUDA, runtime
# and NVML among them, for the guest only), and the cluster's Soft-RoCE
# module and rdma-core where they were built.  make install
# (packaging/install.sh) and the Debian package gdirect-emu
# (packaging/debian/rules) both install it this way.
set -eu
build=$1; dir=$2
top=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$dir"
for f in emu/cli/gdirect-emu emu/cli/guest-run.sh emu/cli/gdirect-emu-barrier \
	tests/harness/run.py tests/harness/cluster.py tests/harness/init \
	tests/harness/build-initramfs.sh tests/harness/build-cluster-initramfs.sh \
	tests/harness/lib.sh tests/harness/hostcheck tests/harness/manifest.sh \
	tests/TESTS tests/include/tap.sh \
	tests/guest/cluster/cluster-lib.sh emu/rxe/build.sh emu/rxe/rxe-gpu-6.1.patch \
	emu/rxe/rxe-gpu-6.12.patch emu/rxe/rxe-read-pace-6.1.patch \
	emu/rxe/rxe-read-pace-6.12.patch \
	emu/rxe/rxe_gpu.c emu/rdma-core/rdma-core-build.sh \
	emu/rdma-core/rxe-reg-dmabuf-mr.patch tests/peers/peers.sh \
	tests/peers/perftest-build.sh; do
	mode=644
	[ -x "$top/$f" ] && mode=755
	install -D -m "$mode" "$top/$f" "$dir/$f"
done
for ko in "$build"/kmod/*/*/*.ko; do
	[ -e "$ko" ] || continue
	rel=${ko#"$build"/}
	# The flavours gdirect-emu boots, not the other kernels' builds.
	case $rel in kmod/v2/*|kmod/v1/*|kmod/tegra/*|kmod/prop/*|kmod/coherent/*) ;; *) continue ;; esac
	install -D -m 644 "$ko" "$dir/machine/$rel"
done
# Only the folders the build has: the product's alone has no emu/.
(cd "$build" && for d in emu lib gdrapi; do
	[ ! -d "$d" ] || find "$d" -name 'lib*.so*' ! -path '*.p/*' \( -type f -o -type l \)
done) |
	while read -r f; do
		mkdir -p "$dir/machine/$(dirname "$f")"
		cp -P "$build/$f" "$dir/machine/$f"
	done
if [ -f "$build/rdma-core/out/lib/libibverbs.so.1" ]; then
	mkdir -p "$dir/machine/rdma-core"
	cp -a "$build/rdma-core/out" "$dir/machine/rdma-core/"
fi
