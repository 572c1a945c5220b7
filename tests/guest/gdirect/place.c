// SPDX-License-Identifier: MIT
/*
 * place.c - gdirect pins of memory placed as an H100 places
 * it (CUDA_EMU_PLACEMENT=h100, docs/emulator.md): a 64 KiB allocation
 * after a 16-byte one starts 512 bytes into a 64 KiB page that both share.
 * A pin covers whole pages, so it is mapped at an offset and covers the
 * neighbour's bytes; it may not span two allocations; freeing the
 * neighbour revokes only the pins that cover the neighbour, and a pin of
 * the other allocation stays valid and mapped while the page lives on.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gdt.h"

#define PAGE2M	(2ULL << 20)

static void body(void)
{
	struct gdirect_pin pb, pa;
	volatile uint32_t *status;
	volatile uint8_t *map;
	uint8_t back[64];
	CUdeviceptr a, b, c, d;
	uint64_t callbacks, off;
	int fd, good;

	if (!tap_ok(gdt_cuda_init() == 0, "CUDA context (CUDA_EMU_PLACEMENT=h100)"))
		return;
	fd = gdt_open_gdirect(&status);
	if (fd < 0)
		return;
	a = gdt_alloc(16);
	b = gdt_alloc(GDT_KB64);
	if (!tap_ok(a && b && !(a % PAGE2M) && b == a + 512,
		    "16 B then 64 KiB: the first at a 2 MiB page, the second 512 bytes on (%#llx, %#llx)",
		    (unsigned long long)a, (unsigned long long)b))
		return;
	cuMemsetD8(a, 0x11, 16);
	cuMemsetD8(b, 0x5a, GDT_KB64);

	/* a pin of b covers the two 64 KiB pages it touches, a's bytes too */
	if (!tap_ok(!gdt_pin(fd, b, GDT_KB64, 0, &pb) && pb.pinned_addr == a &&
		    pb.pinned_size == 2 * GDT_KB64,
		    "pin of b: its two 64 KiB pages, from a's start"))
		return;
	off = b - pb.pinned_addr;
	map = mmap(NULL, pb.pinned_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   pb.mmap_offset);
	if (!tap_ok(map != MAP_FAILED, "map the pin"))
		return;
	tap_ok(!gdt_faults(map + off, 0) && map[off] == 0x5a && map[off + GDT_KB64 - 1] == 0x5a &&
	       map[0] == 0x11 && map[15] == 0x11,
	       "b read at offset %llu of the mapping; a's bytes under it too",
	       (unsigned long long)off);
	memset((void *)(map + off + 100), 0xa5, sizeof(back));
	tap_ok(!cuMemcpyDtoH(back, b + 100, sizeof(back)) && back[0] == 0xa5 &&
	       back[sizeof(back) - 1] == 0xa5,
	       "a write at an offset inside the pinned page lands in b");

	/* one pin may not span two allocations sharing the page */
	c = gdt_alloc(GDT_KB64);
	tap_ok(c == b + GDT_KB64, "a third allocation follows b (%#llx)", (unsigned long long)c);
	tap_errno(gdt_pin(fd, a, 3 * GDT_KB64, 0, &pa), EINVAL,
		  "a pin spanning b's and c's pages (two allocations)");

	/* a pin of a alone, then a freed: only the pins covering a go */
	tap_ok(!gdt_pin(fd, a, 16, 0, &pa) && pa.pinned_addr == a &&
	       pa.pinned_size == GDT_KB64, "pin of a: its one 64 KiB page");
	callbacks = gdt_emu("callbacks");
	tap_ok(!gdt_free(a), "free a, the page's first allocation");
	tap_ok(gdt_emu("callbacks") == callbacks + 2 &&
	       status[pa.status_slot] == GDIRECT_STATUS_REVOKED &&
	       status[pb.status_slot] == GDIRECT_STATUS_REVOKED,
	       "both pins covering a's bytes are revoked (b's too: it covers a)");
	tap_ok(gdt_faults(map + off, 0), "b's old mapping faults once revoked");
	munmap((void *)map, pb.pinned_size);
	gdt_unpin(fd, pa.handle);
	gdt_unpin(fd, pb.handle);

	/* b's last page, past a: pinned, then the shared first page freed */
	if (!tap_ok(!gdt_pin(fd, b + GDT_KB64 - 512, 512, 0, &pb) &&
		    pb.pinned_addr == a + GDT_KB64 && pb.pinned_size == GDT_KB64,
		    "pin of b's second page (shared with c)"))
		goto out;
	d = gdt_alloc(16);
	tap_ok(d == a, "the freed VA comes back for a new 16 B allocation");
	callbacks = gdt_emu("callbacks");
	tap_ok(!gdt_free(d), "free it: the first page again");
	good = gdt_emu("callbacks") == callbacks &&
	       status[pb.status_slot] == GDIRECT_STATUS_PINNED;
	map = mmap(NULL, GDT_KB64, PROT_READ, MAP_SHARED, fd, pb.mmap_offset);
	tap_ok(good && map != MAP_FAILED && !gdt_faults(map, 0) &&
	       map[0] == 0x5a && map[511] == 0x5a && map[512] == 0,
	       "b's pin of the next page stays valid and readable (b's end, then c)");
	if (map != MAP_FAILED)
		munmap((void *)map, GDT_KB64);
	tap_ok(!gdt_free(c) && status[pb.status_slot] == GDIRECT_STATUS_REVOKED,
	       "free c, sharing b's pinned page: the pin is revoked");
	c = 0;
	gdt_unpin(fd, pb.handle);
out:
	gdt_free(b);
	gdt_free(c);
	close(fd);
}

int main(void)
{
	/* before cuInit, in the test process that gdt_main forks */
	setenv("CUDA_EMU_PLACEMENT", "h100", 1);
	return gdt_main(NULL, 0, body);
}
