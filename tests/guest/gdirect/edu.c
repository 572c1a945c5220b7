// SPDX-License-Identifier: MIT
/*
 * edu.c - the example third-party driver end to end: user
 * data DMA'd by the edu device into emulated GPU memory, peer to peer,
 * checked in the host's backing file (hostcheck) and through CUDA, then
 * DMA'd back; pins made lazily and reused, dropped on free, and evicted
 * least recently used first; the device unbound under open files, alone
 * and racing a free; a free racing the first transfer's DMA mapping,
 * which gdirect makes on a persistent pin paired with a callback pin.
 *
 * edu takes ~100 ms per DMA, so transfers are kept to a few KiB.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdirect_edu.h"
#include "gdt.h"

static int efd;
/* The bytes each transfer moves: made by the parent, copied to each child. */
static uint8_t data[6000];

static int xfer(CUdeviceptr gpu, void *buf, size_t len, unsigned int dir)
{
	struct gdedu_xfer x = {
		.gpu_addr = gpu, .buf = (uintptr_t)buf, .size = len, .dir = dir,
	};

	return ioctl(efd, GDEDU_IOC_XFER, &x) ? -errno : 0;
}

static struct gdedu_stats stats(void)
{
	struct gdedu_stats s;

	memset(&s, 0, sizeof(s));
	ioctl(efd, GDEDU_IOC_STATS, &s);
	return s;
}

/* The edu device's PCI address, from sysfs; 0 if it is not bound. */
static int edu_sysfs_dev(char *dev, size_t len)
{
	FILE *f = popen("ls /sys/bus/pci/drivers/gdirect_edu | grep '^0000:'", "r");

	dev[0] = 0;
	if (!f)
		return 0;
	if (!fgets(dev, (int)len, f))
		dev[0] = 0;
	pclose(f);
	dev[strcspn(dev, "\n")] = 0;
	return dev[0] != 0;
}

/* Write dev to the driver's bind or unbind file; 0 on success. */
static int edu_sysfs(const char *dev, const char *what)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "echo %s > /sys/bus/pci/drivers/gdirect_edu/%s",
		 dev, what);
	return system(cmd);
}

/* The device unbound under an open file with cached pins, then rebound. */
static void test_unbind(void)
{
	CUdeviceptr gpu = gdt_alloc(GDT_KB64);
	char dev[64];

	if (!edu_sysfs_dev(dev, sizeof(dev))) {
		tap_skip("unbind with open files", "edu device not found in sysfs");
		gdt_free(gpu);
		return;
	}
	/* A cached pin is two: the mapped persistent one, its callback one. */
	tap_ok(xfer(gpu + 8, data, 16, GDEDU_TO_GPU) == 0 &&
	       gdt_emu("pins") == 2 && gdt_emu("dma_maps") == 1,
	       "a cached pin and its DMA mapping before unbind");
	tap_ok(edu_sysfs(dev, "unbind") == 0, "unbind %s with the file open", dev);
	/* The unbind ran in another process: unmapped there, not put. */
	tap_ok(gdt_emu("dma_maps") == 0 && gdt_emu("pins") == 2,
	       "unbind unmaps the device's DMA mapping, keeps the pin (%lld maps, %lld pins)",
	       (long long)gdt_emu("dma_maps"), (long long)gdt_emu("pins"));
	tap_ok(xfer(gpu + 8, data, 16, GDEDU_TO_GPU) == -ENODEV,
	       "transfer after unbind: ENODEV");
	close(efd);
	tap_ok(gdt_emu("pins") == 0, "closing the file drops its pins");
	tap_ok(edu_sysfs(dev, "bind") == 0, "bind again");
	efd = open(GDEDU_DEVICE, O_RDWR);
	tap_ok(efd >= 0 && xfer(gpu + 8, data, 16, GDEDU_TO_GPU) == 0,
	       "rebound device transfers again");
	gdt_free(gpu);
}

/*
 * The device unbound (by another process) while the owner frees the
 * memory: the unbind's dma_unmap_pages is in flight when the free comes.
 * The mapped pin is persistent, so the free leaves its table and mapping
 * alone: the free runs the callback pin's callback, which marks the
 * region stale without waiting for the unmap, and the unmap ends on a
 * live table.  The persistent pin keeps the GPU memory until the file
 * drops its stale entry (docs/driver.md, "Peer pins").  The emulator's
 * unmap delay holds the unmap open; the free is made only once it is in
 * flight.
 */
