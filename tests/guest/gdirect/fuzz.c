// SPDX-License-Identifier: MIT
/*
 * fuzz.c - a bounded ioctl/mmap/read fuzzer for /dev/gdirect
 *
 * A fixed seed and a fixed count of random and boundary inputs: valid and
 * invalid commands, addresses around real allocations and at the edges of
 * the address space, sizes around 64 KiB and 1 TiB, stray flags, tokens
 * and reserved fields, handles live, dead and made up, bad and partly
 * mapped argument pointers, injected provider failures, and memory freed
 * under live registrations.  Every call must succeed or fail with an
 * errno that docs/driver.md lists; the guest must not crash (the harness
 * checks its log), and nothing may stay pinned afterwards.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gdt.h"

#define CALLS		6000
#define MAX_HANDLES	256

static const int documented[] = {
	EPERM, EFAULT, EINVAL, ENOENT, ENOTTY, ENOSPC, ENOMEM, EIO,
	EOPNOTSUPP, EBUSY, ENODEV, EPROTO, ESTALE, EACCES, EAGAIN,
};

static int fd;
static uint8_t *edge;		/* a page followed by an unmapped page */
static CUdeviceptr gpu[4];
static uint64_t handles[MAX_HANDLES];
static int nhandles, bad, calls_ok, calls_err;

static int is_documented(int e)
{
	for (size_t i = 0; i < sizeof(documented) / sizeof(documented[0]); i++)
		if (documented[i] == e)
			return 1;
	return 0;
}

static void check(const char *what, int ret, unsigned long cmd)
{
	if (!ret) {
		calls_ok++;
		return;
	}
	calls_err++;
	if (!is_documented(errno)) {
		bad++;
		tap_diag("%s (cmd %#lx): undocumented errno %d (%s)", what, cmd,
			 errno, strerror(errno));
	}
}

static uint64_t pick_addr(void)
{
	CUdeviceptr g = gpu[gdt_rand() % 4];
	static const uint64_t edges[] = {
		0, 1, 0xffff, 0x10000, UINT64_MAX, UINT64_MAX - 0xffff,
		1ULL << 47, 1ULL << 63,
	};

	switch (gdt_rand() % 6) {
	case 0:
		return edges[gdt_rand() % 8];
	case 1:
		return gdt_rand();
	default:
		return g + (gdt_rand() % 5) * GDT_KB64 - 2 + gdt_rand() % 5;
	}
}

static uint64_t pick_size(void)
{
	static const uint64_t sizes[] = {
		0, 1, 4095, 4096, 0xffff, 0x10000, 0x10001, 4 * GDT_KB64,
		GDT_MB, GDT_MB + 1, 1ULL << 40, (1ULL << 40) + 1, UINT64_MAX,
	};

	return gdt_rand() % 4 ? sizes[gdt_rand() % 13] : gdt_rand();
}

static uint64_t pick_handle(void)
{
	if (nhandles && gdt_rand() % 3)
		return handles[gdt_rand() % nhandles];
	switch (gdt_rand() % 4) {
	case 0: return 0;
	case 1: return UINT64_MAX;
	case 2: return 1 + gdt_rand() % 64;
	default: return gdt_rand();
	}
}

/* Argument pointer: a good buffer, NULL, garbage, or straddling a hole. */
static void *pick_ptr(void *good, size_t len)
{
	switch (gdt_rand() % 16) {
	case 0: return NULL;
	case 1: return (void *)(uintptr_t)gdt_rand();
	case 2: return edge + 4096 - len / 2;
	default: return good;
	}
}

static void remember(uint64_t h)
{
	if (nhandles < MAX_HANDLES)
		handles[nhandles++] = h;
}

