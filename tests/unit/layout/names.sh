#!/bin/sh
# SPDX-License-Identifier: MIT
# names.sh ROOT - one test vocabulary: every test is a line of tests/TESTS,
# named after what it tests, and every line names a file that is there.
#
# A test file's name is lowercase words joined by hyphens, no word a
# number, no t-, tg-, c-, dk- or p- prefix, ending .c, .sh or .py (.cu
# too under tests/device/); which lanes run it and in what order is the
# manifest's to say, not the name's.  Every C, CUDA C file and script of a
# test folder (tests/unit/<component>/, tests/guest/<component>/, the
# debug kernel's guest/ folders, tests/device/ and its folders) is on a
# line, as a test or as a helper; every line names an existing file, lanes
# the harness knows, and a name (tests/harness/manifest.sh's) no other
# line of its kind has (those of tests/unit/ and tests/device/ are
# meson's, the others the guest's).
# Nothing under tests/ is named in the old dialects, and no
# benchmark (*bench.c, *bench.sh) is there: benchmarks are in bench/.
# The same scan then runs on scratch trees with one planted fault each, so
# that the check cannot pass by seeing nothing.
set -u
root=$(cd "${1:?usage: names.sh ROOT}" && pwd)
. "$root/tests/include/tap.sh"

lanes_known=" unit nvcc tsan v2 v1 tegra prop coherent bpo boot cluster cluster-bpo debug-v2 debug-tegra debug-cluster debug-planted gpu gpu-by-hand helper "

# test_files ROOT: the C files and scripts of ROOT's test folders, relative
# to ROOT.
test_files() {
	(cd "$1" && find tests/unit tests/guest tests/debug-kernel tests/device -type f \
		\( -name '*.c' -o -name '*.cu' -o -name '*.sh' -o -name '*.py' \) 2>/dev/null) |
		awk -F/ '($2 == "unit" || $2 == "guest") && NF == 4 { print; next }
			$2 == "debug-kernel" && $(NF - 1) == "guest" { print; next }
			$2 == "device" { print }' |
		LC_ALL=C sort
}

# scan ROOT: print each fault as "what: why", nothing if clean.
scan() {
	r=$1
	lines=$(TESTS_MANIFEST=$r/tests/TESTS "$root/tests/harness/manifest.sh" lines) ||
		{ echo "tests/TESTS: cannot be read"; return; }
	listed=$(printf '%s\n' "$lines" | awk '{ print $1 }' | LC_ALL=C sort -u)
	# Each line: the file is there, the lanes are known, the name is the
	# scheme's and no other line's.
	printf '%s\n' "$lines" | while read -r path _variant _name lanes; do
		[ -n "$path" ] || continue
		[ -f "$r/$path" ] || echo "$path: in tests/TESTS, but there is no such file"
		[ -n "$lanes" ] || echo "$path: in tests/TESTS without a lane"
		for l in $lanes; do
			case $lanes_known in
			*" $l "*) ;;
			*) echo "$path: in tests/TESTS with the unknown lane '$l'" ;;
			esac
		done
		case " $lanes " in
		*" helper "*) [ "$lanes" = helper ] ||
			echo "$path: in tests/TESTS as a helper and as a test" ;;
		esac
	done
	printf '%s\n' "$lines" | awk '
	function bad(p, why) { print p ": " why }
	$4 == "helper" { next }
	{
		path = $1; variant = $2; name = $3
		n = split(path, parts, "/")
		file = parts[n]
		if (!((parts[2] == "unit" || parts[2] == "guest") && n == 4) &&
		    !(parts[2] == "debug-kernel" && parts[n - 1] == "guest") &&
		    parts[2] != "device")
			bad(path, "a test outside a test folder (tests/unit/<component>/, tests/guest/<component>/, tests/device/)")
		if (file !~ /^[a-z0-9]+(-[a-z0-9]+)*\.(c|sh|py)$/ &&
		    !(parts[2] == "device" && file ~ /^[a-z0-9]+(-[a-z0-9]+)*\.cu$/))
			bad(path, "a test named otherwise than lowercase words joined by hyphens (.c, .sh, .py; .cu in tests/device/)")
		else if (file ~ /^(t|tg|c|dk|p)-/)
			bad(path, "a test named with a lane prefix (t-, tg-, c-, dk-, p-): tests/TESTS says the lanes")
		stem = file
		sub(/\.[a-z]+$/, "", stem)
		w = split(stem, words, "-")
		for (i = 1; i <= w; i++)
			if (words[i] ~ /^[0-9]+$/)
				bad(path, "a test named with a number: tests/TESTS says the order")
		if (variant != "-" && variant !~ /^[a-z0-9]+(-[a-z0-9]+)*$/)
			bad(path "@" variant, "a variant named otherwise than lowercase words joined by hyphens")
		# The tests of tests/unit/ and tests/device/ are known to meson,
		# the others to the guest: a name is unique in each.
		key = ((parts[2] == "unit" || parts[2] == "device") ? "meson " : "guest ") name
		if (seen[path "@" variant]++)
			bad(path, "on two lines of tests/TESTS")
		else if (key in names)
			bad(path, "named " name ", as " names[key] " is")
		names[key] = path
	}'
	# Each file of a test folder is on a line.
	test_files "$r" | awk -v listed="$listed" '
		BEGIN { n = split(listed, l, "\n"); for (i = 1; i <= n; i++) on[l[i]] = 1 }
		!($0 in on) { print $0 ": a file of a test folder that tests/TESTS does not list (a test, or a helper)" }'
	# The old dialects and benchmarks, anywhere under tests/.
	(cd "$r" && find tests -path tests/reference -prune -o -type f \
		\( -name '*.c' -o -name '*.sh' -o -name '*.py' \) -print) |
		LC_ALL=C sort | while IFS= read -r f; do
		case ${f##*/} in
		t-*|tg-*|c-*|dk-*|p-*)
			echo "$f: named in an old dialect (t-NN-, tg-, c-, dk-, p-): tests/TESTS says the lanes" ;;
		*?bench.c|*?bench.sh)
			echo "$f: a benchmark under tests/: benchmarks are in bench/" ;;
		esac
	done
}

