// SPDX-License-Identifier: MIT
/*
 * api.c - a gdrcopy user on gdirect: written against gdrapi.h only
 * (and the CUDA driver API), as gdrcopy's own sanity and copylat tests use
 * the library.  Built twice: gdrapi-api over /dev/gdirect and
 * gdrapi-api-gdrdrv over /dev/gdrdrv (GDIRECT_GDRAPI_BACKEND), which is a
 * SKIP when gdirect.ko has no /dev/gdrdrv.
 *
 * Every call; copies at offsets and sizes, read back through the mapping
 * and checked against the host's backing file; small pins sharing a 64 KiB
 * page; a pin at an unaligned address (mapped over /dev/gdirect, refused
 * over /dev/gdrdrv as gdrdrv refuses it); a forked child; revocation (cuMemFree: the callback
 * flag flips, the mapping faults); pins from several threads; errors for
 * bad arguments; gdr_close() with pins left.  The body runs in a child;
 * the parent then checks the emulator has no pins and no BAR1 bytes used.
 * Harness (module loading, counters, host check, the CUDA context):
 * tests/include's guest_harness.h, emu_knob.h, gpumem.h and guest_cuda.h,
 * without gdirect's gdt.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include <gdrapi.h>

#include "tap.h"

#include "emu_knob.h"
#include "guest_cuda.h"
#include "guest_fault.h"
#include "guest_harness.h"
#include "gpumem.h"

#ifndef BACKEND
#define BACKEND "gdirect"
#endif

#define KB64 (64UL << 10)

/*
 * gdr_map_v2's answer for a mapping type the platform cannot give: over
 * /dev/gdrdrv the driver's EOPNOTSUPP from REQ_MAPPING_TYPE, passed on as
 * gdrcopy's library does; over /dev/gdirect the library's EINVAL.
 */
/* A coherent platform's emulator (the coherent lane): cacheable pages. */
static int coherent(void)
{
	return emu_stat_u64("coherent") == 1;
}

static int unsupported(void)
{
	return strcmp(BACKEND, "gdrdrv") ? EINVAL : EOPNOTSUPP;
}

/* ---- TAP (tests/include/tap.h) -------------------------------------- */

static int is(int got, int want, const char *what)
{
	return tap_ok(got == want, "%s: %s (want %s)", what,
		  got ? strerror(got) : "0", want ? strerror(want) : "0");
}

/* ---- harness (tests/include/guest_harness.h) ----------------------- */

static int loaded_emu, loaded_gd;

/*
 * Offset in the host's backing file of GPU address A, pinned by this
 * process at VA: /proc/driver/gdirect/regions lists our regions with the bus address
 * of their first page; minus BAR2's start it is the file offset.
 */
static int mem_offset(uint64_t va, uint64_t a, uint64_t *off)
{
	unsigned long long addr, phys = 0;
	char line[512], *p;
	int mine = 0;
	FILE *f = fopen("/proc/driver/gdirect/regions", "r");
	uint64_t bar = guest_bar2_start();

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "process ", 8))
			mine = atoi(line + 8) == getpid();
		else if (mine && (p = strstr(line, " addr ")) &&
			 sscanf(p, " addr %lli", (long long *)&addr) == 1 &&
			 addr == va && strstr(line, " phys ")) {
			phys = strtoull(strstr(line, " phys ") + 6, NULL, 0);
			break;
		}
	}
	if (f)
		fclose(f);
	if (!phys || !bar)
		return -1;
	*off = phys - bar + (a - va);
	return 0;
}

/* ---- CUDA ----------------------------------------------------------- */

/* As gdrcopy's tests: SIZE bytes at a 64 KiB boundary, SYNC_MEMOPS set. */
static CUdeviceptr gpu_alloc(size_t size, CUdeviceptr *base)
{
	unsigned int one = 1;

	if (cuMemAlloc(base, size + KB64 - 1) != CUDA_SUCCESS)
		return 0;
	cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, *base);
	return (*base + KB64 - 1) & ~(CUdeviceptr)(KB64 - 1);
}

static void fill(unsigned char *b, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 8));
}

/* ---- the tests ------------------------------------------------------ */

