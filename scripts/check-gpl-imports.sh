#!/bin/sh
# SPDX-License-Identifier: MIT
# check-gpl-imports.sh [-v] SYMVERS... -- MODULE.ko...
#
# Lists each module's undefined symbols against the kernel's Module.symvers
# and the providers' (nvp2p_emu's, gdirect's), and fails when a module
# imports a GPL-only one (EXPORT_SYMBOL_GPL, EXPORT_SYMBOL_NS_GPL).  A module
# that sits on NVIDIA's proprietary driver, which is licensed "NVIDIA",
# inherits its taint and is then refused by the kernel if it uses any
# GPL-only symbol ("module using GPL-only symbols uses symbols ... from
# proprietary module"); modpost does not see this, as the module itself is
# GPL.  -v prints every import with its export type and exporter.
# Exit status: 0 clean, 1 a GPL-only import, 2 usage or a missing file.
set -eu
verbose=0
[ "${1:-}" = -v ] && { verbose=1; shift; }
symvers=""
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	[ -r "$1" ] || { echo "check-gpl-imports: no symbol file $1" >&2; exit 2; }
	symvers="$symvers $1"
	shift
done
[ "${1:-}" = -- ] && shift
[ -n "$symvers" ] && [ $# -gt 0 ] || {
	echo "usage: check-gpl-imports.sh [-v] SYMVERS... -- MODULE.ko..." >&2
	exit 2
}
command -v nm >/dev/null || { echo "check-gpl-imports: nm not found" >&2; exit 2; }
bad=0
for ko in "$@"; do
	[ -r "$ko" ] || { echo "check-gpl-imports: no module $ko" >&2; exit 2; }
	name=$(basename "$ko" .ko)
	# Module.symvers: CRC <tab> symbol <tab> exporter <tab> type <tab> ns
	nm -u "$ko" | awk '{ print $NF }' | awk -F '\t' -v mod="$name" \
		-v verbose=$verbose '
		FILENAME != "-" { type[$2] = $4; from[$2] = $3; next }
		{
			s = $1
			if (!(s in type)) {
				if (verbose)
					printf "%s: %s (not exported by the given files)\n", mod, s
				next
			}
			if (type[s] ~ /_GPL$/) {
				printf "%s: GPL-only import %s (%s from %s)\n", mod, s, type[s], from[s]
				bad = 1
			} else if (verbose) {
				printf "%s: %s (%s from %s)\n", mod, s, type[s], from[s]
			}
		}
		END { exit bad }' $symvers - || bad=1
done
if [ $bad -ne 0 ]; then
	echo "check-gpl-imports: a module meant to load next to a proprietary provider imports GPL-only symbols" >&2
	exit 1
fi
exit 0
