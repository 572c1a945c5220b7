// SPDX-License-Identifier: MIT
/*
 * iommu.c - IOMMU mode on fixture trees: off, pass-through (group type
 * and command line) and translating (group type and kernel default).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "iommu.h"

static const char *fixtures;

static void roots(struct gdcli_roots *r, const char *tree, const char *proc)
{
	snprintf(r->sysfs, sizeof(r->sysfs), "%s/%s/sys", fixtures, tree);
	snprintf(r->proc, sizeof(r->proc), "%s/%s/%s", fixtures, tree, proc);
}

int main(void)
{
	struct gdcli_roots r;
	struct gdcli_iommu io;

	fixtures = getenv("FIXTURES");
	if (!fixtures) {
		tap_diag("FIXTURES not set");
		return 1;
	}
	/* No units, no groups: off, no warning. */
	roots(&r, "switch", "proc");
	gdcli_iommu_probe(&r, "0000:03:00.0", &io);
	CHECK(io.mode == GDCLI_IOMMU_OFF);
	CHECK(io.units == 0 && io.group == -1);
	CHECK(io.warning == NULL);
	gdcli_iommu_probe(&r, NULL, &io);
	CHECK(io.mode == GDCLI_IOMMU_OFF);

	/* Group type "identity": pass-through, no warning. */
	roots(&r, "hostbridge", "proc");
	gdcli_iommu_probe(&r, "0000:01:00.0", &io);
	CHECK(io.mode == GDCLI_IOMMU_PASSTHROUGH);
	CHECK(io.units == 1 && io.group == 1);
	CHECK_STR(io.domain_type, "identity");
	CHECK(io.warning == NULL);
	CHECK_STR(gdcli_iommu_mode_text(io.mode), "passthrough (identity)");
	/* System-wide, the command line's iommu=pt says the same. */
	gdcli_iommu_probe(&r, NULL, &io);
	CHECK(io.mode == GDCLI_IOMMU_PASSTHROUGH);

	/* Group type "DMA-FQ": translating, with guide 11.4's warning. */
	roots(&r, "sockets", "proc");
	gdcli_iommu_probe(&r, "0000:81:00.0", &io);
	CHECK(io.mode == GDCLI_IOMMU_TRANSLATED);
	CHECK(io.units == 2 && io.group == 20);
	CHECK_STR(io.domain_type, "DMA-FQ");
	CHECK(io.warning != NULL && strstr(io.warning, "iommu=pt") != NULL);
	CHECK_STR(gdcli_iommu_mode_id(io.mode), "translated");
	gdcli_iommu_probe(&r, NULL, &io);
	CHECK(io.mode == GDCLI_IOMMU_TRANSLATED);

	/* No type files (old kernels): the command line decides. */
	roots(&r, "oldkernel", "proc");
	gdcli_iommu_probe(&r, "0000:21:00.0", &io);
	CHECK(io.mode == GDCLI_IOMMU_TRANSLATED);
	CHECK(io.group == 3 && io.domain_type[0] == '\0');
	CHECK(io.warning != NULL);
	roots(&r, "oldkernel", "proc-pt");
	gdcli_iommu_probe(&r, "0000:21:00.0", &io);
	CHECK(io.mode == GDCLI_IOMMU_PASSTHROUGH);
	CHECK(io.warning == NULL);

	/* A device outside every group while groups exist bypasses the IOMMU. */
	roots(&r, "sockets", "proc");
	gdcli_iommu_probe(&r, "0000:99:00.0", &io);
	CHECK(io.mode == GDCLI_IOMMU_OFF);
	return tap_done();
}