static void versions(gdr_t g)
{
	int major = -1, minor = -1, v = -1, rc;

	gdr_runtime_get_version(&major, &minor);
	tap_ok(major == 2 && minor == 6, "gdr_runtime_get_version %d.%d", major, minor);
	major = minor = -1;
	rc = gdr_driver_get_version(g, &major, &minor);
	tap_ok(rc == 0 && major == 2 && minor >= 1,
	   "gdr_driver_get_version %d.%d (NCCL wants >= 2.1)", major, minor);
	rc = gdr_get_attribute(g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v);
	tap_ok(rc == 0 && v == 0, "attribute USE_PERSISTENT_MAPPING: %d (gdirect's default)", v);
	v = -1;
	rc = gdr_get_attribute(g, GDR_ATTR_USING_DMA_BUF_MMAP, &v);
	tap_ok(rc == 0 && v == 0, "attribute USING_DMA_BUF_MMAP: %d", v);
	v = -1;
	rc = gdr_get_attribute(g, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE, &v);
	tap_ok(rc == 0 && (v == 0 || v == 1), "attribute SUPPORT_PIN_FLAG_FORCE_PCIE: %d", v);
	is(gdr_get_attribute(g, (gdr_attr_t)99, &v), EINVAL, "attribute 99");
}

/*
 * A forked child inherits the gdr_t but owns nothing: its pins and queries
 * fail (EPERM from /dev/gdirect, EACCES from gdrdrv) and the parent's
 * mapping is not in it (VM_DONTCOPY).  The verdicts come back by status.
 */
static void fork_child(gdr_t g, gdr_mh_t mh, CUdeviceptr d, void *map)
{
	int status = -1, flag;
	gdr_mh_t h2;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int bits = 0;

		bits |= gdr_pin_buffer(g, d, KB64, 0, 0, &h2) == 0;
		bits |= (gdr_get_callback_flag(g, mh, &flag) == 0) << 1;
		bits |= !guest_faults(map, 0) << 2;
		_exit(bits);
	}
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && !(WEXITSTATUS(status) & 1), "forked child: gdr_pin_buffer fails");
	tap_ok(WIFEXITED(status) && !(WEXITSTATUS(status) & 2),
	   "forked child: gdr_get_callback_flag fails, without a crash");
	tap_ok(WIFEXITED(status) && !(WEXITSTATUS(status) & 4),
	   "forked child: the parent's mapping is not there");
}