static void test_unbind_races_free(void)
{
	CUdeviceptr victim = gdt_alloc(GDT_KB64);
	uint64_t callbacks = gdt_emu("callbacks"), stale = gdt_emu("stale_unmaps");
	uint64_t used;
	int status = -1;
	char dev[64];
	pid_t pid;

	if (!edu_sysfs_dev(dev, sizeof(dev))) {
		tap_skip("unbind racing a free", "edu device not found in sysfs");
		return;
	}
	tap_ok(ioctl(efd, GDEDU_IOC_FLUSH) == 0 &&
	       xfer(victim, data, 16, GDEDU_TO_GPU) == 0 &&
	       gdt_emu("dma_maps") == 1, "pinned and mapped for edu");
	used = gdt_emu("mem_used");
	/* Held until the free is done: a minute at most. */
	gdt_emu_knob("unmap_delay_ms", "60000");
	pid = fork();
	if (pid == 0)
		_exit(edu_sysfs(dev, "unbind") == 0 ? 0 : 1);
	gdt_emu_wait("unmaps_in_flight", 1, 10000);
	tap_ok(pid > 0 && gdt_emu("unmaps_in_flight") == 1,
	       "the unbind's dma_unmap_pages is in flight");
	gdt_free(victim);
	tap_ok(gdt_emu("callbacks") == callbacks + 1 &&
	       gdt_emu("unmaps_in_flight") == 1,
	       "the free ran the callback pin's callback, the unmap still in flight");
	tap_ok(gdt_emu("mem_used") == used,
	       "the persistent pin keeps the GPU memory allocated");
	gdt_emu_knob("unmap_delay_ms", "0");
	if (pid > 0)
		waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "unbind %s done", dev);
	tap_ok(gdt_emu("unmaps_in_flight") == 0 &&
	       gdt_emu("stale_unmaps") == stale && gdt_emu("dma_maps") == 0,
	       "the unmap ended on a live table");
	tap_ok(gdt_emu("pins") == 1, "the persistent pin is left to the file");
	close(efd);
	tap_ok(gdt_emu("pins") == 0 && gdt_emu("mem_used") < used,
	       "closing the file puts it, and the memory is freed");
	tap_ok(edu_sysfs(dev, "bind") == 0, "bind again");
	efd = open(GDEDU_DEVICE, O_RDWR);
}

struct map_race {
	CUdeviceptr gpu;
	uint8_t *data;
	int ret;
};

static void *map_race_xfer(void *arg)
{
	struct map_race *m = arg;

	m->ret = xfer(m->gpu, m->data, 16, GDEDU_TO_GPU);
	return NULL;
}

/*
 * The owner frees the memory while edu's first transfer to it is just past
 * dma_map_pages, before gdirect_pin() has used the new mapping.  The free
 * runs the callback of the region's unmapped callback pin, which marks it
 * stale; the mapping belongs to the persistent pin, which the free leaves
 * alone, so gdirect unmaps it itself (docs/driver.md, "Peer pins").  The
 * emulator's map_return_delay_ms holds that window open; the free is made
 * only once a mapping is in it.  gdirect must not read a freed mapping
 * (the debug-kernel lane's KASAN reports a read), and the transfer fails
 * with ESTALE, leaving nothing pinned or mapped.
 */
static void test_map_races_free(void)
{
	struct map_race m = { .gpu = gdt_alloc(GDT_KB64), .data = data, .ret = 1 };
	uint64_t callbacks = gdt_emu("callbacks");
	int64_t mismatches = gdt_gd_stat("version_mismatch");
	pthread_t t;

	/* Held until the free is done: a minute at most. */
	gdt_emu_knob("map_return_delay_ms", "60000");
	if (!tap_ok(m.gpu && pthread_create(&t, NULL, map_race_xfer, &m) == 0,
		    "transfer thread started")) {
		gdt_emu_knob("map_return_delay_ms", "0");
		return;
	}
	gdt_emu_wait("maps_returning", 1, 10000);
	tap_ok(gdt_emu("maps_returning") == 1,
	       "the transfer's dma_map_pages made its mapping and has not returned");
	gdt_free(m.gpu);
	tap_ok(gdt_emu("callbacks") == callbacks + 1,
	       "the free ran the callback meanwhile");
	gdt_emu_knob("map_return_delay_ms", "0");
	pthread_join(t, NULL);
	tap_ok(m.ret == -ESTALE, "the transfer fails with ESTALE (%d)", m.ret);
	/* A read of the freed mapping shows as a garbage version. */
	tap_ok(mismatches >= 0 && gdt_gd_stat("version_mismatch") == mismatches,
	       "gdirect read nothing of the freed mapping (no version mismatch)");
	tap_ok(gdt_emu("pins") == 0 && gdt_emu("dma_maps") == 0 &&
	       gdt_emu("maps_returning") == 0, "nothing pinned or mapped");
}

