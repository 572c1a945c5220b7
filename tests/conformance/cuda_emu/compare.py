#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""compare.py - diff the emulator's conformance transcript against a GPU's.

    compare.py [--tap FILE | --emu FILE] [--gpu FILE] [--differences FILE]...
               [--test NAME --tag TAG --what WHAT] [--sections-of-emu]

The emulator's transcript comes from a guest TAP log (the "# conf: " lines
of cuda-emu-conformance.sh, or the "# TAG: " lines of test NAME) or from a
plain file.  The runtime and NVML probe is compared with
    --test cudart-emu-probe.sh --tag rtprobe --what runtime
    --gpu gpu/h100-580.rt-nvml.transcript --differences rt-differences.txt  Transcripts are
"key = value" lines (cuda-conformance's output); keys are compared one by
one.  A key whose value differs, or that only one side has, is a
difference.  A difference whose key matches a pattern in the differences
file (one "PATTERN<TAB>REASON" per line, fnmatch patterns) is intended; any
other fails.  A pattern that matches no difference fails too: the
difference it explained is gone, and a list that keeps it would excuse
the next one with that key.  --differences may be given more than once (the
CUDA_EMU_PLACEMENT=64k placement's own differences are in differences-64k.txt).
With --sections-of-emu the GPU's transcript is cut to the sections (the
part of a key before its first dot) that the emulator's has: a run of a
few sections, such as the one at the driver API version 13.3
(differences-13030.txt).
The last line is
    conformance: N differences from the GPU (L listed, U unlisted, S stale)
and the exit status is 1 when U > 0 or S > 0 or a transcript is unusable.
"""
import argparse
import fnmatch
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TEST = "cuda-emu-conformance.sh"


def parse(lines, what):
    out = {}
    for n, line in enumerate(lines, 1):
        line = line.rstrip("\n")
        if not line.strip():
            continue
        key, sep, value = line.partition(" = ")
        if not sep:
            raise SystemExit("%s:%d: not a 'key = value' line: %r" % (what, n, line))
        # A key printed again (the same call made twice) is "key#2", ...
        base, i = key, 2
        while key in out:
            key = "%s#%d" % (base, i)
            i += 1
        out[key] = value
    return out


def from_tap(path, test=TEST, tag="conf"):
    lines, on, seen = [], False, False
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if line == "=== BEGIN " + test:
                on, seen = True, True
                continue
            if line.startswith("=== "):
                on = False
                continue
            if on and line.startswith("# %s: " % tag):
                lines.append(line[len("# %s: " % tag):])
    if not seen:
        raise SystemExit("%s: %s did not run" % (path, test))
    return lines


def load_differences(path):
    pats = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split("\t", 1)
            if len(parts) < 2 or not parts[1].strip():
                raise SystemExit("%s:%d: a pattern without its reason" % (path, n))
            pats.append((parts[0], parts[1].strip()))
    return pats


def main():
    ap = argparse.ArgumentParser()
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--tap")
    src.add_argument("--emu")
    ap.add_argument("--gpu", default=os.path.join(HERE, "gpu", "h100-580.transcript"))
    ap.add_argument("--differences", action="append",
                    help="a file of intended differences (repeatable; default differences.txt)")
    ap.add_argument("--quiet", action="store_true", help="only the unlisted ones and the count")
    ap.add_argument("--test", default=TEST)
    ap.add_argument("--tag", default="conf")
    ap.add_argument("--what", default="conformance")
    ap.add_argument("--sections-of-emu", action="store_true",
                    help="compare only the sections the emulator's transcript has")
    a = ap.parse_args()

    with open(a.gpu) as f:
        gpu = parse(f, a.gpu)
    if a.tap:
        emu = parse(from_tap(a.tap, a.test, a.tag), a.tap)
    else:
        with open(a.emu) as f:
            emu = parse(f, a.emu)
    if not emu:
        print("%s: the emulator's transcript is empty" % a.what)
        return 1
    if a.sections_of_emu:
        sections = {k.split(".", 1)[0] for k in emu}
        gpu = {k: v for k, v in gpu.items() if k.split(".", 1)[0] in sections}
    pats = []
    for path in a.differences or [os.path.join(HERE, "differences.txt")]:
        pats += load_differences(path)
    used = set()
    listed = unlisted = 0
    for key in sorted(set(gpu) | set(emu)):
        g, e = gpu.get(key, "<missing>"), emu.get(key, "<missing>")
        if g == e:
            continue
        hit = next((p for p in pats if fnmatch.fnmatchcase(key, p[0])), None)
        if hit:
            listed += 1
            used.add(hit[0])
            if not a.quiet:
                print("  listed   %s: gpu %r, emulator %r" % (key, g, e))
        else:
            unlisted += 1
            print("  UNLISTED %s: gpu %r, emulator %r" % (key, g, e))
    stale = 0
    for p, why in pats:
        if p not in used:
            stale += 1
            print("  STALE    %s is listed (%s) but matches no difference" % (p, why))
    print("%s: %d differences from the GPU (%d listed, %d unlisted, %d stale)"
          % (a.what, listed + unlisted, listed, unlisted, stale))
    return 1 if unlisted or stale else 0


if __name__ == "__main__":
    sys.exit(main())
