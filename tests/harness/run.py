#!/usr/bin/env python3
"""run.py - boot the emulated GPU machine and run the guest test suite.

usage: run.py --initrd FILE --kernel FILE --name NAME --results DIR
              [--timeout SECONDS] [--mem-mb MB] [--gpu-mb MB]

The guest has two real PCI devices besides the basics: qemu's ivshmem-plain,
backed by a host file (the emulated GPU's memory), and qemu's edu device (the
third-party DMA engine).  Its console (ttyS0) is the kernel log; its second
serial port (ttyS1) carries the tests' TAP output and `hostcheck` requests,
which this script answers by reading the backing file.

The run fails on any test failure, on a hang (timeout), or on any kernel
BUG, WARNING, Oops, general protection fault, KASAN, KFENCE, kmemleak or
lockdep report in the guest log.  It prints one line per test and ends with
`N passed, N failed, N skipped`; results go to DIR/NAME.{tap,console.log}.
"""
import argparse
import hashlib
import os
import re
import selectors
import socket
import subprocess
import sys
import tempfile
import time

KERNEL_PROBLEMS = re.compile(
    r"(BUG:|WARNING:|Oops|general protection|KASAN|KFENCE|kmemleak:|"
    r"possible circular locking|possible recursive locking|"
    r"inconsistent lock state|lock held when returning|"
    r"suspicious RCU usage|INFO: task .* blocked|Kernel panic|"
    r"UBSAN:|refcount_t:|invoked oom-killer)")
TAP_RESULT = re.compile(r"^(not )?ok\b\s*(\d+)?\s*(.*)$")
TAP_PLAN = re.compile(r"^1\.\.(\d+)")


class TestResult:
    def __init__(self, name):
        self.name = name
        self.passed = self.failed = self.skipped = 0
        self.plan = None
        self.lines = []
        self.rc = None
        self.failures = []

    def feed(self, line):
        self.lines.append(line)
        m = TAP_PLAN.match(line)
        if m and self.plan is None:
            self.plan = int(m.group(1))
            return
        m = TAP_RESULT.match(line)
        if not m:
            return
        desc = m.group(3)
        if m.group(1):
            self.failed += 1
            self.failures.append(desc)
        elif re.search(r"#\s*SKIP", desc, re.I):
            self.skipped += 1
        else:
            self.passed += 1

    def finish(self, rc):
        self.rc = rc
        seen = self.passed + self.failed + self.skipped
        if self.plan is None:
            self.failed += 1
            self.failures.append("no TAP plan")
        elif seen < self.plan:
            self.failed += self.plan - seen
            self.failures.append(f"{self.plan - seen} results missing")
        elif seen > self.plan:
            self.failed += 1
            self.failures.append(f"{seen - self.plan} results beyond the plan")
        if rc != 0 and not self.failures:
            self.failed += 1
            self.failures.append(f"exited with status {rc}")


