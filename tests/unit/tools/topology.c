// SPDX-License-Identifier: MIT
/*
 * topology.c - the three situations of guide 11.4 on fixture sysfs trees
 * (fixtures/, made by make-fixtures.py), both directions of each path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "topology.h"

static const char *fixtures;

static void roots(struct gdcli_roots *r, const char *tree)
{
	snprintf(r->sysfs, sizeof(r->sysfs), "%s/%s/sys", fixtures, tree);
	snprintf(r->proc, sizeof(r->proc), "%s/%s/proc", fixtures, tree);
	snprintf(r->dev, sizeof(r->dev), "%s/%s/dev", fixtures, tree);
}

static void expect(const char *tree, const char *a, const char *b,
		   enum gdcli_path_class cls, const char *common)
{
	struct gdcli_roots r;
	struct gdcli_path p, q;
	int i;

	roots(&r, tree);
	CHECK(gdcli_topology(&r, a, b, &p) == 0);
	if (p.cls != cls)
		tap_diag("%s: %s -> %s: got %s (%s), want %s", tree, a, b,
			 gdcli_path_class_id(p.cls), p.basis,
			 gdcli_path_class_id(cls));
	CHECK(p.cls == cls);
	CHECK_STR(p.common, common);
	CHECK((p.warning == NULL) == (cls == GDCLI_PATH_SWITCH));
	/* The path starts at a and ends at b. */
	CHECK(p.nhops >= 3);
	CHECK_STR(p.hops[0], a);
	CHECK_STR(p.hops[p.nhops - 1], b);
	/* Symmetric: the same class and meeting point the other way round,
	 * and the same hops reversed. */
	CHECK(gdcli_topology(&r, b, a, &q) == 0);
	CHECK(q.cls == p.cls);
	CHECK_STR(q.common, p.common);
	CHECK(q.nhops == p.nhops);
	for (i = 0; i < p.nhops && i < q.nhops; i++)
		CHECK_STR(q.hops[i], p.hops[p.nhops - 1 - i]);
}

int main(void)
{
	struct gdcli_roots r;
	struct gdcli_path p;
	struct gdcli_gpu gpus[4];

	fixtures = getenv("FIXTURES");
	if (!fixtures) {
		tap_diag("FIXTURES not set");
		return 1;
	}

	/* PCIe switches only: GPU and NIC meet at the switch's upstream port. */
	expect("switch", "0000:03:00.0", "0000:04:00.0", GDCLI_PATH_SWITCH,
	       "0000:01:00.0");
	roots(&r, "switch");
	CHECK(gdcli_topology(&r, "0000:03:00.0", "0000:04:00.0", &p) == 0);
	CHECK(p.nhops == 5);
	CHECK_STR(p.hops[1], "0000:02:08.0");
	CHECK_STR(p.hops[2], "0000:01:00.0");
	CHECK_STR(p.hops[3], "0000:02:10.0");
	/* The GPU and the root port above it (config space says 0000:00:01.0
	 * is a root port): they meet at the root port, the root complex. */
	expect("switch", "0000:03:00.0", "0000:00:01.0", GDCLI_PATH_HOST_BRIDGE,
	       "0000:00:01.0");
	/* ... and the switch's upstream port above it: the switch. */
	expect("switch", "0000:03:00.0", "0000:01:00.0", GDCLI_PATH_SWITCH,
	       "0000:01:00.0");
	CHECK(gdcli_topology(&r, "0000:03:00.0", "0000:00:01.0", &p) == 0);
	CHECK(p.nhops == 4);

	/* One CPU: different root ports of one root complex ... */
	expect("hostbridge", "0000:01:00.0", "0000:02:00.0",
	       GDCLI_PATH_HOST_BRIDGE, "pci0000:00");
	roots(&r, "hostbridge");
	CHECK(gdcli_topology(&r, "0000:01:00.0", "0000:02:00.0", &p) == 0);
	CHECK(p.nhops == 5);
	CHECK_STR(p.hops[2], "pci0000:00");
	/* ... and two functions below one root port (no config space: a bridge
	 * on the root bus is taken for a root port). */
	expect("hostbridge", "0000:01:00.0", "0000:01:00.1",
	       GDCLI_PATH_HOST_BRIDGE, "0000:00:01.0");

	/* Across sockets: root buses on NUMA nodes 0 and 1. */
	expect("sockets", "0000:01:00.0", "0000:81:00.0",
	       GDCLI_PATH_CROSS_SOCKET, "none");
	roots(&r, "sockets");
	CHECK(gdcli_topology(&r, "0000:01:00.0", "0000:81:00.0", &p) == 0);
	CHECK(p.numa_a == 0 && p.numa_b == 1);
	CHECK(strstr(p.basis, "NUMA nodes 0 and 1") != NULL);
	/* Two root buses of one NUMA node: one CPU's root complexes. */
	expect("sockets", "0000:01:00.0", "0000:41:00.0",
	       GDCLI_PATH_HOST_BRIDGE, "none");
	/* NUMA node unknown: assumed to cross (the warning errs on the safe side). */
	expect("sockets", "0000:01:00.0", "0000:c1:00.0",
	       GDCLI_PATH_CROSS_SOCKET, "none");
	CHECK(gdcli_topology(&r, "0000:01:00.0", "0000:c1:00.0", &p) == 0);
	CHECK(strstr(p.basis, "unknown") != NULL);

	/* The PCIe port type from a config space image: capability chain
	 * 0x40 (power management) -> 0x60 (PCI Express, type 6), and broken
	 * chains end without looping forever. */
	{
		unsigned char cfg[256] = { 0 };

		cfg[6] = 0x10;
		cfg[0x34] = 0x40;
		cfg[0x40] = 0x01;
		cfg[0x41] = 0x60;
		cfg[0x60] = 0x10;
		cfg[0x62] = 0x62;
		CHECK(gdcli_pcie_type(cfg, sizeof(cfg)) ==
		      GDCLI_PCIE_DOWNSTREAM);
		CHECK(gdcli_pcie_type(cfg, 64) == -1);	/* unprivileged read */
		cfg[0x41] = 0x40;			/* loop */
		CHECK(gdcli_pcie_type(cfg, sizeof(cfg)) == -1);
		cfg[6] = 0;				/* no capability list */
		CHECK(gdcli_pcie_type(cfg, sizeof(cfg)) == -1);
	}

	/* Errors: no such device, malformed address. */
	CHECK(gdcli_topology(&r, "0000:01:00.0", "0000:99:00.0", &p) < 0);
	CHECK(gdcli_topology(&r, "0000:01:00.0", "01:00.0", &p) < 0);
	CHECK(gdcli_topology(&r, "0000:01:00.0", "0000:01:00.0", &p) < 0);

	/* GPU discovery: the NVIDIA 3D controllers, not the audio function. */
	roots(&r, "hostbridge");
	CHECK(gdcli_find_gpus(&r, gpus, 4) == 1);
	CHECK_STR(gpus[0].pci.bdf, "0000:01:00.0");
	CHECK(gpus[0].kind == GDCLI_GPU_NVIDIA);
	CHECK_STR(gpus[0].pci.driver, "nvidia");
	roots(&r, "sockets");
	CHECK(gdcli_find_gpus(&r, gpus, 4) == 1);
	CHECK(gpus[0].pci.numa_node == 0);
	return tap_done();
}