/*
 * The owner frees the memory while edu's first transfer to it is inside
 * dma_map_pages, before the provider's API lock, where NVIDIA's driver
 * reads the table.  On a pin with a free callback that is a use-after-free
 * inside NVIDIA's driver that no caller can prevent: the callback cannot
 * wait for the map, and the driver frees the table once it returns.  So
 * the table gdirect maps for a peer is a persistent pin's, which a free
 * does not touch, and revocation comes from a second, unmapped callback
 * pin of the same range (docs/driver.md, "Peer pins").  The emulator's
 * map_entry_delay_ms holds the window open, and the emulator reports a
 * map on a freed table as a misuse: there must be none.  The transfer
 * fails with ESTALE (the callback marked the region stale), and nothing
 * stays pinned or mapped.
 */
static void test_map_entry_races_free(void)
{
	struct map_race m = { .gpu = gdt_alloc(GDT_KB64), .data = data, .ret = 1 };
	uint64_t callbacks = gdt_emu("callbacks"), misuse = gdt_emu("misuse");
	uint64_t map_misuse = gdt_emu("map_misuse");
	int64_t put_errors = gdt_gd_stat("put_errors");
	pthread_t t;

	/* Logged without a WARN, should it happen: counted below. */
	gdt_emu_knob("expect_misuse", "1");
	/* Held until the free is done: a minute at most. */
	gdt_emu_knob("map_entry_delay_ms", "60000");
	if (!tap_ok(m.gpu && pthread_create(&t, NULL, map_race_xfer, &m) == 0,
		    "transfer thread started")) {
		gdt_emu_knob("map_entry_delay_ms", "0");
		gdt_emu_knob("expect_misuse", "0");
		return;
	}
	gdt_emu_wait("maps_entering", 1, 10000);
	tap_ok(gdt_emu("maps_entering") == 1,
	       "the transfer's dma_map_pages is in, before the API lock");
	gdt_free(m.gpu);
	tap_ok(gdt_emu("callbacks") == callbacks + 1,
	       "the free's callback ran and returned meanwhile");
	gdt_emu_knob("map_entry_delay_ms", "0");
	pthread_join(t, NULL);
	tap_ok(gdt_emu("misuse") == misuse && gdt_emu("map_misuse") == map_misuse,
	       "the map met no freed table (misuse %llu -> %llu, map_misuse %llu -> %llu)",
	       (unsigned long long)misuse,
	       (unsigned long long)gdt_emu("misuse"),
	       (unsigned long long)map_misuse,
	       (unsigned long long)gdt_emu("map_misuse"));
	gdt_emu_knob("expect_misuse", "0");
	tap_ok(m.ret == -ESTALE, "the transfer fails with ESTALE (%d)", m.ret);
	tap_ok(gdt_emu("pins") == 0 && gdt_emu("dma_maps") == 0 &&
	       gdt_emu("maps_entering") == 0 &&
	       gdt_gd_stat("put_errors") == put_errors,
	       "nothing pinned or mapped, no put failed");
}

/*
 * The transfers, the cache and its evictions on two buffers of one file,
 * in one process.
 */
