// SPDX-License-Identifier: MIT
/*
 * maptype-race.c - GDIRECT_IOC_MAP_TYPE racing mmap() never
 * leaves two live mappings of one region with different types
 *
 * MAP_TYPE is refused while the region is mapped, so that all its
 * mappings share one type: two mappings of the same CPU-cacheable pages,
 * one write-combined and one cached, are a mismatched-attribute alias on
 * arm64.  An mmap() must therefore read the type and count itself as a
 * mapping in one step.  gdirect's debug knob dbg_mmap_type_delay_ms holds
 * the first mmap() in gdirect's handler while MAP_TYPE changes the type,
 * then a second mmap() is made; the debug build counts a mapping made
 * with another type than the live ones (dbg_map_type_mismatch).  The
 * emulator's coherent knob makes the memory CPU-cacheable, where the
 * natural type (cached) and write-combined differ.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gdt.h"
#include "guest_harness.h"

#define ROUNDS	3

static int fd;
static volatile uint32_t *status;

struct mapper {
	uint64_t off;
	void *map;
};

static void *mapper(void *arg)
{
	struct mapper *m = arg;

	m->map = mmap(NULL, GDT_KB64, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      m->off);
	return NULL;
}

static int map_type(uint64_t handle, uint32_t type)
{
	struct gdirect_map_type mt = { .handle = handle, .type = type };

	return ioctl(fd, GDIRECT_IOC_MAP_TYPE, &mt) ? -errno : 0;
}

static void one_round(int round)
{
	CUdeviceptr buf = gdt_alloc(GDT_KB64);
	int64_t mismatch = gdt_gd_stat("dbg_map_type_mismatch");
	struct gdirect_region_info ri;
	struct mapper m = { .map = MAP_FAILED };
	struct gdirect_pin p;
	void *second;
	pthread_t t;
	int ret;

	if (!tap_ok(buf && !gdt_pin(fd, buf, GDT_KB64, 0, &p) &&
		    !gdt_region_info(fd, p.handle, &ri) && ri.cpu_cacheable,
		    "round %d: a CPU-cacheable region pinned", round)) {
		gdt_free(buf);
		return;
	}
	m.off = p.mmap_offset;
	/* Held in mmap() until MAP_TYPE has been tried meanwhile. */
	guest_set_param("gdirect", "dbg_mmap_type_delay_ms", "1000");
	if (pthread_create(&t, NULL, mapper, &m)) {
		tap_ok(0, "round %d: mapper thread", round);
		guest_set_param("gdirect", "dbg_mmap_type_delay_ms", "0");
		gdt_unpin(fd, p.handle);
		gdt_free(buf);
		return;
	}
	usleep(300 * 1000);
	ret = map_type(p.handle, GDIRECT_MAP_WC);
	pthread_join(t, NULL);
	guest_set_param("gdirect", "dbg_mmap_type_delay_ms", "0");
	second = mmap(NULL, GDT_KB64, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      p.mmap_offset);
	tap_ok(m.map != MAP_FAILED && second != MAP_FAILED &&
	       (ret == 0 || ret == -EBUSY),
	       "round %d: both mappings made; MAP_TYPE meanwhile: %d", round,
	       ret);
	tap_ok(gdt_gd_stat("dbg_map_type_mismatch") == mismatch,
	       "round %d: both mappings have one type (mismatches %lld -> %lld)",
	       round, (long long)mismatch,
	       (long long)gdt_gd_stat("dbg_map_type_mismatch"));
	if (m.map != MAP_FAILED)
		munmap(m.map, GDT_KB64);
	if (second != MAP_FAILED)
		munmap(second, GDT_KB64);
	gdt_unpin(fd, p.handle);
	gdt_free(buf);
}

static void test_race(void)
{
	int i;

	for (i = 0; i < ROUNDS; i++)
		one_round(i);
}

static void body(void)
{
	int was_coherent = gdt_coherent();
	char fl[32] = "";

	if (gdt_gd_stat("dbg_map_type_mismatch") < 0) {
		tap_skip("MAP_TYPE racing mmap",
			 "gdirect.ko built without GDIRECT_DEBUG_KNOBS");
		return;
	}
	/* Page table 1.2 has no flags field, so no page of it is
	 * CPU-cacheable, and the race needs a cacheable region. */
	if (!guest_read("/etc/gdirect-flavour", fl, sizeof(fl)) &&
	    !strncmp(fl, "v1", 2) && (fl[2] == '\n' || !fl[2])) {
		tap_skip("MAP_TYPE racing mmap",
			 "page table 1.2 (the v1 flavour) has no CPU-cacheable pages");
		return;
	}
	gdt_emu_knob("coherent", "1");
	if (!gdt_coherent()) {
		tap_skip("MAP_TYPE racing mmap",
			 "the emulator has no coherent knob (Tegra flavour)");
		return;
	}
	GDT_RUN_OWN(test_race);
	gdt_emu_knob("coherent", was_coherent ? "1" : "0");
}

int main(void)
{
	return gdt_main(NULL, 0, body);
}
