// SPDX-License-Identifier: MIT
/*
 * mmaprace.c - no CPU mapping of a region survives its unpin
 * or revocation, even when mmap() races with it
 *
 * The kernel links a new VMA into the file's address space only after the
 * driver's mmap handler has returned.  A driver that fills the page table
 * in its mmap handler therefore leaves a window in which an unpin (or a
 * free callback) zaps the file's mappings without seeing the new one: the
 * mmap succeeds, the pages are put, and the process keeps reading and
 * writing BAR pages that the GPU may already have given to someone else.
 * Each round here pins a region, then mmaps it from one thread while
 * another unpins it (or frees the memory, which revokes it) after a
 * varying number of spins; once both have returned, touching the mapping
 * must fault.  A fixed number of rounds; the spins sweep the window.
 *
 * Also checked: pages appear at the right offsets when the mapping is
 * filled on demand (a write through the CPU mapping is read back with
 * cuMemcpyDtoH, at several mmap offsets).
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gdt.h"

#define ROUNDS		1500
#define MAP_LEN		(4 * GDT_KB64)
#define MAX_SPIN	4000

static int gfd;
static atomic_int go, phase;

struct job {
	int unpin;			/* 1: UNPIN; 0: free the memory */
	uint64_t handle, off;
	CUdeviceptr mem;
	unsigned int spins;
	void *map;
	int map_errno, op_ret;
};

static void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *mapper(void *arg)
{
	struct job *j = arg;

	pin_cpu(0);
	while (atomic_load(&go) != 1)
		;
	j->map = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, gfd,
		      j->off);
	j->map_errno = j->map == MAP_FAILED ? errno : 0;
	atomic_fetch_add(&phase, 1);
	return NULL;
}

static void *killer(void *arg)
{
	struct job *j = arg;
	volatile unsigned int n;

	pin_cpu(1);
	while (atomic_load(&go) != 1)
		;
	for (n = 0; n < j->spins; n++)
		;
	j->op_ret = j->unpin ? gdt_unpin(gfd, j->handle) : gdt_free(j->mem);
	atomic_fetch_add(&phase, 1);
	return NULL;
}

/* One round; returns 1 if a mapping survived the unpin or revocation. */
static int round_one(int unpin, unsigned int spins, int *mapped)
{
	struct gdirect_pin p;
	struct job j = { .unpin = unpin, .spins = spins };
	pthread_t t1, t2;
	int survived = 0;

	j.mem = gdt_alloc(MAP_LEN);
	if (!j.mem || gdt_pin(gfd, j.mem, MAP_LEN, 0, &p)) {
		gdt_free(j.mem);
		return -1;
	}
	j.handle = p.handle;
	j.off = p.mmap_offset;
	atomic_store(&go, 0);
	atomic_store(&phase, 0);
	pthread_create(&t1, NULL, mapper, &j);
	pthread_create(&t2, NULL, killer, &j);
	atomic_store(&go, 1);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	if (j.map != MAP_FAILED) {
		(*mapped)++;
		/* Unpinned or revoked: every byte must be gone. */
		survived = !gdt_faults(j.map, 0) ||
			   !gdt_faults((char *)j.map + MAP_LEN - 4096, 0);
		munmap(j.map, MAP_LEN);
	} else if (j.map_errno != ESTALE && j.map_errno != EINVAL) {
		tap_diag("mmap: unexpected errno %d", j.map_errno);
		survived = 1;
	}
	if (unpin)
		gdt_free(j.mem);
	else
		gdt_unpin(gfd, p.handle);
	return survived;
}

static void race(int unpin)
{
	int survived = 0, mapped = 0, errors = 0, r;

	for (int i = 0; i < ROUNDS; i++) {
		r = round_one(unpin, (i * 7919u) % MAX_SPIN, &mapped);
		if (r < 0)
			errors++;
		else
			survived += r;
	}
	tap_diag("%s: %d rounds, %d mmaps succeeded, %d mappings survived",
		 unpin ? "UNPIN" : "free", ROUNDS, mapped, survived);
	tap_ok(!errors, "%s race: every round could allocate and pin",
	       unpin ? "UNPIN" : "free");
	tap_ok(!survived,
	       "mmap racing %s: no mapping readable once it returned",
	       unpin ? "UNPIN" : "a free (revocation)");
}

/* Mappings filled on demand show the right GPU bytes at every offset. */
static void offsets(void)
{
	static uint8_t pattern[MAP_LEN], back[MAP_LEN];
	struct gdirect_pin p;
	CUdeviceptr mem;
	int good = 1;

	for (size_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = (uint8_t)(i * 13 + (i >> 12));
	mem = gdt_alloc(MAP_LEN);
	if (!tap_ok(mem && !gdt_pin(gfd, mem, MAP_LEN, 0, &p),
		    "pin 256 KiB for the offset check"))
		return;
	for (uint64_t off = 0; off < MAP_LEN; off += 3 * 4096 + GDT_KB64) {
		size_t len = MAP_LEN - off;
		uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
				  MAP_SHARED, gfd, p.mmap_offset + off);

		if (m == MAP_FAILED) {
			good = 0;
			break;
		}
		/* Touch the last page first: faults come in any order. */
		for (size_t k = len; k; k -= 4096)
			memcpy(m + k - 4096, pattern + off + k - 4096, 4096);
		munmap(m, len);
		memset(back, 0, sizeof(back));
		if (cuMemcpyDtoH(back, mem + off, len) != CUDA_SUCCESS ||
		    memcmp(back, pattern + off, len)) {
			tap_diag("offset %#llx: GPU memory differs",
				 (unsigned long long)off);
			good = 0;
		}
	}
	tap_ok(good, "writes through mappings at 4 offsets land in GPU memory");
	tap_ok(gdt_unpin(gfd, p.handle) == 0, "unpin after the offset check");
	gdt_free(mem);
}

static void body(void)
{
	if (gdt_cuda_init()) {
		tap_ok(0, "CUDA context");
		return;
	}
	gfd = open("/dev/gdirect", O_RDWR);
	if (!tap_ok(gfd >= 0, "open /dev/gdirect"))
		return;
	offsets();
	race(1);
	race(0);
	close(gfd);
}

int main(void)
{
	return gdt_main(NULL, 0, body);
}
