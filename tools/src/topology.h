/* SPDX-License-Identifier: MIT */
/*
 * topology.h - the PCIe path between a GPU and a peer, as guide 11.4 sorts it
 *
 *   GDCLI_PATH_SWITCH       PCIe switches only: best performance
 *   GDCLI_PATH_HOST_BRIDGE  through one CPU / IOH (its root complex): works,
 *                        but peer-to-peer reads can be severely limited
 *   GDCLI_PATH_CROSS_SOCKET across CPU sockets (QPI/UPI/HT): may be extremely
 *                        slow or not work reliably
 */
#ifndef GDTOOL_TOPOLOGY_H
#define GDTOOL_TOPOLOGY_H

#include "pci.h"

enum gdcli_path_class {
	GDCLI_PATH_UNKNOWN = 0,
	GDCLI_PATH_SWITCH,
	GDCLI_PATH_HOST_BRIDGE,
	GDCLI_PATH_CROSS_SOCKET,
};

#define GDCLI_PATH_HOPS 32

struct gdcli_path {
	enum gdcli_path_class cls;
	/* Hops from the GPU up to the common point and down to the peer:
	 * device addresses, and "pciDDDD:BB" for a host bridge. */
	char hops[GDCLI_PATH_HOPS][GDCLI_BDF_LEN + 8];
	int nhops;
	char common[GDCLI_BDF_LEN + 8];	/* where the two paths meet */
	int numa_a, numa_b;
	char basis[256];		/* why this class, in words */
	const char *warning;		/* NULL when the path is good */
};

/* Classify the path between PCI devices a and b: 0 or -errno (-ENOENT: no
 * such device). */
int gdcli_topology(const struct gdcli_roots *r, const char *a, const char *b,
		struct gdcli_path *p);

/* "switch", "host_bridge", "cross_socket", "unknown" (stable: for JSON). */
const char *gdcli_path_class_id(enum gdcli_path_class c);
/* A phrase for people. */
const char *gdcli_path_class_text(enum gdcli_path_class c);

#endif
