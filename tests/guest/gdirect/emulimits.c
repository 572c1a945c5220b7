// SPDX-License-Identifier: MIT
/*
 * emulimits.c - the emulated GPU's own limits (nvp2p_emu):
 *
 *  - 65537 overlapping pins of one 64 KiB page (through gdirect's
 *    in-kernel API) count that page once against BAR1, not twice (a
 *    16-bit count per page wrapped at 65536);
 *  - /dev/nvp2p_emu is created 0660 (dev_mode), not open to every user;
 *  - max_mem_per_user_mb caps one user's allocations over all its
 *    processes (CUDA_ERROR_OUT_OF_MEMORY), a free makes room;
 *  - a large allocation is zeroed without the emulator's lock held: a
 *    query from another thread meanwhile is not kept waiting for it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gdt.h"
#include "guest_harness.h"
#include "nvp2p_emu.h"

#define OVERLAP		65537
#define USER_CAP_MB	"4"
#define BIG		(64 * GDT_MB)

/*
 * Through gdirect's in-kernel API (gdirect_kapitest): one user's pins stop
 * at max_pins_per_user, 65536 by default, one short of the wrap.
 */
static void check_overlap(void)
{
	CUdeviceptr buf;
	uint64_t used;
	int ret;

	if (system("insmod /modules/gdirect_kapitest.ko") != 0) {
		tap_skip("65537 overlapping pins", "gdirect_kapitest.ko did not load");
		return;
	}
	buf = gdt_alloc(GDT_KB64);
	ret = buf ? gdt_kt_run("overlap-pin", buf, GDT_KB64) : -ENOMEM;
	used = gdt_emu("bar1_used");
	tap_ok(!ret, "65537 overlapping pins of one page (%d)", ret);
	tap_ok(used == GDT_KB64, "BAR1 used: %llu bytes, one page",
	       (unsigned long long)used);
	ret = gdt_kt_run("overlap-unpin", 0, 0);
	tap_ok(!ret && gdt_emu("bar1_used") == 0 && gdt_emu("pins") == 0,
	       "all unpinned: BAR1 used %llu bytes (%d)",
	       (unsigned long long)gdt_emu("bar1_used"), ret);
	if (system("rmmod gdirect_kapitest") != 0)
		tap_ok(0, "rmmod gdirect_kapitest");
	gdt_free(buf);
}

static _Atomic int *child_ok;

static void check_user_cap(void)
{
	CUdeviceptr a, b;
	int status;
	pid_t pid;

	guest_set_param("nvp2p_emu", "max_mem_per_user_mb", USER_CAP_MB);
	a = gdt_alloc(4 * GDT_MB);
	tap_ok(a != 0, "max_mem_per_user_mb=4: 4 MiB allocated");
	tap_ok(cuMemAlloc(&b, GDT_KB64) == CUDA_ERROR_OUT_OF_MEMORY,
	       "64 KiB more: CUDA_ERROR_OUT_OF_MEMORY");
	/* This process has a context: the child opens the device itself. */
	pid = fork();
	if (pid == 0) {
		int fd = open(NVP2P_EMU_DEVICE, O_RDWR);
		void *res = mmap(NULL, 2 * GDT_KB64, PROT_NONE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct nvp2p_emu_alloc req = {
			.va = ((uint64_t)(uintptr_t)res + GDT_KB64 - 1) &
			      ~(GDT_KB64 - 1),
			.size = GDT_KB64,
		};

		*child_ok = fd >= 0 && res != MAP_FAILED &&
			    ioctl(fd, NVP2P_EMU_IOC_ALLOC, &req) < 0 &&
			    errno == ENOMEM;
		_exit(0);
	}
	waitpid(pid, &status, 0);
	tap_ok(*child_ok, "another process of the same user: ENOMEM");
	tap_ok(a && !gdt_free(a) && (b = gdt_alloc(GDT_KB64)) != 0,
	       "a free makes room");
	if (b)
		gdt_free(b);
	guest_set_param("nvp2p_emu", "max_mem_per_user_mb", "0");
}

static atomic_int done;
/* How many queries the querier thread finished in each millisecond since
 * query_t0, up to a minute. */
#define QUERY_MS	60000
static int query_ends[QUERY_MS];
static double query_t0;

static void *querier(void *arg)
{
	struct nvp2p_emu_info info;
	int fd = open(NVP2P_EMU_DEVICE, O_RDWR);
	long ms;

	(void)arg;
	while (fd >= 0 && !atomic_load(&done)) {
		ioctl(fd, NVP2P_EMU_IOC_INFO, &info);
		ms = (long)(guest_now_ms() - query_t0);
		if (ms >= 0 && ms < QUERY_MS)
			query_ends[ms]++;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/*
 * A query must not wait for another process's allocation to be zeroed.
 * Were the zeroing done under the lock a query takes, no query could end
 * in the middle half of the allocation; without it, queries keep ending
 * there.  Counting them rather than comparing latencies keeps the check
 * true on a loaded machine, where any single query can stall for a
 * scheduler's time slice.  A stall as long as the whole allocation can
 * still leave the middle half without a query, so up to ZERO_TRIES
 * allocations are tried: a zeroing under the lock fails every one.
 */
#define ZERO_TRIES	5

/* One allocation with the querier running; the queries in its middle half. */
static int zeroing_try(CUdeviceptr *big, double *took)
{
	pthread_t t;
	double t0, t1;
	long i, lo, hi;
	int mid = 0;

	memset(query_ends, 0, sizeof(query_ends));
	atomic_store(&done, 0);
	query_t0 = guest_now_ms();
	pthread_create(&t, NULL, querier, NULL);
	usleep(100 * 1000);
	t0 = guest_now_ms();
	*big = gdt_alloc(BIG);
	t1 = guest_now_ms();
	atomic_store(&done, 1);
	pthread_join(t, NULL);
	lo = (long)(t0 - query_t0 + (t1 - t0) / 4);
	hi = (long)(t1 - query_t0 - (t1 - t0) / 4);
	for (i = lo; i <= hi && i < QUERY_MS; i++)
		mid += query_ends[i];
	*took = t1 - t0;
	return mid;
}

static void check_zeroing(void)
{
	CUdeviceptr big = 0;
	double took = 0;
	int n, mid = 0;

	for (n = 1; n <= ZERO_TRIES; n++) {
		mid = zeroing_try(&big, &took);
		tap_diag("try %d: a %llu MiB allocation took %.1f ms; %d queries ended in its middle half",
			 n, BIG / GDT_MB, took, mid);
		if (!big || mid >= 2)
			break;
		gdt_free(big);
		big = 0;
	}
	tap_ok(big && mid >= 2,
	       "queries go on during the allocation's zeroing (%d ended in its middle half, try %d of %d)",
	       mid, n > ZERO_TRIES ? ZERO_TRIES : n, ZERO_TRIES);
	if (big)
		gdt_free(big);
}

static void body(void)
{
	struct stat st = { 0 };

	child_ok = mmap(NULL, sizeof(*child_ok), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (stat(NVP2P_EMU_DEVICE, &st))
		tap_diag("stat %s: %s", NVP2P_EMU_DEVICE, strerror(errno));
	tap_ok((st.st_mode & 0777) == 0660,
	       "/dev/nvp2p_emu mode %o (dev_mode default 0660)",
	       st.st_mode & 0777);
	if (!tap_ok(child_ok != MAP_FAILED && gdt_cuda_init() == 0,
		    "CUDA context"))
		return;
	check_overlap();
	check_user_cap();
	check_zeroing();
}

int main(void)
{
	return gdt_main(NULL, 1, body);
}
