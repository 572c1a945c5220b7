/* SPDX-License-Identifier: MIT */
/* stats.h - summaries of measured samples (nearest-rank percentiles) */
#ifndef GDTOOL_STATS_H
#define GDTOOL_STATS_H

#include <stddef.h>

struct gd_summary {
	size_t n;
	double min, median, p99, max, mean;
};

/* Summarise v[0..n) (sorted in place).  n == 0 gives all zeros. */
void gd_summarise(double *v, size_t n, struct gd_summary *s);

/* Value at percentile pct (0..100) of sorted v, nearest-rank method. */
double gd_percentile(const double *sorted, size_t n, double pct);

/* Monotonic time in nanoseconds. */
double gd_now_ns(void);

#endif
