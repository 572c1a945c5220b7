/* SPDX-License-Identifier: MIT */
/*
 * gpumem.h - the emulated GPU's memory as guest tests see it (header only)
 *
 * guest_bar2_start(): bus address of BAR2, the GPU memory; a page-table
 * address minus it is the offset in the host's backing file.
 * guest_host_has(): does the host see these bytes at that offset?  It
 * hashes them with busybox sha256sum and asks the host with `hostcheck`.
 */
#ifndef GDIRECT_GUEST_GPUMEM_H
#define GDIRECT_GUEST_GPUMEM_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static inline uint64_t guest_bar2_start(void)
{
	unsigned long long start = 0, end, flags;
	FILE *f = popen("cat /sys/bus/pci/drivers/nvp2p_emu/0*/resource", "r");

	for (int i = 0; f && i < 3; i++)
		if (fscanf(f, "%llx %llx %llx", &start, &end, &flags) != 3)
			start = 0;
	if (f)
		pclose(f);
	return start;
}

static inline int guest_host_has(uint64_t off, const void *data, size_t len)
{
	char cmd[256], sum[65] = "";
	FILE *f = fopen("/tmp/guest-expect.bin", "wb");
	int ok;

	if (!f)
		return 0;
	ok = fwrite(data, 1, len, f) == len;
	fclose(f);
	f = popen("sha256sum /tmp/guest-expect.bin", "r");
	if (!ok || !f || fscanf(f, "%64s", sum) != 1) {
		if (f)
			pclose(f);
		return 0;
	}
	pclose(f);
	snprintf(cmd, sizeof(cmd), "hostcheck %llu %zu %s",
		 (unsigned long long)off, len, sum);
	return system(cmd) == 0;
}

#endif /* GDIRECT_GUEST_GPUMEM_H */
