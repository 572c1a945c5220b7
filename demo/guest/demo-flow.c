// SPDX-License-Identifier: MIT
/*
 * demo-flow.c - the guide's GPUDirect RDMA flow (chapters 2-3, 11-12) on the
 * emulated machine, as a readable report with a measured figure per step.
 * The third-party driver is nvp2p_selftest.ko on qemu's edu device.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include <cuda.h>

#include "nvp2p_emu.h"
#include "emu_knob.h"
#include "nvp2p_selftest.h"

#define MB (1ULL << 20)

static int st;

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int step_no;
static void step(const char *what)
{
	printf("\n[%d] %s\n", ++step_no, what);
}

static int fail(const char *what, int err)
{
	printf("    FAILED: %s (%d)\n", what, err);
	return 1;
}

int main(void)
{
	struct nvp2p_emu_info info = { 0 };
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr d;
	char name[128];
	unsigned int one = 1;
	unsigned long long id;
	uint8_t buf[4000];
	double t0, t;
	int fd, slots = 0;

	printf("gdirect demo: the GPUDirect RDMA flow on the emulated machine\n");
	fd = open(NVP2P_EMU_DEVICE, O_RDWR);
	st = open("/dev/nvp2p_selftest", O_RDWR);
	if (fd < 0 || st < 0 || ioctl(fd, NVP2P_EMU_IOC_INFO, &info))
		return fail("emulated GPU or peer driver missing", errno);
	close(fd);

	step("The machine");
	cuInit(0);
	cuDeviceGet(&dev, 0);
	cuDeviceGetName(name, sizeof(name), dev);
	printf("    GPU: %s, %llu MiB memory\n", name, (unsigned long long)info.mem_size >> 20);
	printf("    BAR1: %llu MiB, %llu MiB reserved; page table version 0x%08x; persistent API: %s\n",
	       (unsigned long long)info.bar1_size >> 20, (unsigned long long)info.bar1_reserved >> 20,
	       info.page_table_version, info.persistent_api ? "yes" : "no");
	printf("    peer: qemu edu DMA engine, driven by nvp2p_selftest.ko\n");

	step("Allocate GPU memory (cuMemAlloc) and mark it SYNC_MEMOPS (guide 12.2)");
	cuCtxCreate(&ctx, NULL, 0, dev);
	t0 = now_us();
	if (cuMemAlloc(&d, 8 * MB))
		return fail("cuMemAlloc", 0);
	t = now_us() - t0;
	cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d);
	cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, d);
	printf("    8 MiB at GPU VA 0x%llx in %.0f us, BUFFER_ID %llu\n", d, t, id);

	step("Pin it for the peer (nvidia_p2p_get_pages, 64 KiB aligned)");
	{
		struct st_pin p = { .slot = 0, .va = d, .len = 8 * MB };

		t0 = now_us();
		ioctl(st, ST_IOC_PIN, &p);
		t = now_us() - t0;
		if (p.ret)
			return fail("get_pages", p.ret);
		printf("    pinned 128 pages of 64 KiB in %.0f us; BAR1 used %llu MiB\n",
		       t, (unsigned long long)emu_stat_u64("bar1_used") >> 20);
	}

	step("Map it for the peer device (nvidia_p2p_dma_map_pages)");
	{
		struct st_dma m = { .slot = 0 };
		struct st_slot_info i = { .slot = 0 };

		t0 = now_us();
		ioctl(st, ST_IOC_DMA_MAP, &m);
		t = now_us() - t0;
		if (m.ret)
			return fail("dma_map_pages", m.ret);
		ioctl(st, ST_IOC_INFO, &i);
		printf("    %u DMA addresses in %.0f us; first 0x%llx (the BAR address: no IOMMU)\n",
		       i.dma_entries, t, (unsigned long long)i.dma0);
	}

	step("Peer-to-peer DMA: edu writes into GPU memory");
	{
		struct st_edu e = { .slot = 0, .offset = 12345, .len = sizeof(buf), .seed = 7 };
		int same;

		t0 = now_us();
		ioctl(st, ST_IOC_EDU, &e);
		t = now_us() - t0;
		if (e.ret)
			return fail("edu DMA", e.ret);
		cuMemcpyDtoH(buf, d + 12345, sizeof(buf));
		same = 1;
		for (size_t i = 0; i < sizeof(buf); i++)
			same &= buf[i] == st_pattern(7, i);
		printf("    %zu bytes in %.0f us (edu moves at most 4 KiB per command, through its own buffer)\n",
		       sizeof(buf), t);
		printf("    GPU reads them back with cuMemcpyDtoH: %s\n", same ? "identical" : "DIFFERENT");
		if (!same)
			return 1;
	}

	step("Free the memory while it is pinned (guide 11.3: the free callback)");
	{
		struct st_slot_info i = { .slot = 0 };
		struct st_put p = { .slot = 0, .va = d };
		uint64_t cb = emu_stat_u64("callbacks");

		t0 = now_us();
		cuMemFree(d);
		t = now_us() - t0;
		ioctl(st, ST_IOC_INFO, &i);
		printf("    cuMemFree took %.0f us; free callbacks fired: %llu; peer's page table gone: %s\n",
		       t, (unsigned long long)(emu_stat_u64("callbacks") - cb), i.live ? "no" : "yes");
		printf("    BAR1 used after the callback: %llu MiB\n",
		       (unsigned long long)emu_stat_u64("bar1_used") >> 20);
		ioctl(st, ST_IOC_PUT, &p);
		printf("    the driver's late nvidia_p2p_put_pages returns %d, as the guide promises\n", p.ret);
		cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, d);
		if (cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, d) == CUDA_ERROR_INVALID_VALUE)
			printf("    BUFFER_ID of the freed pointer: CUDA_ERROR_INVALID_VALUE (a tag check sees it)\n");
	}

	step("BAR1 exhaustion (guide 11.5): pin 8 MiB buffers until the budget runs out");
	{
		CUdeviceptr b[ST_SLOTS];
		struct st_pin p;

		for (slots = 0; slots < ST_SLOTS; slots++) {
			if (cuMemAlloc(&b[slots], 8 * MB))
				break;
			p = (struct st_pin){ .slot = (uint32_t)slots, .va = b[slots], .len = 8 * MB };
			ioctl(st, ST_IOC_PIN, &p);
			if (p.ret)
				break;
		}
		printf("    %d pins (%d MiB) fit; the next failed with %d (-ENOMEM): BAR1 used %llu of %llu MiB, %llu reserved\n",
		       slots, slots * 8, p.ret, (unsigned long long)emu_stat_u64("bar1_used") >> 20,
		       (unsigned long long)info.bar1_size >> 20, (unsigned long long)info.bar1_reserved >> 20);
		printf("    libgdirect evicts unused pins and retries here: make demo shows it\n");
	}
	printf("\nprocess exit: the CUDA fd closes, every remaining pin is revoked\n");
	return 0;
}
