// SPDX-License-Identifier: MIT
/*
 * p2p-test.c - the nv-p2p behaviours of nvp2p_emu.ko, driven through the
 * third-party test driver nvp2p_selftest.ko.  Run by nvp2p-emu-p2p.sh,
 * which loads both modules with a 64 MiB BAR1 of which 8 MiB is reserved.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <cuda.h>

#include "nv-p2p.h"
#include "nvp2p_emu.h"
#include "nvp2p_selftest_calls.h"
#include "gpumem.h"
#include "emu_knob.h"
#include "tap.h"

#define KB64 (64ULL << 10)
#define MB (1ULL << 20)
#define ENOTSUPP 524	/* the kernel's internal code, as nvidia.ko returns */

static int st_fd;

static void knob(const char *name, const char *val)
{
	if (emu_knob_set(name, val))
		tap_diag("write %s to knob %s: %s", val, name, strerror(errno));
}

/* The selftest driver's calls (nvp2p_selftest_calls.h) on st_fd. */
static int pin(uint32_t slot, uint32_t mode, uint64_t va, uint64_t len)
{
	return st_call_pin(st_fd, (struct st_pin){ .slot = slot, .mode = mode,
						   .va = va, .len = len });
}

static int pin_tok(uint32_t slot, uint64_t va, uint64_t len, uint64_t tok,
		   uint32_t vas)
{
	return st_call_pin(st_fd, (struct st_pin){ .slot = slot, .va = va,
						   .len = len, .p2p_token = tok,
						   .va_space = vas });
}

static int pin_flags(uint32_t slot, uint64_t va, uint64_t len, uint32_t flags)
{
	return st_call_pin(st_fd, (struct st_pin){ .slot = slot,
						   .mode = ST_PIN_PERSISTENT,
						   .va = va, .len = len,
						   .flags = flags });
}

static int put(uint32_t slot, uint32_t mode, uint64_t va, uint32_t flags)
{
	return st_call_put(st_fd, (struct st_put){ .slot = slot, .mode = mode,
						   .va = va, .flags = flags });
}

static struct st_slot_info info(uint32_t slot)
{
	return st_call_info(st_fd, slot);
}

static int dma(unsigned long cmd, uint32_t slot, uint32_t mode)
{
	return st_call_dma(st_fd, cmd, slot, mode);
}

static int edu(uint32_t slot, uint64_t off, uint32_t len, uint32_t seed)
{
	return st_call_edu(st_fd, slot, off, len, seed);
}

static int misc(uint32_t which)
{
	return st_call_misc(st_fd, which);
}

/* The page-table version the loaded emulator was built with. */
static uint32_t pt_version(void)
{
	struct nvp2p_emu_info i = { 0 };
	int fd = open(NVP2P_EMU_DEVICE, O_RDWR);

	if (fd >= 0) {
		ioctl(fd, NVP2P_EMU_IOC_INFO, &i);
		close(fd);
	}
	return i.page_table_version;
}

/* The loaded emulator's tables have a flags field (version 2). */
static int has_flags;

/*
 * FORCE_BAR1_MAPPING, as NVIDIA's driver: refused with -ENOTSUPP unless
 * the platform is coherent (RmP2PGetPagesPersistent()), where it takes
 * the PCIe BAR1 path: a table that is not CPU-cacheable, for CPU mappings
 * only (nv-p2p.c refuses dma_map_pages of it).  Two checks, in @slot.
 */
static void check_force_bar1(int coh, uint32_t slot, uint64_t va)
{
	uint64_t pins = emu_stat_u64("pins");
	int ret = pin_flags(slot, va, KB64, NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING);
	struct st_slot_info i = info(slot);

	if (!coh) {
		tap_ok(ret == -ENOTSUPP && !i.live && emu_stat_u64("pins") == pins,
		       "PCIe: get_pages_persistent with FORCE_BAR1_MAPPING: -ENOTSUPP (%d), no pin", ret);
		tap_ok(pin_flags(slot, va, KB64, NVIDIA_P2P_FLAGS_DEFAULT) == 0 &&
		       put(slot, ST_PUT_PERSISTENT, va, 0) == 0,
		       "PCIe: the same pin without the flag succeeds");
		return;
	}
	tap_ok(ret == 0 && i.live && (!has_flags || i.flags == 0),
	       "coherent: get_pages_persistent with FORCE_BAR1_MAPPING (%d): BAR1 pages, not CPU-cacheable (%#x)",
	       ret, i.flags);
	tap_ok(dma(ST_IOC_DMA_MAP, slot, ST_DMA_EDU) == -ENOTSUPP &&
	       put(slot, ST_PUT_PERSISTENT, va, 0) == 0,
	       "coherent: dma_map_pages of the FORCE_BAR1_MAPPING table: -ENOTSUPP (CPU mappings only); put");
}

