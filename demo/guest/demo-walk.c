// SPDX-License-Identifier: MIT
/*
 * demo-walk.c - `make demo`: the product on the emulated machine, a figure
 * per step.  A CUDA program (the emulated driver) allocates GPU memory;
 * libgdirect classifies it and registers it through gdirect.ko; data goes
 * in and out through the BAR mapping; the example driver gdirect_edu DMAs
 * into the same buffer through gdirect's in-kernel API; a free while
 * registered comes back as a revocation event; a working set larger than
 * BAR1 runs through evictions; `gdirect stat` shows the process at the end.
 *
 * Every step checks what it shows and the program exits non-zero on the
 * first that fails.  Run by demo/guest/demo.sh with nvp2p_emu, gdirect and
 * gdirect_edu loaded and GDIRECT_PUBLISH_STATS=1 in the environment.
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
#include <gdirect.h>

#include "gdirect_edu.h"
#include "nvp2p_emu.h"

/*
 * The emulated machine's guest-side helpers (emu/include/): its counters,
 * the host's view of GPU memory, the CUDA context.
 */
#include "emu_knob.h"
#include "gpumem.h"
#include "guest_cuda.h"

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)
#define BUF (4 * MiB)
#define EDU_OFF (2 * MiB + 1000)	/* where gdirect_edu writes, 6000 bytes */
#define EDU_LEN 6000

static int step_no;

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void step(const char *what)
{
	printf("\n[%d] %s\n", ++step_no, what);
}

static int fail(const char *what)
{
	printf("    FAILED: %s\n", what);
	return 1;
}

static void pattern(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed + (i >> 12));
}

static unsigned long long mib(uint64_t b)
{
	return (unsigned long long)(b >> 20);
}

