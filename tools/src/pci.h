/* SPDX-License-Identifier: MIT */
/*
 * pci.h - PCI devices as sysfs shows them, and which of them are GPUs.
 */
#ifndef GDTOOL_PCI_H
#define GDTOOL_PCI_H

#include "sysfs.h"

#define GDCLI_BDF_LEN 16	/* "dddd:bb:dd.f" and a NUL */

struct gdcli_pcidev {
	char bdf[GDCLI_BDF_LEN];
	unsigned int vendor, device, class_code;	/* class: 0xCCSSPP */
	char driver[64];	/* bound driver, "" if none */
	int numa_node;		/* -1: unknown */
	int pcie_type;		/* PCIe port type (PCI_EXP_TYPE_*), -1: unknown */
};

/* PCIe capability device/port types (PCI Express Base spec, 7.5.3.2). */
#define GDCLI_PCIE_ENDPOINT	0x0
#define GDCLI_PCIE_ROOT_PORT	0x4
#define GDCLI_PCIE_UPSTREAM	0x5
#define GDCLI_PCIE_DOWNSTREAM	0x6
#define GDCLI_PCIE_PCI_BRIDGE	0x7
#define GDCLI_PCIE_PCIE_BRIDGE	0x8

enum gdcli_gpu_kind {
	GDCLI_GPU_NVIDIA = 1,	/* vendor 0x10de, display class */
	GDCLI_GPU_EMULATED = 2,	/* ivshmem 1af4:1110 bound to nvp2p_emu */
};

struct gdcli_gpu {
	struct gdcli_pcidev pci;
	enum gdcli_gpu_kind kind;
};

/* Is s a full PCI address "dddd:bb:dd.f"? */
int gdcli_is_bdf(const char *s);

/* Read one device: 0, or -ENOENT when there is no such device. */
int gdcli_pci_read(const struct gdcli_roots *r, const char *bdf,
		   struct gdcli_pcidev *d);

/*
 * The PCIe port type from a config space image (the sysfs "config" file;
 * without root only its first 64 bytes are readable, so this is often -1).
 */
int gdcli_pcie_type(const unsigned char *cfg, size_t len);

/* The GPUs, sorted by address: how many were found (at most max). */
int gdcli_find_gpus(const struct gdcli_roots *r, struct gdcli_gpu *out,
		    int max);

#endif
