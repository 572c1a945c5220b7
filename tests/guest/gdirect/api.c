// SPDX-License-Identifier: MIT
/*
 * api.c - every /dev/gdirect ioctl, mmap and read, with each
 * documented error return, and revocation as user space sees it.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gdt.h"
#include "gpumem.h"

static int fd;
static volatile uint32_t *status;

static uint32_t status_word(uint32_t slot)
{
	return __atomic_load_n(&status[slot], __ATOMIC_ACQUIRE);
}

static void test_info(void)
{
	struct gdirect_info info;

	memset(&info, 0xff, sizeof(info));
	tap_errno(ioctl(fd, GDIRECT_IOC_INFO, &info), 0, "INFO");
	tap_ok(info.abi_version == GDIRECT_ABI_VERSION, "INFO abi_version %u",
	       info.abi_version);
	tap_ok(info.provider == GDIRECT_PROVIDER_EMULATOR, "INFO provider %u",
	       info.provider);
	tap_ok(info.page_table_version == 0x00020000 ||
	       info.page_table_version == 0x00010002,
	       "INFO page_table_version %#x", info.page_table_version);
	tap_ok(info.dma_mapping_version == 0x00020003,
	       "INFO dma_mapping_version %#x", info.dma_mapping_version);
	tap_ok((info.caps & GDIRECT_CAP_PERSISTENT) &&
	       (info.caps & GDIRECT_CAP_MMAP_WC), "INFO caps %#x", info.caps);
	tap_ok(!info.reserved[0] && !info.reserved[3] && !info.default_persistent,
	       "INFO reserved zero, default_persistent 0");
	tap_errno(ioctl(fd, GDIRECT_IOC_INFO, (void *)8), EFAULT,
		  "INFO with a bad pointer");
}

static void test_pin_errors(CUdeviceptr buf, size_t size)
{
	struct gdirect_pin p;

	tap_ok(gdt_pin(fd, buf, 0, 0, NULL) == -EINVAL, "PIN size 0: EINVAL");
	tap_ok(gdt_pin(fd, buf, 4096, 0x80, NULL) == -EINVAL,
	       "PIN unknown flag: EINVAL");
	memset(&p, 0, sizeof(p));
	p.addr = buf;
	p.size = 4096;
	p.reserved = 1;
	tap_errno(ioctl(fd, GDIRECT_IOC_PIN, &p), EINVAL,
		  "PIN reserved field set");
	tap_ok(gdt_pin(fd, UINT64_MAX - 100, 200, 0, NULL) == -EINVAL,
	       "PIN wrapping range: EINVAL");
	tap_ok(gdt_pin(fd, 0, 2ULL << 40, 0, NULL) == -EINVAL,
	       "PIN over 1 TiB: EINVAL");
	tap_ok(gdt_pin(fd, 0x10000, 4096, 0, NULL) == -EINVAL,
	       "PIN of memory that is not GPU memory: EINVAL");
	tap_ok(gdt_pin(fd, buf, size + GDT_KB64, 0, NULL) == -EINVAL,
	       "PIN past the end of the allocation: EINVAL");
	memset(&p, 0, sizeof(p));
	p.addr = buf;
	p.size = 4096;
	p.p2p_token = 1;
	p.flags = GDIRECT_PIN_PERSISTENT;
	tap_errno(ioctl(fd, GDIRECT_IOC_PIN, &p), EINVAL,
		  "PIN persistent with tokens");
	tap_errno(ioctl(fd, GDIRECT_IOC_PIN, NULL), EFAULT,
		  "PIN with a NULL pointer");

	gdt_emu_knob("fail_next", "1 5");
	tap_ok(gdt_pin(fd, buf, 4096, 0, NULL) == -EIO,
	       "PIN when the provider fails with EIO");
	gdt_emu_knob("fail_next", "1 12");
	tap_ok(gdt_pin(fd, buf, 4096, 0, NULL) == -ENOMEM,
	       "PIN when the provider fails with ENOMEM");
	gdt_emu_knob("fail_next", "1 524");
	tap_ok(gdt_pin(fd, buf, 4096, 0, NULL) == -EOPNOTSUPP,
	       "PIN when the provider says ENOTSUPP: EOPNOTSUPP");
	/* Legacy tokens: gdirect-kapi, from another process. */
}

