#!/bin/sh
# SPDX-License-Identifier: MIT
# peers.sh find NAME CACHE - the path of a peer's release tarball, checked.
#
# Peers are other projects' releases that gdirect must work with unchanged
# (docs/gdrcopy.md, "gdrcopy itself").  They are test inputs, never
# copied into this repository: each is one release tarball pinned below by
# its file name and sha256.  NAME is the file name (gdrcopy-2.6.tar.gz,
# perftest-26.04.17.tar.gz).
#
# The tarball is looked for, in this order:
#   1. in $GDIRECT_PEERS_DIR, or in ../shared/peers beside the repository's
#      root when that variable is unset; the file must have the pinned
#      sha256, and one that has another is an error, not a skip;
#   2. in CACHE (a folder of the build directory), from an earlier download;
#   3. downloaded from upstream into CACHE where the machine can reach it.
#      GitHub generates its tag archives itself, and their bytes (so their
#      sha256) can change while the tree they hold does not, so a download
#      is checked by its unpacked tree: the sha256 of the sorted list of
#      "sha256  ./path" lines of every file (tree_sha below), pinned here too.
#      The download's own sha256 is printed on stderr, so a run records it.
# Printed on stdout: the absolute path of the checked tarball.  Exit status
# 0 found; 77 not here and not downloadable (stderr names the file and
# where it was looked for: a loud skip for the caller); 1 a tarball with
# the wrong checksum or tree, or a GDIRECT_PEERS_DIR that is set but not an
# absolute path to a folder (settings are parsed strictly).
set -u

# pin NAME: sets sha, tree_sha, url and prefix for a known peer.
pin() {
	case $1 in
	gdrcopy-2.6.tar.gz)
		sha=60e98685bf447524077940dd1b383db27028436eab95ef359814138618471b2a
		tree_sha=5f5afbca4402fe2600e32ecf08579ef8634fd583f31675948e5d1f06791201c2
		url=https://github.com/NVIDIA/gdrcopy/archive/refs/tags/v2.6.tar.gz
		prefix=gdrcopy-2.6 ;;
	perftest-26.04.17.tar.gz)
		sha=b48f752d975d035d257fb11ebab71b69f3580851968c93ea28dc403734f0f256
		tree_sha=c6cc4d4cafb9a90434ea2833fb73aac9d92d09c34daf7c65da135eb88e339616
		url=https://github.com/linux-rdma/perftest/archive/refs/tags/26.04.17.tar.gz
		prefix=perftest-26.04.17 ;;
	*) return 1 ;;
	esac
}

# tree_of TARBALL: the tree checksum of TARBALL's files (empty on error).
tree_of() {
	to_d=$(mktemp -d) || return 1
	if tar -xzf "$1" -C "$to_d" 2>/dev/null && [ -d "$to_d/$prefix" ]; then
		(cd "$to_d/$prefix" && find . -type f -print0 | LC_ALL=C sort -z |
			xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
	fi
	rm -rf "$to_d"
}

# peers_dir: where the pinned tarballs are looked for first.
peers_dir() {
	if [ "${GDIRECT_PEERS_DIR+set}" = set ]; then
		case $GDIRECT_PEERS_DIR in
		/*) ;;
		*) echo "peers.sh: GDIRECT_PEERS_DIR='$GDIRECT_PEERS_DIR' is not an absolute path (unset it for the default)" >&2
		   return 1 ;;
		esac
		if [ ! -d "$GDIRECT_PEERS_DIR" ]; then
			echo "peers.sh: GDIRECT_PEERS_DIR=$GDIRECT_PEERS_DIR is not a directory" >&2
			return 1
		fi
		echo "$GDIRECT_PEERS_DIR"
	else
		top=$(cd "$(dirname "$0")/../.." && pwd)
		echo "$(dirname "$top")/shared/peers"
	fi
}

find_peer() {
	name=$1 cache=$2
	if ! pin "$name"; then
		echo "peers.sh: $name is not a pinned peer (tests/peers/peers.sh lists them)" >&2
		return 1
	fi
	dir=$(peers_dir) || return 1
	if [ -f "$dir/$name" ]; then
		got=$(sha256sum "$dir/$name" | cut -d' ' -f1)
		if [ "$got" != "$sha" ]; then
			echo "peers.sh: $dir/$name has sha256 $got, not $sha" >&2
			return 1
		fi
		(cd "$dir" && echo "$(pwd)/$name")
		return 0
	fi
	mkdir -p "$cache" || return 1
	cache=$(cd "$cache" && pwd)
	if [ -f "$cache/$name" ] && [ "$(tree_of "$cache/$name")" = "$tree_sha" ]; then
		echo "$cache/$name"
		return 0
	fi
	rm -f "$cache/$name.part"
	if command -v curl >/dev/null 2>&1 &&
	   curl -fsSL --connect-timeout 20 --max-time 300 -o "$cache/$name.part" "$url" 2>/dev/null; then
		got=$(tree_of "$cache/$name.part")
		if [ "$got" != "$tree_sha" ]; then
			echo "peers.sh: the download of $url holds tree ${got:-(unreadable)}, not $tree_sha" >&2
			rm -f "$cache/$name.part"
			return 1
		fi
		mv "$cache/$name.part" "$cache/$name"
		echo "peers.sh: downloaded $url (sha256 $(sha256sum "$cache/$name" | cut -d' ' -f1), tree $tree_sha)" >&2
		echo "$cache/$name"
		return 0
	fi
	rm -f "$cache/$name.part"
	echo "no $name (sha256 $sha) in $dir, and $url could not be downloaded" >&2
	return 77
}

case ${1:-} in
find)
	[ $# -eq 3 ] || { echo "usage: peers.sh find NAME CACHE" >&2; exit 2; }
	find_peer "$2" "$3"
	exit $? ;;
*)
	echo "usage: peers.sh find NAME CACHE" >&2
	exit 2 ;;
esac
