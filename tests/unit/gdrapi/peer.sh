#!/bin/sh
# SPDX-License-Identifier: MIT
# peer.sh SOURCE CC... - gdrapi/include/gdrapi.h against gdrcopy's
# own include/gdrapi.h, taken from gdrcopy's release tarball.
#
# Programs built against gdrcopy's header must build against ours and run
# on our library, and the other way round, so the two headers must declare
# the same interface.  This test reads gdrcopy's header from
# gdrcopy-2.6.tar.gz, never from a copy in this repository, and:
#   - compiles gdrapi_probe.c against it and against ours and compares
#     every macro's value and type, enumerator, enumeration size, typedef,
#     structure size and alignment, member offset, size and type, and
#     bit-field position;
#   - compares function prototypes by redeclaration: gdrcopy's declarations
#     of every function, compiled after our header, and ours after gdrcopy's
#     header (a conflicting redeclaration is a compile error, and every
#     function must already be declared);
#   - lists the names each header declares (macros, tags, typedefs,
#     enumerators, members, functions) and the headers it includes, and
#     checks that they are the same, and that the probe covers every name
#     of gdrcopy's header but those listed in $absent below with a reason;
#   - plants a wrong enumerator, a wrong prototype, swapped bit-fields and
#     a narrower GPU_PAGE_SIZE in copies of our header, and expects each to
#     be caught.
#
# The tarball is found by tests/peers/peers.sh, as for every peer: in
# $GDIRECT_PEERS_DIR, or in SOURCE/../shared/peers when that variable is
# unset, checked by its sha256, else downloaded from upstream where the
# machine can (docs/gdrcopy.md).  A set but relative or missing directory,
# or a tarball with another checksum, is an error.  Without the tarball the
# test is a SKIP that names the file.
# CC is the compiler command meson uses.
set -u
# One collation for sort and comm, and the compiler's messages in English.
LC_ALL=C
export LC_ALL
src=$1
shift
. "$src/tests/include/tap.sh"
. "$src/tests/include/peer-header.sh"

member=gdrcopy-2.6/include/gdrapi.h
ours=$src/gdrapi/include/gdrapi.h

# Names of gdrcopy's header that the probe deliberately does not check, one
# "NAME reason" a line.  None now: every name is checked.
absent=''

d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

peer_header gdrcopy-2.6.tar.gz "$member" "gdrcopy's gdrapi.h"
CC="$*"

# run_probe HEADER NAME: compile and run the probe against HEADER; output
# in $d/NAME.txt.
run_probe() {
	probe "$src/tests/unit/gdrapi/gdrapi_probe.c" "$2" -include "$1"
}