static void test_pin_map(CUdeviceptr buf, const uint8_t *pattern)
{
	struct gdirect_region_info ri;
	struct gdirect_pin p;
	uint8_t *map, *back;
	int ret;

	ret = gdt_pin(fd, buf + 100, 1000, 0, &p);
	if (!tap_ok(ret == 0, "PIN 1000 bytes at +100: %d", ret))
		return;
	tap_ok(p.handle && p.pinned_addr == (buf & ~(GDT_KB64 - 1)) &&
	       p.pinned_size == GDT_KB64, "PIN widened to one 64 KiB page");
	tap_ok(p.mmap_offset == p.handle << 40, "PIN mmap_offset");
	tap_ok(p.status_slot < GDIRECT_MAX_SLOTS &&
	       status_word(p.status_slot) == GDIRECT_STATUS_PINNED,
	       "status word of slot %u is PINNED", p.status_slot);

	ret = gdt_region_info(fd, p.handle, &ri);
	tap_ok(!ret && ri.pinned_addr == p.pinned_addr &&
	       ri.pinned_size == GDT_KB64 && ri.page_size == 65536 &&
	       ri.page_count == 1 && ri.status == GDIRECT_STATUS_PINNED &&
	       ri.mapped_len == 0 && ri.flags == 0,
	       "REGION_INFO of a fresh pin");
	tap_ok(!ret && ri.cpu_cacheable == (uint32_t)gdt_coherent(),
	       "REGION_INFO cpu_cacheable %u, as the page table says (%s)",
	       ri.cpu_cacheable, gdt_coherent() ? "coherent platform" : "PCIe");

	map = mmap(NULL, GDT_KB64, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   p.mmap_offset);
	if (tap_ok(map != MAP_FAILED, "mmap of the region")) {
		tap_ok(!memcmp(map, pattern, GDT_KB64),
		       "mapping shows the GPU memory");
		map[5] = 0xa5;
		back = malloc(GDT_KB64);
		cuMemcpyDtoH(back, buf, GDT_KB64);
		tap_ok(back[5] == 0xa5, "a CPU store reaches GPU memory");
		free(back);
		gdt_region_info(fd, p.handle, &ri);
		tap_ok(ri.mapped_len == GDT_KB64, "REGION_INFO mapped_len %llu",
		       (unsigned long long)ri.mapped_len);
		tap_errno(munmap(map + 4096, 4096), EINVAL,
			  "splitting the mapping");
		munmap(map, GDT_KB64);
		gdt_region_info(fd, p.handle, &ri);
		tap_ok(ri.mapped_len == 0, "mapped_len 0 after munmap");
	}
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
		   p.mmap_offset + 8192);
	tap_ok(map != MAP_FAILED, "mmap at an offset inside the region");
	if (map != MAP_FAILED) {
		tap_ok(!memcmp(map + 1, pattern + 8193, 100),
		       "offset mapping shows the right bytes");
		munmap(map, 4096);
	}
	tap_errno(mmap(NULL, GDT_KB64, PROT_READ, MAP_PRIVATE, fd,
		       p.mmap_offset) == MAP_FAILED ? -1 : 0, EINVAL,
		  "private (copy-on-write) mapping of a region");
	tap_errno(mmap(NULL, 2 * GDT_KB64, PROT_READ, MAP_SHARED, fd,
		       p.mmap_offset) == MAP_FAILED ? -1 : 0, EINVAL,
		  "mmap beyond the pinned size");
	tap_errno(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
		       (p.handle + 1000) << 40) == MAP_FAILED ? -1 : 0,
		  EINVAL, "mmap of an unknown region");

	tap_ok(gdt_unpin(fd, p.handle) == 0, "UNPIN");
	tap_ok(gdt_unpin(fd, p.handle) == -ENOENT, "UNPIN again: ENOENT");
	tap_ok(status_word(p.status_slot) == GDIRECT_STATUS_FREE,
	       "status word FREE after UNPIN");
	tap_ok(gdt_region_info(fd, p.handle, &ri) == -ENOENT,
	       "REGION_INFO of an unpinned handle: ENOENT");
}

