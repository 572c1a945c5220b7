// SPDX-License-Identifier: MIT
/*
 * topology.c - PCIe path classification (guide 11.4) from sysfs
 *
 * /sys/bus/pci/devices/BDF links to the device's place in the tree, e.g.
 * /sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0:
 * a host bridge (root bus pci0000:00), then every bridge down to the device.
 * Two devices' chains meet at their deepest common element:
 *   - different root buses: the path leaves the root complex; on different
 *     NUMA nodes it crosses the socket interconnect;
 *   - the root bus itself, or a root port (a bridge on the root bus, or one
 *     whose PCIe capability says so): the CPU's root complex routes it;
 *   - any deeper bridge: a PCIe switch routes it without the CPU.
 */
#include "topology.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CHAIN 24

struct chain {
	char root[GDCLI_BDF_LEN + 8];	/* "pciDDDD:BB" */
	char dev[MAX_CHAIN][GDCLI_BDF_LEN];
	int n;
};

static int is_root_bus(const char *s)
{
	/* pciDDDD:BB */
	return !strncmp(s, "pci", 3) && strlen(s) == 10 && s[7] == ':';
}

static int load_chain(const struct gdcli_roots *r, const char *bdf,
		      struct chain *c)
{
	char link[GDCLI_PATH_MAX], real[PATH_MAX], *save = NULL, *tok;
	int in_tree = 0;

	memset(c, 0, sizeof(*c));
	if (!gdcli_is_bdf(bdf))
		return -EINVAL;
	if (gdcli_path(link, sizeof(link), "%s/bus/pci/devices/%s", r->sysfs,
		       bdf))
		return -ENAMETOOLONG;
	if (!realpath(link, real))
		return -errno;
	for (tok = strtok_r(real, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (is_root_bus(tok)) {
			snprintf(c->root, sizeof(c->root), "%s", tok);
			c->n = 0;
			in_tree = 1;
		} else if (in_tree && gdcli_is_bdf(tok)) {
			if (c->n == MAX_CHAIN)
				return -E2BIG;
			snprintf(c->dev[c->n++], GDCLI_BDF_LEN, "%s", tok);
		}
	}
	if (!in_tree || c->n == 0 || strcmp(c->dev[c->n - 1], bdf))
		return -ENOENT;	/* not a device path we understand */
	return 0;
}

static void add_hop(struct gdcli_path *p, const char *s)
{
	if (p->nhops < GDCLI_PATH_HOPS)
		snprintf(p->hops[p->nhops++], sizeof(p->hops[0]), "%s", s);
}

/* Is the bridge at chain position i a root port of the CPU's complex? */
static int is_root_port(const struct gdcli_roots *r, const struct chain *c,
			int i)
{
	struct gdcli_pcidev d;

	if (!gdcli_pci_read(r, c->dev[i], &d) && d.pcie_type >= 0)
		return d.pcie_type == GDCLI_PCIE_ROOT_PORT;
	/* Without config space: bridges on the root bus are root ports. */
	return i == 0;
}

int gdcli_topology(const struct gdcli_roots *r, const char *a, const char *b,
		struct gdcli_path *p)
{
	struct chain ca, cb;
	struct gdcli_pcidev da, db;
	int err, k, i;

	memset(p, 0, sizeof(*p));
	p->numa_a = p->numa_b = -1;
	if (!strcmp(a, b))
		return -EINVAL;
	err = load_chain(r, a, &ca);
	if (!err)
		err = load_chain(r, b, &cb);
	if (err)
		return err;
	if (!gdcli_pci_read(r, a, &da))
		p->numa_a = da.numa_node;
	if (!gdcli_pci_read(r, b, &db))
		p->numa_b = db.numa_node;

