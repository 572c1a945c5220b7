#!/bin/sh
# SPDX-License-Identifier: MIT
# manifest.sh COMMAND [ARG] - what tests/TESTS says, for the harness.
#
#   lane LANE   the names of LANE's tests, one a line, in the manifest's
#               order (the order the boot runs them)
#   lines       every line as "PATH VARIANT NAME LANE...", VARIANT '-'
#               where there is none; a helper's NAME is its file's name
#   name PATH[@VARIANT]
#               the test's name (tests/TESTS says how it is derived)
#
# TESTS_MANIFEST names another manifest (tests/unit/layout/names.sh's
# planted ones); the default is tests/TESTS of this tree.  Meson reads the
# same file itself (tests/meson.build) and derives the same names.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
manifest=${TESTS_MANIFEST:-$top/tests/TESTS}
cmd=${1:-}
arg=${2:-}
case $cmd in
lane|name) [ -n "$arg" ] || { echo "manifest.sh: $cmd needs an argument" >&2; exit 2; } ;;
lines) ;;
*) echo "usage: manifest.sh lane LANE | lines | name PATH[@VARIANT]" >&2; exit 2 ;;
esac
[ -r "$manifest" ] || { echo "manifest.sh: cannot read $manifest" >&2; exit 1; }

awk -v cmd="$cmd" -v arg="$arg" '
# name(PATH[@VARIANT], HELPER): the component (the folder under
# tests/unit/ or tests/guest/, else the one under tests/, with "_" as
# "-"), the stem, the variant; a guest script keeps its extension, since
# /tests in the guest holds it under that name, while meson registers the
# tests of tests/unit/ and tests/device/ without one.  A helper keeps its
# own file name.
function name(spec, helper,    v, k, n, parts, comp, file, stem, ext, r) {
	v = ""
	if ((k = index(spec, "@")) > 0) {
		v = substr(spec, k + 1)
		spec = substr(spec, 1, k - 1)
	}
	n = split(spec, parts, "/")
	file = parts[n]
	if (helper)
		return file
	comp = (parts[2] == "unit" || parts[2] == "guest") ? parts[3] : parts[2]
	gsub(/_/, "-", comp)
	stem = file
	ext = ""
	if (match(file, /\.[a-z]+$/)) {
		stem = substr(file, 1, RSTART - 1)
		ext = substr(file, RSTART)
	}
	r = comp "-" stem (v != "" ? "-" v : "")
	return (ext == ".c" || parts[2] == "unit" || parts[2] == "device") ? r : r ext
}
BEGIN {
	if (cmd == "name") {
		print name(arg, 0)
		exit
	}
}
{
	sub(/#.*/, "")
	if (NF == 0)
		next
	spec = $1
	path = spec
	variant = "-"
	if ((k = index(spec, "@")) > 0) {
		path = substr(spec, 1, k - 1)
		variant = substr(spec, k + 1)
	}
	helper = ($2 == "helper")
	n = name(spec, helper)
	if (cmd == "lines") {
		out = path " " variant " " n
		for (i = 2; i <= NF; i++)
			out = out " " $i
		print out
		next
	}
	for (i = 2; i <= NF; i++)
		if ($i == arg)
			print n
}' "$manifest"
