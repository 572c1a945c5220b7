#!/bin/sh
# SPDX-License-Identifier: MIT
# The dma-buf exporter as NVIDIA ships it and the CUDA driver API version
# knob (cuda-dmabuf-mmap-test.c): the module parameter cuda_version at load
# (13000 or 13030, anything else refused), then mmap of exports (refused at
# 13000, allowed at 13030, where libcuda asks for it on every export), the
# exporter's allow-mmap gate through its ioctl, the PCIe mapping type at
# both versions, gdirect_edu on the static exporter, the
# memory's lifetime while mmapped and an unbind with a mapped export;
# afterwards nothing is left and the modules unload.
. /tests/lib.sh
[ -e /modules/gdirect_edu.ko ] || skip_all "no gdirect_edu, the importer of these tests"
if load_module nvp2p_emu cuda_version=13020 2>/dev/null; then
	not_ok "insmod nvp2p_emu cuda_version=13020 is refused"
	unload_module nvp2p_emu
else
	ok "insmod nvp2p_emu cuda_version=13020 is refused"
fi
if load_module nvp2p_emu cuda_version=13030; then
	check "cuda_version=13030 at load: the knob says 13030" \
		[ "$(emu_stat cuda_version)" = 13030 ]
	unload_module nvp2p_emu
else
	not_ok "insmod nvp2p_emu cuda_version=13030"
fi
if ! load_module nvp2p_emu || ! load_module gdirect || ! load_module gdirect_edu; then
	not_ok "nvp2p_emu, gdirect and gdirect_edu load"
	tap_done
	exit 1
fi
/tests/cuda-dmabuf-mmap-test >/tmp/dmabuf-mmap.tap 2>&1
rc=$?
count=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' /tmp/dmabuf-mmap.tap | head -n1)
if [ "$count" = 0 ]; then
	# the proprietary flavour: no dma-buf export at all
	skip "cuda-dmabuf-mmap-test" "$(sed -n 's/^1\.\.0 # SKIP //p' /tmp/dmabuf-mmap.tap)"
else
	tap_relay mmap /tmp/dmabuf-mmap.tap "${count:-1}" cuda-dmabuf-mmap-test
fi
check_rc "$rc" "cuda-dmabuf-mmap-test exits 0"
for m in gdirect_edu gdirect nvp2p_emu; do
	check "$m unloads" unload_module $m
done
tap_done