# decls HEADER NAME: what HEADER declares, one "kind name" a line, in
# $d/NAME.names (kinds: include, macro, struct, enum, typedef, enumerator,
# member (TAG.NAME), function), and its function declarations, one a line
# ending in ";", in $d/NAME.protos.  Macros and includes come from the
# text; the rest from the header preprocessed without its includes (so
# without comments), split at braces and semicolons.  A declaration of a
# form this parser does not know is printed as "unparsed ...", which fails
# the comparison, so nothing goes unchecked unnoticed.
decls() {
	hdr=$1 name=$2
	{
		sed -n 's/^[ 	]*#[ 	]*include[ 	]*<\([^>]*\)>.*/include \1/p' "$hdr"
		sed -n 's/^[ 	]*#[ 	]*define[ 	]*\([A-Za-z_][A-Za-z0-9_]*\).*/macro \1/p' "$hdr"
	} >"$d/$name.names"
	sed '/^[ 	]*#[ 	]*include/d' "$hdr" |
		$CC -E -P -x c - 2>"$d/$name.cpp.log" |
		tr '\n' ' ' | sed 's/[{};]/\n&\n/g' |
		awk -v protos="$d/$name.protos" '
		function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); gsub(/[ \t]+/, " ", s); return s }
		# The last identifier of s.
		function last(s,   a, n) { n = split(s, a, /[^A-Za-z0-9_]+/); while (n > 0 && a[n] == "") n--; return a[n] }
		$0 == "{" {
			acc = trim(acc)
			if (depth++ || acc !~ /^(typedef )?(struct|enum) [A-Za-z_][A-Za-z0-9_]*$/) {
				print "unparsed " acc " {"; acc = ""; next
			}
			kind = acc ~ /(^| )struct / ? "struct" : "enum"
			tag = last(acc); print kind " " tag
			typedef = acc ~ /^typedef /; acc = ""; next
		}
		$0 == "}" {
			if (kind == "enum") {
				n = split(acc, item, ",")
				for (i = 1; i <= n; i++)
					if (match(item[i], /[A-Za-z_][A-Za-z0-9_]*/))
						print "enumerator " substr(item[i], RSTART, RLENGTH)
			}
			depth--; closed = 1; acc = ""; next
		}
		$0 == ";" {
			acc = trim(acc)
			if (depth) {
				m = acc; sub(/:.*/, "", m); sub(/\[.*/, "", m)
				if (kind == "struct" && m != "") print "member " tag "." last(m)
				else print "unparsed " acc ";"
			} else if (closed) {
				if (typedef && acc ~ /^[A-Za-z_][A-Za-z0-9_]*$/) print "typedef " acc
				else if (acc != "") print "unparsed } " acc ";"
			} else if (acc ~ /^struct [A-Za-z_][A-Za-z0-9_]*$/) {
				print "struct " last(acc)
			} else if (acc ~ /^typedef / && acc !~ /[()]/) {
				print "typedef " last(acc)
			} else if (acc !~ /^typedef / && match(acc, /[A-Za-z_][A-Za-z0-9_]* ?\(/)) {
				f = substr(acc, RSTART, RLENGTH); sub(/ ?\($/, "", f)
				print "function " f; print acc ";" >protos
			} else if (acc != "") {
				print "unparsed " acc ";"
			}
			closed = 0; acc = ""; next
		}
		{ acc = acc " " $0 }
		' >>"$d/$name.names" || return 1
	: >>"$d/$name.protos"
	[ -s "$d/$name.cpp.log" ] && { diag "$(cat "$d/$name.cpp.log")"; return 1; }
	sort -o "$d/$name.names" "$d/$name.names"
}

compare_probes "$ours" gdrapi/include/gdrapi.h

# protos HEADER DECLS NAME: compile, after HEADER, a use of every function
# DECLS declares (so each must be declared already) and DECLS' declarations
# themselves (so each must agree with HEADER's).  The compiler's messages
# in $d/NAME.log.
protos() {
	{
		printf '#include "%s"\n' "$1"
		echo 'void gd_declared(void);'
		echo 'void gd_declared(void)'
		echo '{'
		sed -n 's/^function \(.*\)/	(void)\&\1;/p' "$2.names"
		echo '}'
		cat "$2.protos"
	} >"$d/$3.c"
	$CC -std=c11 -Wall -Wextra -Werror -c "$d/$3.c" -o "$d/$3.o" >"$d/$3.log" 2>&1
}

if decls "$peer" peer && decls "$ours" ours; then
	ok "listed the declarations of both headers"
else
	not_ok "listed the declarations of both headers"
fi
nfun=$(grep -c '^function ' "$d/peer.names")
nbad=$(cat "$d/peer.names" "$d/ours.names" | grep -c '^unparsed')
check "the list holds gdrcopy's $nfun functions and no unparsed declaration" \
	[ "$nfun" -ge 16 ] && [ "$nbad" -eq 0 ]
grep '^unparsed' "$d/peer.names" "$d/ours.names" | while read -r l; do diag "$l"; done

if protos "$ours" "$d/peer" theirs-on-ours; then
	ok "gdrcopy's $nfun prototypes agree with ours (compiled after our header)"
else
	not_ok "gdrcopy's prototypes compiled after our header"; diag "$(cat "$d/theirs-on-ours.log")"
fi
if protos "$peer" "$d/ours" ours-on-theirs; then
	ok "our prototypes agree with gdrcopy's (compiled after gdrcopy's header)"
else
	not_ok "our prototypes compiled after gdrcopy's header"; diag "$(cat "$d/ours-on-theirs.log")"
fi

# The same names on both sides: a name one header lacks breaks programs
# written against it (the probe catches a missing one too, but not ours
# declaring more).  Includes count: a program may use what gdrcopy's
# header includes for it.
only_peer=$(comm -23 "$d/peer.names" "$d/ours.names" | tr '\n' ',' | sed 's/,$//')
only_ours=$(comm -13 "$d/peer.names" "$d/ours.names" | tr '\n' ',' | sed 's/,$//')
check "our header declares all $(wc -l <"$d/peer.names") names and includes of gdrcopy's (missing: ${only_peer:-none})" [ -z "$only_peer" ]
check "our header declares nothing gdrcopy's does not (extra: ${only_ours:-none})" [ -z "$only_ours" ]

# Every name gdrcopy's header declares must be in the probe's output (a
# function: in the redeclarations above), so that one added there cannot
# go unchecked, unless $absent lists it.  A listed name that gdrcopy's
# header lacks or that the probe covers is a stale entry.
key_of() {
	case $1 in
	macro|enumerator) echo "$2" ;;
	struct|enum|typedef|member) echo "$1($2)" ;;
	esac
}
missing='' stale=''
while read -r kind nm; do
	case $kind in include|function|unparsed) continue ;; esac
	listed=$(printf '%s\n' "$absent" | awk -v n="$nm" '$1 == n')
	if grep -qF "$(key_of "$kind" "$nm") " "$d/peer.txt"; then
		[ -z "$listed" ] || stale="$stale $nm"
	elif [ -z "$listed" ]; then
		missing="$missing $nm"
	fi
