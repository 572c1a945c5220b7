#!/bin/sh
# SPDX-License-Identifier: MIT
# Line numbers in the hand-written PTX are current: each ".loc 1 N" names
# the line after it, each "// @line" immediate its own line.  An edit that
# forgot tools/loc-renumber.awk fails here (and shows the fix).
. "$(dirname "$0")/common.sh"
scratch

bench=$DEVICE_DIR/../bench/device
for f in "$DEVICE_DIR"/ptx/*.ptx "$DEVICE_TESTS"/gpu/*.ptx "$bench"/*.ptx; do
	name=${f#"$DEVICE_DIR"/../}; name=${name#"$DEVICE_DIR"/}
	name=${name#"$DEVICE_TESTS"/}
	check_quiet "$name: .loc and @line numbers current" \
		sh -c "grep -q '^[[:space:]]*\.loc[[:space:]]' '$f' &&
		       awk -f '$DEVICE_DIR/tools/loc-renumber.awk' '$f' | diff -u '$f' -"
done
tap_done
