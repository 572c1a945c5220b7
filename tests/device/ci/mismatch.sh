#!/bin/sh
# SPDX-License-Identifier: MIT
# Negative test: callers that declare a library function wrongly
# (tests/callers/mismatch.cu, one case per MISMATCH) must fail to link, with
# nvlink naming the function, both against the objects and the archive.  If
# this passes, a prototype drift between header and PTX cannot reach a
# binary silently.
. "$(dirname "$0")/common.sh"
need_nvcc
scratch

check_quiet "library builds" build_lib "$T"
for case in 1:gdirect_wait_u32 2:gdirect_signal_u64 3:gdirect_signal_u32 \
	    4:gdirect_ring_consume 5:gdirect_ring_consume 6:gdirect_load_sc_u32; do
	m=${case%%:*}
	fn=${case#*:}
	# One architecture is enough to compare prototypes, and halves the time.
	check_quiet "mismatch $m compiles (nvcc -dc)" \
		"$NVCC" -arch=sm_90 -DMISMATCH="$m" -dc "$DEVICE_TESTS/callers/mismatch.cu" -o "$T/m$m.o"
	check_fails "mismatch $m ($fn) refused by nvlink, archive" \
		"Prototype doesn't match for '$fn'" \
		"$NVCC" -arch=sm_90 -dlink "$T/m$m.o" -L"$T" -lgdirect_device -o "$T/x.o"
	check_fails "mismatch $m ($fn) refused by nvlink, objects" \
		"Prototype doesn't match for '$fn'" \
		"$NVCC" -arch=sm_90 -dlink "$T/m$m.o" "$T/flag.o" "$T/seq_cst.o" "$T/ring.o" -o "$T/x.o"
done
tap_done
