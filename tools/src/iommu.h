/* SPDX-License-Identifier: MIT */
/*
 * iommu.h - is the IOMMU off, passing through, or translating DMA?
 *
 * GPUDirect RDMA needs the physical addresses to be the same from every
 * device's point of view (guide 11.4): an IOMMU must be off or in
 * pass-through (identity) mode.
 */
#ifndef GDTOOL_IOMMU_H
#define GDTOOL_IOMMU_H

#include "sysfs.h"

enum gdcli_iommu_mode {
	GDCLI_IOMMU_OFF = 1,
	GDCLI_IOMMU_PASSTHROUGH,
	GDCLI_IOMMU_TRANSLATED,
};

struct gdcli_iommu {
	enum gdcli_iommu_mode mode;
	int units;		/* entries in /sys/class/iommu */
	int group;		/* the device's IOMMU group, -1: none */
	char domain_type[32];	/* the group's "type" file, "" if absent */
	char basis[256];	/* how it was decided, in words */
	const char *warning;	/* NULL unless the mode breaks GPUDirect */
};

/* The IOMMU mode for device bdf, or the system default when bdf is NULL. */
void gdcli_iommu_probe(const struct gdcli_roots *r, const char *bdf,
		       struct gdcli_iommu *io);

/* "off", "passthrough", "translated" (stable, for JSON) and for people. */
const char *gdcli_iommu_mode_id(enum gdcli_iommu_mode m);
const char *gdcli_iommu_mode_text(enum gdcli_iommu_mode m);

#endif
