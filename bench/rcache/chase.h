/* SPDX-License-Identifier: MIT */
/*
 * chase.h - the latency of one dependent load in a working set of a given
 * size, on this machine, now: the yardstick for the dependent cache misses
 * a hit cannot avoid (s_hits.c turns it into a floor per region count).
 */
#ifndef BENCH_CHASE_H
#define BENCH_CHASE_H

#include <stddef.h>

/*
 * ns per load of a pointer chase through every 64-byte line of a buffer of
 * `bytes` bytes, in one random cycle (so neither the prefetchers nor the
 * out-of-order core can run ahead), median of `repeats` walks of at least
 * 2^20 loads each after one untimed walk.  Buffers above 128 KiB are
 * advised as transparent huge pages, as libgdirect's slot leaves beyond the
 * first are (hpmem.h), so the figure is the caches' and not the TLB's.
 * Exits on allocation failure.
 */
double chase_ns(size_t bytes, int repeats);

#endif
