// SPDX-License-Identifier: MIT
/*
 * dofork.c - no mapping of /dev/gdirect reaches a child
 *
 * Mappings carry VM_DONTCOPY, but madvise(MADV_DOFORK) clears it on any
 * VMA not marked VM_IO.  A status area inherited that way lets the child
 * read its parent's status words, and, worse, holds the file open: once
 * the parent closes its descriptor, the final release runs in the child,
 * which is not the owner, so every pin of the parent is orphaned and its
 * BAR1 stays used until the parent frees the memory.  Here the parent
 * asks for MADV_DOFORK on both kinds of mapping, forks, closes its fd and
 * waits for the child; its pins must then be gone while it still lives.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdt.h"

static void body(void)
{
	struct gdirect_pin p;
	CUdeviceptr mem;
	void *status, *region;
	int fd, status_dofork, region_dofork, wst, sync[2], sync2[2];
	char c;
	int64_t orphaned = gdt_gd_stat("orphaned");
	pid_t pid;

	if (gdt_cuda_init()) {
		tap_ok(0, "CUDA context");
		return;
	}
	fd = open("/dev/gdirect", O_RDWR);
	mem = gdt_alloc(2 * GDT_KB64);
	if (!tap_ok(fd >= 0 && mem && !gdt_pin(fd, mem, 2 * GDT_KB64, 0, &p),
		    "pin 128 KiB"))
		return;
	status = mmap(NULL, GDIRECT_STATUS_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	region = mmap(NULL, 2 * GDT_KB64, PROT_READ | PROT_WRITE, MAP_SHARED,
		      fd, p.mmap_offset);
	if (!tap_ok(status != MAP_FAILED && region != MAP_FAILED,
		    "map the status area and the region"))
		return;
	status_dofork = madvise(status, GDIRECT_STATUS_BYTES, MADV_DOFORK) == 0;
	region_dofork = madvise(region, 2 * GDT_KB64, MADV_DOFORK) == 0;
	tap_diag("MADV_DOFORK accepted: status %d, region %d", status_dofork,
		 region_dofork);

	if (!tap_ok(pipe(sync) == 0 && pipe(sync2) == 0, "pipes"))
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* Drop the inherited fd; keep only what mappings came along. */
		close(fd);
		close(sync[0]);
		close(sync[1]);
		close(sync2[1]);
		/* ... until the parent has closed its own (EOF on the pipe). */
		while (read(sync2[0], &c, 1) > 0)
			;
		_exit(gdt_faults(status, 0) && gdt_faults(region, 0) ? 0 : 1);
	}
	/* Wait until the child has dropped its copy of the fd. */
	close(sync[1]);
	while (read(sync[0], &c, 1) > 0)
		;
	close(sync[0]);
	munmap(status, GDIRECT_STATUS_BYTES);
	munmap(region, 2 * GDT_KB64);
	close(fd);
	close(sync2[1]);
	waitpid(pid, &wst, 0);
	close(sync2[0]);
	tap_ok(WIFEXITED(wst) && WEXITSTATUS(wst) == 0,
	       "the child cannot read either mapping");
	tap_ok(gdt_emu("pins") == 0,
	       "closing the fd unpinned everything, the child notwithstanding");
	tap_ok(gdt_gd_stat("orphaned") == orphaned, "no registration orphaned");
	gdt_free(mem);
}

int main(void)
{
	return gdt_main(NULL, 0, body);
}
