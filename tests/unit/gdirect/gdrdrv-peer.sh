#!/bin/sh
# SPDX-License-Identifier: MIT
# gdrdrv-peer.sh SOURCE CC... - include/uapi/gdrdrv.h against gdrcopy's
# own gdrdrv.h, taken from gdrcopy's release tarball.
#
# NVIDIA's libgdrapi sends the request numbers of its own header and lays
# out the arguments as that header says, so ours must equal it.  This test
# reads gdrcopy's header from gdrcopy-2.6.tar.gz, never from a copy in this
# repository, compiles gdrdrv_probe.c against it and against ours, and
# compares every request number, structure size, member offset, version
# constant, enumeration and flag.  It also checks that the probe names
# every request, structure member and constant gdrcopy's header declares,
# and that a planted wrong request number or version gate is caught.
#
# The tarball is found by tests/peers/peers.sh, as for every peer: in
# $GDIRECT_PEERS_DIR, or in SOURCE/../shared/peers when that variable is
# unset, checked by its sha256, else downloaded from upstream where the
# machine can (docs/gdrcopy.md).  A set but relative or missing directory,
# or a tarball with another checksum, is an error.  Without the tarball the
# test is a SKIP that names the file.
# CC is the compiler command meson uses.
set -u
src=$1
shift
. "$src/tests/include/tap.sh"
. "$src/tests/include/peer-header.sh"

member=gdrcopy-2.6/src/gdrdrv/gdrdrv.h

d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

peer_header gdrcopy-2.6.tar.gz "$member" "gdrcopy's gdrdrv.h"

# run_probe HEADER NAME: compile and run the probe against HEADER; output
# in $d/NAME.txt.  gdrcopy's header needs the kernel types and ioctl macros
# included before it, as its own sources do.
run_probe() {
	probe "$src/tests/unit/gdirect/gdrdrv_probe.c" "$2" \
		-include linux/types.h -include linux/ioctl.h -include "$1"
}
CC="$*"

compare_probes "$src/include/uapi/gdrdrv.h" include/uapi/gdrdrv.h

# Every name gdrcopy's header declares must be in the probe's output, so
# that a request, member or constant added there cannot go unchecked.
# Macros: all but the header guard and the string helpers.
names=$(sed -n 's/^#define[ 	]*\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$peer" |
	grep -v -e '^__GDR_DRV_H__$' -e 'STRINGIFY' -e 'TOSTRING' -e '_STRING$')
# Enumerators: NAME = value lines.
names="$names $(sed -n 's/^[ 	]*\([A-Z][A-Z0-9_]*\)[ 	]*=.*/\1/p' "$peer")"
missing=
for nm in $names; do
	grep -q "^$nm " "$d/peer.txt" || missing="$missing $nm"
done
check "the probe prints every macro and enumerator of gdrcopy's header (missing:${missing:- none})" [ -z "$missing" ]

# Structure members: "type name;" lines between "struct NAME" and "};".
awk '
	/^struct [A-Z0-9_]+/ { s = $2; next }
	/^};/ { s = ""; next }
	s != "" {
		sub(/\/\/.*/, "")
		if (match($0, /[A-Za-z_][A-Za-z0-9_]*[ \t]*;/)) {
			m = substr($0, RSTART, RLENGTH)
			sub(/[ \t]*;/, "", m)
			print "offsetof(" s "," m ")"
		}
	}' "$peer" >"$d/members.txt"
missing=
nmem=0
while read -r m; do
	nmem=$((nmem + 1))
	grep -qF "$m " "$d/peer.txt" || missing="$missing $m"
done <"$d/members.txt"
check "the probe prints the offset of all $nmem members of gdrcopy's structures (missing:${missing:- none})" [ -z "$missing" ] && [ "$nmem" -gt 20 ]

# Self-checks: the comparison catches the two mistakes this header once
# had, planted in a copy of it.  plant WHAT SED-EXPR KEY: the copy must
# differ from ours, and compare must fail on KEY.
plant() {
	what=$1 expr=$2 key=$3
	sed "$expr" "$src/include/uapi/gdrdrv.h" >"$d/planted.h"
	if cmp -s "$d/planted.h" "$src/include/uapi/gdrdrv.h"; then
		not_ok "self-check ($what): the plant did not change the header"
		return
	fi
	if ! run_probe "$d/planted.h" planted; then
		not_ok "self-check ($what): the planted header did not compile"
		return
	fi
	# The same comparison as above, its TAP lines kept aside.
	out=$(n=0; compare peer planted)
	st=$?
	bad=$(printf '%s\n' "$out" | grep '^not ok')
	if [ "$st" -eq 0 ]; then
		not_ok "self-check ($what): the comparison passed"
	elif [ "$(printf '%s\n' "$bad" | wc -l)" -ne 1 ] ||
		! printf '%s\n' "$bad" | grep -q " - $key: "; then
		not_ok "self-check ($what): the comparison failed, but not on $key alone"
		diag "$bad"
	else
		ok "self-check ($what): the comparison tells $key apart"
	fi
}
plant "PIN_BUFFER_V2 encoding a pointer" \
	's/\(_IOWR(GDRDRV_IOCTL, 7, struct GDRDRV_IOC_PIN_BUFFER_V2_PARAMS\))/\1 *)/' \
	GDRDRV_IOC_PIN_BUFFER_V2
plant "GET_ATTR gated at 2.4" \
	'/define GDRDRV_MINIMUM_VERSION_WITH_GET_ATTR/{n;s/| 5)/| 4)/;}' \
	GDRDRV_MINIMUM_VERSION_WITH_GET_ATTR
tap_done
