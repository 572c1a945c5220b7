// SPDX-License-Identifier: MIT
/*
 * iommu.c - IOMMU mode from sysfs and the kernel command line
 *
 * Sources, most specific first:
 *   1. the device's group: /sys/bus/pci/devices/BDF/iommu_group -> group N,
 *      whose "type" (kernels 5.11+) names the default domain: "identity"
 *      is pass-through, "DMA"/"DMA-FQ" translate, "unmanaged" is a VFIO
 *      domain (translating), "blocked" blocks DMA;
 *   2. no group for the device, and none at all: no IOMMU is in use;
 *   3. groups but no type file: the command line decides (iommu=pt,
 *      iommu.passthrough=1 are pass-through; the kernel default is to
 *      translate).
 * /sys/class/iommu lists the hardware units (dmar0, ivhd0...) enabled.
 */
#include "iommu.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count_entries(const char *dir)
{
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Does the command line carry word (exactly, as a whole argument)? */
static int cmdline_has(const char *cmdline, const char *word)
{
	size_t len = strlen(word);
	const char *p = cmdline;

	while ((p = strstr(p, word))) {
		if ((p == cmdline || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
			return 1;
		p += len;
	}
	return 0;
}

static enum gdcli_iommu_mode mode_of_type(const char *type)
{
	if (!strcmp(type, "identity"))
		return GDCLI_IOMMU_PASSTHROUGH;
	return GDCLI_IOMMU_TRANSLATED;	/* DMA, DMA-FQ, unmanaged, blocked */
}

/* System-wide: the type of the first group that has one (the kernel gives
 * every group the same default domain type unless one was changed). */
static int first_group_type(const struct gdcli_roots *r, struct gdcli_iommu *io)
{
	char p[GDCLI_PATH_MAX];
	struct dirent *de;
	DIR *d;
	int found = 0;

	if (gdcli_path(p, sizeof(p), "%s/kernel/iommu_groups", r->sysfs) ||
	    !(d = opendir(p)))
		return 0;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.' ||
		    gdcli_path(p, sizeof(p), "%s/kernel/iommu_groups/%s/type",
			       r->sysfs, de->d_name))
			continue;
		found = !gdcli_read_str(p, io->domain_type,
					sizeof(io->domain_type)) &&
			io->domain_type[0];
	}
	closedir(d);
	return found;
}

void gdcli_iommu_probe(const struct gdcli_roots *r, const char *bdf,
		       struct gdcli_iommu *io)
{
	char p[GDCLI_PATH_MAX], name[32], cmdline[4096] = "";
	int groups;

	memset(io, 0, sizeof(*io));
	io->group = -1;
	if (!gdcli_path(p, sizeof(p), "%s/class/iommu", r->sysfs))
		io->units = count_entries(p);
	if (!gdcli_path(p, sizeof(p), "%s/kernel/iommu_groups", r->sysfs))
		groups = count_entries(p);
	else
		groups = 0;
	if (!gdcli_path(p, sizeof(p), "%s/cmdline", r->proc))
		gdcli_read_str(p, cmdline, sizeof(cmdline));

	if (bdf &&
	    !gdcli_path(p, sizeof(p), "%s/bus/pci/devices/%s/iommu_group",
			r->sysfs, bdf) &&
	    !gdcli_link_name(p, name, sizeof(name))) {
		io->group = atoi(name);
		if (!gdcli_path(p, sizeof(p), "%s/kernel/iommu_groups/%d/type",
				r->sysfs, io->group) &&
		    !gdcli_read_str(p, io->domain_type,
				    sizeof(io->domain_type)) &&
		    io->domain_type[0]) {
			io->mode = mode_of_type(io->domain_type);
			snprintf(io->basis, sizeof(io->basis), "%s is in IOMMU group %d, domain type %s",
				 bdf, io->group, io->domain_type);
			goto out;
		}
	} else if (bdf && groups > 0) {
		/* Groups exist but this device has none: it bypasses the IOMMU. */
		io->mode = GDCLI_IOMMU_OFF;
		snprintf(io->basis, sizeof(io->basis),
			 "%s is in no IOMMU group (%d groups exist)", bdf, groups);
		goto out;
	}
	if (!bdf && groups > 0 && first_group_type(r, io)) {
		io->mode = mode_of_type(io->domain_type);
		snprintf(io->basis, sizeof(io->basis), "IOMMU groups' default domain type %s",
			 io->domain_type);
		goto out;
	}
	if (groups == 0 && io->group < 0) {
		io->mode = GDCLI_IOMMU_OFF;
		snprintf(io->basis, sizeof(io->basis), "no IOMMU groups%s",
			 io->units ? "" : ", no IOMMU units in class/iommu");
	} else if (cmdline_has(cmdline, "iommu=pt") ||
		   cmdline_has(cmdline, "iommu.passthrough=1")) {
		io->mode = GDCLI_IOMMU_PASSTHROUGH;
		snprintf(io->basis, sizeof(io->basis),
			 "IOMMU groups exist; kernel command line asks for pass-through");
	} else if (cmdline_has(cmdline, "intel_iommu=off") ||
		   cmdline_has(cmdline, "amd_iommu=off")) {
		io->mode = GDCLI_IOMMU_OFF;
		snprintf(io->basis, sizeof(io->basis),
			 "kernel command line turns the IOMMU off");
	} else {
		io->mode = GDCLI_IOMMU_TRANSLATED;
		snprintf(io->basis, sizeof(io->basis),
			 "IOMMU groups exist, no domain type file and no iommu=pt: the kernel's default DMA translation");
	}
out:
	if (io->mode == GDCLI_IOMMU_TRANSLATED)
		io->warning = "the IOMMU translates DMA addresses: GPUDirect RDMA needs it off or in pass-through mode (guide 11.4); boot with iommu=pt";
}

const char *gdcli_iommu_mode_id(enum gdcli_iommu_mode m)
{
	switch (m) {
	case GDCLI_IOMMU_OFF:		return "off";
	case GDCLI_IOMMU_PASSTHROUGH:	return "passthrough";
	case GDCLI_IOMMU_TRANSLATED:	return "translated";
	}
	return "unknown";
}

const char *gdcli_iommu_mode_text(enum gdcli_iommu_mode m)
{
	switch (m) {
	case GDCLI_IOMMU_OFF:		return "off";
	case GDCLI_IOMMU_PASSTHROUGH:	return "passthrough (identity)";
	case GDCLI_IOMMU_TRANSLATED:	return "translated (DMA)";
	}
	return "unknown";
}
