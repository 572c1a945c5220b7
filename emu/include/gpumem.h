/* SPDX-License-Identifier: MIT */
/*
 * gpumem.h - the emulated GPU's memory as guest tests see it (header only)
 *
 * guest_bar2_start(): bus address of BAR2, the GPU memory; a page-table
 * address minus it is the offset in the host's backing file.
 * guest_host_has(): does the host see these bytes at that offset?  It
 * hashes them with busybox sha256sum and asks the host with `hostcheck`.
 * guest_region_phys(), guest_mem_offset(): where a GPU address lies in
 * GPU memory, learnt by pinning it through gdirect.ko (which must be
 * loaded), since only a pin's page table carries bus addresses.
 */
#ifndef GDIRECT_GUEST_GPUMEM_H
#define GDIRECT_GUEST_GPUMEM_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "gdirect_ioctl.h"

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

/*
 * The bus address of the first page of this process's registration
 * @handle, read from /proc/driver/gdirect/regions (root only); 0 when it
 * is not listed.
 */
static inline uint64_t guest_region_phys(uint64_t handle)
{
	unsigned long long h, phys = 0;
	char line[512];
	int mine = 0;
	FILE *f = fopen("/proc/driver/gdirect/regions", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "process ", 8)) {
			mine = atoi(line + 8) == getpid();
		} else if (mine && sscanf(line, " handle %llu", &h) == 1 &&
			   h == handle && strstr(line, " phys ")) {
			phys = strtoull(strstr(line, " phys ") + 6, NULL, 0);
			break;
		}
	}
	if (f)
		fclose(f);
	return phys;
}

/*
 * The offset of GPU address @p in GPU memory, which is also its offset in
 * the host's backing file: the page holding @p is pinned through a scratch
 * /dev/gdirect file, and its bus address minus BAR2's start is the offset.
 * Returns 0, or -1 when @p cannot be pinned or its address not read.
 */
static inline int guest_mem_offset(uint64_t p, uint64_t *off)
{
	struct gdirect_pin pin = { .addr = p, .size = 1 };
	struct gdirect_unpin unpin;
	int fd = open("/dev/gdirect", O_RDWR | O_CLOEXEC);
	uint64_t bar = guest_bar2_start(), phys;

	if (fd < 0 || !bar || ioctl(fd, GDIRECT_IOC_PIN, &pin)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	phys = guest_region_phys(pin.handle);
	unpin.handle = pin.handle;
	ioctl(fd, GDIRECT_IOC_UNPIN, &unpin);
	close(fd);
	if (!phys)
		return -1;
	*off = phys - bar + (p - pin.pinned_addr);
	return 0;
}

#endif /* GDIRECT_GUEST_GPUMEM_H */
