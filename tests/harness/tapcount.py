#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tapcount.py LABEL - count one TAP stream on stdin as the guest harness
counts a guest program's (run.py's TestResult): results against the plan,
a missing plan or missing results counted as failures.  Prints "PASSED
FAILED SKIPPED" on stdout and each failure, prefixed with LABEL, on
stderr.  For TAP that reaches a lane some other way than through run.py's
BEGIN and END lines (tests/emu-cli/emu-cli-lane.sh: perftest's TAP on
gdirect-emu's stdout), so that every lane counts alike."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import TestResult  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tapcount.py LABEL < TAP")
    t = TestResult(sys.argv[1])
    for line in sys.stdin:
        t.feed(line.rstrip("\n"))
    t.finish(0)
    for f in t.failures:
        print(f"{t.name}: {f}", file=sys.stderr)
    print(t.passed, t.failed, t.skipped)


if __name__ == "__main__":
    main()