int main(void)
{
	static uint8_t pat[1 * MiB], back[1 * MiB];
	struct nvp2p_emu_info info = { 0 };
	struct gdirect_params params;
	struct gdirect_ctx *g = NULL;
	struct gdirect_ptr_info pi;
	struct gdirect_reg *r, *stale;
	struct gdirect_reg_info ri, ri2;
	struct gdirect_stats st;
	struct gdedu_stats es;
	CUdeviceptr d, d2;
	unsigned long long id, id2;
	uint64_t moff;
	unsigned int mt;
	char name[128];
	double t0, t;
	int fd, efd, n = 100000;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("gdirect demo: libgdirect, gdirect.ko and the gdirect_edu example driver\n"
	       "on the emulated machine (GPU: ivshmem memory behind nvp2p_emu; peer: qemu's edu)\n");

	step("The machine");
	fd = open(NVP2P_EMU_DEVICE, O_RDWR);
	if (fd < 0 || ioctl(fd, NVP2P_EMU_IOC_INFO, &info))
		return fail("the emulated GPU (" NVP2P_EMU_DEVICE ") is not there");
	close(fd);
	if (guest_cuda_init())
		return fail("CUDA context");
	cuDeviceGetName(name, sizeof(name), 0);
	printf("    GPU: %s, %llu MiB of memory, BAR1 %llu MiB (%llu reserved)\n", name,
	       mib(info.mem_size), mib(info.bar1_size), mib(info.bar1_reserved));
	printf("    modules: nvp2p_emu (the provider), gdirect.ko (/dev/gdirect), gdirect_edu.ko (%s)\n",
	       GDEDU_DEVICE);

	step("A CUDA program allocates GPU memory (cuMemAlloc)");
	t0 = now_ns();
	if (cuMemAlloc(&d, BUF))
		return fail("cuMemAlloc");
	t = now_ns() - t0;
	cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, d);
	/* Where step 6's bytes lie in the host's backing file; looked up
	 * before libgdirect registers anything (guest_mem_offset reads gdirect's
	 * per-process region list, which would then hold two handle 1s). */
	if (guest_mem_offset(d + EDU_OFF, &moff))
		return fail("offset of the buffer in GPU memory");
	printf("    %llu MiB at GPU VA 0x%llx in %.0f us, BUFFER_ID %llu\n", mib(BUF), d, t / 1e3, id);

	step("libgdirect classifies it, and a host pointer, against cuPointerGetAttribute");
	gdirect_params_init(&params);
	params.invalidation = GDIRECT_INV_KERNEL;	/* the revocation events of step 7 */
	if (gdirect_ctx_create(&params, &g)) {
		printf("    gdirect_ctx_create: %s\n", gdirect_errmsg());
		return fail("libgdirect context");
	}
	if (gdirect_classify(g, (void *)d, &pi) || pi.type != GDIRECT_MEM_DEVICE ||
	    pi.alloc_base != d || pi.alloc_size != BUF)
		return fail("gdirect_classify of the allocation");
	t0 = now_ns();
	for (int i = 0; i < n; i++)
		gdirect_classify(g, (void *)(d + (uint64_t)(i & 1023) * 64), &pi);
	t = (now_ns() - t0) / n;
	printf("    device pointer: device memory, GPU %d, allocation 0x%llx + %llu MiB: %.0f ns per query (cached)\n",
	       pi.device, (unsigned long long)pi.alloc_base, mib(pi.alloc_size), t);
	t0 = now_ns();
	for (int i = 0; i < n; i++)
		cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + (uint64_t)(i & 1023) * 64);
	printf("    cuPointerGetAttribute(MEMORY_TYPE) on it: %.0f ns per call\n", (now_ns() - t0) / n);
	if (gdirect_classify(g, pat, &pi) || pi.type == GDIRECT_MEM_DEVICE)
		return fail("gdirect_classify of a host pointer");
	t0 = now_ns();
	for (int i = 0; i < n; i++)
		gdirect_classify(g, pat + (i & 1023) * 64, &pi);
	t = (now_ns() - t0) / n;
	printf("    host pointer: not device memory, %.0f ns per query\n", t);
	t0 = now_ns();
	for (int i = 0; i < n; i++)
		cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				      (CUdeviceptr)(uintptr_t)(pat + (i & 1023) * 64));
	printf("    cuPointerGetAttribute on it: %.0f ns per call (an error: not CUDA memory)\n",
	       (now_ns() - t0) / n);

	step("gdirect_reg_get pins it through /dev/gdirect (a miss), then hits");
	t0 = now_ns();
	if (gdirect_reg_get(g, (void *)d, 1 * MiB, 0, &r)) {
		printf("    gdirect_reg_get: %s\n", gdirect_errmsg());
		return fail("registration");
	}
	t = now_ns() - t0;
	gdirect_reg_info(r, &ri);
	printf("    miss: SYNC_MEMOPS set, 64 KiB pages pinned, mapped: %.0f us; region 0x%llx + %llu KiB, gdirect.ko handle %llu\n",
	       t / 1e3, (unsigned long long)ri.addr, (unsigned long long)(ri.size >> 10),
	       (unsigned long long)ri.kernel_handle);
	printf("    emulator: %llu pin(s), %llu KiB of BAR1 used\n",
	       (unsigned long long)emu_stat_u64("pins"), (unsigned long long)(emu_stat_u64("bar1_used") >> 10));
	gdirect_reg_put(r);
	t0 = now_ns();
	for (int i = 0; i < n; i++) {
		if (gdirect_reg_get(g, (void *)(d + (uint64_t)(i & 15) * 4096), 4096, 0, &r))
			return fail("cache hit");
		gdirect_reg_put(r);
	}
	t = (now_ns() - t0) / n;
	gdirect_stats(g, &st);
	printf("    hit (gdirect_reg_get + gdirect_reg_put): %.0f ns; %llu hits, %llu miss(es)\n", t,
	       (unsigned long long)st.hits, (unsigned long long)st.misses);
	if (st.misses != 1)
		return fail("one miss, then hits");

	step("Data in and out through the BAR mapping (gdirect_copy_to_gpu / _from_gpu)");
	pattern(pat, sizeof(pat), 1);
	t0 = now_ns();
	if (gdirect_copy_to_gpu(g, (void *)d, pat, sizeof(pat)))
		return fail("gdirect_copy_to_gpu");
	t = now_ns() - t0;
	if (cuMemcpyDtoH(back, d, sizeof(back)) || memcmp(back, pat, sizeof(pat)))
		return fail("CUDA reads back what went in through the BAR");
	printf("    1 MiB in (%s copy): %.0f MB/s; cuMemcpyDtoH reads the same bytes\n",
	       gdirect_copy_impl(), sizeof(pat) / (t / 1e3));
	pattern(pat, sizeof(pat), 2);
	cuMemcpyHtoD(d, pat, sizeof(pat));
	memset(back, 0, sizeof(back));
	t0 = now_ns();
	if (gdirect_copy_from_gpu(g, back, (void *)d, sizeof(back)))
		return fail("gdirect_copy_from_gpu");
	t = now_ns() - t0;
	if (memcmp(back, pat, sizeof(pat)))
		return fail("the BAR read returns what CUDA wrote");
	printf("    1 MiB out: %.0f MB/s (uncached BAR reads are slow); the bytes CUDA wrote\n",
	       sizeof(back) / (t / 1e3));

	step("gdirect_edu DMAs into the same buffer through gdirect's in-kernel API");
	efd = open(GDEDU_DEVICE, O_RDWR);
	if (efd < 0)
		return fail("open " GDEDU_DEVICE);
	{
		struct gdedu_xfer x = { .gpu_addr = d + EDU_OFF, .buf = (uintptr_t)pat,
					.size = EDU_LEN, .dir = GDEDU_TO_GPU };
		const size_t len = EDU_LEN, off = EDU_OFF;

		pattern(pat, len, 3);
		t0 = now_ns();
		if (ioctl(efd, GDEDU_IOC_XFER, &x))
			return fail("edu DMA into GPU memory");
		t = now_ns() - t0;
		memset(back, 0, len);
		if (cuMemcpyDtoH(back, d + off, len) || memcmp(back, pat, len)) {
			size_t i = 0;

			while (i < len && back[i] == pat[i])
				i++;
			printf("    first difference at +%zu: %02x, not %02x\n", i, back[i], pat[i]);
			return fail("CUDA reads the DMA'd bytes");
		}
		if (!guest_host_has(moff, pat, len))
			return fail("the host's backing file holds the DMA'd bytes");
		memset(back, 0, len);
		if (gdirect_copy_from_gpu(g, back, (void *)(d + off), len) || memcmp(back, pat, len))
			return fail("libgdirect's BAR mapping sees the DMA'd bytes");
		ioctl(efd, GDEDU_IOC_STATS, &es);
		printf("    %zu bytes at +%zu in %.0f ms (edu: 4 KiB per command, %llu commands)\n",
		       len, off, t / 1e6, (unsigned long long)es.chunks);
		printf("    the host's backing file at offset 0x%llx has them (SHA-256 checked by the host);\n"
		       "    libgdirect reads the same bytes through its BAR mapping\n",
		       (unsigned long long)moff);
		printf("    gdirect_edu: %llu pin through gdirect_pin(), cached; emulator: %llu pins in all\n",
		       (unsigned long long)es.pins, (unsigned long long)emu_stat_u64("pins"));
	}

	step("Freed while registered: revocation event, then a fresh registration");
	if (gdirect_reg_get(g, (void *)d, 1 * MiB, 0, &stale))
		return fail("registration held across the free");
	gdirect_reg_info(stale, &ri);
	gdirect_stats(g, &st);
	{
		uint64_t inv0 = st.inv_kernel;
		int evs;

		t0 = now_ns();
		cuMemFree(d);
		t = now_ns() - t0;
		evs = gdirect_process_events(g);
		gdirect_reg_info(stale, &ri2);
		gdirect_stats(g, &st);
		ioctl(efd, GDEDU_IOC_STATS, &es);
		printf("    cuMemFree in %.0f us: gdirect.ko's free callback revoked the pins; "
		       "libgdirect read %d revocation event(s)\n", t / 1e3, evs);
		printf("    the held registration is now %s; inv_kernel %llu -> %llu; "
		       "gdirect_edu's cached pin invalidated (%llu)\n",
		       ri2.valid ? "STILL VALID" : "invalid", (unsigned long long)inv0,
		       (unsigned long long)st.inv_kernel, (unsigned long long)es.invalidations);
		if (ri2.valid || st.inv_kernel <= inv0 || es.invalidations < 1)
			return fail("revocation seen");
	}
	if (cuMemAlloc(&d2, BUF))
		return fail("cuMemAlloc again");
	cuPointerGetAttribute(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, d2);
	printf("    cuMemAlloc again: %s VA 0x%llx, BUFFER_ID %llu (was %llu)\n",
	       d2 == d ? "the same" : "another", d2, id2, id);
	if (gdirect_reg_get(g, (void *)d2, 1 * MiB, 0, &r))
		return fail("registration of the new buffer");
	gdirect_reg_info(r, &ri2);
	pattern(pat, 64 * KiB, 4);
	gdirect_copy_to_mapping(gdirect_reg_map(r, (void *)d2), pat, 64 * KiB);
	cuMemcpyDtoH(back, d2, 64 * KiB);
	printf("    gdirect_reg_get: a fresh registration (handle %llu, the stale one was %llu);\n"
	       "    bytes written through it are what CUDA reads from the new buffer: %s\n",
	       (unsigned long long)ri2.kernel_handle, (unsigned long long)ri.kernel_handle,
	       memcmp(back, pat, 64 * KiB) ? "NO" : "yes");
	if (!ri2.valid || r == stale || ri2.kernel_handle == ri.kernel_handle ||
	    memcmp(back, pat, 64 * KiB))
		return fail("a fresh registration, never the stale one");
	gdirect_reg_put(r);
	gdirect_reg_put(stale);
	cuMemFree(d2);
	close(efd);

	step("A working set larger than BAR1: evict-and-retry, no failed operation");
	{
		enum { NMAX = 64 };
		static CUdeviceptr ws[NMAX];
		uint64_t want = info.bar1_size + 32 * MiB;
		int nb = (int)(want / (8 * MiB)), failed = 0, ops = 0;
		uint64_t ev0;

		if (nb > NMAX || (uint64_t)nb * 8 * MiB + 16 * MiB > info.mem_size)
			return fail("GPU memory too small for a working set larger than BAR1");
		for (int i = 0; i < nb; i++)
			if (cuMemAlloc(&ws[i], 8 * MiB))
				return fail("cuMemAlloc of the working set");
		gdirect_stats(g, &st);
		ev0 = st.evictions_bar;
		pattern(pat, 64 * KiB, 5);
		t0 = now_ns();
		for (int round = 0; round < 2; round++)
			for (int i = 0; i < nb; i++) {
				ops++;
				if (gdirect_reg_get(g, (void *)ws[i], 8 * MiB, 0, &r)) {
					failed++;
					printf("    gdirect_reg_get: %s\n", gdirect_errmsg());
					continue;
				}
				gdirect_copy_to_mapping(gdirect_reg_map(r, (void *)ws[i]), pat, 64 * KiB);
				gdirect_reg_put(r);
			}
		t = now_ns() - t0;
		gdirect_stats(g, &st);
		printf("    %d buffers of 8 MiB (%llu MiB) through a %llu MiB BAR1, twice round: "
		       "%d registrations, %d failed, %llu evictions for BAR space, %.1f ms\n",
		       nb, mib((uint64_t)nb * 8 * MiB), mib(info.bar1_size), ops, failed,
		       (unsigned long long)(st.evictions_bar - ev0), t / 1e6);
		printf("    (each eviction answered a pin that gdirect.ko refused for want of BAR1:\n"
		       "    its pin_failures below; none reached the caller)\n");
		printf("    now pinned: %llu regions, %llu MiB; BAR1 used %llu MiB\n",
		       (unsigned long long)st.regions, mib(st.bytes_pinned), mib(emu_stat_u64("bar1_used")));
		if (failed || st.evictions_bar == ev0)
			return fail("every operation succeeds, through evictions");
		for (int i = 0; i < nb; i++)
			cuMemFree(ws[i]);
	}

	step("`gdirect stat`: this process's counters, as the tool shows them");
	gdirect_flush(g);
	/* One publishing period (GDIRECT_PUBLISH_INTERVAL_MS) for the last counts. */
	usleep(300 * 1000);
	fflush(stdout);
	if (system("gdirect stat | sed 's/^/    /'"))
		return fail("gdirect stat");
	gdirect_ctx_destroy(g);
	printf("\nprocess exit: the CUDA file closes and whatever is left is unpinned\n");
	return 0;
}
