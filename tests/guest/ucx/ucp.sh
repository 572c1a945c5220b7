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
# UCX needs IPv4 sockets; the debug kernel is built without networking
# beyond unix sockets.
if [ ! -d /proc/sys/net/ipv4 ]; then
	skip "UCP with GPU buffers" "this kernel has no IPv4 (the debug kernel has no network stack)"
	tap_done
	exit 0
fi
unset UCX_MEM_CUDA_HOOK_MODE UCX_TLS
LD_LIBRARY_PATH="/opt/ucx/lib:${LD_LIBRARY_PATH:-/usr/lib/gdirect}" exec /tests/ucx-ucp-test
