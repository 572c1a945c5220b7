#!/bin/sh
# SPDX-License-Identifier: MIT
# lint-kernel.sh [BUILD] - checkpatch and sparse over the kernel code.
#
# The kernel code is every .c, .h and Kbuild file of kernel/gdirect,
# kernel/gdirect_edu, emu/nvp2p and tests/modules, and emu/rxe's rxe_gpu.c
# (checkpatch only: it builds inside Linux's rxe, emu/rxe/build.sh; the
# patch to Linux's own files is not checked).
#
#   1. checkpatch.pl -f --terse over each file, with the options of
#      .checkpatch.conf (checkpatch reads it from the tree root, the current
#      directory here).  checkpatch is Debian's linux-source-6.1 copy: only
#      scripts/checkpatch.pl, spelling.txt and const_structs.checkpatch are
#      extracted from /usr/src/linux-source-6.1.tar.xz, once per tarball,
#      into $CHECKPATCH_CACHE (default /var/cache/gdirect-checkpatch when
#      writable, else BUILD/checkpatch).
#   2. sparse through Kbuild (C=2 CHECK=sparse, scripts/build-modules.sh
#      with GDIRECT_KBUILD_CHECK=sparse): the v2 flavour of every module,
#      against /lib/modules/<newest -amd64>/build, in BUILD/kmod/v2, the
#      tree `make testbed` builds, so that after it only sparse runs (C=2
#      checks every file, compiled again or not).  The compiler's warnings
#      of files compiled again count with sparse's.
#
# A warning is its file, tool, type and message, without the line number,
# so that an edit above it does not make it new.  Any warning not in
# tests/lint/kernel-baseline.txt fails its check; a baseline entry no longer
# seen is reported, to be removed, but does not fail.  A check whose tool or
# sources are missing is skipped, saying why, and counted as skipped.
# The files come from git where the tree is a clone, else from find, so
# that a release tarball or a `git archive` copy lints the same files;
# LINT_LIST=1 prints them and runs nothing (tests/unit/scripts/lint-tree.sh).
#
# Prints TAP, then "lint: N passed, N failed, N skipped" last.  Exit status 0
# when nothing failed.  Cost, measured on the 2-core build machine shared
# with other jobs (2026-11-27): 25 to 50 s with the load (checkpatch about
# 20 s, sparse the rest) after `make testbed`; 1.5 to 2 min with the modules
# not built yet; 30 s more the first time on a machine, for extracting
# checkpatch.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
mkdir -p "$build"
build=$(cd "$build" && pwd)
baseline=${LINT_BASELINE:-$top/tests/lint/kernel-baseline.txt}
tarball=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
work="$build/lint"
mkdir -p "$work"
t0=$(date +%s)
pass=0 fail=0 skip=0 n=0

dirs="kernel/gdirect kernel/gdirect_edu emu/nvp2p emu/rxe tests/modules"
modules="nvp2p_emu nvp2p_selftest gdirect gdirect_edu gdirect_kapitest"

# The files: git's tracked ones where the tree is a clone's top, every one
# elsewhere (an unpacked release, a copy made by git archive, even one that
# lies inside another git work tree, where git would list nothing of it).
cd "$top"
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
	# shellcheck disable=SC2086
	files=$(git ls-files -- $dirs | grep -E '(\.[ch]|/Kbuild)$' || true)
else
	# shellcheck disable=SC2086
	files=$(find $dirs -type f \( -name '*.[ch]' -o -name Kbuild \) | sort)
fi
[ -n "$files" ] || { echo "lint-kernel.sh: no kernel sources under $dirs" >&2; exit 1; }
# LINT_LIST=1: print the files it would check, one a line, and stop.
if [ "${LINT_LIST:-0}" = 1 ]; then
	# shellcheck disable=SC2086
	printf '%s\n' $files
	exit 0
fi

# report NAME WARNINGS: compare WARNINGS (one a line) with the baseline's
# entries for NAME and print the TAP line.
report() {
	name=$1 cur=$2
	n=$((n + 1))
	grep -v -e '^#' -e '^$' "$baseline" 2>/dev/null | grep "^$name: " | sort >"$work/$name.base" || true
	sort "$cur" >"$work/$name.cur"
	comm -23 "$work/$name.cur" "$work/$name.base" >"$work/$name.new"
	comm -13 "$work/$name.cur" "$work/$name.base" >"$work/$name.stale"
	total=$(wc -l <"$work/$name.cur" | tr -d ' ')
	new=$(wc -l <"$work/$name.new" | tr -d ' ')
	if [ "$new" -eq 0 ]; then
		echo "ok $n - $name: $total warnings, all in the baseline"
		pass=$((pass + 1))
	else
		echo "not ok $n - $name: $new new warnings ($total in all, $((total - new)) in the baseline)"
		sed 's/^/#   /' "$work/$name.new"
		fail=$((fail + 1))
	fi
	if [ -s "$work/$name.stale" ]; then
		echo "# $name: baseline entries no longer seen (remove them from ${baseline#"$top"/}):"
		sed 's/^/#   /' "$work/$name.stale"
	fi
}

