/* SPDX-License-Identifier: MIT */
/* stats.h - summaries of measured samples (nearest-rank percentiles) */
#ifndef GDTOOL_STATS_H
#define GDTOOL_STATS_H

#include <stddef.h>

struct gdcli_summary {
	size_t n;
	double min, median, p99, max, mean;
};

/* Summarise v[0..n) (sorted in place).  n == 0 gives all zeros. */
void gdcli_summarise(double *v, size_t n, struct gdcli_summary *s);

/* Value at percentile pct (0..100) of sorted v, nearest-rank method. */
double gdcli_percentile(const double *sorted, size_t n, double pct);

/* Monotonic time in nanoseconds. */
double gdcli_now_ns(void);

#endif
