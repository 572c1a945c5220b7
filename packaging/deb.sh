#!/bin/sh
# SPDX-License-Identifier: MIT
# deb.sh OUT - what "make deb" does: Debian packages built with Debian's
# tools (dpkg-buildpackage, debhelper compat 13, dh-dkms) into OUT
# (build/deb), then checked with lintian.
#
# The source tree stays clean: the files git knows (tracked, and untracked
# ones it does not ignore; everything but build outputs outside git) are
# copied to OUT/src, packaging/debian/ becomes OUT/src/debian/ with a
# changelog whose version is meson's project version, and
# dpkg-buildpackage writes the .debs, .buildinfo and .changes next to
# OUT/src, in OUT.
set -eu
out=$1
top=$(cd "$(dirname "$0")/.." && pwd)

version=$(meson introspect "$top/meson.build" --projectinfo 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
[ -n "$version" ] || { echo "deb: cannot read the project version from meson.build" >&2; exit 1; }

mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$out/src
rm -rf "$src"
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo "$out"/lintian.txt
mkdir -p "$src"
# git's file list only where the tree is a clone's top: a release copy
# unpacked inside another work tree would otherwise list nothing.
if [ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$top" && pwd -P)" ]; then
	# Files deleted in the work tree but still tracked are left out.
	(cd "$top" && git ls-files -z -co --exclude-standard |
		xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' _ |
		tar --null -T - -cf -) | tar -xf - -C "$src"
	rev=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)
	date=$(git -C "$top" log -1 --format=%cD 2>/dev/null || date -R)
else
	(cd "$top" && tar --exclude='./build*' --exclude=./results -cf - .) | tar -xf - -C "$src"
	rev=unknown date=$(date -R)
fi
rm -rf "$src/debian"
cp -r "$top/packaging/debian" "$src/debian"
maint=$(sed -n 's/^Maintainer: //p' "$src/debian/control")
cat >"$src/debian/changelog" <<EOT
gdirect ($version) unstable; urgency=medium

  * Built by "make deb" from the gdirect repository at $rev.

 -- $maint  $date
EOT

# gdirect-emu's machine is built for Debian's -amd64 kernel: without its
# headers (Ubuntu) the package is left out, by the build profile
# pkg.gdirect.noemu.
profile=""
if [ -z "$("$top/packaging/guest-kver.sh")" ]; then
	profile=-Ppkg.gdirect.noemu
	echo "deb: no Debian -amd64 kernel headers (linux-headers-amd64): the package gdirect-emu is left out"
fi
echo "deb: building gdirect $version in $src"
# shellcheck disable=SC2086 # the profile option, or nothing
(cd "$src" && dpkg-buildpackage -b -us -uc $profile) >"$out/build.log" 2>&1 || {
	tail -40 "$out/build.log" >&2
	echo "deb: dpkg-buildpackage failed; the log is $out/build.log" >&2
	exit 1
}
changes=$(ls "$out"/gdirect_"${version}"_*.changes)
echo "deb: packages in $out:"
(cd "$out" && ls -1 ./*.deb | sed 's|^\./|  |')

# lintian: errors and warnings fail the build; each tag we accept is
# overridden, with the reason, in debian/*.lintian-overrides.
if lintian --fail-on error,warning --display-info "$changes" >"$out/lintian.txt" 2>&1; then
	echo "deb: lintian: clean (report: $out/lintian.txt)"
else
	cat "$out/lintian.txt" >&2
	echo "deb: lintian found errors or warnings (above; $out/lintian.txt)" >&2
	exit 1
fi
