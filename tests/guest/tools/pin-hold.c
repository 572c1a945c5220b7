// SPDX-License-Identifier: MIT
/*
 * pin-hold - guest helper: pin GPU memory through /dev/gdirect, map it,
 * say so, and hold it until standard input closes, so that a test can look
 * at a live registration from outside (gdirect stat).
 *
 *   pin-hold SIZE   prints "pinned HANDLE ADDR SIZE" once pinned
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <uapi/gdirect_ioctl.h>

#include "tool_cuda.h"

int main(int argc, char **argv)
{
	struct gdirect_pin p;
	struct gdirect_unpin u;
	char err[256], buf[64];
	uint64_t dptr;
	size_t size = argc > 1 ? strtoull(argv[1], NULL, 0) : 65536;
	void *map;
	int fd;

	if (gdcli_cuda_open(err, sizeof(err))) {
		fprintf(stderr, "pin-hold: %s\n", err);
		return 1;
	}
	fd = open("/dev/gdirect", O_RDWR);
	if (fd < 0 || gdcli_cuda_alloc(size, &dptr)) {
		perror("pin-hold: /dev/gdirect or cuMemAlloc");
		return 1;
	}
	memset(&p, 0, sizeof(p));
	p.addr = dptr;
	p.size = size;
	if (ioctl(fd, GDIRECT_IOC_PIN, &p)) {
		perror("pin-hold: GDIRECT_IOC_PIN");
		return 1;
	}
	map = mmap(NULL, p.pinned_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   (off_t)p.mmap_offset);
	if (map == MAP_FAILED) {
		perror("pin-hold: mmap");
		return 1;
	}
	printf("pinned %llu 0x%llx %llu\n", (unsigned long long)p.handle,
	       (unsigned long long)p.pinned_addr, (unsigned long long)p.pinned_size);
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	munmap(map, p.pinned_size);
	u.handle = p.handle;
	ioctl(fd, GDIRECT_IOC_UNPIN, &u);
	close(fd);
	gdcli_cuda_free(dptr);
	gdcli_cuda_close();
	return 0;
}