/* The kernel's page size: 4 KiB on x86, up to 64 KiB on arm64 and ppc64. */
static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/*
 * The page frame of the page at @p as /proc/self/pagemap gives it: 0 where
 * the page is not present, -1 where the file cannot be read or hides the
 * frames from this process (present, frame 0).  The file holds one entry
 * per page of the kernel's page size, so that an entry read for the wrong
 * page of a touched mapping says "not present", which fails the caller's
 * check rather than skipping it.
 */
static int64_t pfn_of(const volatile void *p)
{
	uint64_t e = 0;
	int pm = open("/proc/self/pagemap", O_RDONLY);
	ssize_t n;

	if (pm < 0)
		return -1;
	n = pread(pm, &e, sizeof(e), (off_t)((uintptr_t)p / page_size() * 8));
	close(pm);
	if (n != sizeof(e))
		return -1;
	if (!(e >> 63))
		return 0;
	e &= (1ULL << 55) - 1;
	return e ? (int64_t)e : -1;
}

/*
 * A mapping of the status area at a page offset shows the area's page at
 * that offset: each kernel maps it its own way (remap_vmalloc_range() with
 * the VMA's offset, or from 7.x an mmap_prepare action over the page
 * array), and an offset applied twice would show a later page, or one past
 * the array's end.  The second page and the last are compared, by frame,
 * with the same pages of the whole area's mapping.  Pages are the
 * kernel's: the area (256 KiB) is 64 pages of 4 KiB or 4 of 64 KiB, and
 * mmap offsets must be multiples of the page size.
 */
static void test_status_offset(void)
{
	const size_t pg = page_size();
	const size_t last = GDIRECT_STATUS_BYTES / pg - 1;
	const size_t pages[] = { 1, last };
	void *past;

	for (size_t i = 0; i < 2; i++) {
		size_t off = pages[i] * pg;
		volatile uint32_t *m = mmap(NULL, pg, PROT_READ, MAP_SHARED,
					    fd, GDIRECT_STATUS_OFFSET + off);
		int64_t a, b;

		if (!tap_ok(m != MAP_FAILED, "status page %zu mapped alone",
			    pages[i]))
			continue;
		(void)m[0];
		(void)status[off / 4];
		a = pfn_of(m);
		b = pfn_of(&status[off / 4]);
		if (a < 0 || b < 0)
			tap_skip("status page at an offset",
				 "/proc/self/pagemap gives no page frames here");
		else
			tap_ok(a && a == b && m[0] == status[off / 4],
			       "status page %zu mapped alone is the area's page %zu (frame %#llx, %#llx)",
			       pages[i], pages[i], (unsigned long long)a,
			       (unsigned long long)b);
		munmap((void *)m, pg);
	}
	past = mmap(NULL, 2 * pg, PROT_READ, MAP_SHARED, fd,
		    GDIRECT_STATUS_OFFSET + last * pg);
	tap_errno(past == MAP_FAILED ? -1 : 0, EINVAL,
		  "status area mapped past its end from page %zu", last);
	if (past != MAP_FAILED)
		munmap(past, 2 * pg);
}

