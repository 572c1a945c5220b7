// SPDX-License-Identifier: MIT
/*
 * param.c - module parameters: use_persistent=1 makes
 * token-less pins persistent (they survive cuMemFree and never see a
 * callback), and dev_mode sets the device node's permissions.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gdt.h"

static void body(void)
{
	struct gdirect_region_info ri;
	struct gdirect_info info;
	struct gdirect_pin p;
	struct stat st = { 0 };
	uint64_t callbacks;
	volatile uint32_t *map, *status;
	CUdeviceptr buf;
	int fd;

	tap_ok(stat("/dev/gdirect", &st) == 0 && (st.st_mode & 0777) == 0600,
	       "dev_mode=0600: /dev/gdirect mode %o", st.st_mode & 0777);
	if (!tap_ok(gdt_cuda_init() == 0, "CUDA context"))
		return;
	fd = open("/dev/gdirect", O_RDWR);
	buf = gdt_alloc(GDT_KB64);
	tap_ok(!ioctl(fd, GDIRECT_IOC_INFO, &info) && info.default_persistent == 1,
	       "INFO default_persistent 1");
	if (!tap_ok(buf && !gdt_pin(fd, buf, 100, 0, &p), "pin without flags"))
		return;
	tap_ok(!gdt_region_info(fd, p.handle, &ri) &&
	       ri.flags == GDIRECT_PIN_PERSISTENT, "pinned persistent by default");
	cuMemsetD8(buf, 0x11, GDT_KB64);
	map = mmap(NULL, GDT_KB64, PROT_READ, MAP_SHARED, fd, p.mmap_offset);
	status = mmap(NULL, GDIRECT_STATUS_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	callbacks = gdt_emu("callbacks");
	gdt_free(buf);
	tap_ok(gdt_emu("callbacks") == callbacks && gdt_emu("pins") == 1,
	       "cuMemFree: no callback, still pinned");
	tap_ok(map != MAP_FAILED && status != MAP_FAILED &&
	       !gdt_faults(map, 0) && map[7] == 0x11111111 &&
	       status[p.status_slot] == GDIRECT_STATUS_PINNED,
	       "mapping still readable, status PINNED");
	if (map != MAP_FAILED)
		munmap((void *)map, GDT_KB64);
	if (status != MAP_FAILED)
		munmap((void *)status, GDIRECT_STATUS_BYTES);
	tap_ok(gdt_unpin(fd, p.handle) == 0 && gdt_quiet(),
	       "UNPIN releases the persistent pin and the freed memory");
	close(fd);
}

int main(void)
{
	return gdt_main("use_persistent=1 dev_mode=0600", 0, body);
}
