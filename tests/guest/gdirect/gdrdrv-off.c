// SPDX-License-Identifier: MIT
/*
 * gdrdrv-off.c - gdrdrv=0: no /dev/gdrdrv, /dev/gdirect as
 * usual.
 */
#include <fcntl.h>
#include <unistd.h>

#include "gdt.h"

static void off(void)
{
	int fd;

	tap_errno(access("/dev/gdrdrv", F_OK), ENOENT,
		  "gdrdrv=0: no /dev/gdrdrv");
	fd = open("/dev/gdirect", O_RDWR);
	tap_ok(fd >= 0, "/dev/gdirect still opens");
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	return gdt_main("gdrdrv=0", 0, off);
}
