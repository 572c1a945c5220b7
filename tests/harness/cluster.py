#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cluster.py - boot two emulated GPU machines linked by a network.

usage: cluster.py --initrd FILE --kernel FILE --results DIR
                  [--name NAME] [--timeout SECONDS] [--mem-mb MB]
                  [--gpu-mb MB] [--show]

Each node is run.py's machine (its own ivshmem GPU backing file, its own
edu device, its own console and TAP stream) plus an e1000 NIC.  The two
NICs are joined by qemu's stream netdev over a unix socket in a private
directory (node 0 listens, node 1 connects): no host network, no root.
Node N boots with `gdirect.node=N` on its command line; the guest side
(tests/guest/cluster/cluster-lib.sh) derives its address from that (10.0.0.N+1).

Besides run.py's HOSTCHECK, a guest may send `BARRIER NAME` on its TAP
port: the harness answers `OK` once every node has sent the same NAME,
and `FAIL ...` to a node whose peer has finished, died or waits at a
different barrier.  That is how the nodes order server and client steps.

The run fails on any test failure in either node, a hang (timeout), or a
kernel problem in either log.  Both qemu processes are ended whatever
happens.  Results: DIR/NAME-nodeN.{tap,console.log}; the last line is
`N passed, N failed, N skipped` over both nodes.
"""
import argparse
import os
import selectors
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import Guest  # noqa: E402

NODES = 2


class Barrier:
    """BARRIER NAME requests from the nodes, answered when all have come."""

    def __init__(self, nodes):
        self.nodes = nodes
        self.waiting = {}    # guest -> barrier name

    def request(self, guest, args):
        if len(args) != 1:
            return "FAIL bad request"
        others = [g for g in self.nodes if g is not guest]
        gone = [g.name for g in others if g.done or g.qemu.poll() is not None]
        if gone:
            return f"FAIL peer {gone[0]} has finished"
        name = args[0]
        for g, n in self.waiting.items():
            if n != name:
                # Both sides would wait forever: say so to both.
                del self.waiting[g]
                g.reply(f"FAIL peer waits at {name}")
                return f"FAIL peer waits at {n}"
        self.waiting[guest] = name
        if len(self.waiting) == len(self.nodes):
            for g in self.waiting:
                if g is not guest:
                    g.reply("OK")
            self.waiting.clear()
            return "OK"
        return None

    def peer_gone(self, guest):
        """Release whoever waits for @guest, which will never come."""
        for g in list(self.waiting):
            if g is not guest:
                g.reply(f"FAIL peer {guest.name} has finished")
                del self.waiting[g]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--name", default="cluster")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--mem-mb", type=int, default=1024)
    ap.add_argument("--gpu-mb", type=int, default=256)
    ap.add_argument("--append", default="")
    ap.add_argument("--show", action="store_true",
                    help="echo both guests' output as it arrives")
    a = ap.parse_args()

    os.makedirs(a.results, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="gdirect-cluster-")
    net = os.path.join(tmp, "net.sock")
    nodes = []
    barrier = Barrier(nodes)
    for i in range(NODES):
        server = "on" if i == 0 else "off"
        extra = ["-netdev", f"stream,id=n0,server={server},addr.type=unix,"
                            f"addr.path={net}",
                 "-device", f"e1000,netdev=n0,mac=52:54:00:00:00:{i + 1:02x}"]
        # One vCPU each: two guests share the machine's cores.
        nodes.append(Guest(f"{a.name}-node{i}", a.kernel, a.initrd, a.results,
                           tmp, mem_mb=a.mem_mb, gpu_mb=a.gpu_mb, smp=1,
                           append=f"gdirect.node={i} {a.append}", extra=extra,
                           show=a.show, label=f"[node{i}] " if a.show else "",
                           requests={"BARRIER": barrier.request}))
    start = time.monotonic()
    timed_out = 0
    totals = [0, 0, 0]
    try:
        for i, g in enumerate(nodes):
            if i == 1:
                # Node 0 listens on the network socket once it runs.
                for _ in range(200):
                    if os.path.exists(net) or nodes[0].qemu.poll() is not None:
                        break
                    time.sleep(0.05)
            if not g.start():
                rc = g.qemu.poll() if g.qemu else None
                print(f"guest[{g.name}]: qemu did not start (exit {rc})")
                print("0 passed, 1 failed, 0 skipped")
                return 1
        sel = selectors.DefaultSelector()
        for g in nodes:
            sel.register(g.conn, selectors.EVENT_READ, g)
        live = set(nodes)
        while live:
            if time.monotonic() - start > a.timeout:
                timed_out = a.timeout
                break
            ready = sel.select(timeout=1.0)
            for key, _ in ready:
                g = key.data
                if not g.feed(g.conn.recv(65536)) or g.done:
                    sel.unregister(g.conn)
                    live.discard(g)
                    barrier.peer_gone(g)
            for g in list(live):
                if g.qemu.poll() is not None:
                    sel.unregister(g.conn)
                    live.discard(g)
                    barrier.peer_gone(g)
        for g in nodes:
            g.stop(wait_s=5 if timed_out else 30)
        for g in nodes:
            p, f, s = g.verdict(timed_out, time.monotonic() - start)
            totals = [totals[0] + p, totals[1] + f, totals[2] + s]
    finally:
        for g in nodes:
            if g.qemu and g.qemu.poll() is None:
                g.qemu.kill()
                g.qemu.wait()
            g.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")
    return 1 if totals[1] or not all(g.results for g in nodes) else 0


if __name__ == "__main__":
    sys.exit(main())