static void one_ioctl(void)
{
	union {
		struct gdirect_info info;
		struct gdirect_pin pin;
		struct gdirect_unpin unpin;
		struct gdirect_region_info ri;
		uint8_t raw[256];
	} u;
	unsigned long cmd;
	void *arg;
	int ret;

	for (size_t i = 0; i < sizeof(u.raw); i++)
		u.raw[i] = gdt_rand();
	switch (gdt_rand() % 8) {
	case 0:
		cmd = GDIRECT_IOC_INFO;
		break;
	case 1:
	case 2:
	case 3:
		cmd = GDIRECT_IOC_PIN;
		u.pin.addr = pick_addr();
		u.pin.size = pick_size();
		u.pin.flags = gdt_rand() % 4 ? gdt_rand() % 2 : gdt_rand();
		u.pin.p2p_token = gdt_rand() % 4 ? 0 : gdt_rand();
		u.pin.va_space = gdt_rand() % 4 ? 0 : gdt_rand();
		u.pin.reserved = gdt_rand() % 8 ? 0 : gdt_rand();
		break;
	case 4:
		cmd = GDIRECT_IOC_UNPIN;
		u.unpin.handle = pick_handle();
		break;
	case 5:
		cmd = GDIRECT_IOC_REGION_INFO;
		u.ri.handle = pick_handle();
		break;
	case 6:
		cmd = _IOC(gdt_rand() % 4, 'G', gdt_rand() % 16,
			   gdt_rand() % 256);
		break;
	default:
		cmd = (uint32_t)gdt_rand();
		break;
	}
	arg = pick_ptr(&u, _IOC_SIZE(cmd) ? _IOC_SIZE(cmd) : 8);
	ret = ioctl(fd, cmd, arg);
	check("ioctl", ret, cmd);
	if (!ret && cmd == GDIRECT_IOC_PIN && arg == &u)
		remember(u.pin.handle);
}

static void one_mmap(void)
{
	uint64_t off;
	size_t len = (1 + gdt_rand() % 20) * 4096;
	int prot = gdt_rand() % 3 ? PROT_READ : PROT_READ | PROT_WRITE;
	void *m;

	switch (gdt_rand() % 4) {
	case 0:
		off = (gdt_rand() % 80) * 4096;
		break;
	case 1:
		off = (pick_handle() << 40) + (gdt_rand() % 20) * 4096;
		break;
	default:
		off = (gdt_rand() & ~0xfffULL) & ((1ULL << 62) - 1);
		break;
	}
	m = mmap(NULL, len, prot, MAP_SHARED, fd, off);
	check("mmap", m == MAP_FAILED ? -1 : 0, off);
	if (m != MAP_FAILED) {
		gdt_faults(m, prot & PROT_WRITE);
		munmap(m, len);
	}
}

static void one_other(void)
{
	uint8_t buf[200];
	static const char *const injections[] = {
		"1 5", "1 12", "1 22", "1 16", "1 19", "1 524", "2 12",
	};
	int s;

	switch (gdt_rand() % 4) {
	case 0:
		check("read", read(fd, pick_ptr(buf, 64), gdt_rand() % 200) < 0 ?
		      -1 : 0, 0);
		break;
	case 1:
		gdt_emu_knob("fail_next", injections[gdt_rand() % 7]);
		break;
	default:
		/* Free and reallocate: live registrations get revoked. */
		s = gdt_rand() % 4;
		gdt_free(gpu[s]);
		gpu[s] = gdt_alloc((1 + gdt_rand() % 8) * GDT_KB64);
		break;
	}
}

static void body(void)
{
	if (!tap_ok(gdt_cuda_init() == 0, "CUDA context"))
		return;
	fd = open("/dev/gdirect", O_RDWR | O_NONBLOCK);
	edge = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!tap_ok(fd >= 0 && edge != MAP_FAILED, "open, guard page"))
		return;
	munmap(edge + 4096, 4096);
	for (int i = 0; i < 4; i++)
		gpu[i] = gdt_alloc(4 * GDT_KB64);

	gdt_srand(0x6764697265637421ULL);
	for (int i = 0; i < CALLS; i++) {
		unsigned int what = gdt_rand() % 16;

		if (what < 12)
			one_ioctl();
		else if (what < 14)
			one_mmap();
		else
			one_other();
	}
	gdt_emu_knob("fail_next", "0 5");
	tap_ok(!bad, "%d calls: %d succeeded, %d failed, %d with an undocumented errno",
	       CALLS, calls_ok, calls_err, bad);
	tap_ok(calls_ok > 100 && calls_err > 100,
	       "both successes and failures were exercised");
	for (int i = 0; i < nhandles; i++)
		gdt_unpin(fd, handles[i]);
	for (int i = 0; i < 4; i++)
		gdt_free(gpu[i]);
	tap_ok(close(fd) == 0 && gdt_quiet(), "nothing pinned after close");
}

int main(void)
{
	return gdt_main(NULL, 0, body);
}
