/* SPDX-License-Identifier: MIT */
/*
 * replay.h - replaying a trace of whole-buffer registrations (get + put of
 * one 64 KiB buffer per operation) on one or more threads: what scenarios
 * 3 and 4 time.  Whole, aligned buffers, so that both caches pin exactly
 * the same ranges.
 */
#ifndef BENCH_REPLAY_H
#define BENCH_REPLAY_H

#include "harness.h"

struct replay_result {
	double ns_per_op;		/* wall time / operations, all threads */
	unsigned long fails;		/* operations that returned an error */
	struct fake_stats dev;		/* the device's work during the run */
};

/* traces[t][0..len) for thread t < nthreads; returns what happened. */
struct replay_result replay(struct inst *in, uint64_t *const *traces,
			    size_t len, int nthreads);

/* A trace of len buffers: with probability hot_pct% one of the first nhot
 * of bufs[0..n), else any of them (nhot = n: uniform). */
uint64_t *zipfish_trace(const uint64_t *bufs, size_t n, size_t nhot,
			unsigned hot_pct, size_t len, uint64_t seed);

#endif