def hostcheck(backing, args):
    try:
        off, length, want = int(args[0], 0), int(args[1], 0), args[2].lower()
    except (IndexError, ValueError):
        return "FAIL bad request"
    with open(backing, "rb") as f:
        f.seek(off)
        data = f.read(length)
    got = hashlib.sha256(data).hexdigest()
    if len(data) != length:
        return f"FAIL short read {len(data)}"
    return "OK" if got == want else f"FAIL sha256 {got}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--mem-mb", type=int, default=1024)
    ap.add_argument("--gpu-mb", type=int, default=256)
    ap.add_argument("--append", default="")
    ap.add_argument("--show", action="store_true",
                    help="echo the guest's output as it arrives")
    a = ap.parse_args()

    os.makedirs(a.results, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="gdirect-guest-")
    backing = os.path.join(tmp, "gpu-mem.bin")
    with open(backing, "wb") as f:
        f.truncate(a.gpu_mb << 20)
    sock_path = os.path.join(tmp, "tap.sock")
    console_path = os.path.join(a.results, a.name + ".console.log")
    tap_path = os.path.join(a.results, a.name + ".tap")

    cmd = [
        "qemu-system-x86_64", "-accel", "tcg,thread=multi", "-smp", "2",
        "-m", str(a.mem_mb), "-nodefaults", "-display", "none",
        "-no-reboot", "-cpu", "max",
        "-kernel", a.kernel, "-initrd", a.initrd,
        "-append", "console=ttyS0 panic=-1 loglevel=6 " + a.append,
        "-serial", "file:" + console_path,
        "-chardev", f"socket,id=tap,path={sock_path},server=on,wait=on",
        "-serial", "chardev:tap",
        "-object", f"memory-backend-file,id=gpumem,share=on,"
                   f"mem-path={backing},size={a.gpu_mb}M",
        "-device", "ivshmem-plain,memdev=gpumem",
        "-device", "edu,dma_mask=0xffffffffffffffff",
    ]
    qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
    conn = None
    for _ in range(200):
        try:
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.connect(sock_path)
            break
        except OSError:
            conn.close()
            conn = None
            if qemu.poll() is not None:
                break
            time.sleep(0.05)
    if conn is None:
        print(f"guest[{a.name}]: qemu did not start (exit {qemu.poll()})")
        print("0 passed, 1 failed, 0 skipped")
        return 1

    results, cur, done, buf = [], None, False, b""
    start = time.monotonic()
    sel = selectors.DefaultSelector()
    sel.register(conn, selectors.EVENT_READ)
    tap = open(tap_path, "w")
    timed_out = False
    while not done:
        if time.monotonic() - start > a.timeout:
            timed_out = True
            break
        if not sel.select(timeout=1.0):
            if qemu.poll() is not None:
                break
            continue
        chunk = conn.recv(65536)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            raw, buf = buf.split(b"\n", 1)
            line = raw.decode("utf-8", "replace").rstrip("\r")
            tap.write(line + "\n")
            tap.flush()
            if a.show and not line.startswith(("HOSTCHECK ", "=== ")):
                print(line, flush=True)
            if line.startswith("HOSTCHECK "):
                conn.sendall((hostcheck(backing, line.split()[1:]) + "\n").encode())
            elif line.startswith("=== BEGIN "):
                cur = TestResult(line[10:].strip())
            elif line.startswith("=== END ") and cur:
                cur.finish(int(line.split()[-1]))
                results.append(cur)
                r = cur
                print(f"guest[{a.name}] {r.name}: {r.passed} passed, "
                      f"{r.failed} failed, {r.skipped} skipped"
                      + ("" if not r.failures else
                         "  <- " + "; ".join(r.failures[:5])), flush=True)
                cur = None
            elif line == "=== DONE":
                done = True
            elif cur:
                cur.feed(line)
    tap.close()
    try:
        qemu.wait(timeout=30)
    except subprocess.TimeoutExpired:
        qemu.kill()
        qemu.wait()

    passed = sum(r.passed for r in results)
    failed = sum(r.failed for r in results)
    skipped = sum(r.skipped for r in results)
    if cur is not None:
        failed += 1
        print(f"guest[{a.name}] {cur.name}: did not finish (guest hung or died)")
    if timed_out:
        failed += 1
        print(f"guest[{a.name}]: timed out after {a.timeout} s")
    elif not done:
        failed += 1
        print(f"guest[{a.name}]: guest stopped before the suite finished")
    with open(console_path, errors="replace") as f:
        problems = [l.rstrip() for l in f if KERNEL_PROBLEMS.search(l)]
    for p in problems[:20]:
        print(f"guest[{a.name}] kernel log: {p}")
    failed += len(problems)
    if not results:
        print(f"guest[{a.name}]: no test ran")
    os.unlink(backing)
    os.unlink(sock_path) if os.path.exists(sock_path) else None
    os.rmdir(tmp)
    print(f"guest[{a.name}]: {len(results)} programs in "
          f"{time.monotonic() - start:.0f} s; console: {console_path}")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed or not results else 0


if __name__ == "__main__":
    sys.exit(main())
