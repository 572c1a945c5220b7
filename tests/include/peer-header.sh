# SPDX-License-Identifier: MIT
# peer-header.sh - what the unit tests that hold one of our headers against
# a peer's share (source it after tap.sh; POSIX sh).  The caller sets $src
# (the source tree) and $d (its scratch folder).
#
#   peer_header TARBALL MEMBER WHAT
#                        finds TARBALL through tests/peers/peers.sh (its
#                        cache in $d/cache), extracts MEMBER into $d and sets
#                        $peer to it and $tarball to the tarball found.
#                        Without the tarball the whole test is a SKIP that
#                        says WHAT cannot be compared; any other failure of
#                        peers.sh or tar is a failure that ends the test.
#   probe PROBE NAME CFLAGS...
#                        compiles the C file PROBE with $CC, C11, warnings as
#                        errors and CFLAGS (the -include of a header), runs
#                        it into $d/NAME.txt; the compiler's messages are
#                        diagnostics when it fails (status 1)
#   compare_probes OURS WHAT
#                        runs the caller's run_probe HEADER NAME on the
#                        peer's header (into $d/peer.txt) and on OURS (into
#                        $d/ours.txt, WHAT naming it), a check each, and
#                        compares the two outputs
#   val NAME KEY         KEY's value in $d/NAME.txt (empty if none)
#   compare A B          one check per "KEY VALUE" line of $d/A.txt: a line
#                        $d/B.txt lacks or has with another value fails, as
#                        do line counts that differ; status 0 when every
#                        line matched
#
# The peers' headers are read from their release tarballs, never from a
# copy in this repository: peers.sh checks each tarball's sha256.

peer_header() {
	tarball=$("$src/tests/peers/peers.sh" find "$1" "$d/cache" 2>"$d/find.log")
	case $? in
	0) ;;
	77) skip_all "$(cat "$d/find.log"): $3 cannot be compared" ;;
	*)
		echo "1..1"
		echo "not ok 1 - $(cat "$d/find.log")"
		exit 1 ;;
	esac
	ok "found and checked $tarball (tests/peers/peers.sh)"

	if ! tar -xzf "$tarball" -C "$d" "$2" 2>"$d/tar.log"; then
		not_ok "extract $2"; diag "$(cat "$d/tar.log")"
		tap_done; exit 1
	fi
	peer=$d/$2
	peer_what=$3
	ok "extracted $2"
}

probe() {
	p_src=$1 p_name=$2
	shift 2
	if ! $CC -std=c11 -Wall -Wextra -Werror "$@" "$p_src" -o "$d/$p_name" \
		>"$d/$p_name.log" 2>&1; then
		diag "$(cat "$d/$p_name.log")"
		return 1
	fi
	"$d/$p_name" >"$d/$p_name.txt"
}

compare_probes() {
	check "probe compiled and ran against $peer_what" run_probe "$peer" peer
	check "probe compiled and ran against $2" run_probe "$1" ours
	if [ -s "$d/peer.txt" ] && [ -s "$d/ours.txt" ]; then
		compare peer ours
	else
		not_ok "no probe output to compare"
	fi
}

val() {
	awk -v k="$2" '$1 == k { print $2 }' "$d/$1.txt"
}

compare() {
	cmp_fails=0
	while read -r key v; do
		other=$(val "$2" "$key")
		if [ "$other" = "$v" ]; then
			ok "$key = $v in both"
		else
			not_ok "$key: gdrcopy $v, ours ${other:-missing}"
			cmp_fails=$((cmp_fails + 1))
		fi
	done <"$d/$1.txt"
	[ "$(wc -l <"$d/$1.txt")" -eq "$(wc -l <"$d/$2.txt")" ] ||
		{ not_ok "line counts differ"; cmp_fails=$((cmp_fails + 1)); }
	[ "$cmp_fails" -eq 0 ]
}
