// SPDX-License-Identifier: MIT
/* stats.c - sample summaries and the clock the benchmarks use */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double gdcli_percentile(const double *sorted, size_t n, double pct)
{
	size_t rank;

	if (n == 0)
		return 0;
	/* Nearest rank: the smallest value with at least pct% at or below it. */
	rank = (size_t)ceil(pct / 100.0 * (double)n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

void gdcli_summarise(double *v, size_t n, struct gdcli_summary *s)
{
	double sum = 0;
	size_t i;

	memset(s, 0, sizeof(*s));
	if (n == 0)
		return;
	qsort(v, n, sizeof(*v), cmp_double);
	for (i = 0; i < n; i++)
		sum += v[i];
	s->n = n;
	s->min = v[0];
	s->max = v[n - 1];
	s->median = gdcli_percentile(v, n, 50);
	s->p99 = gdcli_percentile(v, n, 99);
	s->mean = sum / (double)n;
}

double gdcli_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}