	if (strcmp(ca.root, cb.root)) {
		for (i = ca.n - 1; i >= 0; i--)
			add_hop(p, ca.dev[i]);
		add_hop(p, ca.root);
		add_hop(p, cb.root);
		for (i = 0; i < cb.n; i++)
			add_hop(p, cb.dev[i]);
		snprintf(p->common, sizeof(p->common), "none");
		if (p->numa_a >= 0 && p->numa_b >= 0 && p->numa_a == p->numa_b) {
			p->cls = GDCLI_PATH_HOST_BRIDGE;
			snprintf(p->basis, sizeof(p->basis),
				 "different root buses (%s, %s) on the same NUMA node %d: one CPU's root complexes",
				 ca.root, cb.root, p->numa_a);
		} else {
			p->cls = GDCLI_PATH_CROSS_SOCKET;
			if (p->numa_a >= 0 && p->numa_b >= 0)
				snprintf(p->basis, sizeof(p->basis),
					 "different root buses (%s, %s) on NUMA nodes %d and %d",
					 ca.root, cb.root, p->numa_a, p->numa_b);
			else
				snprintf(p->basis, sizeof(p->basis),
					 "different root buses (%s, %s), NUMA node unknown: assumed to cross sockets",
					 ca.root, cb.root);
		}
	} else {
		for (k = 0; k < ca.n && k < cb.n && !strcmp(ca.dev[k], cb.dev[k]); k++)
			;
		/* They share k elements and meet at dev[k-1], or at the root bus
		 * (k == 0).  When one device is a bridge above the other, the
		 * meeting point is that device itself. */
		for (i = ca.n - 1; i >= k; i--)
			add_hop(p, ca.dev[i]);
		add_hop(p, k ? ca.dev[k - 1] : ca.root);
		if (k == 0) {
			snprintf(p->common, sizeof(p->common), "%s", ca.root);
			p->cls = GDCLI_PATH_HOST_BRIDGE;
			snprintf(p->basis, sizeof(p->basis),
				 "they meet at host bridge %s (root complex)", ca.root);
		} else {
			snprintf(p->common, sizeof(p->common), "%s", ca.dev[k - 1]);
			if (is_root_port(r, &ca, k - 1)) {
				p->cls = GDCLI_PATH_HOST_BRIDGE;
				snprintf(p->basis, sizeof(p->basis),
					 "they meet at root port %s: the root complex routes it",
					 ca.dev[k - 1]);
			} else {
				p->cls = GDCLI_PATH_SWITCH;
				snprintf(p->basis, sizeof(p->basis),
					 "they meet at switch port %s below root port %s",
					 ca.dev[k - 1], ca.dev[0]);
			}
		}
		for (i = k; i < cb.n; i++)
			add_hop(p, cb.dev[i]);
	}
	switch (p->cls) {
	case GDCLI_PATH_HOST_BRIDGE:
		p->warning = "the path goes through the CPU's root complex: it works, but peer-to-peer read bandwidth can be severely limited on some CPUs (guide 11.4)";
		break;
	case GDCLI_PATH_CROSS_SOCKET:
		p->warning = "the path crosses the CPU socket interconnect (QPI/UPI/HT): GPUDirect RDMA may be extremely slow or not work reliably (guide 11.4)";
		break;
	default:
		p->warning = NULL;
	}
	return 0;
}

const char *gdcli_path_class_id(enum gdcli_path_class c)
{
	switch (c) {
	case GDCLI_PATH_SWITCH:		return "switch";
	case GDCLI_PATH_HOST_BRIDGE:	return "host_bridge";
	case GDCLI_PATH_CROSS_SOCKET:	return "cross_socket";
	default:			return "unknown";
	}
}

const char *gdcli_path_class_text(enum gdcli_path_class c)
{
	switch (c) {
	case GDCLI_PATH_SWITCH:		return "PCIe switches only";
	case GDCLI_PATH_HOST_BRIDGE:
		return "through one CPU / host bridge (root complex)";
	case GDCLI_PATH_CROSS_SOCKET:	return "across CPU sockets";
	default:			return "unknown";
	}
}
