# SPDX-License-Identifier: MIT
# Rewrites line numbers in a hand-written PTX file, which drift with every
# edit:
#   ".loc 1 N C"                 N becomes the line after the directive, the
#                                instruction it annotates (what a debugger
#                                shows);
#   "mov.u32 %rX, N; // @line"   N becomes this line (the line __assertfail
#                                reports).
# tests/device/ci/loc.sh fails when a file was edited and this was not run.
#
#   awk -f device/tools/loc-renumber.awk f.ptx > f.ptx.new && mv f.ptx.new f.ptx
{
	if (match($0, /^[ \t]*\.loc[ \t]+1[ \t]+[0-9]+/)) {
		head = substr($0, 1, RLENGTH)
		tail = substr($0, RLENGTH + 1)
		sub(/[0-9]+$/, NR + 1, head)
		print head tail
		next
	}
	if (match($0, /, *[0-9]+; *\/\/ @line/)) {
		head = substr($0, 1, RSTART - 1)
		tail = substr($0, RSTART + RLENGTH)
		print head ", " NR "; // @line" tail
		next
	}
	print
}