static void basics(void)
{
	/* The transfer crosses a 64 KiB page boundary. */
	const size_t len = sizeof(data), off = GDT_KB64 - 3000;
	uint8_t *back = calloc(1, len);
	struct gdedu_stats s;
	uint64_t moff;
	CUdeviceptr buf, many;
	int ret;

	if (!tap_ok(gdt_cuda_init() == 0, "CUDA context"))
		return;
	efd = open(GDEDU_DEVICE, O_RDWR);
	if (!tap_ok(efd >= 0, "open " GDEDU_DEVICE))
		return;
	buf = gdt_alloc(4 * GDT_KB64);
	cuMemsetD8(buf, 0, 4 * GDT_KB64);

	ret = xfer(buf + off, data, len, GDEDU_TO_GPU);
	tap_ok(ret == 0, "edu DMA of %zu bytes into GPU memory: %d", len, ret);
	tap_ok(!gdt_mem_offset(buf + off, &moff) &&
	       gdt_host_has(moff, data, len),
	       "host sees the bytes in the GPU's backing file");
	cuMemcpyDtoH(back, buf + off, len);
	tap_ok(!memcmp(back, data, len), "CUDA reads the same bytes back");
	s = stats();
	tap_ok(s.pins == 1 && s.cached == 1 && s.chunks == 4,
	       "one lazy pin, 4 chunks (%llu pins, %llu chunks)",
	       (unsigned long long)s.pins, (unsigned long long)s.chunks);

	memset(back, 0, len);
	ret = xfer(buf + off, back, len, GDEDU_FROM_GPU);
	tap_ok(ret == 0 && !memcmp(back, data, len),
	       "edu DMA from GPU memory returns the data");
	for (size_t i = 0; i < len; i++)
		data[i] ^= 0xff;
	cuMemcpyHtoD(buf + off, data, len);
	ret = xfer(buf + off, back, len, GDEDU_FROM_GPU);
	tap_ok(ret == 0 && !memcmp(back, data, len),
	       "edu DMA sees what CUDA wrote");
	s = stats();
	tap_ok(s.pins == 1 && s.hits == 2, "pin reused (%llu pins, %llu hits)",
	       (unsigned long long)s.pins, (unsigned long long)s.hits);

	tap_ok(xfer(buf, data, 0, GDEDU_TO_GPU) == -EINVAL,
	       "zero-length transfer: EINVAL");
	tap_ok(xfer(buf, data, 16, 7) == -EINVAL, "bad direction: EINVAL");
	tap_ok(xfer(buf, NULL, 16, GDEDU_TO_GPU) == -EFAULT,
	       "bad user buffer: EFAULT");

	/* Free: the invalidate callback marks the cached pin stale. */
	gdt_free(buf);
	s = stats();
	tap_ok(s.invalidations == 1, "free fires the invalidate callback");
	tap_ok(xfer(buf + off, data, 16, GDEDU_TO_GPU) == -EINVAL,
	       "transfer to freed memory: EINVAL");
	s = stats();
	tap_ok(s.cached == 0 && gdt_emu("pins") == 0,
	       "the stale pin is dropped, nothing pinned");

	/* Ten 64 KiB pages through an 8-entry cache: two evictions. */
	many = gdt_alloc(10 * GDT_KB64);
	for (int i = 0; i < 10; i++)
		xfer(many + i * GDT_KB64 + 8, data, 16, GDEDU_TO_GPU);
	s = stats();
	tap_ok(s.cached == 8 && s.evictions == 2,
	       "LRU: %llu cached, %llu evicted", (unsigned long long)s.cached,
	       (unsigned long long)s.evictions);
	tap_ok(xfer(many + 9 * GDT_KB64 + 100, back, 16, GDEDU_FROM_GPU) == 0 &&
	       stats().hits == s.hits + 1, "most recent page still cached");
	tap_ok(ioctl(efd, GDEDU_IOC_FLUSH) == 0 && stats().cached == 0 &&
	       gdt_emu("pins") == 0, "FLUSH unpins everything");
	gdt_free(many);
	close(efd);
	free(back);
}

/*
 * The races and the unbinds each in a process of its own, with its own
 * CUDA context, edu file and buffers: a failure cannot leave a pin or a
 * DMA mapping to the next.  This process makes no CUDA context, so its
 * children can.
 */
static void body(void)
{
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 7);
	gdt_run_child("basics", basics);
	gdt_run_own("test_map_races_free", test_map_races_free, GDEDU_DEVICE,
		    &efd, NULL);
	gdt_run_own("test_map_entry_races_free", test_map_entry_races_free,
		    GDEDU_DEVICE, &efd, NULL);
	gdt_run_own("test_unbind", test_unbind, GDEDU_DEVICE, &efd, NULL);
	gdt_run_own("test_unbind_races_free", test_unbind_races_free,
		    GDEDU_DEVICE, &efd, NULL);
}

int main(void)
{
	return gdt_main(NULL, 1, body);
}