done <"$d/peer.names"
for nm in $(printf '%s\n' "$absent" | awk '{ print $1 }'); do
	awk -v n="$nm" '$2 == n { f = 1 } END { exit !f }' "$d/peer.names" ||
		stale="$stale $nm"
done
check "the probe prints every macro, tag, typedef, enumerator and member of gdrcopy's header (missing:${missing:- none})" [ -z "$missing" ]
check "every name listed as deliberately unchecked is declared by gdrcopy and not probed (stale:${stale:- none})" [ -z "$stale" ]

# Self-checks: the comparisons catch a difference planted in a copy of our
# header.  plant WHAT SED-EXPR: the copy, $d/planted.h, which must differ
# from ours.
plant() {
	sed "$2" "$ours" >"$d/planted.h"
	if cmp -s "$d/planted.h" "$ours"; then
		not_ok "self-check ($1): the plant did not change the header"
		return 1
	fi
}
# plant_value WHAT SED-EXPR KEYS: the probe comparison must fail on exactly
# KEYS (space-separated).
plant_value() {
	what=$1 key=$3
	plant "$what" "$2" || return
	if ! run_probe "$d/planted.h" planted; then
		not_ok "self-check ($what): the planted header did not compile"
		return
	fi
	# The same comparison as above, its TAP lines kept aside.
	out=$(n=0; compare peer planted)
	st=$?
	bad=$(printf '%s\n' "$out" | sed -n 's/^not ok [0-9]* - \([^:]*\):.*/\1/p' | sort | tr '\n' ' ')
	# shellcheck disable=SC2086 # KEYS is a list of words
	want=$(printf '%s\n' $key | sort | tr '\n' ' ')
	if [ "$st" -eq 0 ]; then
		not_ok "self-check ($what): the comparison passed"
	elif [ "$bad" != "$want" ]; then
		not_ok "self-check ($what): the comparison failed, but on ${bad}not on ${want}alone"
	else
		ok "self-check ($what): the comparison tells $key apart"
	fi
}
# plant_proto WHAT SED-EXPR FUNCTION: the probe comparison must pass, and
# the redeclaration of gdrcopy's prototypes must fail, naming FUNCTION.
plant_proto() {
	what=$1 fn=$3
	plant "$what" "$2" || return
	if ! run_probe "$d/planted.h" planted || ! (compare peer planted) >/dev/null; then
		not_ok "self-check ($what): the probe comparison did not pass"
	elif protos "$d/planted.h" "$d/peer" planted-protos; then
		not_ok "self-check ($what): the redeclarations compiled"
	elif ! grep -q "conflicting types.*$fn" "$d/planted-protos.log"; then
		not_ok "self-check ($what): the redeclarations failed, but not on $fn"
		diag "$(cat "$d/planted-protos.log")"
	else
		ok "self-check ($what): the redeclarations tell $fn apart"
	fi
}
plant_value "GDR_PIN_FLAG_FORCE_PCIE = 2" \
	's/\(GDR_PIN_FLAG_FORCE_PCIE[ 	]*=[ 	]*\)1/\12/' \
	GDR_PIN_FLAG_FORCE_PCIE
plant_value "mapped and wc_mapping swapped" \
	's/\([ 	]*unsigned[ 	]*\)mapped:1;/\1gd_tmp:1;/;s/\([ 	]*unsigned[ 	]*\)wc_mapping:1;/\1mapped:1;/;s/gd_tmp:1;/wc_mapping:1;/' \
	"member(gdr_info_v2.mapped) member(gdr_info_v2.wc_mapping)"
plant_value "GPU_PAGE_SIZE unsigned int" \
	's/\(define[ 	]*GPU_PAGE_SIZE[ 	]*(1\)UL/\1U/' \
	"type(GPU_PAGE_SIZE) type(GPU_PAGE_OFFSET) type(GPU_PAGE_MASK) GPU_PAGE_MASK"
plant_proto "gdr_copy_from_mapping's source not const" \
	'/gdr_copy_from_mapping/,/;/s/const void \*map_d_ptr/void *map_d_ptr/' \
	gdr_copy_from_mapping
plant_proto "gdr_get_attribute taking an int" \
	's/gdr_get_attribute(gdr_t g, gdr_attr_t attr/gdr_get_attribute(gdr_t g, int attr/' \
	gdr_get_attribute
tap_done