/* Pin, info, map, copies at offsets and sizes, host check, unmap, unpin. */
static void copies(gdr_t g)
{
	static const struct { size_t off, len; } cases[] = {
		{ 0, 1 }, { 1, 15 }, { 3, 64 }, { 17, 4096 }, { 64, 64 },
		{ KB64 - 1, 2 }, { KB64 + 5, 100000 }, { 0, 4 * KB64 },
		{ 4 * KB64 - 7, 7 },
	};
	const size_t size = 4 * KB64;
	unsigned char *src = malloc(size), *dst = malloc(size), *img = malloc(size);
	CUdeviceptr base, d = gpu_alloc(size, &base);
	gdr_mh_t mh;
	gdr_info_t info;
	const char *name = NULL;
	void *map = NULL;
	uint64_t off;
	int flag = -1;

	if (!tap_ok(d && src && dst && img, "allocate 256 KiB of GPU memory"))
		return;
	if (!is(gdr_pin_buffer(g, d, size, 0, 0, &mh), 0, "gdr_pin_buffer 256 KiB"))
		return;
	memset(&info, 0xff, sizeof(info));
	tap_ok(gdr_get_info(g, mh, &info) == 0 && info.va == d &&
	   info.mapped_size == size && info.page_size == KB64 && !info.mapped &&
	   info.mapping_type == GDR_MAPPING_TYPE_NONE,
	   "gdr_get_info: va, size, 64 KiB pages, not mapped");
	tap_ok(gdr_get_callback_flag(g, mh, &flag) == 0 && flag == 0,
	   "gdr_get_callback_flag: 0");
	is(gdr_map(g, mh, &map, size + KB64), EINVAL, "gdr_map beyond the pin");
	is(gdr_map_v2(g, mh, &map, size, 7), EINVAL, "gdr_map_v2 flags 7");
	is(gdr_map_v2(g, mh, &map, size, GDR_MAP_FLAG_REQ_DEVICE_MAPPING),
	   unsupported(),
	   "gdr_map_v2 asking for a device mapping (none on x86)");
	if (coherent()) {
		is(gdr_map_v2(g, mh, &map, size, GDR_MAP_FLAG_REQ_CACHE_MAPPING),
		   0, "gdr_map_v2 asking for a cached mapping of CPU-cacheable memory");
		tap_ok(gdr_get_info(g, mh, &info) == 0 && info.mapped &&
		       info.mapping_type == GDR_MAPPING_TYPE_CACHING &&
		       gdr_unmap(g, mh, map, size) == 0,
		       "mapped cached, then unmapped");
	} else {
		is(gdr_map_v2(g, mh, &map, size, GDR_MAP_FLAG_REQ_CACHE_MAPPING),
		   unsupported(),
		   "gdr_map_v2 asking for a cached mapping of write-combined memory");
		tap_ok(gdr_get_info(g, mh, &info) == 0 && !info.mapped, "still not mapped");
	}
	if (!is(gdr_map(g, mh, &map, size), 0, "gdr_map"))
		goto unpin;
	is(gdr_map(g, mh, &map, size), EAGAIN, "gdr_map again");
	/* The memory's own type: cached where the page table says so. */
	if (coherent())
		tap_ok(gdr_get_info(g, mh, &info) == 0 && info.mapped && !info.wc_mapping &&
		       info.mapping_type == GDR_MAPPING_TYPE_CACHING, "gdr_get_info: mapped, cached");
	else
		tap_ok(gdr_get_info(g, mh, &info) == 0 && info.mapped && info.wc_mapping &&
		       info.mapping_type == GDR_MAPPING_TYPE_WC, "gdr_get_info: mapped, WC");
	tap_ok(gdr_get_mapping_type_string(info.mapping_type, &name) == 0 &&
	   !strcmp(name, coherent() ? "Caching" : "Write Combining"),
	   "mapping type string '%s'", name);

	memset(img, 0, size);
	is(gdr_copy_to_mapping(mh, map, img, size), 0, "zero the buffer");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t o = cases[i].off, n = cases[i].len;

		fill(src, n, (unsigned int)i + 1);
		memset(dst, 0, n);
		tap_ok(gdr_copy_to_mapping(mh, (char *)map + o, src, n) == 0 &&
		   gdr_copy_from_mapping(mh, dst, (char *)map + o, n) == 0 &&
		   !memcmp(src, dst, n), "copy %zu bytes at offset %zu there and back", n, o);
		memcpy(img + o, src, n);
	}
	memset(dst, 0, size);
	tap_ok(gdr_copy_from_mapping(mh, dst, map, size) == 0 && !memcmp(dst, img, size),
	   "the whole buffer reads back as written");
	tap_ok(mem_offset(info.va, d, &off) == 0 && guest_host_has(off, img, size),
	   "the host's backing file holds the same 256 KiB");
	fork_child(g, mh, d, map);
	tap_ok(gdr_copy_from_mapping(mh, dst, map, size) == 0 && !memcmp(dst, img, size),
	   "after the child: the parent's pin and mapping still work");
	is(gdr_copy_to_mapping(mh, (char *)map + size - 1, src, 2), EINVAL,
	   "copy_to_mapping past the mapping's end");
	is(gdr_copy_from_mapping(mh, dst, (char *)map - 1, 1), EINVAL,
	   "copy_from_mapping before the mapping");
	is(gdr_unmap(g, mh, (char *)map + 4096, size), EINVAL, "gdr_unmap at a wrong address");
	is(gdr_unmap(g, mh, map, size), 0, "gdr_unmap");
	is(gdr_copy_to_mapping(mh, map, src, 1), EINVAL, "copy after unmap");
	is(gdr_unmap(g, mh, map, size), EINVAL, "gdr_unmap again");
unpin:
	is(gdr_unpin_buffer(g, mh), 0, "gdr_unpin_buffer");
	is(gdr_unpin_buffer(g, mh), EINVAL, "gdr_unpin_buffer again");
	cuMemFree(base);
	free(src);
	free(dst);
	free(img);
}

