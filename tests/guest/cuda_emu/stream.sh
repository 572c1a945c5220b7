#!/bin/sh
# SPDX-License-Identifier: MIT
# Stream order (the legacy NULL stream's implicit synchronisation, host
# functions on the driver's thread), cuCtxSynchronize, cuCtxDestroy and
# sticky errors (cuda-stream-test.c); then, one process each since a
# sticky error ends CUDA for its process, the callbacks behind a fault
# running before cuStreamSynchronize and cuCtxSynchronize return it.
. /tests/lib.sh
load_module nvp2p_emu || { echo "1..0 # SKIP no emulator"; exit 1; }
t=/tmp/cuda-stream-test.tap
/tests/cuda-stream-test >"$t" 2>&1
tap_relay stream "$t" 12 cuda-stream-test
for m in sticky-late-stream sticky-late-ctx; do
	/tests/cuda-stream-test "$m" >"$t" 2>&1
	tap_relay "$m" "$t" 1 "cuda-stream-test $m"
done
rm -f "$t"
unload_module nvp2p_emu || not_ok "rmmod nvp2p_emu"
tap_done