skipped() { # skipped NAME REASON
	n=$((n + 1)); skip=$((skip + 1))
	echo "ok $n - $1 # SKIP $2"
}

# checkpatch: extracted once per tarball, keyed by its size and date.
checkpatch_dir() {
	stamp=$(ls -lnL "$tarball" | awk '{ print $5, $6, $7, $8 }')
	for d in ${CHECKPATCH_CACHE:-/var/cache/gdirect-checkpatch "$build/checkpatch"}; do
		if [ -f "$d/checkpatch.pl" ] && [ "$(cat "$d/stamp" 2>/dev/null)" = "$stamp" ]; then
			echo "$d"; return 0
		fi
		if ! mkdir -p "$d" 2>/dev/null || [ ! -w "$d" ]; then
			continue
		fi
		rm -rf "$d/x"
		mkdir "$d/x"
		tar -xJf "$tarball" -C "$d/x" --wildcards --strip-components=2 \
			'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
			'*/scripts/const_structs.checkpatch' >&2 || { rm -rf "$d/x"; return 1; }
		mv "$d/x/checkpatch.pl" "$d/x/spelling.txt" "$d/x/const_structs.checkpatch" "$d"/
		rmdir "$d/x"
		echo "$stamp" >"$d/stamp"
		echo "$d"; return 0
	done
	echo "lint-kernel.sh: no writable cache directory for checkpatch" >&2
	return 1
}

echo "TAP version 13"
echo "1..2"

# 1. checkpatch
if ! command -v perl >/dev/null 2>&1; then
	skipped checkpatch "no perl"
elif [ ! -r "$tarball" ]; then
	skipped checkpatch "no $tarball (scripts/deps.sh test installs linux-source-6.1)"
elif ! cp_dir=$(checkpatch_dir); then
	n=$((n + 1)); fail=$((fail + 1))
	echo "not ok $n - checkpatch: could not extract checkpatch.pl from $tarball"
else
	# checkpatch exits 1 on any warning; its output is what counts.  A
	# message on stderr is checkpatch itself going wrong.
	# shellcheck disable=SC2086
	perl "$cp_dir/checkpatch.pl" -f --terse --show-types $files \
		>"$work/checkpatch.out" 2>"$work/checkpatch.err" || true
	if [ -s "$work/checkpatch.err" ]; then
		n=$((n + 1)); fail=$((fail + 1))
		echo "not ok $n - checkpatch: checkpatch.pl failed:"
		sed 's/^/#   /' "$work/checkpatch.err"
	else
		# FILE:LINE: LEVEL:TYPE: MESSAGE -> checkpatch: FILE: LEVEL:TYPE: MESSAGE
		sed -n 's/^\([^:]*\):[0-9]*: \([A-Z]*:[A-Z_0-9]*: .*\)$/checkpatch: \1: \2/p' \
			"$work/checkpatch.out" >"$work/checkpatch.warn"
		report checkpatch "$work/checkpatch.warn"
	fi
fi

# 2. sparse (and the compiler) through Kbuild
kver=$(ls -1 /lib/modules 2>/dev/null | grep -- '-amd64$' | sort -V | tail -n1 || true)
kdir=${KDIR:-/lib/modules/$kver/build}
kmod="$build/kmod/v2"
if ! command -v sparse >/dev/null 2>&1; then
	skipped sparse "no sparse (scripts/deps.sh test installs it)"
elif [ ! -d "$kdir" ]; then
	skipped sparse "no kernel headers at $kdir (scripts/deps.sh test installs them)"
else
	# shellcheck disable=SC2086
	if GDIRECT_KBUILD_CHECK=sparse "$top/scripts/build-modules.sh" "$kdir" \
		"$kmod" v2 $modules >"$work/sparse.out" 2>&1; then
		# Paths of the Kbuild copies, BUILD/kmod/v2/<module>/F, back to
		# the sources; line and column dropped.
		sed -n -E 's/^([^:]*):[0-9]+:[0-9]+: (warning|error): (.*)$/\1: \2: \3/p' \
			"$work/sparse.out" | while IFS= read -r l; do
			f=${l%%: *}; rest=${l#*: }
			case $f in
			"$kmod/"*)
				f=${f#"$kmod/"}; m=${f%%/*}; f=${f#*/}
				case $m in
				nvp2p_emu) f=emu/nvp2p/$f ;;
				gdirect|gdirect_edu) f=kernel/$m/$f ;;
				*) f=tests/modules/$m/$f ;;
				esac ;;
			"$top/"*) f=${f#"$top/"} ;;
			esac
			echo "sparse: $f: $rest"
		done >"$work/sparse.warn"
		report sparse "$work/sparse.warn"
	else
		n=$((n + 1)); fail=$((fail + 1))
		echo "not ok $n - sparse: the module build failed (${work#"$top"/}/sparse.out):"
		tail -n 20 "$work/sparse.out" | sed 's/^/#   /'
	fi
fi

echo "# lint: $(( $(date +%s) - t0 )) s"
echo "lint: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