/* Pins of small buffers in one 64 KiB page, and at an unaligned address. */
static void small_and_unaligned(gdr_t g)
{
	CUdeviceptr base, d = gpu_alloc(KB64, &base);
	gdr_mh_t a, b;
	gdr_info_t ia, ib;
	void *ma = NULL, *mb = NULL;
	unsigned char w[100], r[100];

	if (!tap_ok(d != 0, "allocate one 64 KiB page"))
		return;
	if (!tap_ok(gdr_pin_buffer(g, d + 0x1234, 100, 0, 0, &a) == 0 &&
		gdr_pin_buffer_v2(g, d + 0x8000, 4096, GDR_PIN_FLAG_DEFAULT, &b) == 0,
		"pin 100 bytes at +0x1234 and 4 KiB at +0x8000 of one page"))
		goto out;
	tap_ok(a.h != b.h, "two handles");
	tap_ok(gdr_get_info(g, a, &ia) == 0 && gdr_get_info(g, b, &ib) == 0 &&
	   ia.va == d && ib.va == d && ia.mapped_size == KB64 && ib.mapped_size == KB64,
	   "both pins cover the whole page, va rounded down");
	/*
	 * gdrdrv maps only a pin that starts on a 64 KiB page, and gdirect's
	 * /dev/gdrdrv does the same (gdrcopy's sanity tests expect it).
	 */
	if (!strcmp(BACKEND, "gdrdrv")) {
		tap_ok(gdr_map(g, a, &ma, KB64) != 0 &&
		       gdr_map_v2(g, b, &mb, KB64, GDR_MAP_FLAG_REQ_WC_MAPPING) != 0,
		       "neither is mapped over /dev/gdrdrv: not on a 64 KiB page's start");
		is(gdr_unpin_buffer(g, a), 0, "unpin the first");
		is(gdr_unpin_buffer(g, b), 0, "unpin the second");
		goto out;
	}
	/*
	 * WC may be asked of CPU-cacheable memory too, as of gdrdrv: the
	 * first pin is mapped the memory's way, the second WC, and the bytes
	 * go through both (gdrcopy's data_validation_mix_mappings).
	 */
	if (tap_ok(gdr_map(g, a, &ma, KB64) == 0 &&
	       gdr_map_v2(g, b, &mb, KB64, GDR_MAP_FLAG_REQ_WC_MAPPING) == 0 &&
	       gdr_get_info(g, a, &ia) == 0 && ia.mapping_type ==
	       (coherent() ? GDR_MAPPING_TYPE_CACHING : GDR_MAPPING_TYPE_WC) &&
	       gdr_get_info(g, b, &ib) == 0 && ib.mapping_type == GDR_MAPPING_TYPE_WC,
	       "map both, the first the memory's way, the second with gdr_map_v2 asking for WC")) {
		fill(w, sizeof(w), 77);
		memset(r, 0, sizeof(r));
		tap_ok(gdr_copy_to_mapping(a, (char *)ma + (d + 0x1234 - ia.va), w, sizeof(w)) == 0 &&
		   gdr_copy_from_mapping(b, r, (char *)mb + 0x1234, sizeof(r)) == 0 &&
		   !memcmp(w, r, sizeof(w)),
		   "written through one pin's mapping at the unaligned address, read through the other's");
		is(gdr_unmap(g, a, ma, KB64), 0, "unmap the first");
		is(gdr_unmap(g, b, mb, KB64), 0, "unmap the second");
	}
	is(gdr_unpin_buffer(g, a), 0, "unpin the first");
	is(gdr_unpin_buffer(g, b), 0, "unpin the second");
out:
	cuMemFree(base);
}

/* cuMemFree of a pinned, mapped buffer: the flag flips, the mapping faults. */
static void revocation(gdr_t g)
{
	CUdeviceptr base, d = gpu_alloc(2 * KB64, &base);
	gdr_mh_t mh;
	void *map = NULL;
	unsigned char w[64];
	int flag = -1;

	if (!tap_ok(d != 0, "allocate 128 KiB") ||
	    !is(gdr_pin_buffer(g, d, 2 * KB64, 0, 0, &mh), 0, "pin it"))
		return;
	if (!is(gdr_map(g, mh, &map, 2 * KB64), 0, "map it"))
		goto unpin;
	fill(w, sizeof(w), 5);
	tap_ok(gdr_copy_to_mapping(mh, map, w, sizeof(w)) == 0 && !guest_faults(map, 0),
	   "mapped and usable");
	tap_ok(cuMemFree(base) == CUDA_SUCCESS, "cuMemFree of the pinned buffer");
	for (int i = 0; i < 100 && flag != 1; i++) {
		if (gdr_get_callback_flag(g, mh, &flag))
			break;
		if (flag != 1)
			usleep(10000);
	}
	tap_ok(flag == 1, "gdr_get_callback_flag: 1 after cuMemFree");
	tap_ok(guest_faults(map, 0) && guest_faults((char *)map + KB64 + 8, 1),
	   "the mapping faults on read and write");
	is(gdr_unmap(g, mh, map, 2 * KB64), 0, "gdr_unmap of the revoked pin");
	is(gdr_map(g, mh, &map, 2 * KB64), EINVAL, "gdr_map of a revoked pin");
unpin:
	is(gdr_unpin_buffer(g, mh), 0, "gdr_unpin_buffer of the revoked pin");
}

