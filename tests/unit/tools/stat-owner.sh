#!/bin/sh
# SPDX-License-Identifier: MIT
# stat-owner.sh GDIRECT - `gdirect stat` reads libgdirect's statistics
# only from per-user directories nobody else can write (BASE/gdirect-UID and
# BASE/gdirect-UID.XXXXXX, lib/src/statsdir.h), only files owned by the user
# it runs as (root: everyone's, labelled with the owner), and at most 64
# files a directory, so one user's files cannot push another's out.  Acts as
# two users: needs root.
set -u
gd=$1
. "$(dirname "$0")/../../include/tap.sh"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	skip_all "needs root and setpriv (to act as two users)"
fi
other=65534
if ! setpriv --reuid=$other --regid=$other --clear-groups "$gd" version >/dev/null 2>&1; then
	skip_all "uid $other cannot run $gd (its directories are not open to it)"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
base=$tmp/base
mkdir -m 1777 "$base"
export GDIRECT_STATS_BASE="$base"
unset GDIRECT_STATS_DIR
now=$(date +%s)

mk() { # mk DIR CTX [OWNER]: a published file of this shell's pid
	printf 'pid %s\nctx %s\nupdated_ns %s000000000\ninterval_ms 500\nhits %s\n' \
		$$ "$2" "$now" "$2" >"$1/gdirect-stats.$$.$2"
	[ -z "${3:-}" ] || chown "$3" "$1/gdirect-stats.$$.$2"
}
run() { # run [USER]: gdirect stat --json (as USER), output in $tmp/out
	if [ -n "${1:-}" ]; then
		setpriv --reuid="$1" --regid="$1" --clear-groups "$gd" --sysfs "$tmp/no" \
			--proc "$tmp/no" --dev "$tmp/no" stat --json >"$tmp/out" 2>"$tmp/err"
	else
		"$gd" --sysfs "$tmp/no" --proc "$tmp/no" --dev "$tmp/no" stat --json \
			>"$tmp/out" 2>"$tmp/err"
	fi
}
has() {
	if grep -qF -- "$1" "$tmp/out"; then ok "has '$1'"
	else not_ok "missing '$1' in:"; diag "$(head -40 "$tmp/out"; cat "$tmp/err")"; fi
}
hasnt() {
	if grep -qF -- "$1" "$tmp/out"; then not_ok "unexpected '$1'"
	else ok "no '$1'"; fi
}
count() { # count TEXT N: TEXT occurs N times in the output
	c=$(grep -cF -- "$1" "$tmp/out")
	if [ "$c" = "$2" ]; then ok "'$1' $2 times"
	else not_ok "'$1' $c times, want $2"; fi
}

# root's directory: its own file, and one of another owner's put there.
mkdir -m 700 "$base/gdirect-0"
mk "$base/gdirect-0" 1
mk "$base/gdirect-0" 2 $other
# The other user's: 300 files (more than a directory's share).
mkdir -m 700 "$base/gdirect-$other"
i=100
while [ $i -lt 400 ]; do mk "$base/gdirect-$other" $i; i=$((i + 1)); done
chown -R $other "$base/gdirect-$other"
# A directory named for root but the other user's, and one others can write.
mkdir -m 700 "$base/gdirect-0.abcdef"
mk "$base/gdirect-0.abcdef" 3 $other
chown $other "$base/gdirect-0.abcdef"
mkdir -m 777 "$base/gdirect-$other.ghijkl"
mk "$base/gdirect-$other.ghijkl" 4 $other
chown $other "$base/gdirect-$other.ghijkl"
# A link in place of a directory.
ln -s "$base/gdirect-$other" "$base/gdirect-1000"

# root: everyone's, each labelled with its owner; 64 of the other's.
run
has '"ctx": 1,'
count '"uid": 0,' 1
count '"uid": 65534,' 64
hasnt '"ctx": 2,'
hasnt '"ctx": 3,'
hasnt '"ctx": 4,'
"$gd" --sysfs "$tmp/no" --proc "$tmp/no" --dev "$tmp/no" stat >"$tmp/out" 2>&1
has "process $$ context 1 (updated"
has ") of uid 0"
has ") of uid 65534"
has "... and 236 more files not read"

# The other user: only its own, unlabelled; root's file is not read.
run $other
hasnt '"ctx": 1,'
count '"uid": 65534,' 64
count '"uid": 0,' 0

tap_done
