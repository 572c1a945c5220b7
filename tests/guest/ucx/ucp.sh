#!/bin/sh
# SPDX-License-Identifier: MIT
# UCP between GPU buffers with the UCX of `make ucx` (ucx-ucp-test.c: the
# bytes checked on the GPU, the memory type UCX detects, its memory hooks).
. /tests/lib.sh
if [ ! -x /opt/ucx/bin/ucx_info ] || [ ! -x /tests/ucx-ucp-test ]; then
	echo "# UCX IS NOT IN THIS GUEST: run 'make ucx' before packing the initramfs"
	skip "UCP with GPU buffers" "no UCX build (make ucx) in this initramfs"
	tap_done
	exit 0
fi
lacks=$(ucx_kernel_lacks)
if [ -n "$lacks" ]; then
	skip "UCP with GPU buffers" "$lacks"
	tap_done
	exit 0
fi
unset UCX_MEM_CUDA_HOOK_MODE UCX_TLS
LD_LIBRARY_PATH="/opt/ucx/lib:${LD_LIBRARY_PATH:-/usr/lib/gdirect}" exec /tests/ucx-ucp-test
