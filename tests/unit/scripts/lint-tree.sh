#!/bin/sh
# SPDX-License-Identifier: MIT
# lint-tree.sh SOURCE - scripts/lint-kernel.sh in a release copy of the
# tree (no .git), as a packager or a GPU server has it.
#
# The copy is `git archive` of the working tree's state where SOURCE is a
# clone (so uncommitted edits count), else a plain copy.  It is unpacked
# twice: on its own, and inside another git work tree, where git answers
# for the outer tree and lists none of the copy's files.  In both the lint
# must list the same kernel sources as SOURCE does (LINT_LIST=1), and with
# checkpatch's tarball and the kernel headers absent it must skip both
# checks, saying why, count them as skipped and exit 0.
set -u
src=$(cd "$1" && pwd -P)
. "$src/tests/include/tap.sh"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

# copy DEST: the release copy of SOURCE at DEST.
copy() {
	mkdir -p "$1"
	if command -v git >/dev/null 2>&1 &&
	   [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ]; then
		rev=$(git -C "$src" stash create 2>/dev/null)
		git -C "$src" archive --format=tar "${rev:-HEAD}" | tar -C "$1" -xf -
	else
		tar -C "$src" --exclude='./build*' --exclude=./results \
			--exclude=./.git -cf - . | tar -C "$1" -xf -
	fi
}

plan 7
LINT_LIST=1 "$src/scripts/lint-kernel.sh" "$d/b0" >"$d/want" 2>"$d/want.err"
check "the source tree lists its kernel sources" grep -qx kernel/gdirect/main.c "$d/want"

copy "$d/plain"
LINT_LIST=1 "$d/plain/scripts/lint-kernel.sh" "$d/b1" >"$d/plain.list" 2>&1
check "a copy without .git lists the same files" cmp -s "$d/want" "$d/plain.list"
[ -d "$d/plain/.git" ] && diag "the copy has a .git"

if command -v git >/dev/null 2>&1; then
	git init -q "$d/outer" && copy "$d/outer/gdirect"
	LINT_LIST=1 "$d/outer/gdirect/scripts/lint-kernel.sh" "$d/b2" \
		>"$d/outer.list" 2>&1
	r=$?
	cmp -s "$d/want" "$d/outer.list"
	check_rc $? "a copy inside another git work tree lists the same files (rc $r)"
	[ "$r" = 0 ] || diag "$(head -n 5 "$d/outer.list")"
else
	skip "a copy inside another git work tree" "no git here to make one"
fi

# The lint with neither tool's input: two loud skips, nothing failed.
LINUX_SOURCE_TARBALL=$d/none.tar.xz KDIR=$d/no-headers \
	"$d/plain/scripts/lint-kernel.sh" "$d/b3" >"$d/lint.out" 2>&1
r=$?
check_rc "$r" "the lint without checkpatch or headers exits 0 (rc $r)"
[ "$r" = 0 ] || diag "$(tail -n 5 "$d/lint.out")"
check "it ends 'lint: 0 passed, 0 failed, 2 skipped'" \
	test "$(tail -n1 "$d/lint.out")" = "lint: 0 passed, 0 failed, 2 skipped"
check "checkpatch's skip names the missing tarball" \
	grep -q "^ok [0-9]* - checkpatch # SKIP no $d/none.tar.xz" "$d/lint.out"
check "sparse's skip says why" \
	grep -q -E "^ok [0-9]* - sparse # SKIP no (sparse|kernel headers at $d/no-headers)" "$d/lint.out"
tap_done