static void test_misc(void)
{
	struct gdirect_event ev;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	void *m;

	tap_ok(gdt_unpin(fd, 0) == -ENOENT, "UNPIN handle 0: ENOENT");
	tap_ok(gdt_unpin(fd, UINT64_MAX) == -ENOENT, "UNPIN huge handle: ENOENT");
	tap_errno(ioctl(fd, GDIRECT_IOC_UNPIN, NULL), EFAULT,
		  "UNPIN with a NULL pointer");
	tap_errno(ioctl(fd, GDIRECT_IOC_REGION_INFO, NULL), EFAULT,
		  "REGION_INFO with a NULL pointer");
	tap_errno(ioctl(fd, _IO('G', 0x7f)), ENOTTY, "unknown ioctl");
	tap_errno(read(fd, &ev, sizeof(ev) - 1) < 0 ? -1 : 0, EINVAL,
		  "read shorter than one event");
	tap_errno(read(fd, &ev, sizeof(ev)) < 0 ? -1 : 0, EAGAIN,
		  "read with no event queued (O_NONBLOCK)");
	tap_ok(poll(&pfd, 1, 0) == 0, "poll: nothing to read");
	m = mmap(NULL, page_size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	tap_errno(m == MAP_FAILED ? -1 : 0, EACCES,
		  "status area mapped writable");
	m = mmap(NULL, GDIRECT_STATUS_BYTES + page_size(), PROT_READ,
		 MAP_SHARED, fd, 0);
	tap_errno(m == MAP_FAILED ? -1 : 0, EINVAL,
		  "status area mapped too long");
	tap_ok(mprotect((void *)status, page_size(),
			PROT_READ | PROT_WRITE) != 0,
	       "status area cannot be made writable");
	test_status_offset();
}

static void test_revoke(void)
{
	struct gdirect_region_info ri;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct gdirect_event ev[2];
	struct gdirect_pin p;
	CUdeviceptr buf = gdt_alloc(4 * GDT_KB64);
	uint64_t callbacks = gdt_emu("callbacks");
	volatile uint8_t *map;
	ssize_t n;

	if (!tap_ok(buf && !gdt_pin(fd, buf, 3 * GDT_KB64, 0, &p),
		    "pin for revocation"))
		return;
	map = mmap(NULL, 3 * GDT_KB64, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   p.mmap_offset);
	tap_ok(map != MAP_FAILED && !gdt_faults(map, 0), "mapped and readable");
	tap_ok(gdt_free(buf) == 0, "cuMemFree of pinned memory");
	tap_ok(gdt_emu("callbacks") == callbacks + 1, "the free callback ran");
	tap_ok(status_word(p.status_slot) == GDIRECT_STATUS_REVOKED,
	       "status word REVOKED");
	tap_ok(poll(&pfd, 1, 1000) == 1 && (pfd.revents & POLLIN),
	       "poll: event ready");
	n = read(fd, ev, sizeof(ev));
	tap_ok(n == sizeof(ev[0]) && ev[0].handle == p.handle &&
	       ev[0].status_slot == p.status_slot &&
	       ev[0].cause == GDIRECT_EVENT_REVOKED &&
	       ev[0].pinned_addr == p.pinned_addr &&
	       ev[0].pinned_size == p.pinned_size, "read: one REVOKED event");
	if (map != MAP_FAILED) {
		tap_ok(gdt_faults(map, 0) && gdt_faults(map + GDT_KB64, 1) &&
		       gdt_faults(map + 2 * GDT_KB64 + 4000, 0),
		       "revoked mapping faults on read and write");
		munmap((void *)map, 3 * GDT_KB64);
	}
	tap_ok(!gdt_region_info(fd, p.handle, &ri) &&
	       ri.status == GDIRECT_STATUS_REVOKED, "REGION_INFO: REVOKED");
	tap_errno(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
		       p.mmap_offset) == MAP_FAILED ? -1 : 0, ESTALE,
		  "mmap of a revoked region");
	tap_ok(gdt_emu("pins") == 0 && gdt_emu("bar1_used") == 0,
	       "provider released the pages");
	tap_ok(gdt_unpin(fd, p.handle) == 0, "UNPIN of a revoked region");
	tap_ok(status_word(p.status_slot) == GDIRECT_STATUS_FREE,
	       "slot FREE after UNPIN");
}

static void test_persistent(void)
{
	struct gdirect_region_info ri;
	struct gdirect_pin p;
	CUdeviceptr buf = gdt_alloc(GDT_KB64);
	uint64_t callbacks = gdt_emu("callbacks");
	volatile uint32_t *map;

	if (!tap_ok(buf && !gdt_pin(fd, buf, 64, GDIRECT_PIN_PERSISTENT, &p),
		    "persistent PIN"))
		return;
	tap_ok(!gdt_region_info(fd, p.handle, &ri) &&
	       ri.flags == GDIRECT_PIN_PERSISTENT, "REGION_INFO flags persistent");
	cuMemsetD8(buf, 0x3c, GDT_KB64);
	map = mmap(NULL, GDT_KB64, PROT_READ, MAP_SHARED, fd, p.mmap_offset);
	gdt_free(buf);
	tap_ok(gdt_emu("callbacks") == callbacks, "no callback for a persistent pin");
	tap_ok(map != MAP_FAILED && !gdt_faults(map, 0) && map[10] == 0x3c3c3c3c,
	       "persistent pin survives cuMemFree (guide 11.x, gdrcopy#336)");
	if (map != MAP_FAILED)
		munmap((void *)map, GDT_KB64);
	tap_ok(gdt_unpin(fd, p.handle) == 0 && gdt_quiet(),
	       "UNPIN of a persistent pin frees it");
}

