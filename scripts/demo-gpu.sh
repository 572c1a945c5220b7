#!/bin/sh
# SPDX-License-Identifier: MIT
# demo-gpu.sh BUILD - `make demo` on a machine with an NVIDIA driver.
#
# Runs what this machine can of the real path, each step with its figures,
# and names each step it cannot run and why:
#   1. the driver, and whether gdirect.ko can be built and loaded here;
#   2. demo/host/demo-gpu: classification against cuPointerGetAttribute,
#      SYNC_MEMOPS, registration and BAR copies (with gdirect.ko), BUFFER_ID
#      reuse after a free;
#   3. `gdirect info`: BAR1 through NVML, the PCIe path and the IOMMU check;
#   4. with nvcc: the device library's flag round trip (bench/device).
# Exits non-zero only when a step that ran failed.
set -eu
build=$1
top=$(cd "$(dirname "$0")/.." && pwd)
case $build in /*) ;; *) build=$PWD/$build ;; esac
rc=0
skipped=0

section() { printf '\n=== %s\n' "$1"; }
skip() { echo "SKIPPED: $1"; skipped=$((skipped + 1)); }

section "The machine"
echo "date:   $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "driver: $(head -n1 /proc/driver/nvidia/version 2>/dev/null || echo 'no /proc/driver/nvidia/version')"
if command -v nvidia-smi >/dev/null 2>&1; then
	nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id,memory.total \
		--format=csv,noheader 2>/dev/null | sed 's/^/GPU:    /' || true
fi
echo "kernel: $(uname -r); $(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-unknown OS}")"
kdir=/lib/modules/$(uname -r)/build
if [ "$(cat /proc/sys/kernel/modules_disabled 2>/dev/null || echo 0)" = 1 ]; then
	skip "gdirect.ko: this machine does not allow kernel modules (kernel.modules_disabled=1)"
elif [ ! -e /proc/modules ]; then
	skip "gdirect.ko: this kernel cannot load modules (no /proc/modules)"
elif [ ! -d "$kdir" ]; then
	skip "gdirect.ko: no kernel headers at $kdir, so no module build (Ubuntu: apt-get install linux-headers-$(uname -r))"
elif [ -e /dev/gdirect ]; then
	echo "gdirect.ko: loaded (/dev/gdirect)"
else
	echo "gdirect.ko: headers at $kdir; build and load it against the NVIDIA driver with:"
	echo "            make -C kernel/gdirect && insmod kernel/gdirect/gdirect.ko"
fi

section "CUDA allocation, classification, SYNC_MEMOPS, registration, BUFFER_ID (demo/host/demo-gpu)"
if ! "$build/demo/host/demo-gpu"; then
	echo "FAILED: demo-gpu"
	rc=1
fi

section "BAR1, the PCIe path and the IOMMU (gdirect info)"
# The peer of GPUDirect RDMA is an RDMA NIC; where there is none, the path
# to another PCI endpoint shows what the check reads.
peer="" standin=""
for d in /sys/class/infiniband/*/device; do
	[ -e "$d" ] && peer=$(basename "$(readlink -f "$d")") && break
done
if [ -z "$peer" ]; then
	for d in /sys/bus/pci/devices/*; do
		[ -r "$d/class" ] || continue
		case $(cat "$d/class") in 0x03*|0x06*) continue ;; esac
		peer=$(basename "$d") standin=1
		break
	done
fi
if [ -z "$peer" ]; then
	skip "PCIe path to a peer: no RDMA NIC (/sys/class/infiniband) and no other PCI endpoint here"
	set --
else
	[ -n "$standin" ] && echo "no RDMA NIC here (/sys/class/infiniband is empty): the path to PCI device $peer stands in"
	set -- --peer "$peer"
fi
if ! "$build/tools/gdirect" info "$@"; then
	echo "FAILED: gdirect info"
	rc=1
fi

section "The device library's flag round trip (bench/device/roundtrip)"
if [ ! -x "$build/bench/device/roundtrip" ]; then
	skip "$("$top/scripts/find-cuda.sh" 2>&1 >/dev/null || true) -- the device library was not built"
elif ! timeout 300 "$build/bench/device/roundtrip" 5000 5; then
	echo "FAILED: roundtrip"
	rc=1
fi

printf '\ndemo: %s; %d step(s) skipped on this machine, each named above with why\n' \
	"$([ $rc = 0 ] && echo "every step that could run passed" || echo "a step FAILED")" "$skipped"
exit $rc
