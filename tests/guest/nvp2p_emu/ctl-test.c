// SPDX-License-Identifier: MIT
/*
 * ctl-test.c - every call of /dev/nvp2p_emu with bad input: sizes,
 * alignment, ownership, overflow near 2^64.  Each must be refused with its
 * documented errno and leave nothing allocated.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "nvp2p_emu.h"
#include "tap.h"

#define KB64 (64ULL << 10)

static int fd;

static int call(unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

static int alloc(uint64_t va, uint64_t size)
{
	struct nvp2p_emu_alloc a = { .va = va, .size = size };

	return call(NVP2P_EMU_IOC_ALLOC, &a);
}

static int copy(uint64_t dst, uint64_t src, uint64_t size, uint32_t dir)
{
	struct nvp2p_emu_copy c = { .dst = dst, .src = src, .size = size, .dir = dir };

	return call(NVP2P_EMU_IOC_COPY, &c);
}

int main(void)
{
	struct nvp2p_emu_info info;
	struct nvp2p_emu_query q = { 0 };
	struct nvp2p_emu_free f = { 0 };
	char buf[256] = "x";
	uint64_t va, ro;
	void *res, *rw;

	tap_plan(25);
	fd = open(NVP2P_EMU_DEVICE, O_RDWR);
	tap_ok(fd >= 0 && call(NVP2P_EMU_IOC_INFO, &info) == 0 && info.abi_version == NVP2P_EMU_ABI_VERSION, "open and info");
	res = mmap(NULL, 8 * KB64, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rw = mmap(NULL, 4 * KB64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	va = ((uint64_t)(uintptr_t)res + KB64 - 1) & ~(KB64 - 1);
	ro = ((uint64_t)(uintptr_t)rw + KB64 - 1) & ~(KB64 - 1);

	tap_ok(alloc(va + 4096, KB64) == EINVAL, "alloc: unaligned address: EINVAL");
	tap_ok(alloc(va, KB64 + 1) == EINVAL, "alloc: unaligned size: EINVAL");
	tap_ok(alloc(va, 0) == EINVAL, "alloc: size 0: EINVAL");
	tap_ok(alloc(va, 0xffffffffffff0000ULL) == EINVAL, "alloc: size near 2^64 (wraps): EINVAL");
	tap_ok(alloc(0xffffffffffff0000ULL, 2 * KB64) == EINVAL, "alloc: address range wraps 2^64: EINVAL");
	tap_ok(alloc(va, 1ULL << 40) == ENOMEM, "alloc: more than the GPU has: ENOMEM");
	tap_ok(alloc(ro, KB64) == EINVAL, "alloc: VA accessible to the CPU (not reserved PROT_NONE): EINVAL");
	tap_ok(alloc(va, 16 * KB64) == EINVAL, "alloc: range beyond the reservation: EINVAL");
	tap_ok(alloc(va, 2 * KB64) == 0, "alloc: 128 KiB in the reservation");
	tap_ok(alloc(va + KB64, 2 * KB64) == EEXIST, "alloc: overlapping an allocation: EEXIST");

	tap_ok(copy(va, (uint64_t)(uintptr_t)buf, 2 * KB64 + 1, NVP2P_EMU_HTOD) == EINVAL, "copy: past the allocation: EINVAL");
	tap_ok(copy(va, (uint64_t)(uintptr_t)buf, UINT64_MAX, NVP2P_EMU_HTOD) == EINVAL, "copy: size 2^64-1: EINVAL");
	tap_ok(copy(va + KB64, (uint64_t)(uintptr_t)buf, 0xffffffffffff0000ULL, NVP2P_EMU_HTOD) == EINVAL, "copy: range wrapping 2^64: EINVAL");
	tap_ok(copy(va, 16, 64, NVP2P_EMU_HTOD) == EFAULT, "copy: bad user pointer: EFAULT");
	tap_ok(copy(va, (uint64_t)(uintptr_t)buf, 64, 99) == EINVAL, "copy: unknown direction: EINVAL");
	tap_ok(copy(ro, (uint64_t)(uintptr_t)buf, 64, NVP2P_EMU_HTOD) == EINVAL, "copy: not GPU memory: EINVAL");
	tap_ok(copy((uint64_t)(uintptr_t)buf, va, 256, NVP2P_EMU_DTOH) == 0 && buf[0] == 0, "copy: fresh memory reads as zeros");

	q.va = ro;
	tap_ok(call(NVP2P_EMU_IOC_QUERY, &q) == EINVAL, "query: unknown address: EINVAL");
	q.va = va + 100;
	tap_ok(call(NVP2P_EMU_IOC_QUERY, &q) == 0 && q.base == va && q.size == 2 * KB64, "query: inner pointer finds the allocation");
	f.va = va + KB64;
	tap_ok(call(NVP2P_EMU_IOC_FREE, &f) == EINVAL, "free: not the start of an allocation: EINVAL");
	tap_ok(call(_IO('E', 99), NULL) == ENOTTY, "unknown ioctl: ENOTTY");
	tap_ok(call(NVP2P_EMU_IOC_INFO, (void *)16) == EFAULT, "bad argument pointer: EFAULT");
	{
		pid_t pid = fork();
		int st = -1;

		if (pid == 0)
			_exit(alloc(va + 4 * KB64, KB64) == EPERM ? 0 : 1);
		waitpid(pid, &st, 0);
		tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the fd used by another process (a forked child): EPERM");
	}
	f.va = va;
	tap_ok(call(NVP2P_EMU_IOC_FREE, &f) == 0 && call(NVP2P_EMU_IOC_FREE, &f) == EINVAL, "free, then double free: EINVAL");
	close(fd);
	return tap_done();
}
