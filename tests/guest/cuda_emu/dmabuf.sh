#!/bin/sh
# SPDX-License-Identifier: MIT
# cuMemGetHandleForAddressRange: a dma-buf of GPU memory imported by
# gdirect_edu and DMA'd through, and its teardown (cuda-dmabuf-test.c);
# afterwards nothing is left and the modules unload.
. /tests/lib.sh
if ! load_module nvp2p_emu || ! load_module gdirect || ! load_module gdirect_edu; then
	echo "1..0 # SKIP modules do not load"
	exit 1
fi
/tests/cuda-dmabuf-test
rc=$?
echo "# after exit: allocations=$(emu_stat allocations) mem_used=$(emu_stat mem_used)"
[ "$(emu_stat allocations)" = 0 ] && [ "$(emu_stat mem_used)" = 0 ] || rc=1
for m in gdirect_edu gdirect nvp2p_emu; do unload_module $m || rc=1; done
exit $rc
