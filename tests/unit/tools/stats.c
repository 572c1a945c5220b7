// SPDX-License-Identifier: MIT
/* stats.c - latency summaries: nearest-rank percentiles, min, max, mean */
#include <stdio.h>

#include "tap.h"
#include "stats.h"

int main(void)
{
	double v[200], one[1] = { 7 };
	struct gdcli_summary s;
	int i;

	/* 1..200 shuffled: median is the 100th value, p99 the 198th. */
	for (i = 0; i < 200; i++)
		v[i] = (double)((i * 37) % 200 + 1);
	gdcli_summarise(v, 200, &s);
	CHECK(s.n == 200);
	CHECK(s.min == 1 && s.max == 200);
	CHECK(s.median == 100);
	CHECK(s.p99 == 198);
	CHECK(s.mean == 100.5);
	for (i = 1; i < 200; i++)
		CHECK(v[i - 1] <= v[i]);
	gdcli_summarise(one, 1, &s);
	CHECK(s.min == 7 && s.median == 7 && s.p99 == 7 && s.max == 7);
	gdcli_summarise(v, 0, &s);
	CHECK(s.n == 0 && s.max == 0);
	CHECK(gdcli_percentile(v, 200, 0) == 1);
	CHECK(gdcli_percentile(v, 200, 100) == 200);
	CHECK(gdcli_now_ns() > 0);
	return tap_done();
}
