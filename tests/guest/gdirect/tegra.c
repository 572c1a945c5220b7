// SPDX-License-Identifier: MIT
/*
 * tegra.c - gdirect.ko built for the Tegra interface (guide
 * 13.4) against nvp2p_emu in its Tegra flavour: pin, CPU mapping, unpin
 * (put_pages runs the free callback, which frees the table), revocation
 * on free, the persistent API refused, and the edu example DMAing peer to
 * peer through the in-kernel API's 64 KiB bus pages, built from mappings of
 * one run, of 4 KiB runs and of 12 KiB runs (a page spanning runs).
 *
 * Runs only in the "tegra" guest boot (run-tests.sh), whose modules are
 * built with scripts/build-modules.sh ... tegra.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gdirect_edu.h"
#include "gdt.h"
#include "nvp2p_emu.h"

static int fd;
static volatile uint32_t *status;

static void test_flavour(void)
{
	struct nvp2p_emu_info info;
	int cfd = open(NVP2P_EMU_DEVICE, O_RDWR | O_CLOEXEC);

	memset(&info, 0, sizeof(info));
	tap_ok(cfd >= 0 && ioctl(cfd, NVP2P_EMU_IOC_INFO, &info) == 0 &&
	       info.page_table_version == 0x00010000 &&
	       info.dma_mapping_version == 0x00010000 && !info.persistent_api,
	       "emulator in the Tegra flavour: table %#x, mapping %#x, no persistent API",
	       info.page_table_version, info.dma_mapping_version);
	if (cfd >= 0)
		close(cfd);
}

static void test_pin_map_unpin(CUdeviceptr buf, const uint8_t *pattern)
{
	uint64_t cb = gdt_emu("callbacks");
	int64_t gcb = gdt_gd_stat("callbacks");
	struct gdirect_region_info ri;
	struct gdirect_pin p;
	uint8_t *map, back[16];
	int ret;

	ret = gdt_pin(fd, buf + 4096, 3 * GDT_KB64, 0, &p);
	if (!tap_ok(ret == 0, "PIN 192 KiB at +4 KiB: %d", ret))
		return;
	tap_ok(p.pinned_addr == buf && p.pinned_size == 4 * GDT_KB64 &&
	       status[p.status_slot] == GDIRECT_STATUS_PINNED,
	       "widened to 256 KiB, status PINNED");
	tap_ok(gdt_emu("pins") == 1, "one Tegra page table");
	ret = gdt_region_info(fd, p.handle, &ri);
	tap_ok(!ret && ri.page_size == 65536 && ri.page_count == 4,
	       "REGION_INFO in 64 KiB pages");

	map = mmap(NULL, 4 * GDT_KB64, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   p.mmap_offset);
	if (tap_ok(map != MAP_FAILED, "mmap of the region")) {
		tap_ok(!memcmp(map, pattern, 4 * GDT_KB64),
		       "the mapping shows the GPU memory, every 4 KiB page");
		memset(map + 3 * GDT_KB64 + 8192, 0x5a, 16);
		cuMemcpyDtoH(back, buf + 3 * GDT_KB64 + 8192, 16);
		tap_ok(back[0] == 0x5a && back[15] == 0x5a,
		       "a CPU store reaches GPU memory");
		memcpy(map + 3 * GDT_KB64 + 8192, pattern + 3 * GDT_KB64 + 8192, 16);
		munmap(map, 4 * GDT_KB64);
	}

	tap_ok(gdt_unpin(fd, p.handle) == 0, "UNPIN");
	tap_ok(gdt_emu("callbacks") == cb + 1 && gdt_gd_stat("callbacks") == gcb + 1,
	       "put_pages ran the free callback (13.4.3)");
	tap_ok(gdt_emu("pins") == 0 && gdt_emu("unfreed_tables") == 0,
	       "the callback freed the table: no pin, no table left");
	tap_ok(status[p.status_slot] == GDIRECT_STATUS_FREE,
	       "status word FREE after an unpin, not REVOKED");
}

static void test_revoke(void)
{
	CUdeviceptr buf = gdt_alloc(2 * GDT_KB64);
	uint64_t cb = gdt_emu("callbacks");
	struct gdirect_pin p;
	uint8_t *map;

	if (!tap_ok(buf && gdt_pin(fd, buf, 2 * GDT_KB64, 0, &p) == 0,
		    "pin 128 KiB"))
		return;
	map = mmap(NULL, 2 * GDT_KB64, PROT_READ, MAP_SHARED, fd, p.mmap_offset);
	tap_ok(map != MAP_FAILED && !gdt_faults(map, 0), "mapped and readable");
	tap_ok(gdt_free(buf) == 0, "cuMemFree while pinned");
	tap_ok(gdt_emu("callbacks") == cb + 1 &&
	       status[p.status_slot] == GDIRECT_STATUS_REVOKED,
	       "the free callback ran: status REVOKED");
	tap_ok(gdt_emu("pins") == 0 && gdt_emu("unfreed_tables") == 0,
	       "revoked table freed from the callback");
	if (map != MAP_FAILED) {
		tap_ok(gdt_faults(map + GDT_KB64, 0),
		       "the revoked mapping faults");
		munmap(map, 2 * GDT_KB64);
	}
	tap_ok(gdt_unpin(fd, p.handle) == 0 && gdt_emu("callbacks") == cb + 1,
	       "UNPIN of a revoked region: no second callback");
}

static void test_persistent(CUdeviceptr buf)
{
	struct gdirect_pin p;

	tap_ok(gdt_pin(fd, buf, GDT_KB64, GDIRECT_PIN_PERSISTENT, &p) ==
	       -EOPNOTSUPP, "persistent pin: EOPNOTSUPP (no such API on Tegra)");
	tap_ok(gdt_pin(fd, buf, GDT_KB64, 0, &p) == 0 &&
	       gdt_unpin(fd, p.handle) == 0, "a plain pin still works");
	/* Malformed before unsupported, as from gdirect_pin() and on v2. */
	memset(&p, 0, sizeof(p));
	p.addr = buf;
	p.size = GDT_KB64;
	p.p2p_token = 1;
	p.flags = GDIRECT_PIN_PERSISTENT;
	tap_errno(ioctl(fd, GDIRECT_IOC_PIN, &p), EINVAL,
		  "persistent pin with tokens: EINVAL, not EOPNOTSUPP");
}