#define THREADS 4
#define ROUNDS 16

struct worker {
	gdr_t g;
	CUdeviceptr d;
	int bad;
};

static void *worker(void *arg)
{
	struct worker *w = arg;
	gdr_mh_t mh[ROUNDS];

	for (int i = 0; i < ROUNDS; i++)
		w->bad += gdr_pin_buffer(w->g, w->d + i * KB64, KB64, 0, 0, &mh[i]) != 0;
	for (int i = ROUNDS - 1; i >= 0; i--)
		w->bad += gdr_unpin_buffer(w->g, mh[i]) != 0;
	return NULL;
}

/* One gdr_t, four threads pinning and unpinning at once. */
static void threads(gdr_t g)
{
	CUdeviceptr base, d = gpu_alloc(THREADS * ROUNDS * KB64, &base);
	struct worker w[THREADS];
	pthread_t t[THREADS];
	int bad = 0;

	if (!tap_ok(d != 0, "allocate %d pages", THREADS * ROUNDS))
		return;
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ g, d + (CUdeviceptr)i * ROUNDS * KB64, 0 };
		pthread_create(&t[i], NULL, worker, &w[i]);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		bad += w[i].bad;
	}
	tap_ok(bad == 0, "%d threads x %d pins and unpins on one gdr_t: %d failures",
	   THREADS, ROUNDS, bad);
	cuMemFree(base);
}

static void errors(gdr_t g)
{
	gdr_mh_t mh, junk = { 0 };
	int v;

	is(gdr_pin_buffer(g, 0x1000, 0, 0, 0, &mh), EINVAL, "pin 0 bytes");
	tap_ok(gdr_pin_buffer(g, (unsigned long)&v, 4, 0, 0, &mh) != 0,
	   "pin of host memory fails");
	is(gdr_pin_buffer_v2(g, 0x10000, KB64, 2, &mh), EINVAL, "pin flag 2");
	is(gdr_unpin_buffer(g, junk), EINVAL, "unpin a null handle");
	is(gdr_get_callback_flag(g, junk, &v), EINVAL, "callback flag of a null handle");
}

static void body(void)
{
	CUdeviceptr base, d;
	gdr_mh_t left;
	gdr_t g;

	if (!tap_ok(guest_cuda_init() == 0, "CUDA context"))
		return;
	g = gdr_open();
	if (!tap_ok(g != NULL, "gdr_open over /dev/%s", BACKEND))
		return;
	versions(g);
	copies(g);
	small_and_unaligned(g);
	revocation(g);
	threads(g);
	errors(g);
	/* gdr_close unpins what is left, as gdrcopy's does. */
	d = gpu_alloc(KB64, &base);
	tap_ok(d && gdr_pin_buffer(g, d, KB64, 0, 0, &left) == 0, "a pin left for gdr_close");
	is(gdr_close(g), 0, "gdr_close");
	if (d)
		cuMemFree(base);
}

int main(void)
{
	int status, emu, gd = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	setenv("GDIRECT_GDRAPI_BACKEND", BACKEND, 1);
	emu = guest_module_load("nvp2p_emu", "bar1_size_mb=64 bar1_reserve_mb=8");
	if (emu >= 0)
		gd = guest_module_load("gdirect", NULL);
	loaded_emu = emu > 0;
	loaded_gd = gd > 0;
	if (emu < 0 || gd < 0)
		goto skip;
	if (access("/dev/" BACKEND, F_OK)) {
		tap_skip("libgdrapi over /dev/" BACKEND,
			 "no /dev/" BACKEND ": this gdirect.ko has no " BACKEND " personality");
		goto out;
	}
	status = guest_run_body(body);
	tap_ok(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "test process ended normally (status %#x)", status);
	tap_ok(emu_wait_quiet(10000, NULL), "0 pins and 0 BAR1 bytes used afterwards");
out:
	if (loaded_gd)
		tap_ok(guest_sh("rmmod gdirect") == 0, "gdirect unloads");
	if (loaded_emu)
		tap_ok(guest_sh("rmmod nvp2p_emu") == 0, "nvp2p_emu unloads");
	return tap_done();
skip:
	if (loaded_gd)
		guest_sh("rmmod gdirect");
	if (loaded_emu)
		guest_sh("rmmod nvp2p_emu");
	tap_skip("libgdrapi over /dev/" BACKEND, "modules could not be loaded");
	return tap_done();
}
