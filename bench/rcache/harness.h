/* SPDX-License-Identifier: MIT */
/*
 * harness.h - what every scenario of the cache benchmark shares: the
 * caches under test, deterministic traces, threads started together,
 * medians, progress and the report.
 */
#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fake_backend.h"
#include "cache.h"

#define KiB 1024ull
#define MS 1000000ull	/* ns */
#define GPU_PAGE (64 * KiB)

/* Costs from gdrcopy's README (gdrcopy_apiperf, V100, 64 KiB). */
#define PIN_NS (1300 * 1000ull)
#define UNPIN_NS (700 * 1000ull)

struct opts {
	int repeats;
	bool quick;		/* smaller sizes, for a smoke run */
	FILE *md;		/* the report (markdown), or NULL */
	const char *data;	/* directory for the plot data, or NULL */
};

/* DIR/NAME of o->data opened for writing, or NULL when o->data is NULL;
 * exits with a message if it cannot be created. */
FILE *data_file(const struct opts *o, const char *name);

/*
 * The emulated pinning device both caches register through: the fake
 * backend (tests/fakes/fake_backend.h), gdirect's pinning backend and,
 * through the same ops, what ucs_rcache's mem_reg/mem_dereg call, so the
 * two caches pay exactly the same for the same work.  Shared (destroying
 * the gdirect context leaves it to inst_close), never mapped (the
 * benchmark never copies), with slots for the largest benchmark's 65536
 * regions several times over.  NULL if out of memory.
 */
struct gdl_backend *bench_device_new(const struct fake_cfg *cfg);

/* CLOCK_MONOTONIC in ns, and a sleep until an absolute time. */
uint64_t bench_now_ns(void);
void bench_sleep_until(uint64_t t_ns);

/* One cache under test with its own emulated device. */
struct inst {
	const struct cache_ops *ops;
	const char *label;	/* column name */
	void *c;
	struct gdl_backend *dev;
};

bool inst_open(struct inst *in, const struct cache_ops *ops, const char *label,
	       const struct fake_cfg *dev, uint64_t max_regions, uint64_t max_bytes);
void inst_close(struct inst *in);

/* Deterministic pseudo-random numbers (xorshift64*). */
static inline uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* n fresh 64 KiB "device" buffers, each followed by a 64 KiB hole. */
uint64_t *alloc_buffers(size_t n);

/* Get and put each of bufs[0..n) once (64 KiB each); ns per registration.
 * Exits on a failed get. */
double register_each(struct inst *in, const uint64_t *bufs, size_t n);

/* Run fn(arg_i) on nthreads threads released together; waits for them. */
void run_threads(int nthreads, void *(*fn)(void *), void *args, size_t argsz);

double median(double *v, int n);
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What the targets are judged on, filled in by the scenarios that ran. */
struct summary {
	bool hits, contended, bar;
	size_t nreg[3];
	double hit_ratio[3], hit_ratio_cpu[3];	/* gdirect/UCX, 1 thread */
	double hit_ratio2[3], hit_ratio2_cpu[3];	/* the same, 2 threads */
	double reuse_get[3][2];			/* ns per get alone, reuse trace */
	double random1[3][2];			/* ns per hit, random, 1 thread */
	/* The floor of gdirect's random hit (s_hits.c): ns, and the
	 * dependent loads it adds to the reuse trace's hit, by pointer
	 * chase: the slot, the status word, less an L1 load. */
	double floor[3], lat_slot[3], lat_status[3], lat_l1;
	double scaling[3][2];			/* [size][cache], 2.0 = linear */
	double scaling_cpu[3][2];		/* the same from thread CPU time */
	double in_pin_median, in_pin_mean;	/* gdirect during/alone */
	double bar_fails[2];			/* gdirect, UCX */
	/* The NIC-registration hit over the BAR hit, 1 thread, per trace
	 * (random, locality, reuse) and size; nic: it was measured. */
	bool nic;
	double nic_ratio[3][3];
};
extern struct summary summary;

/* Scenarios (one file each). */
void scenario_hits(const struct opts *o);
void scenario_contended(const struct opts *o);
void scenario_reuse(const struct opts *o);
void scenario_bar(const struct opts *o);
void scenario_registration(const struct opts *o);	/* --only 5 */

#endif