struct put_arg {
	uint64_t va;
	int ret;
	uint32_t callbacks_after;
};

static void *put_thread(void *p)
{
	struct put_arg *a = p;

	/*
	 * Once the free's callback is in flight (its delay, or the call):
	 * the put then either waits for it, or comes after the revocation;
	 * both return 0 with the callback counted.  A clock here would let
	 * a late free put first.
	 */
	emu_wait_stat("callbacks_in_flight", 1, 30000);
	a->ret = put(3, ST_PUT_NORMAL, a->va, 0);
	a->callbacks_after = info(3).callbacks;
	return NULL;
}

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr d, d2, big, big2;
	struct st_slot_info si;
	uint64_t bar_start, used0, misuse0, stale0;
	uint8_t pat[3000], back[3000];
	int coherent;

	tap_plan(77);
	st_fd = open("/dev/nvp2p_selftest", O_RDWR);
	if (!tap_ok(st_fd >= 0, "selftest driver bound to edu") ||
	    !tap_ok(cuInit(0) == CUDA_SUCCESS && cuDeviceGet(&dev, 0) == 0 &&
		    cuCtxCreate(&ctx, NULL, 0, dev) == 0, "CUDA context"))
		return tap_done();
	tap_ok(cuMemAlloc(&d, 4 * MB) == CUDA_SUCCESS, "allocate 4 MiB at 0x%llx", d);
	coherent = emu_stat_u64("coherent") == 1;
	/*
	 * The coherent lane boots the coherent flavour: were the emulator
	 * not a coherent platform's there, every cacheable path would go
	 * untested while the lane passed.
	 */
	{
		char fl[32] = "";

		if (guest_read("/etc/gdirect-flavour", fl, sizeof(fl)))
			fl[0] = '\0';
		else
			fl[strcspn(fl, "\n")] = '\0';
		if (fl[0])
			tap_ok(coherent == !strcmp(fl, "coherent"),
			       "flavour %s: the emulated GPU is %s", fl,
			       coherent ? "a coherent platform's" : "behind PCIe");
		else
			tap_skip("the platform the flavour builds", "no /etc/gdirect-flavour");
	}
	{
		int v = -1;
		CUresult r = cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, dev);

		tap_ok(r == CUDA_SUCCESS && v == coherent,
		       "CUDA: PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES %d, as the platform (%d)", v, r);
	}
	errno = 0;
	tap_ok(emu_knob_set("coherent", "2") != 0 && errno == EINVAL &&
	       emu_stat_u64("coherent") == (uint64_t)coherent,
	       "knob coherent: 2 refused (EINVAL), %d kept", coherent);

	/* Rejected inputs, each with its errno. */
	tap_ok(pin(0, ST_PIN_CALLBACK, d + 4096, KB64) == -EINVAL, "unaligned address: -EINVAL");
	tap_ok(pin(0, ST_PIN_CALLBACK, d, KB64 + 4096) == -EINVAL, "unaligned length: -EINVAL");
	tap_ok(pin(0, ST_PIN_CALLBACK, d, 0) == -EINVAL, "zero length: -EINVAL");
	tap_ok(pin(0, ST_PIN_NULL_CALLBACK, d, KB64) == -EINVAL, "NULL free callback: -EINVAL");
	tap_ok(pin(0, ST_PIN_NULL_TABLE, d, KB64) == -EINVAL, "NULL page_table pointer: -EINVAL");
	tap_ok(pin(0, ST_PIN_CALLBACK, d + 4 * MB, KB64) == -EINVAL, "address not allocated: -EINVAL");
	tap_ok(pin(0, ST_PIN_CALLBACK, d + 3 * MB, 2 * MB) == -EINVAL, "range past the allocation's end: -EINVAL");
	tap_ok(pin(0, ST_PIN_CALLBACK, 0xffffffffffff0000ULL, 0x20000) == -EINVAL, "range wrapping past 2^64: -EINVAL");
	tap_ok(pin_flags(0, d, KB64, 2) == -EINVAL, "persistent with unknown flags: -EINVAL");
	tap_ok(emu_stat_u64("pins") == 0 && emu_stat_u64("bar1_used") == 0, "no pin left by rejected calls");

	/* A pin and its page table. */
	tap_ok(pin(0, ST_PIN_CALLBACK, d, 2 * MB) == 0, "get_pages 2 MiB");
	si = info(0);
	tap_ok(si.live && si.version == pt_version() && si.compatible, "page table version 0x%08x as built, compatible", si.version);
	tap_ok(si.page_size == NVIDIA_P2P_PAGE_SIZE_64KB && si.entries == 32, "64 KiB pages, 32 entries");
	tap_ok(si.phys_last - si.phys0 == 31 * KB64 && si.uuid_set, "physical addresses contiguous in the BAR, GPU UUID set");
	has_flags = NVIDIA_P2P_MAJOR_VERSION(si.version) >= 2;
	if (has_flags)
		tap_ok(si.flags == (coherent ? NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE : 0),
		       "version 2 flags %#x: %s", si.flags, coherent ?
		       "CPU-cacheable (coherent platform)" : "not CPU-cacheable (PCIe)");
	else
		tap_skip("page-table flags", "version 1 tables have no flags field");
	bar_start = guest_bar2_start();
	tap_ok(emu_stat_u64("bar1_used") == 2 * MB && emu_stat_u64("pins") == 1, "BAR1 used 2 MiB, one pin");
	tap_ok(pin(1, ST_PIN_CALLBACK, d + MB, 2 * MB) == 0 && emu_stat_u64("bar1_used") == 3 * MB, "an overlapping pin shares BAR1 pages (3 MiB used)");
	tap_ok(put(1, ST_PUT_NORMAL, d + MB, 0) == 0 && emu_stat_u64("bar1_used") == 2 * MB, "put of the overlapping pin keeps the shared pages");

	/* DMA mapping for edu, and a peer-to-peer write. */
	tap_ok(dma(ST_IOC_DMA_MAP, 0, ST_DMA_NULL_PEER) == -EINVAL, "dma_map_pages with a NULL peer: -EINVAL");
	tap_ok(dma(ST_IOC_DMA_MAP, 0, ST_DMA_EDU) == 0, "dma_map_pages for edu");
	si = info(0);
	tap_ok(si.dma_live && si.dma_version == NVIDIA_P2P_DMA_MAPPING_VERSION && si.dma_entries == 32, "DMA mapping version 0x%08x, 32 entries", si.dma_version);
	tap_ok(si.dma0 == si.phys0, "without an IOMMU the DMA address is the BAR address");
	tap_ok(edu(0, KB64 + 123, sizeof(pat), 42) == 0, "edu DMA'd 3000 bytes into GPU memory, across a chunk boundary");
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = st_pattern(42, i);
	tap_ok(cuMemcpyDtoH(back, d + KB64 + 123, sizeof(back)) == 0 && !memcmp(pat, back, sizeof(pat)), "the GPU reads back edu's pattern");
	tap_ok(guest_host_has(si.phys0 - bar_start + KB64 + 123, pat, sizeof(pat)), "the host's backing file holds edu's pattern");
	tap_ok(dma(ST_IOC_DMA_UNMAP, 0, ST_DMA_WRONG_PEER) == -EINVAL, "dma_unmap_pages naming another peer: -EINVAL");
	tap_ok(dma(ST_IOC_DMA_UNMAP, 0, ST_DMA_BOGUS_MAPPING) == 0, "dma_unmap_pages of an unknown mapping: 0");
	tap_ok(dma(ST_IOC_DMA_UNMAP, 0, ST_DMA_EDU) == 0 && emu_stat_u64("dma_maps") == 0, "dma_unmap_pages");
	tap_ok(put(0, ST_PUT_NORMAL, d + KB64, 0) == -EINVAL, "put_pages with the wrong address: -EINVAL");
	/*
	 * Misuse: calls that NVIDIA's driver answers by reading state that is
	 * freed or absent.  Each is counted in "misuse" and is a WARN unless
	 * announced in expect_misuse first, as here.
	 */
	misuse0 = emu_stat_u64("misuse");
	knob("expect_misuse", "1");
	tap_ok(put(0, ST_PUT_PERSISTENT, d, 0) == -EINVAL && emu_stat_u64("misuse") == misuse0 + 1 && emu_stat_u64("expect_misuse") == 0, "put_pages_persistent of a callback pin: -EINVAL, counted in misuse");
	tap_ok(put(0, ST_PUT_NORMAL, d, 0) == 0 && emu_stat_u64("pins") == 0 && emu_stat_u64("bar1_used") == 0, "put_pages releases the pin and its BAR1");
	knob("expect_misuse", "1");
	tap_ok(dma(ST_IOC_DMA_MAP, 0, ST_DMA_DEAD) == -EINVAL && emu_stat_u64("misuse") == misuse0 + 2 && emu_stat_u64("expect_misuse") == 0, "dma_map_pages of a table put already: -EINVAL, counted in misuse");

	/* Revocation when the owner frees the memory. */
	used0 = emu_stat_u64("callbacks");
	tap_ok(pin(2, ST_PIN_CALLBACK, d, KB64) == 0 && dma(ST_IOC_DMA_MAP, 2, ST_DMA_EDU) == 0, "pin and map again");
	tap_ok(cuMemFree(d) == 0 && info(2).callbacks == 1 && !info(2).live, "cuMemFree fires the free callback");
	tap_ok(emu_stat_u64("callbacks") == used0 + 1 && emu_stat_u64("pins") == 0 && emu_stat_u64("dma_maps") == 0 && emu_stat_u64("bar1_used") == 0, "after the callback: pin, DMA mapping and BAR1 released");
	tap_ok(put(2, ST_PUT_NORMAL, d, 0) == 0, "put_pages after revocation returns 0");
	stale0 = emu_stat_u64("stale_unmaps");
	knob("expect_misuse", "3");
	tap_ok(dma(ST_IOC_DMA_MAP, 2, ST_DMA_DEAD) == -EINVAL, "dma_map_pages of a revoked table: -EINVAL");
	tap_ok(put(2, ST_PUT_DEAD_PERSISTENT, d, 0) == -EINVAL, "put_pages_persistent of a revoked table: -EINVAL");
	tap_ok(dma(ST_IOC_DMA_UNMAP, 2, ST_DMA_DEAD) == 0 && emu_stat_u64("stale_unmaps") == stale0 + 1, "dma_unmap_pages of a revoked table's mapping: 0, counted in stale_unmaps");
	tap_ok(emu_stat_u64("misuse") == misuse0 + 5 && emu_stat_u64("expect_misuse") == 0, "the three counted in misuse, as announced");

	/* put_pages racing a callback in flight waits for it. */
	knob("callback_delay_ms", "500");
	{
		pthread_t t;
		struct put_arg a;

		cuMemAlloc(&d2, MB);
		a.va = d2;
		tap_ok(pin(3, ST_PIN_CALLBACK, d2, MB) == 0, "pin for the race");
		pthread_create(&t, NULL, put_thread, &a);
		cuMemFree(d2);
		pthread_join(t, NULL);
		tap_ok(a.ret == 0 && a.callbacks_after == 1, "put_pages during the callback waited for it and returned 0");
	}
	knob("callback_delay_ms", "0");

	/*
	 * Persistent pins survive the free.  2 MiB: an allocation of its own
	 * pages under either placement (CUDA_EMU_PLACEMENT=h100 packs smaller
	 * ones into shared 2 MiB pages, which outlive a free).
	 */
	cuMemAlloc(&d, 2 * MB);
	memset(pat, 0x5a, sizeof(pat));
	cuMemcpyHtoD(d, pat, sizeof(pat));
	used0 = emu_stat_u64("mem_used");
	tap_ok(pin_flags(4, d, 2 * MB, NVIDIA_P2P_FLAGS_DEFAULT) == 0, "get_pages_persistent");
	si = info(4);
	check_force_bar1(coherent, 7, d);
	/*
	 * The other platform, through the knob, which later pins read: on a
	 * coherent one get_pages and get_pages_persistent give CPU-cacheable
	 * tables, on a GPU behind PCIe tables that are not.
	 */
	{
		uint32_t f_cb, f_pers;

		knob("coherent", coherent ? "0" : "1");
		tap_ok(pin(7, ST_PIN_CALLBACK, d + KB64, KB64) == 0 &&
		       pin_flags(8, d + KB64, KB64, NVIDIA_P2P_FLAGS_DEFAULT) == 0,
		       "%s platform: get_pages, get_pages_persistent", coherent ? "PCIe" : "coherent");
		f_cb = info(7).flags;
		f_pers = info(8).flags;
		if (has_flags)
			tap_ok(f_cb == f_pers && f_cb == (coherent ? 0 : NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE),
			       "their flags %#x and %#x: %s", f_cb, f_pers, coherent ? "not CPU-cacheable" : "CPU-cacheable");
		else
			tap_skip("the other platform's page-table flags", "version 1 tables have no flags field");
		check_force_bar1(!coherent, 10, d + KB64);
		tap_ok(dma(ST_IOC_DMA_MAP, 8, ST_DMA_EDU) == 0 && edu(8, 64, sizeof(pat), 9) == 0 &&
		       dma(ST_IOC_DMA_UNMAP, 8, ST_DMA_EDU) == 0,
		       "a default persistent table maps for edu and takes its DMA");
		put(7, ST_PUT_NORMAL, d + KB64, 0);
		put(8, ST_PUT_PERSISTENT, d + KB64, 0);
		knob("coherent", coherent ? "1" : "0");
	}
	tap_ok(cuMemFree(d) == 0 && info(4).live && info(4).callbacks == 0, "free of persistently pinned memory: no callback");
	tap_ok(emu_stat_u64("mem_used") == used0 && guest_host_has(si.phys0 - bar_start, pat, sizeof(pat)), "the memory and its data stay alive");
	tap_ok(put(4, ST_PUT_PERSISTENT, d, 1) == -EINVAL, "put_pages_persistent with flags: -EINVAL");
	tap_ok(put(4, ST_PUT_NORMAL, d, 0) == -EINVAL, "put_pages of a persistent pin: -EINVAL");
	tap_ok(put(4, ST_PUT_PERSISTENT, d, 0) == 0 && emu_stat_u64("mem_used") == used0 - 2 * MB, "put_pages_persistent frees the memory at last");
	/* NVIDIA's driver checks the flags, then returns 0 for a NULL table. */
	tap_ok(put(4, ST_PUT_PERSISTENT, d, 0) == 0, "put_pages_persistent of a NULL table: 0");
	tap_ok(put(4, ST_PUT_PERSISTENT, d, 1) == -EINVAL, "put_pages_persistent of a NULL table with flags: -EINVAL");

	/* BAR1 budget: 64 MiB with 8 reserved leaves 56 MiB for peers. */
	cuMemAlloc(&big, 48 * MB);
	cuMemAlloc(&big2, 16 * MB);
	tap_ok(pin(5, ST_PIN_CALLBACK, big, 48 * MB) == 0, "pin 48 MiB of the 56 MiB budget");
	tap_ok(pin(6, ST_PIN_CALLBACK, big2, 16 * MB) == -ENOMEM, "pin 16 MiB more: -ENOMEM (BAR1 exhausted)");
	tap_ok(put(5, ST_PUT_NORMAL, big, 0) == 0 && pin(6, ST_PIN_CALLBACK, big2, 16 * MB) == 0, "after an unpin the same pin succeeds");

	/* Ownership: with zero tokens only the owner may pin. */
	{
		pid_t pid = fork();
		int st = -1;

		if (pid == 0)
			_exit(pin(7, ST_PIN_CALLBACK, big, KB64) == -EINVAL ? 0 : 1);
		waitpid(pid, &st, 0);
		tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "another process cannot pin our memory with zero tokens");
	}
	/* Legacy tokens name the VA space, whoever calls. */
	{
		int fd = open(NVP2P_EMU_DEVICE, O_RDWR);
		struct nvp2p_emu_tokens t = { 0 };
		void *va = mmap(NULL, 2 * KB64, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct nvp2p_emu_alloc al = { .va = ((uint64_t)(uintptr_t)va + KB64 - 1) & ~(KB64 - 1), .size = KB64 };
		pid_t pid;
		int st = -1;

		ioctl(fd, NVP2P_EMU_IOC_TOKENS, &t);
		ioctl(fd, NVP2P_EMU_IOC_ALLOC, &al);
		pid = fork();
		if (pid == 0)
			_exit(pin_tok(7, al.va, KB64, t.p2p_token, t.va_space) == 0 &&
			      pin_tok(8, al.va, KB64, t.p2p_token ^ 1, t.va_space) == -EINVAL ? 0 : 1);
		waitpid(pid, &st, 0);
		tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "legacy tokens: the right token pins from another process, a wrong one is -EINVAL");
		close(fd);	/* the owner's fd closes: the token pin is revoked */
		tap_ok(info(7).callbacks == 1 && put(7, ST_PUT_NORMAL, al.va, 0) == 0, "closing the owner's fd fires the callback; put_pages then returns 0");
		munmap(va, 2 * KB64);
	}

	/*
	 * VMM memory: cuMemCreate with gpuDirectRDMACapable, mapped into a
	 * reservation, pins like any allocation; edu DMAs into it; the unmap
	 * revokes the pin.
	 */
	{
		CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
			.location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 } };
		CUmemAccessDesc acc = { { CU_MEM_LOCATION_TYPE_DEVICE, 0 },
					CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
		CUmemGenericAllocationHandle h = 0;
		CUdeviceptr va = 0;
		struct st_slot_info vi;

		prop.allocFlags.gpuDirectRDMACapable = 1;
		tap_ok(cuMemCreate(&h, 2 * MB, &prop, 0) == 0 && cuMemAddressReserve(&va, 4 * MB, 0, 0, 0) == 0 &&
		       cuMemMap(va, 2 * MB, 0, h, 0) == 0 && cuMemSetAccess(va, 2 * MB, &acc, 1) == 0,
		       "VMM: 2 MiB created RDMA-capable, reserved, mapped, access set");
		tap_ok(pin(11, ST_PIN_CALLBACK, va, 2 * MB) == 0 && dma(ST_IOC_DMA_MAP, 11, ST_DMA_EDU) == 0 &&
		       edu(11, 4096 + 5, sizeof(pat), 77) == 0, "VMM: get_pages, dma_map_pages, edu DMA into it");
		vi = info(11);
		for (size_t i = 0; i < sizeof(pat); i++)
			pat[i] = st_pattern(77, i);
		tap_ok(cuMemcpyDtoH(back, va + 4096 + 5, sizeof(back)) == 0 && !memcmp(pat, back, sizeof(pat)) &&
		       guest_host_has(vi.phys0 - bar_start + 4096 + 5, pat, sizeof(pat)),
		       "VMM: the GPU and the host's backing file hold edu's pattern");
		tap_ok(cuMemRelease(h) == 0 && info(11).live && cuMemUnmap(va, 2 * MB) == 0 &&
		       info(11).callbacks == 1 && !info(11).live && put(11, ST_PUT_NORMAL, va, 0) == 0 &&
		       cuMemAddressFree(va, 4 * MB) == 0,
		       "VMM: released, the pin lives until cuMemUnmap, which fires the callback");
	}

	/* Fault injection and the obsolete entry points. */
	knob("fail_next", "1 5");
	tap_ok(pin(9, ST_PIN_CALLBACK, big, KB64) == -EIO && pin(9, ST_PIN_CALLBACK, big, KB64) == 0, "fail_next injects -EIO once");
	knob("fail_next_dma_map", "1 12");
	tap_ok(dma(ST_IOC_DMA_MAP, 9, ST_DMA_EDU) == -ENOMEM && dma(ST_IOC_DMA_MAP, 9, ST_DMA_EDU) == 0 && emu_stat_u64("dma_maps") == 1, "fail_next_dma_map injects -ENOMEM into dma_map_pages only, once");
	tap_ok(misc(ST_MISC_INIT_MAPPING) == -ENOTSUPP && misc(ST_MISC_DESTROY_MAPPING) == -ENOTSUPP, "init_mapping and destroy_mapping: -ENOTSUPP");
	tap_ok(misc(ST_MISC_FREE_TABLE_NULL) == 0 && misc(ST_MISC_FREE_DMA_NULL) == 0, "free_page_table and free_dma_mapping are no-ops returning 0");

	/* Process exit: the CUDA fd closes and every remaining pin is revoked. */
	return tap_done();
}
