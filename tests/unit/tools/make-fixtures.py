#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make-fixtures.py - write the fixture sysfs/procfs trees under fixtures/.

The trees are checked in; this script says how they were made and remakes
them (run it from tests/unit/tools/).  Each tree is what /sys and /proc look like
for one situation of guide 11.4:

  switch/        GPU and NIC behind one PCIe switch (config space readable,
                 so bridge types come from the PCIe capability); no IOMMU
  hostbridge/    GPU and NIC under different root ports of one root complex,
                 and a second function below the GPU's root port; IOMMU in
                 pass-through (group type "identity")
  sockets/       GPU on root bus 00 (NUMA 0), NIC on root bus 80 (NUMA 1),
                 an NVMe on root bus 40 (NUMA 0) and an FPGA on root bus c0
                 (NUMA unknown); IOMMU translating (group type "DMA-FQ")
  emulated/      the emulated machine: ivshmem bound to nvp2p_emu and edu on
                 the root bus, the emulator's debugfs files and gdirect.ko's
                 /proc/driver/gdirect files (as root sees them) with two
                 processes' registrations
  emulated-prop/ the same with the emulator built as NVIDIA's proprietary
                 driver: its counters in /proc/driver/nvp2p_emu
  oldkernel/     IOMMU groups without "type" files (kernels before 5.11):
                 proc/ has no iommu=pt (translated), proc-pt/ has it
