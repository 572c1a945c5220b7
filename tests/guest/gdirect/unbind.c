// SPDX-License-Identifier: MIT
/*
 * unbind.c - the emulated GPU unbound through sysfs while a
 * process has /dev/nvp2p_emu open, live pins (one with a free callback,
 * one persistent) and their BAR pages mapped through gdirect:
 *
 *  - the pin with a callback is revoked, as the NVIDIA driver does at
 *    teardown: its status word says REVOKED and its mapping faults;
 *  - the persistent pin keeps its memory until unpinned, which works;
 *  - CUDA calls (the emulator's ioctls) and new pins fail cleanly; closing
 *    everything works; the device node is gone;
 *  - once nothing uses the old device, binding it again gives a working
 *    GPU.
 * (A kernel oops or warning fails the run through the harness.)
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdt.h"
#include "guest_harness.h"
#include "guest_unbind.h"


static char bdf[256];

struct shared {
	int n, failed;
	char what[16][96];
	int ok[16];
};

static struct shared *sh;

/* The checks made in the child, reported by the parent. */
static void check(int cond, const char *what)
{
	if (sh->n < 16) {
		snprintf(sh->what[sh->n], sizeof(sh->what[0]), "%s", what);
		sh->ok[sh->n++] = cond;
	}
}

static void child(void)
{
	struct gdirect_region_info ri;
	struct gdirect_pin p1, p2;
	volatile uint32_t *status;
	volatile uint8_t *m1, *m2;
	CUdeviceptr buf, buf2, more = 0;
	struct stat st;
	int fd;

	/* No TAP output here: the parent reports what check() saw. */
	fd = open("/dev/gdirect", O_RDWR);
	status = mmap(NULL, GDIRECT_STATUS_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	if (fd < 0 || status == MAP_FAILED || gdt_cuda_init())
		_exit(3);
	buf = gdt_alloc(GDT_MB);
	buf2 = gdt_alloc(GDT_KB64);
	if (!buf || !buf2 || cuMemsetD8(buf2, 0x5a, GDT_KB64) != CUDA_SUCCESS ||
	    gdt_pin(fd, buf, GDT_MB, 0, &p1) ||
	    gdt_pin(fd, buf2, GDT_KB64, GDIRECT_PIN_PERSISTENT, &p2))
		_exit(4);
	m1 = mmap(NULL, GDT_KB64, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		  p1.mmap_offset);
	m2 = mmap(NULL, GDT_KB64, PROT_READ, MAP_SHARED, fd, p2.mmap_offset);
	if (m1 == MAP_FAILED || m2 == MAP_FAILED || gdt_faults(m1, 1))
		_exit(5);

	check(!guest_write(GUEST_EMU_DRV "unbind", bdf), "unbind with files, pins and mappings live");
	check(status[p1.status_slot] == GDIRECT_STATUS_REVOKED &&
	      !gdt_region_info(fd, p1.handle, &ri) &&
	      ri.status == GDIRECT_STATUS_REVOKED,
	      "the pin with a free callback is revoked");
	check(gdt_faults(m1, 0), "its mapping faults");
	check(!gdt_faults(m2, 0) && m2[100] == 0x5a &&
	      status[p2.status_slot] == GDIRECT_STATUS_PINNED,
	      "the persistent pin still maps its memory");
	check(cuMemAlloc(&more, GDT_KB64) != CUDA_SUCCESS,
	      "a CUDA allocation fails");
	check(gdt_pin(fd, buf2, GDT_KB64, 0, NULL) == -ENODEV,
	      "a new pin fails with ENODEV");
	check(stat("/dev/nvp2p_emu", &st) && errno == ENOENT,
	      "the device node is gone");
	check(!gdt_unpin(fd, p2.handle) && !gdt_unpin(fd, p1.handle),
	      "both unpins succeed");
	munmap((void *)m1, GDT_KB64);
	munmap((void *)m2, GDT_KB64);
	gdt_free(buf);		/* fails: the memory is gone already */
	check(!close(fd), "close /dev/gdirect");
	_exit(0);		/* the CUDA library's file closes at exit */
}

/* A fresh process on the device bound again. */
static void child_again(void)
{
	struct gdirect_pin p;
	CUdeviceptr buf;
	int fd;

	fd = open("/dev/gdirect", O_RDWR);
	if (fd < 0 || gdt_cuda_init())
		_exit(3);
	buf = gdt_alloc(GDT_KB64);
	if (!buf || gdt_pin(fd, buf, GDT_KB64, 0, &p) ||
	    gdt_unpin(fd, p.handle))
		_exit(4);
	_exit(0);
}

static void body(void)
{
	int ok;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!tap_ok(sh != MAP_FAILED && !guest_emu_bdf(bdf, sizeof(bdf)), "emulated GPU bound at %s",
		    bdf))
		return;
	ok = guest_child_ok(child);
	for (int i = 0; i < sh->n; i++)
		tap_ok(sh->ok[i], "%s", sh->what[i]);
	tap_ok(ok && sh->n == 9, "the unbind checks ran to the end (%d)",
	       sh->n);
	tap_ok(!guest_write(GUEST_EMU_DRV "bind", bdf), "bind again once unused");
	tap_ok(guest_child_ok(child_again), "allocate, pin, unpin on the rebound GPU");
}

int main(void)
{
	return gdt_main(NULL, 0, body);
}
