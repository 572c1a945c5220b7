// SPDX-License-Identifier: MIT
/*
 * kapi.c - the in-kernel API, call by call, through
 * gdirect_edu's PIN ioctl (which hands its arguments to gdirect_pin() as
 * they are), including each error return; the deprecated token path,
 * from another process, through both the user and the kernel API; and,
 * through the test-only gdirect_kapitest.ko, gdirect_dma_unmap() alone and
 * racing gdirect_unpin() (two unmappers of one region), and a bracket's
 * gdirect_dma_end() racing gdirect_unpin().
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdirect_edu.h"
#include "gdt.h"
#include "guest_harness.h"
#include "nvp2p_emu.h"

static int efd;

static int kpin(uint64_t addr, uint64_t size, uint32_t flags, int owner,
		uint64_t token, uint32_t va_space, struct gdedu_pin *out)
{
	struct gdedu_pin p = {
		.gpu_addr = addr, .size = size, .flags = flags,
		.owner_pid = owner, .p2p_token = token, .va_space = va_space,
	};
	int ret = ioctl(efd, GDEDU_IOC_PIN, &p) ? -errno : 0;

	if (out)
		*out = p;
	return ret;
}

static int kunpin(uint64_t addr)
{
	struct gdedu_unpin u = { .gpu_addr = addr };

	return ioctl(efd, GDEDU_IOC_UNPIN, &u) ? -errno : 0;
}

/* GPU memory straight from the emulator, so this file's tokens apply. */
static uint64_t emu_alloc(int fd, uint64_t size)
{
	struct nvp2p_emu_alloc a = { .size = size };
	uint8_t *va = mmap(NULL, size + GDT_KB64, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (va == MAP_FAILED)
		return 0;
	a.va = ((uintptr_t)va + GDT_KB64 - 1) & ~(GDT_KB64 - 1);
	return ioctl(fd, NVP2P_EMU_IOC_ALLOC, &a) ? 0 : a.va;
}

static void test_tokens(void)
{
	struct nvp2p_emu_tokens t = { 0 };
	int sv[2], status, res[4] = { -1, -1, -1, -1 };
	int mfd = open(NVP2P_EMU_DEVICE, O_RDWR);
	uint64_t va = mfd >= 0 ? emu_alloc(mfd, 2 * GDT_KB64) : 0;
	pid_t pid;

	if (!tap_ok(va && !ioctl(mfd, NVP2P_EMU_IOC_TOKENS, &t) &&
		    (t.p2p_token || t.va_space), "emulator memory with tokens")) {
		if (mfd >= 0)
			close(mfd);
		return;
	}
	if (pipe(sv))
		return;
	pid = fork();
	if (pid == 0) {
		/* Another process: with the tokens it may pin, without not. */
		struct gdirect_pin p = {
			.addr = va, .size = 4096,
			.p2p_token = t.p2p_token, .va_space = t.va_space,
		};
		int gfd = open("/dev/gdirect", O_RDWR);

		efd = open(GDEDU_DEVICE, O_RDWR);
		res[0] = gdt_pin(gfd, va, 4096, 0, NULL);
		res[1] = ioctl(gfd, GDIRECT_IOC_PIN, &p) ? -errno : 0;
		res[2] = kpin(va, 4096, 0, 0, 0, 0, NULL);
		res[3] = kpin(va + GDT_KB64, 4096, 0, 0, t.p2p_token,
			      t.va_space, NULL);
		if (write(sv[1], res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(0);	/* pins released at exit, from the pinning process */
	}
	close(sv[1]);
	if (read(sv[0], res, sizeof(res)) != sizeof(res))
		res[0] = 1;
	waitpid(pid, &status, 0);
	close(sv[0]);
	tap_ok(res[0] == -EINVAL, "user PIN of another process's memory without tokens: EINVAL (%d)", res[0]);
	tap_ok(res[1] == 0, "user PIN with its legacy tokens (deprecated): %d", res[1]);
	tap_ok(res[2] == -EINVAL, "gdirect_pin of another process's memory without tokens: EINVAL (%d)", res[2]);
	tap_ok(res[3] == 0, "gdirect_pin with legacy tokens: %d", res[3]);
	tap_ok(gdt_quiet(), "token pins released when that process exited");

	guest_set_param("gdirect", "allow_tokens", "N");
	tap_ok(kpin(va, 4096, 0, 0, t.p2p_token, t.va_space, NULL) == -EPERM,
	       "gdirect_pin with tokens when allow_tokens=N: EPERM");
	guest_set_param("gdirect", "allow_tokens", "Y");
	close(mfd);
	tap_ok(gdt_quiet() && gdt_emu("allocations") == 0,
	       "emulator memory freed with its file");
}

static void kt_show_result(void)
{
	char line[128];
	FILE *f = fopen(GDT_KT_DIR "result", "r");

	while (f && fgets(line, sizeof(line), f))
		printf("# kapitest: %s", line);
	if (f)
		fclose(f);
}

/*
 * A driver closes a bracket (gdirect_dma_end(), from its completion
 * interrupt, say) while another thread unpins.  The unpin waits only
 * until no bracket is counted: once the end has counted its bracket out,
 * the region may be freed, so the end must not touch it after that.
 * gdirect's debug knob holds the end just after it counted out; the debug
 * build counts a wake-up made on a freed region (dbg_freed_wakes), which
 * KASAN reports as a use-after-free under the debug kernel.
 */
static void test_end_race(CUdeviceptr buf)
{
	int64_t freed = gdt_gd_stat("dbg_freed_wakes");
	int ret;

	if (freed < 0 ||
	    guest_set_param("gdirect", "dbg_dma_end_delay_ms", "500")) {
		tap_skip("gdirect_dma_end racing gdirect_unpin",
			 "gdirect.ko built without GDIRECT_DEBUG_KNOBS");
		return;
	}
	ret = gdt_kt_run("end-race", buf, 2 * GDT_KB64);
	guest_set_param("gdirect", "dbg_dma_end_delay_ms", "0");
	kt_show_result();
	tap_ok(ret == 0 && gdt_gd_stat("dbg_freed_wakes") == freed &&
	       gdt_emu("pins") == 0 && gdt_emu("dma_maps") == 0,
	       "gdirect_dma_end racing gdirect_unpin: no wake-up on a freed region (%lld -> %lld)",
	       (long long)freed, (long long)gdt_gd_stat("dbg_freed_wakes"));
}

/* gdirect_dma_unmap(): for a driver whose device goes away. */
static void test_dma_unmap(void)
{
	CUdeviceptr buf = gdt_alloc(2 * GDT_KB64);
	uint64_t stale = gdt_emu("stale_unmaps");
	int64_t waits = gdt_gd_stat("unmap_waits");
	struct gdt_release rel;
	int ret;

	if (system("insmod /modules/gdirect_kapitest.ko") != 0) {
		tap_skip("gdirect_dma_unmap", "gdirect_kapitest.ko did not load");
		tap_skip("gdirect_dma_unmap racing gdirect_unpin",
			 "gdirect_kapitest.ko did not load");
		tap_skip("DMA brackets from interrupt contexts",
			 "gdirect_kapitest.ko did not load");
		tap_skip("gdirect_dma_end racing gdirect_unpin",
			 "gdirect_kapitest.ko did not load");
		gdt_free(buf);
		return;
	}
	ret = gdt_kt_run("unmap", buf, 2 * GDT_KB64);
	kt_show_result();
	tap_ok(ret == 0 && gdt_emu("pins") == 0 && gdt_emu("dma_maps") == 0,
	       "gdirect_dma_unmap: DMA brackets then fail with ENODEV, a second unmap is a no-op, the unpin still puts (%d)",
	       ret);
	/*
	 * The thread's unmap held open (a minute at most) until the unpin
	 * is seen waiting for it: the window is closed by the test, not by
	 * a clock.
	 */
	gdt_emu_knob("unmap_delay_ms", "60000");
	ret = gdt_kt_run("race-start", buf, 2 * GDT_KB64);
	if (!ret)
		gdt_emu_wait("unmaps_in_flight", 1, 30000);
	if (!ret && !gdt_release_when(&rel, "unmap_delay_ms", "unmap_waits", waits + 1)) {
		ret = gdt_kt_run("race-unpin", 0, 0);
		gdt_release_join(&rel);
	}
	gdt_emu_knob("unmap_delay_ms", "0");
	kt_show_result();
	tap_ok(ret == 0 && gdt_gd_stat("unmap_waits") == waits + 1 &&
	       gdt_emu("stale_unmaps") == stale && gdt_emu("pins") == 0 &&
	       gdt_emu("dma_maps") == 0,
	       "an unpin racing gdirect_dma_unmap waits for its unmap, then puts: one unmap, none on a dead table");
	/*
	 * A NIC driver opens and closes brackets from its submission path,
	 * its NAPI poll and its completion interrupt.  The kapitest result
	 * says each ran in the context it names; a lock not safe there is
	 * lockdep's to report (the debug-kernel lane).
	 */
	ret = gdt_kt_run("irq", buf, 2 * GDT_KB64);
	kt_show_result();
	tap_ok(ret == 0 && gdt_emu("pins") == 0 && gdt_emu("dma_maps") == 0,
	       "DMA brackets from process context, a softirq and a hard interrupt (%d)",
	       ret);
	test_end_race(buf);
	if (system("rmmod gdirect_kapitest") != 0)
		tap_ok(0, "rmmod gdirect_kapitest");
	gdt_free(buf);
}

/*
 * Revocation through the kernel API.  A pin with a peer is two pins of
 * one range in the provider: the persistent one mapped for the peer and
 * one with a free callback, never mapped.  The free runs only the second
 * one's callback, which makes the region stale (the invalidate callback,
 * DMA brackets refused); the persistent pin keeps the GPU memory
 * allocated until gdirect_unpin() puts it, as NVIDIA's driver keeps a
 * persistent pin's memory through the duplicate of its handle.
 */
static void test_revoke(void)
{
	CUdeviceptr buf = gdt_alloc(GDT_KB64);
	uint64_t used = gdt_emu("mem_used");
	int64_t stale = gdt_gd_stat("stale_peer_pins");
	struct gdedu_stats s;
	int ret;

	ret = kpin(buf, GDT_KB64, 0, 0, 0, 0, NULL);
	tap_ok(buf && ret == 0 && gdt_emu("pins") == 2 &&
	       gdt_emu("dma_maps") == 1,
	       "pinned before the free: two pins of one range, one mapped");
	gdt_emu_knob("callback_delay_ms", "10");
	gdt_free(buf);
	gdt_emu_knob("callback_delay_ms", "0");
	memset(&s, 0, sizeof(s));
	ioctl(efd, GDEDU_IOC_STATS, &s);
	tap_ok(s.invalidations == 1 &&
	       gdt_gd_stat("stale_peer_pins") == stale + 1,
	       "invalidate callback called once; the region is stale");
	tap_ok(gdt_emu("pins") == 1 && gdt_emu("dma_maps") == 1 &&
	       gdt_emu("mem_used") == used,
	       "the persistent pin and its mapping hold the GPU memory (%llu pins, %llu bytes used, %llu before)",
	       (unsigned long long)gdt_emu("pins"),
	       (unsigned long long)gdt_emu("mem_used"),
	       (unsigned long long)used);
	tap_ok(kunpin(buf) == 0 && gdt_quiet() && gdt_emu("mem_used") < used,
	       "gdirect_unpin of a stale region puts it; the memory is freed");
}

/* The calls on one buffer of one file, and their errors, in one process. */
static void basics(void)
{
	struct gdedu_pin p;
	CUdeviceptr buf;
	pid_t other;
	int ret;

	if (!tap_ok(gdt_cuda_init() == 0, "CUDA context"))
		return;
	efd = open(GDEDU_DEVICE, O_RDWR);
	buf = gdt_alloc(4 * GDT_KB64);
	if (!tap_ok(efd >= 0 && buf, "open " GDEDU_DEVICE ", GPU memory"))
		return;

	ret = kpin(buf + 10, 3 * GDT_KB64, 0, 0, 0, 0, &p);
	tap_ok(ret == 0 && p.pinned_addr == buf && p.pinned_size == 4 * GDT_KB64 &&
	       p.entries == 4, "gdirect_pin with a peer: 4 DMA addresses");
	tap_ok(gdt_gd_stat("dma_maps") >= 1 && gdt_emu("dma_maps") >= 1,
	       "nvidia_p2p_dma_map_pages was called");
	tap_ok(kunpin(buf) == 0 && gdt_emu("pins") == 0 &&
	       gdt_emu("dma_maps") == 0, "gdirect_unpin frees pin and mapping");
	tap_ok(kunpin(buf) == -ENOENT, "nothing cached any more");

	ret = kpin(buf, GDT_KB64, GDEDU_PIN_PERSISTENT, getpid(), 0, 0, &p);
	tap_ok(ret == 0, "gdirect_pin persistent, owner given as self: %d", ret);
	kunpin(buf);

	tap_ok(kpin(buf, 0, 0, 0, 0, 0, NULL) == -EINVAL, "size 0: EINVAL");
	tap_ok(kpin(buf, 4096, 0x40, 0, 0, 0, NULL) == -EINVAL,
	       "unknown flag: EINVAL");
	tap_ok(kpin(UINT64_MAX - 10, 20, 0, 0, 0, 0, NULL) == -EINVAL,
	       "wrapping range: EINVAL");
	tap_ok(kpin(buf, 4096, GDEDU_PIN_PERSISTENT, 0, 5, 1, NULL) == -EINVAL,
	       "persistent with tokens: EINVAL");
	tap_ok(kpin(0x20000, 4096, 0, 0, 0, 0, NULL) == -EINVAL,
	       "not GPU memory: EINVAL (provider)");
	other = fork();
	if (other == 0) {
		pause();
		_exit(0);
	}
	tap_ok(kpin(buf, 4096, 0, other, 0, 0, NULL) == -EPERM,
	       "another process as owner, no tokens: EPERM");
	kill(other, SIGKILL);
	waitpid(other, NULL, 0);
	gdt_emu_knob("fail_next", "1 12");
	tap_ok(kpin(buf, 4096, 0, 0, 0, 0, NULL) == -ENOMEM,
	       "provider out of BAR1: ENOMEM");
	gdt_emu_knob("fail_next", "1 5");
	tap_ok(kpin(buf, 4096, 0, 0, 0, 0, NULL) == -EIO, "provider EIO: EIO");
	gdt_emu_knob("fail_next", "1 524");
	tap_ok(kpin(buf, 4096, 0, 0, 0, 0, NULL) == -EOPNOTSUPP,
	       "provider ENOTSUPP: EOPNOTSUPP");
	tap_ok(gdt_emu("pins") == 0, "failed pins leave nothing pinned");
	gdt_free(buf);
	close(efd);
}

/*
 * The tests that pin buffers of their own or load a module each in a
 * process of its own, with its own CUDA context and edu file: a failure
 * cannot leave a pin or a DMA mapping to the next.  This process makes no
 * CUDA context, so its children can.
 */
static void body(void)
{
	gdt_run_child("basics", basics);
	gdt_run_own("test_dma_unmap", test_dma_unmap, GDEDU_DEVICE, &efd, NULL);
	gdt_run_own("test_revoke", test_revoke, GDEDU_DEVICE, &efd, NULL);
	gdt_run_own("test_tokens", test_tokens, GDEDU_DEVICE, &efd, NULL);
}

int main(void)
{
	return gdt_main(NULL, 1, body);
}