"""
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def config_space(pcie_type):
    """256 bytes of config space with a PCIe capability of the given type."""
    cfg = bytearray(256)
    cfg[6] = 0x10            # status: capability list
    cfg[0x34] = 0x40         # first capability
    cfg[0x40] = 0x01         # power management
    cfg[0x41] = 0x60         # next
    cfg[0x60] = 0x10         # PCI Express
    cfg[0x61] = 0x00         # last
    struct.pack_into("<H", cfg, 0x62, (pcie_type << 4) | 2)
    return bytes(cfg)


class Tree:
    def __init__(self, name):
        self.root = os.path.join(OUT, name)
        self.sys = os.path.join(self.root, "sys")
        shutil.rmtree(self.root, ignore_errors=True)
        os.makedirs(os.path.join(self.sys, "bus/pci/devices"))
        os.makedirs(os.path.join(self.sys, "class/iommu"))
        os.makedirs(os.path.join(self.sys, "kernel/iommu_groups"))
        self.cmdline("BOOT_IMAGE=/boot/vmlinuz-6.1.0-28-amd64 root=/dev/sda1 ro quiet")

    def cmdline(self, text, proc="proc"):
        write(os.path.join(self.root, proc, "cmdline"), text + "\n")

    def device(self, path, vendor, device, cls, driver=None, numa=None,
               pcie_type=None, group=None):
        """path: 'pci0000:00/0000:00:01.0/0000:01:00.0' below devices/."""
        d = os.path.join(self.sys, "devices", path)
        bdf = os.path.basename(path)
        write(os.path.join(d, "vendor"), "0x%04x\n" % vendor)
        write(os.path.join(d, "device"), "0x%04x\n" % device)
        write(os.path.join(d, "class"), "0x%06x\n" % cls)
        if numa is not None:
            write(os.path.join(d, "numa_node"), "%d\n" % numa)
        if pcie_type is not None:
            with open(os.path.join(d, "config"), "wb") as f:
                f.write(config_space(pcie_type))
        if driver:
            os.makedirs(os.path.join(self.sys, "bus/pci/drivers", driver), exist_ok=True)
            rel = os.path.relpath(os.path.join(self.sys, "bus/pci/drivers", driver), d)
            os.symlink(rel, os.path.join(d, "driver"))
        if group is not None:
            g = os.path.join(self.sys, "kernel/iommu_groups", str(group))
            os.makedirs(os.path.join(g, "devices"), exist_ok=True)
            os.symlink(os.path.relpath(g, d), os.path.join(d, "iommu_group"))
            os.symlink(os.path.relpath(d, os.path.join(g, "devices")),
                       os.path.join(g, "devices", bdf))
        link = os.path.join(self.sys, "bus/pci/devices", bdf)
        os.symlink(os.path.relpath(d, os.path.dirname(link)), link)

    def group_type(self, group, text):
        write(os.path.join(self.sys, "kernel/iommu_groups", str(group), "type"), text + "\n")

    def iommu_unit(self, name):
        # As in sysfs: class/iommu/NAME links to the unit's device directory
        # (which has a file, so that git keeps it).
        d = os.path.join(self.sys, "devices/virtual/iommu", name)
        write(os.path.join(d, "uevent"), "")
        os.symlink(os.path.relpath(d, os.path.join(self.sys, "class/iommu")),
                   os.path.join(self.sys, "class/iommu", name))


BRIDGE, GPU3D, NIC, NVME = 0x060400, 0x030200, 0x020700, 0x010802
NV, MLX = 0x10de, 0x15b3


def switch():
    t = Tree("switch")
    rp = "pci0000:00/0000:00:01.0"
    t.device(rp, 0x8086, 0x347a, BRIDGE, "pcieport", 0, pcie_type=4)
    t.device(rp + "/0000:01:00.0", 0x10b5, 0x9797, BRIDGE, "pcieport", 0, pcie_type=5)
    t.device(rp + "/0000:01:00.0/0000:02:08.0", 0x10b5, 0x9797, BRIDGE, "pcieport", 0, pcie_type=6)
    t.device(rp + "/0000:01:00.0/0000:02:10.0", 0x10b5, 0x9797, BRIDGE, "pcieport", 0, pcie_type=6)
    t.device(rp + "/0000:01:00.0/0000:02:08.0/0000:03:00.0", NV, 0x2330, GPU3D, "nvidia", 0, pcie_type=0)
    t.device(rp + "/0000:01:00.0/0000:02:10.0/0000:04:00.0", MLX, 0x1021, NIC, "mlx5_core", 0, pcie_type=0)


def hostbridge():
    t = Tree("hostbridge")
    t.iommu_unit("dmar0")
    t.device("pci0000:00/0000:00:01.0", 0x8086, 0x347a, BRIDGE, "pcieport", 0, group=1)
    t.device("pci0000:00/0000:00:02.0", 0x8086, 0x347b, BRIDGE, "pcieport", 0, group=2)
    t.device("pci0000:00/0000:00:01.0/0000:01:00.0", NV, 0x20b5, GPU3D, "nvidia", 0, group=1)
    t.device("pci0000:00/0000:00:01.0/0000:01:00.1", NV, 0x20b5, 0x040300, None, 0, group=1)
    t.device("pci0000:00/0000:00:02.0/0000:02:00.0", MLX, 0x101b, NIC, "mlx5_core", 0, group=2)
    t.group_type(1, "identity")
    t.group_type(2, "identity")
    t.cmdline("BOOT_IMAGE=/boot/vmlinuz root=/dev/sda1 ro intel_iommu=on iommu=pt")


def sockets():
    t = Tree("sockets")
    t.iommu_unit("dmar0")
    t.iommu_unit("dmar1")
    t.device("pci0000:00/0000:00:01.0", 0x8086, 0x347a, BRIDGE, "pcieport", 0, group=10)
    t.device("pci0000:00/0000:00:01.0/0000:01:00.0", NV, 0x2330, GPU3D, "nvidia", 0, group=10)
    t.device("pci0000:80/0000:80:01.0", 0x8086, 0x347a, BRIDGE, "pcieport", 1, group=20)
    t.device("pci0000:80/0000:80:01.0/0000:81:00.0", MLX, 0x1021, NIC, "mlx5_core", 1, group=20)
    t.device("pci0000:40/0000:40:01.0", 0x8086, 0x347a, BRIDGE, "pcieport", 0, group=30)
    t.device("pci0000:40/0000:40:01.0/0000:41:00.0", 0x144d, 0xa80a, NVME, "nvme", 0, group=30)
    t.device("pci0000:c0/0000:c0:01.0", 0x8086, 0x347a, BRIDGE, "pcieport", -1, group=40)
    t.device("pci0000:c0/0000:c0:01.0/0000:c1:00.0", 0x10ee, 0x9038, 0x120000, None, -1, group=40)
    for g in (10, 20, 30, 40):
        t.group_type(g, "DMA-FQ")


def oldkernel():
    t = Tree("oldkernel")
    t.iommu_unit("ivhd0")
    t.device("pci0000:00/0000:00:03.1", 0x1022, 0x1483, BRIDGE, "pcieport", 0, group=3)
    t.device("pci0000:00/0000:00:03.1/0000:21:00.0", NV, 0x1db6, GPU3D, "nvidia", 0, group=3)
    t.device("pci0000:00/0000:00:03.2", 0x1022, 0x1483, BRIDGE, "pcieport", 0, group=4)
    t.device("pci0000:00/0000:00:03.2/0000:22:00.0", MLX, 0x1017, NIC, "mlx5_core", 0, group=4)
    t.cmdline("BOOT_IMAGE=/boot/vmlinuz root=/dev/nvme0n1p2 ro amd_iommu=on iommu=pt", "proc-pt")


def emulated(name="emulated", emu_in_proc=False):
    t = Tree(name)
    t.device("pci0000:00/0000:00:02.0", 0x1af4, 0x1110, 0x050000, "nvp2p_emu", -1)
    t.device("pci0000:00/0000:00:03.0", 0x1234, 0x11e8, 0x00ff00, "gdirect_edu", -1)
    dbg = os.path.join(t.sys, "kernel/debug")
    drv = os.path.join(t.root, "proc/driver")
    emu_dir = os.path.join(drv if emu_in_proc else dbg, "nvp2p_emu")
    emu = {"allocations": 3, "pins": 2, "dma_maps": 1, "callbacks": 1,
           "bar1_total": 64 << 20, "bar1_reserved": 8 << 20,
           "bar1_used": 3 << 16, "mem_total": 256 << 20, "mem_used": 5 << 16}
    for k, v in emu.items():
        write(os.path.join(emu_dir, k), "%d\n" % v)
    write(os.path.join(drv, "gdirect/stats"), "".join("%s %d\n" % kv for kv in [
        ("pins", 5), ("pin_failures", 1), ("unpins", 2), ("callbacks", 1),
        ("orphaned", 0), ("persistent_pins", 1), ("version_mismatch", 0),
        ("live_regions", 3), ("live_bytes", 3 << 16), ("mmaps", 1),
        ("events", 1), ("put_errors", 0), ("dma_maps", 1)]))
    write(os.path.join(drv, "gdirect/regions"),
          "process 412 regions 2 bytes 131072 callbacks 1\n"
          "  handle 1 addr 0x7f0000000000 size 0x10000 pages 1 state pinned mode callback mapped 65536 phys 0xfe000000\n"
          "  handle 2 addr 0x7f0000010000 size 0x10000 pages 1 state revoked mode callback mapped 0 phys 0x0\n"
          "process 0 regions 1 bytes 65536 callbacks 0\n"
          "  handle 0 addr 0x7f0000100000 size 0x10000 pages 1 state pinned mode persistent mapped 0 phys 0xfe100000\n")
    write(os.path.join(t.sys, "module/nvp2p_emu/srcversion"), "1A2B3C4D5E6F708192A3B4C\n")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    switch()
    hostbridge()
    sockets()
    oldkernel()
    emulated()
    emulated("emulated-prop", emu_in_proc=True)