faults=$(scan "$root")
if [ -z "$faults" ]; then
	ok "every test file is named after what it tests and listed in tests/TESTS, every line names a file"
else
	not_ok "test names and tests/TESTS"
	diag "$faults"
fi

# Scratch trees: the test folders' file names (empty files do) and the
# manifest, then one fault planted in each.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# copy DIR: a copy of the tree's test folders and manifest in DIR.
copy() {
	mkdir -p "$1/tests"
	cp "$root/tests/TESTS" "$1/tests/"
	test_files "$root" | while IFS= read -r f; do
		mkdir -p "$1/${f%/*}"
		: >"$1/$f"
	done
}
# planted WHAT PATTERN: the scan of the scratch tree reports PATTERN.
planted() {
	got=$(scan "$scratch/t")
	if printf '%s\n' "$got" | grep -qF "$2"; then
		ok "a planted $1 is found"
	else
		not_ok "a planted $1 is found"
		diag "expected '$2' in:" "${got:-(nothing)}"
	fi
	rm -rf "$scratch/t"
}

copy "$scratch/t"
faults=$(scan "$scratch/t")
if [ -z "$faults" ]; then
	ok "the scratch copy scans clean before anything is planted"
else
	not_ok "the scratch copy scans clean before anything is planted"
	diag "$faults"
fi
rm -rf "$scratch/t"

copy "$scratch/t"
: >"$scratch/t/tests/guest/gdirect/t-99-gdirect-planted.c"
planted "guest test in the old dialect, unlisted" \
	"tests/guest/gdirect/t-99-gdirect-planted.c: a file of a test folder that tests/TESTS does not list"

copy "$scratch/t"
: >"$scratch/t/tests/unit/lib/planted_check.c"
echo "tests/unit/lib/planted_check.c unit" >>"$scratch/t/tests/TESTS"
planted "listed unit test named with an underscore" \
	"tests/unit/lib/planted_check.c: a test named otherwise"

copy "$scratch/t"
: >"$scratch/t/tests/device/ci/planted_table.sh"
planted "device test named with an underscore, unlisted" \
	"tests/device/ci/planted_table.sh: a file of a test folder that tests/TESTS does not list"

copy "$scratch/t"
: >"$scratch/t/tests/device/gpu/planted_family.cu"
echo "tests/device/gpu/planted_family.cu gpu" >>"$scratch/t/tests/TESTS"
planted "listed device test named with an underscore" \
	"tests/device/gpu/planted_family.cu: a test named otherwise"

copy "$scratch/t"
: >"$scratch/t/tests/unit/lib/planted.c"
echo "tests/unit/lib/planted.c unit" >>"$scratch/t/tests/TESTS"
: >"$scratch/t/tests/unit/lib/planted.sh"
echo "tests/unit/lib/planted.sh unit" >>"$scratch/t/tests/TESTS"
planted "unit C test and script of one meson name" \
	"tests/unit/lib/planted.sh: named lib-planted, as tests/unit/lib/planted.c is"

copy "$scratch/t"
: >"$scratch/t/tests/guest/lib/t-50-lib-planted.c"
echo "tests/guest/lib/t-50-lib-planted.c v2" >>"$scratch/t/tests/TESTS"
planted "listed guest test with a lane prefix" \
	"tests/guest/lib/t-50-lib-planted.c: a test named with a lane prefix"

copy "$scratch/t"
echo "tests/guest/gdirect/planted-missing.c v2" >>"$scratch/t/tests/TESTS"
planted "manifest line naming a missing file" \
	"tests/guest/gdirect/planted-missing.c: in tests/TESTS, but there is no such file"

copy "$scratch/t"
: >"$scratch/t/tests/guest/gdirect/planted.c"
echo "tests/guest/gdirect/planted.c v2 v3" >>"$scratch/t/tests/TESTS"
planted "manifest line with an unknown lane" \
	"tests/guest/gdirect/planted.c: in tests/TESTS with the unknown lane 'v3'"

copy "$scratch/t"
mkdir -p "$scratch/t/tests/guest/lib2"
: >"$scratch/t/tests/guest/lib2/rcache.c"
echo "tests/guest/lib2/rcache.c v2" >>"$scratch/t/tests/TESTS"
: >"$scratch/t/tests/guest/lib/2-rcache.c"
echo "tests/guest/lib/2-rcache.c v2" >>"$scratch/t/tests/TESTS"
planted "test named with a number" "tests/guest/lib/2-rcache.c: a test named with a number"

copy "$scratch/t"
: >"$scratch/t/tests/guest/gdirect/copybench.c"
echo "tests/guest/gdirect/copybench.c helper" >>"$scratch/t/tests/TESTS"
planted "benchmark under tests/" \
	"tests/guest/gdirect/copybench.c: a benchmark under tests/"

tap_done