static int map_type(uint64_t handle, uint32_t type, uint32_t reserved)
{
	struct gdirect_map_type mt = { .handle = handle, .type = type,
				       .reserved = reserved };

	return ioctl(fd, GDIRECT_IOC_MAP_TYPE, &mt) ? -errno : 0;
}

/*
 * GDIRECT_IOC_MAP_TYPE: how later mappings of a region are made, chosen
 * while it is unmapped; cached only where the memory is CPU-cacheable,
 * write-combined anywhere (gdrcopy's WC request on a coherent platform).
 */
static void test_map_type(void)
{
	CUdeviceptr buf = gdt_alloc(GDT_KB64);
	struct gdirect_region_info ri;
	struct gdirect_pin p;
	uint8_t *m;
	int coh = gdt_coherent();

	if (!tap_ok(buf && !gdt_pin(fd, buf, GDT_KB64, 0, &p), "pin 64 KiB")) {
		gdt_free(buf);
		return;
	}
	tap_ok(map_type(p.handle + 1000, GDIRECT_MAP_WC, 0) == -ENOENT &&
	       map_type(p.handle, 3, 0) == -EINVAL &&
	       map_type(p.handle, GDIRECT_MAP_WC, 1) == -EINVAL,
	       "MAP_TYPE: unknown handle ENOENT, unknown type or reserved EINVAL");
	tap_ok(!gdt_region_info(fd, p.handle, &ri) &&
	       ri.map_type == GDIRECT_MAP_NATURAL, "REGION_INFO map_type: natural");
	tap_ok(map_type(p.handle, GDIRECT_MAP_CACHED, 0) == (coh ? 0 : -EOPNOTSUPP),
	       "MAP_TYPE cached: %s", coh ? "granted, the memory is CPU-cacheable" :
	       "EOPNOTSUPP, the memory is not CPU-cacheable");
	tap_ok(!map_type(p.handle, GDIRECT_MAP_WC, 0) &&
	       !gdt_region_info(fd, p.handle, &ri) && ri.map_type == GDIRECT_MAP_WC,
	       "MAP_TYPE WC, REGION_INFO says so");
	m = mmap(NULL, GDT_KB64, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 p.mmap_offset);
	if (tap_ok(m != MAP_FAILED, "mmap after MAP_TYPE WC")) {
		m[7] = 0x5e;
		tap_ok(m[7] == 0x5e && map_type(p.handle, GDIRECT_MAP_NATURAL, 0) == -EBUSY,
		       "the mapping works; MAP_TYPE while mapped: EBUSY");
		munmap(m, GDT_KB64);
	}
	tap_ok(!map_type(p.handle, GDIRECT_MAP_NATURAL, 0),
	       "MAP_TYPE natural once unmapped");
	gdt_unpin(fd, p.handle);
	gdt_free(buf);
}

/* Is [start, end) reserved write-combining in the PAT memtype list? */
static int pat_has_wc(uint64_t start, uint64_t end)
{
	char want[80], line[160];
	int found = 0;
	FILE *f = fopen("/sys/kernel/debug/x86/pat_memtype_list", "r");

	snprintf(want, sizeof(want), "[mem 0x%016llx-0x%016llx] write-combining",
		 (unsigned long long)start, (unsigned long long)end);
	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, want) != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * Does the kernel give write-combining at all here?  The emulator maps its
 * BAR2 with ioremap_wc(); where PAT has no WC slot the kernel records that
 * as uncached-minus (6.12 on qemu TCG does), and no driver can have WC.
 */
static int pat_gives_wc(void)
{
	char want[64], line[160];
	int uc = 0;
	FILE *f = fopen("/sys/kernel/debug/x86/pat_memtype_list", "r");

	snprintf(want, sizeof(want), "[mem 0x%016llx-",
		 (unsigned long long)guest_bar2_start());
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, want) && strstr(line, "uncached-minus"))
			uc = 1;
	if (f)
		fclose(f);
	return !uc;
}