static int xfer(int efd, CUdeviceptr gpu, void *buf, size_t len,
		unsigned int dir)
{
	struct gdedu_xfer x = {
		.gpu_addr = gpu, .buf = (uintptr_t)buf, .size = len, .dir = dir,
	};

	return ioctl(efd, GDEDU_IOC_XFER, &x) ? -errno : 0;
}

/*
 * Peer DMA by edu through the in-kernel API, which hands out one bus
 * address per 64 KiB page: gdirect builds them from the mapping's runs,
 * here capped at RUN_KB KiB (0: one run), so that a page spans several.
 */
static void test_edu(unsigned int run_kb)
{
	CUdeviceptr gpu = gdt_alloc(2 * GDT_KB64);
	uint8_t out[3000], in[3000], check[3000];
	uint64_t off;
	char knob[16];
	int efd = open(GDEDU_DEVICE, O_RDWR);

	if (!tap_ok(gpu && efd >= 0, "runs of %u KiB: open %s", run_kb,
		    GDEDU_DEVICE))
		return;
	snprintf(knob, sizeof(knob), "%u", run_kb);
	gdt_emu_knob("dma_max_run_kb", knob);
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 13 + run_kb);
	/* Across the 64 KiB boundary: two bus pages. */
	tap_ok(xfer(efd, gpu + GDT_KB64 - 1000, out, sizeof(out),
		    GDEDU_TO_GPU) == 0 && gdt_emu("dma_maps") == 1,
	       "runs of %u KiB: edu DMA of 3000 bytes into GPU memory, mapping kept",
	       run_kb);
	cuMemcpyDtoH(check, gpu + GDT_KB64 - 1000, sizeof(check));
	tap_ok(!memcmp(check, out, sizeof(out)), "runs of %u KiB: CUDA reads what edu wrote",
	       run_kb);
	tap_ok(gdt_mem_offset(gpu + GDT_KB64 - 1000, &off) == 0 &&
	       gdt_host_has(off, out, sizeof(out)),
	       "runs of %u KiB: the host's backing file has it, peer to peer",
	       run_kb);
	memset(in, 0, sizeof(in));
	tap_ok(xfer(efd, gpu + GDT_KB64 - 1000, in, sizeof(in),
		    GDEDU_FROM_GPU) == 0 && !memcmp(in, out, sizeof(out)),
	       "runs of %u KiB: and edu DMAs it back", run_kb);
	tap_ok(gdt_free(gpu) == 0 && gdt_emu("pins") == 0 &&
	       gdt_emu("dma_maps") == 0 && gdt_emu("unfreed_tables") == 0 &&
	       gdt_emu("leftover_dma_maps") == 0,
	       "runs of %u KiB: free: the callback freed the mapping (free_dma_mapping) and the table",
	       run_kb);
	close(efd);
	gdt_emu_knob("dma_max_run_kb", "0");
}

static void test_edu_one_run(void)
{
	test_edu(0);
}

static void test_edu_4k_runs(void)
{
	test_edu(4);
}

static void test_edu_12k_runs(void)
{
	test_edu(12);
}

/* The tests on one buffer, in one process. */
static void shared(void)
{
	struct gdt_buffer b;

	if (gdt_body_open(&fd, &status, test_flavour, GDT_MB, 12, &b))
		return;
	test_pin_map_unpin(b.gpu, b.pattern);
	test_persistent(b.gpu);
	gdt_body_close(fd, status, &b);
}

/*
 * The revocation and the edu transfers pin buffers of their own: each in
 * a process of its own, with its own CUDA context and files, so that a
 * failure cannot leave a pin or a DMA mapping to the next.  This process
 * makes no CUDA context, so its children can.
 */
static void body(void)
{
	gdt_run_child("shared", shared);
	GDT_RUN_OWN(test_revoke);
	GDT_RUN_OWN(test_edu_one_run);
	GDT_RUN_OWN(test_edu_4k_runs);
	GDT_RUN_OWN(test_edu_12k_runs);
	tap_ok(gdt_emu("stale_unmaps") == 0 && gdt_emu("leftover_dma_maps") == 0,
	       "no unmap of a dead mapping, none left to the provider");
}

int main(void)
{
	return gdt_main(NULL, 1, body);
}
