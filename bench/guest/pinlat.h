/* SPDX-License-Identifier: MIT */
/*
 * pinlat.h - the guest benchmarks' timed pin and unpin (header only, on
 * tests/guest/gdirect/gdt.h):
 *
 *   pinlat_pair(fd, addr, len, &pin_ms, &unpin_ms)
 *                       one pin of LEN bytes at ADDR through FD and its
 *                       unpin, each timed in milliseconds; returns 0, the
 *                       pin's error (negative: nothing was pinned, both
 *                       times 0), or PINLAT_UNPIN_FAILED when only the unpin
 *                       failed (both times are set)
 *   pinlat_add(&s, pin_ms, unpin_ms)
 *                       one pair into a running count, sums and maxima
 *
 * gdirect-unpinbench and gdirect-regionsbench time their pin and unpin
 * loops through these, so that the two report latencies measured alike.
 */
#ifndef PINLAT_H
#define PINLAT_H

#include "gdt.h"
#include "guest_harness.h"

#define PINLAT_UNPIN_FAILED	1

struct pinlat {
	unsigned long pairs;
	double pin_sum, pin_max, unpin_sum, unpin_max;
};

static inline int pinlat_pair(int fd, uint64_t addr, uint64_t len,
			      double *pin_ms, double *unpin_ms)
{
	struct gdirect_pin p;
	double t0 = guest_now_ms(), t1, t2;
	int ret = gdt_pin(fd, addr, len, 0, &p);

	*pin_ms = *unpin_ms = 0;
	if (ret)
		return ret;
	t1 = guest_now_ms();
	ret = gdt_unpin(fd, p.handle) ? PINLAT_UNPIN_FAILED : 0;
	t2 = guest_now_ms();
	*pin_ms = t1 - t0;
	*unpin_ms = t2 - t1;
	return ret;
}

static inline void pinlat_add(struct pinlat *s, double pin_ms,
			      double unpin_ms)
{
	s->pairs++;
	s->pin_sum += pin_ms;
	s->unpin_sum += unpin_ms;
	if (pin_ms > s->pin_max)
		s->pin_max = pin_ms;
	if (unpin_ms > s->unpin_max)
		s->unpin_max = unpin_ms;
}

#endif