/*
 * How many memtype entries lie inside [start, end)?  The emulator's own
 * reservation of its whole BAR2 is larger, so it is not counted.
 */
static int pat_entries_within(uint64_t start, uint64_t end)
{
	unsigned long long s, e;
	char line[160], *m;
	int n = 0;
	FILE *f = fopen("/sys/kernel/debug/x86/pat_memtype_list", "r");

	while (f && fgets(line, sizeof(line), f)) {
		m = strstr(line, "[mem ");
		if (m && sscanf(m, "[mem %llx-%llx]", &s, &e) == 2 &&
		    s >= start && e <= end)
			n++;
	}
	if (f)
		fclose(f);
	return n;
}

/* Can the PAT memtype list show a write-combining reservation here? */
static int pat_usable(const char *what)
{
	if (access("/sys/kernel/debug/x86/pat_memtype_list", R_OK)) {
		tap_skip(what,
			 "no /sys/kernel/debug/x86/pat_memtype_list (PAT off)");
		return 0;
	}
	/* Cacheable pages must have none, whatever the kernel can give. */
	if (!pat_gives_wc() && !gdt_coherent()) {
		tap_skip(what, "the emulator's ioremap_wc() BAR2 is uncached-minus in the PAT memtype list: this kernel and CPU give no WC");
		return 0;
	}
	return 1;
}

/*
 * The pinned BAR pages hold a write-combining memtype while pinned, so the
 * CPU mapping is write-combined even where the GPU driver reserved nothing
 * (x86 PAT would make it UC- otherwise); released with the pages.
 */
static void test_wc_memtype(void)
{
	CUdeviceptr buf = gdt_alloc(2 * GDT_KB64);
	struct gdirect_pin p;
	uint64_t phys;
	uint8_t *m;

	if (!pat_usable("write-combining memtype while pinned")) {
		gdt_free(buf);
		return;
	}
	phys = buf && gdt_pin(fd, buf, 2 * GDT_KB64, 0, &p) == 0 ?
	       gdt_region_phys(p.handle) : 0;
	if (!tap_ok(phys != 0, "pin 128 KiB, find its BAR pages")) {
		gdt_free(buf);
		return;
	}
	/*
	 * CPU-cacheable pages are mapped cached: gdirect reserves no
	 * write-combining memtype for them, neither at pin nor at mapping.
	 */
	if (gdt_coherent()) {
		m = mmap(NULL, 2 * GDT_KB64, PROT_READ, MAP_SHARED, fd,
			 p.mmap_offset);
		tap_ok(m != MAP_FAILED && !gdt_faults(m, 0) &&
		       !gdt_faults(m + GDT_KB64, 0) &&
		       !pat_entries_within(phys, phys + 2 * GDT_KB64),
		       "cacheable BAR pages %#llx+128 KiB, pinned and mapped: no memtype of gdirect's",
		       (unsigned long long)phys);
		if (m != MAP_FAILED)
			munmap(m, 2 * GDT_KB64);
		gdt_unpin(fd, p.handle);
		gdt_free(buf);
		return;
	}
	tap_ok(pat_has_wc(phys, phys + 2 * GDT_KB64),
	       "BAR pages %#llx+128 KiB reserved write-combining while pinned",
	       (unsigned long long)phys);
	gdt_unpin(fd, p.handle);
	tap_ok(!pat_has_wc(phys, phys + 2 * GDT_KB64),
	       "the reservation goes with the unpin");
	tap_ok(gdt_pin(fd, buf, 2 * GDT_KB64, 0, &p) == 0, "pinned again");
	gdt_free(buf);	/* revocation */
	tap_ok(!pat_has_wc(phys, phys + 2 * GDT_KB64),
	       "and with a revocation");
	gdt_unpin(fd, p.handle);
}

#define WC_PINS 64

/*
 * Overlapping pins share the write-combining memtypes of their BAR pages:
 * the kernel keeps its memtypes in one list under one global lock, which
 * every reservation walks over the entries it overlaps, so the entries
 * must be bounded by the BAR pages pinned, not by the pins.  A memtype
 * lasts while any pin of its pages does, whichever goes first.
 */
