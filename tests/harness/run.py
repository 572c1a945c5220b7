#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
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
GUEST_MARK = re.compile(r"gdirect-guest: (BEGIN|END) (\S+)")
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
        self.began = time.monotonic()
        self.seconds = None

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
        self.seconds = time.monotonic() - self.began
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


class Guest:
    """One emulated machine: its qemu process, its TAP stream, its results.

    The caller reads the TAP socket (`conn`) and hands each chunk to
    feed(); a request line the guest sends (HOSTCHECK, or one of
    `requests`, a dict from word to handler(guest, args) returning the
    reply or None to answer later through reply()) is answered here.
    """

    def __init__(self, name, kernel, initrd, results, tmp, mem_mb=1024,
                 gpu_mb=256, append="", smp=2, extra=(), show=False,
                 requests=None, label="", tcg_thread="multi"):
        self.name = name
        self.show = show
        self.label = label
        self.requests = requests or {}
        self.backing = os.path.join(tmp, name + "-gpu-mem.bin")
        with open(self.backing, "wb") as f:
            f.truncate(gpu_mb << 20)
        self.sock_path = os.path.join(tmp, name + "-tap.sock")
        self.console_path = os.path.join(results, name + ".console.log")
        self.tap_path = os.path.join(results, name + ".tap")
        self.times_path = os.path.join(results, name + ".times")
        self.cmd = [
            "qemu-system-x86_64", "-accel", "tcg,thread=" + tcg_thread, "-smp", str(smp),
            "-m", str(mem_mb), "-nodefaults", "-display", "none",
            "-no-reboot", "-cpu", "max",
            "-kernel", kernel, "-initrd", initrd,
            "-append", "console=ttyS0 panic=-1 loglevel=6 " + append,
            "-serial", "file:" + self.console_path,
            "-chardev", f"socket,id=tap,path={self.sock_path},server=on,wait=on",
            "-serial", "chardev:tap",
            "-object", f"memory-backend-file,id=gpumem,share=on,"
                       f"mem-path={self.backing},size={gpu_mb}M",
            "-device", "ivshmem-plain,memdev=gpumem",
            "-device", "edu,dma_mask=0xffffffffffffffff",
        ] + list(extra)
        self.qemu = None
        self.conn = None
        self.tap = None
        self.results, self.cur, self.done, self.buf = [], None, False, b""

    def start(self):
        """Start qemu and connect to its TAP port; False if it did not start."""
        self.qemu = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL)
        for _ in range(200):
            try:
                self.conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.conn.connect(self.sock_path)
                break
            except OSError:
                self.conn.close()
                self.conn = None
                if self.qemu.poll() is not None:
                    break
                time.sleep(0.05)
        if self.conn is None:
            return False
        self.tap = open(self.tap_path, "w")
        self.started = time.monotonic()
        return True

    def reply(self, text):
        self.conn.sendall((text + "\n").encode())

    def feed(self, chunk):
        """Take bytes from the TAP port; False when the port closed."""
        if not chunk:
            return False
        self.buf += chunk
        while b"\n" in self.buf:
            raw, self.buf = self.buf.split(b"\n", 1)
            self.line(raw.decode("utf-8", "replace").rstrip("\r"))
        return True

    def line(self, line):
        self.tap.write(line + "\n")
        self.tap.flush()
        word = line.split(" ", 1)[0]
        if self.show and not line.startswith(("HOSTCHECK ", "=== ")) \
                and word not in self.requests:
            print(self.label + line, flush=True)
        if line.startswith("HOSTCHECK "):
            self.reply(hostcheck(self.backing, line.split()[1:]))
        elif word in self.requests:
            answer = self.requests[word](self, line.split()[1:])
            if answer is not None:
                self.reply(answer)
        elif line.startswith("=== BEGIN "):
            self.cur = TestResult(line[10:].strip())
        elif line.startswith("=== END ") and self.cur:
            self.cur.finish(int(line.split()[-1]))
            self.results.append(self.cur)
            r = self.cur
            print(f"guest[{self.name}] {r.name}: {r.passed} passed, "
                  f"{r.failed} failed, {r.skipped} skipped"
                  + ("" if not r.failures else
                     "  <- " + "; ".join(r.failures[:5])), flush=True)
            self.cur = None
        elif line == "=== DONE":
            self.done = True
        elif self.cur:
            self.cur.feed(line)

    def stop(self, wait_s=30):
        """Let qemu end (it powers off after the suite), else kill it."""
        if self.tap:
            self.tap.close()
            self.tap = None
        if self.qemu is None:
            return
        try:
            self.qemu.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            self.qemu.kill()
            self.qemu.wait()

    def verdict(self, timed_out, elapsed):
        """Print the closing lines; returns (passed, failed, skipped)."""
        passed = sum(r.passed for r in self.results)
        failed = sum(r.failed for r in self.results)
        skipped = sum(r.skipped for r in self.results)
        if self.cur is not None:
            failed += 1
            print(f"guest[{self.name}] {self.cur.name}: did not finish "
                  "(guest hung or died)")
        if timed_out:
            failed += 1
            print(f"guest[{self.name}]: timed out after {timed_out} s")
        elif not self.done:
            failed += 1
            print(f"guest[{self.name}]: guest stopped before the suite finished")
        # Each problem with the test program that was running (the guest's
        # init writes BEGIN and END lines into the kernel log).
        problems = []
        test = None
        with open(self.console_path, errors="replace") as f:
            for l in f:
                m = GUEST_MARK.search(l)
                if m:
                    test = m.group(2) if m.group(1) == "BEGIN" else None
                elif KERNEL_PROBLEMS.search(l):
                    problems.append(l.rstrip() +
                                    (f"  <- during {test}" if test else ""))
        for p in problems[:20]:
            print(f"guest[{self.name}] kernel log: {p}")
        failed += len(problems)
        if not self.results:
            failed += 1
            print(f"guest[{self.name}]: no test ran")
        print(f"guest[{self.name}]: {len(self.results)} programs in "
              f"{elapsed:.0f} s; console: {self.console_path}")
        self.write_times()
        return passed, failed, skipped

    def write_times(self):
        """Write each test program's wall time, slowest first, and say
        where: what a lane's time goes to is what its cost is cut by."""
        if not self.results:
            return
        boot = self.results[0].began - self.started
        rows = sorted(self.results, key=lambda r: -r.seconds)
        with open(self.times_path, "w") as f:
            f.write(f"# guest[{self.name}]: seconds per test program, "
                    f"slowest first; boot to the first test {boot:.1f} s\n")
            for r in rows:
                f.write(f"{r.seconds:8.1f}\t{r.name}\n")
        top = ", ".join(f"{r.name} {r.seconds:.0f} s" for r in rows[:3])
        print(f"guest[{self.name}]: slowest {top} ({self.times_path})")

    def cleanup(self):
        for p in (self.backing, self.sock_path):
            if os.path.exists(p):
                os.unlink(p)


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
    ap.add_argument("--tcg-thread", choices=("multi", "single"), default="multi",
                    help="qemu's TCG threading: one host thread per vCPU "
                    "(multi), or all vCPUs on one (single)")
    ap.add_argument("--show", action="store_true",
                    help="echo the guest's output as it arrives")
    a = ap.parse_args()

    os.makedirs(a.results, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="gdirect-guest-")
    g = Guest(a.name, a.kernel, a.initrd, a.results, tmp, mem_mb=a.mem_mb,
              gpu_mb=a.gpu_mb, append=a.append, show=a.show,
              tcg_thread=a.tcg_thread)
    try:
        if not g.start():
            print(f"guest[{a.name}]: qemu did not start (exit {g.qemu.poll()})")
            print("0 passed, 1 failed, 0 skipped")
            return 1
        start = time.monotonic()
        sel = selectors.DefaultSelector()
        sel.register(g.conn, selectors.EVENT_READ)
        timed_out = 0
        while not g.done:
            if time.monotonic() - start > a.timeout:
                timed_out = a.timeout
                break
            if not sel.select(timeout=1.0):
                if g.qemu.poll() is not None:
                    break
                continue
            if not g.feed(g.conn.recv(65536)):
                break
        g.stop()
        passed, failed, skipped = g.verdict(timed_out, time.monotonic() - start)
    finally:
        if g.qemu and g.qemu.poll() is None:
            g.qemu.kill()
            g.qemu.wait()
        g.cleanup()
        os.rmdir(tmp)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed or not g.results else 0


if __name__ == "__main__":
    sys.exit(main())
