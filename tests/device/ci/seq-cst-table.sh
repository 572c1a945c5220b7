#!/bin/sh
# SPDX-License-Identifier: MIT
# seq_cst.ptx is the PTX ABI's seq_cst mapping (PTX Interoperability 12.8,
# chapter 4) and nothing weaker: for each function, its memory instructions
# in order must be exactly the table's.
. "$(dirname "$0")/common.sh"
scratch

# Memory instructions of one .func, parameter moves left out.
ops() {
	awk -v fn="$1" '
		$0 ~ "^\\.visible \\.func.* " fn "\\(" { inside = 1; next }
		inside && /^}/ { exit }
		inside {
			sub(/^[ \t]+/, ""); split($0, w, /[ \t;]/); op = w[1]
			if (op ~ /^(fence|membar|atom|red|ld|st)\./ &&
			    op !~ /^(ld|st)\.param/)
				printf "%s ", op
		}' "$DEVICE_DIR/ptx/seq_cst.ptx"
}

expect() {
	check_quiet "$1: $2" sh -c "[ \"\$(echo \$1)\" = \"$2\" ] || { echo \"found: \$1\"; exit 1; }" sh "$(ops "$1")"
}

expect gdirect_fence_sc "fence.sc.sys"
for b in 32 64; do
	expect gdirect_load_sc_u$b "fence.sc.sys ld.acquire.sys.u$b"
	expect gdirect_store_sc_u$b "fence.sc.sys st.release.sys.u$b"
	expect gdirect_fetch_add_sc_u$b "fence.sc.sys atom.acq_rel.sys.add.u$b"
	expect gdirect_exchange_sc_u$b "fence.sc.sys atom.acq_rel.sys.exch.b$b"
	expect gdirect_cas_sc_u$b "fence.sc.sys atom.acq_rel.sys.cas.b$b"
done
tap_done
