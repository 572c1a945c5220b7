#!/bin/sh
# SPDX-License-Identifier: MIT
# spdx.sh ROOT - every source, script and build file of the tree states
# its licence with an SPDX tag (COPYING).
#
# A file needs a tag when it is code, a script or a build file: by name
# (C, CUDA, PTX, assembly, Python, shell, awk, linker maps, meson, make,
# Kbuild, manual pages, the tools' configuration files, udev rules, Debian
# maintainer scripts) or because it starts with "#!".  Documents (docs/,
# *.md), data (fixtures, logs, transcripts, export lists, kernel config
# fragments, tests/reference/) and Debian's packaging lists are exempt:
# they are not code a reader copies, and several have no comment syntax.
# The tag is on the first line, or on the second after a "#!" line, and
# names only licences and exceptions that LICENSES/ declares valid (its
# Valid-License-Identifier and SPDX-Exception-Identifier lines, as the
# kernel's scripts/spdxcheck.py reads them), joined by OR, AND and WITH.
# The same scan then runs on a scratch tree with one planted fault of each
# kind, so that the check cannot pass by seeing nothing.
set -u
root=$(cd "${1:?usage: spdx.sh ROOT}" && pwd)
. "$root/tests/include/tap.sh"

# files ROOT: the tree's files, relative to ROOT: git's view where ROOT is
# a work tree's top (so build outputs are left out), else every file
# outside the build and results folders.
files() {
	r=$1
	if [ "$(git -C "$r" rev-parse --show-toplevel 2>/dev/null)" = \
	     "$(cd "$r" && pwd -P)" ]; then
		git -C "$r" ls-files --cached --others --exclude-standard
	else
		(cd "$r" && find . \( -name .git -o -path './build*' \
			-o -path ./results \) -prune -o -type f -print) |
			sed 's|^\./||'
	fi
}

# needs_tag: read relative paths, print those that need a tag.
needs_tag() {
	while IFS= read -r f; do
		[ -f "$r/$f" ] || continue
		case $f in
		docs/*|tests/reference/*|*/fixtures/*|LICENSES/*|*.md) continue ;;
		*.mod.c) continue ;;
		*.c|*.h|*.cu|*.cuh|*.ptx|*.S|*.py|*.sh|*.awk|*.pl|*.map|*.supp|\
		*.rules|*.conf.in|*.mk|*.[1-8]|meson.build|*/meson.build|\
		meson_options.txt|meson.options|Makefile|*/Makefile|Kbuild|*/Kbuild|\
		.clang-format|.checkpatch.conf|.gitignore|*/.gitignore|\
		packaging/debian/rules|*.preinst|*.postinst|*.prerm|*.postrm)
			echo "$f"; continue ;;
		esac
		[ "$(head -c 2 "$r/$f")" = '#!' ] && echo "$f"
	done
}

# scan ROOT: print each fault as "file: why", nothing if clean.
scan() {
	r=$1
	ids=$(cat "$r"/LICENSES/*/* | sed -n \
		's/^\(Valid-License\|SPDX-Exception\)-Identifier:[[:space:]]*//p' |
		tr -d '\r' | tr '\n' ' ')
	files "$r" | needs_tag > "$tmp/need"
	[ -s "$tmp/need" ] || { echo "(no file to check)"; return; }
	(cd "$r" && tr '\n' '\0' < "$tmp/need" | xargs -0 awk -v ids="$ids" '
		function report(why) { print FILENAME ": " why; done = 1 }
		FNR == 1 {
			done = 0
			if ($0 ~ /^#!/ && $0 !~ /SPDX-License-Identifier:/)
				next
		}
		done { nextfile }
		/SPDX-License-Identifier:/ {
			e = $0
			sub(/.*SPDX-License-Identifier:[ \t]*/, "", e)
			sub(/[ \t]*(\*\/)?[ \t]*$/, "", e)
			gsub(/[()]/, " ", e)
			n = split(e, tok, /[ \t]+/)
			bad = ""
			for (i = 1; i <= n; i++) {
				t = tok[i]
				if (t == "" || t == "OR" || t == "AND" || t == "WITH")
					continue
				if (index(" " ids, " " t " ") == 0)
					bad = bad " " t
			}
			if (n == 0 || e ~ /^[ \t]*$/)
				report("empty SPDX tag")
			else if (bad != "")
				report("licence not in LICENSES/:" bad)
			done = 1
			nextfile
		}
		FNR == 1 { report("no SPDX tag on the first line"); nextfile }
		{ report("no SPDX tag on the line after #!"); nextfile }
	') || echo "(the scan failed)"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

scan "$root" > "$tmp/found"
if [ -s "$tmp/found" ]; then
	not_ok "every source, script and build file has an SPDX tag"
	diag "$(cat "$tmp/found")"
else
	ok "every source, script and build file has an SPDX tag ($(wc -l < "$tmp/need") files)"
fi

# A scratch tree: the licences, one tagged file of each comment style, and
# an untagged document; then each planted fault alone.
scratch() {
	rm -rf "$tmp/tree"
	mkdir -p "$tmp/tree/lib" "$tmp/tree/docs"
	cp -r "$root/LICENSES" "$tmp/tree/"
	printf '/* SPDX-License-Identifier: MIT */\nint x;\n' > "$tmp/tree/lib/ok.c"
	printf '#!/bin/sh\n# SPDX-License-Identifier: GPL-2.0 OR MIT\n:\n' > "$tmp/tree/lib/ok.sh"
	printf '# SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT\n' > "$tmp/tree/lib/meson.build"
	printf '# A document\n' > "$tmp/tree/docs/readme.md"
}
scratch
if [ -z "$(scan "$tmp/tree")" ]; then
	ok "a clean scratch tree passes (tags of three comment styles, an untagged document)"
else
	not_ok "a clean scratch tree passes"
	diag "$(scan "$tmp/tree")"
fi
plant() {
	what=$1 file=$2 text=$3
	scratch
	mkdir -p "$(dirname "$tmp/tree/$file")"
	printf "$text" > "$tmp/tree/$file"
	if scan "$tmp/tree" | grep -q "^$file: "; then
		ok "a planted $what is caught"
	else
		not_ok "a planted $what is caught"
	fi
}
plant "C file without a tag" lib/new.c 'int y;\n'
plant "build file without a tag" tools/meson.build "executable('x', 'x.c')\n"
plant "script without a tag or a name that says so" scripts/run-it '#!/bin/sh\necho hi\n'
plant "tag below the comment it should open" lib/late.h '/*\n * SPDX-License-Identifier: MIT\n */\n'
plant "licence LICENSES/ does not hold" lib/gpl3.c '// SPDX-License-Identifier: GPL-3.0-or-later\n'
plant "manual page without a tag" man/man3/x.3 '.TH X 3\n'
tap_done
