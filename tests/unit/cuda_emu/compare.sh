#!/bin/sh
# SPDX-License-Identifier: MIT
# compare.sh SOURCE - compare.py, the conformance comparison of
# tests/harness/run-tests.sh, on small made-up transcripts: an equal key
# passes, a listed difference passes, an unlisted one fails, a listed
# pattern that matches no difference fails (the difference it explained is
# gone), a pattern without its reason is refused.
set -u
src=$1
. "$src/tests/include/tap.sh"
cmp=$src/tests/conformance/cuda_emu/compare.py
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
printf 'a = 1\nb = 2\nc = 3\n' >"$d/gpu"
printf 'a = 1\nb = 9\nc = 3\n' >"$d/emu"
printf 'b\tthe emulator counts b differently\n' >"$d/listed"
printf 'b\tthe emulator counts b differently\nc\tno longer differs\n' >"$d/stale"
printf 'b\n' >"$d/noreason"
: >"$d/none"
run() { python3 "$cmp" --gpu "$d/gpu" --emu "$d/emu" --differences "$@"; }
plan 7
check_quiet "a listed difference passes" run "$d/listed"
check "the count line names it" sh -c "python3 '$cmp' --gpu '$d/gpu' --emu '$d/emu' --differences '$d/listed' |
	tail -n1 | grep -qxF 'conformance: 1 differences from the GPU (1 listed, 0 unlisted, 0 stale)'"
check_fails "an unlisted difference fails" "UNLISTED b: gpu '2', emulator '9'" run "$d/none"
check_fails "a listed pattern that matches nothing fails" "STALE    c is listed (no longer differs)" run "$d/stale"
check_fails "a pattern without its reason is refused" "a pattern without its reason" run "$d/noreason"
printf 'x.a = 1\nx.b = 2\ny.c = 3\n' >"$d/gpu2"
printf 'x.a = 1\nx.b = 2\n' >"$d/emu2"
check "--sections-of-emu: the GPU's other sections are left out" sh -c "python3 '$cmp' --gpu '$d/gpu2' --emu '$d/emu2' --differences '$d/none' --sections-of-emu |
	tail -n1 | grep -qxF 'conformance: 0 differences from the GPU (0 listed, 0 unlisted, 0 stale)'"
cp "$d/gpu" "$d/emu"
check_fails "no difference left, the list still names one: stale" "(0 listed, 0 unlisted, 1 stale)" run "$d/listed"
tap_done