static void test_wc_shared(void)
{
	CUdeviceptr buf = gdt_alloc(2 * GDT_KB64);
	uint64_t h[WC_PINS], sub, phys = 0, end;
	struct gdirect_pin p;
	int i, n = 0, ok;

	if (!pat_usable("overlapping pins share write-combining memtypes")) {
		gdt_free(buf);
		return;
	}
	if (gdt_coherent()) {
		tap_skip("overlapping pins share write-combining memtypes",
			 "the pages are CPU-cacheable: gdirect reserves no memtype for them (test_wc_memtype checks)");
		gdt_free(buf);
		return;
	}
	for (i = 0; buf && i < WC_PINS; i++, n++) {
		if (gdt_pin(fd, buf, 2 * GDT_KB64, 0, &p))
			break;
		h[i] = p.handle;
	}
	if (n)
		phys = gdt_region_phys(h[0]);
	end = phys + 2 * GDT_KB64;
	if (!tap_ok(n == WC_PINS && phys, "%d pins of one 128 KiB buffer", n)) {
		while (n--)
			gdt_unpin(fd, h[n]);
		gdt_free(buf);
		return;
	}
	tap_ok(pat_entries_within(phys, end) == 1 && pat_has_wc(phys, end),
	       "%d pins of the same BAR pages hold one write-combining memtype (%d)",
	       WC_PINS, pat_entries_within(phys, end));
	tap_ok(!gdt_pin(fd, buf + GDT_KB64, GDT_KB64, 0, &p) &&
	       pat_entries_within(phys, end) == 1,
	       "a pin of half of them adds none (%d)",
	       pat_entries_within(phys, end));
	sub = p.handle;
	for (i = 0; i < WC_PINS; i++)
		gdt_unpin(fd, h[i]);
	tap_ok(pat_has_wc(phys, end),
	       "the memtype stays while the half pin holds part of it");
	gdt_unpin(fd, sub);
	tap_ok(!pat_entries_within(phys, end), "and goes with the last unpin");

	/* The other way round: the larger pin fills the gap around the smaller. */
	ok = !gdt_pin(fd, buf + GDT_KB64, GDT_KB64, 0, &p);
	sub = p.handle;
	ok += !gdt_pin(fd, buf, 2 * GDT_KB64, 0, &p);
	tap_ok(ok == 2 && pat_has_wc(phys, phys + GDT_KB64) &&
	       pat_has_wc(phys + GDT_KB64, end) &&
	       pat_entries_within(phys, end) == 2,
	       "a half pin, then the whole: one memtype for each part");
	gdt_unpin(fd, sub);
	tap_ok(pat_has_wc(phys, phys + GDT_KB64) &&
	       pat_has_wc(phys + GDT_KB64, end),
	       "the whole pin keeps both parts after the half's unpin");
	h[0] = p.handle;
	for (i = 1, n = 1; i < WC_PINS; i++, n++) {
		if (gdt_pin(fd, buf, 2 * GDT_KB64, 0, &p))
			break;
		h[i] = p.handle;
	}
	gdt_free(buf);	/* revokes them all */
	tap_ok(n == WC_PINS && !pat_entries_within(phys, end),
	       "%d pins revoked at once leave no memtype", n);
	while (n--)
		gdt_unpin(fd, h[n]);
}

/* The calls on one buffer pinned and mapped, then the errors left. */
static void basics(void)
{
	const size_t size = 1 * GDT_MB;
	struct gdt_buffer b;

	if (gdt_body_open(&fd, &status, test_info, size, 9, &b))
		return;
	test_pin_errors(b.gpu, size);
	test_pin_map(b.gpu, b.pattern);
	test_misc();
	gdt_body_close(fd, status, &b);
}

/*
 * Each stretch in a process of its own, with its own CUDA context and
 * /dev/gdirect file: a failure cannot leave a pin, a mapping or an event
 * to the next.  This process makes no CUDA context, so its children can.
 */
static void body(void)
{
	gdt_run_child("basics", basics);
	GDT_RUN_OWN(test_revoke);
	GDT_RUN_OWN(test_persistent);
	GDT_RUN_OWN(test_wc_memtype);
	GDT_RUN_OWN(test_wc_shared);
	GDT_RUN_OWN(test_map_type);
}

int main(void)
{
	return gdt_main(NULL, 0, body);
}
