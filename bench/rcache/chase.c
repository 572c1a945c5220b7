/* SPDX-License-Identifier: MIT */
/*
 * chase.c - dependent-load latency by pointer chasing (chase.h).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "chase.h"
#include "harness.h"

#define LINE 64
#define HUGE_FROM (128 * KiB)	/* libgdirect's first slot leaf, 4 KiB pages */
#define HUGE_PAGE (2 * 1024 * KiB)

/* A line's first word: the address of the next line of the cycle. */
struct line {
	struct line *next;
	char pad[LINE - sizeof(struct line *)];
};

/* The lines, in a mapping of *len bytes at *base. */
static struct line *chase_buffer(size_t lines, void **base, size_t *len)
{
	size_t need = lines * LINE;
	bool huge = need > HUGE_FROM;
	uintptr_t a;

	if (huge)	/* whole huge pages, and one more to align them */
		need = ((need + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1)) + HUGE_PAGE;
	*len = need;
	*base = mmap(NULL, need, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*base == MAP_FAILED) {
		perror("chase: mmap");
		exit(1);
	}
	if (!huge)
		return *base;
	a = ((uintptr_t)*base + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	madvise((void *)a, need - HUGE_PAGE, MADV_HUGEPAGE);
	return (struct line *)a;
}

/* Sattolo's shuffle: a permutation that is one cycle through all lines. */
static void link_cycle(struct line *b, size_t lines)
{
	size_t *order = malloc(lines * sizeof(*order));
	uint64_t s = 0xc4a5e0001ull + lines;

	if (!order) {
		perror("chase: malloc");
		exit(1);
	}
	for (size_t i = 0; i < lines; i++)
		order[i] = i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = (size_t)(rnd(&s) % i), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < lines; i++)
		b[order[i]].next = &b[order[(i + 1) % lines]];
	free(order);
}

/* Walk n links from p; where it ended (the next walk's start).  The
 * volatile load keeps every link a load the walk waits for. */
static __attribute__((noinline)) struct line *walk(struct line *p, size_t n)
{
	while (n--)
		p = *(struct line *volatile *)&p->next;
	return p;
}

double chase_ns(size_t bytes, int repeats)
{
	size_t lines = bytes / LINE < 2 ? 2 : bytes / LINE, len;
	size_t n = lines < (1u << 20) ? (1u << 20) : lines;
	void *base;
	struct line *b = chase_buffer(lines, &base, &len), *p;
	double v[64], m;

	if (repeats > 64)
		repeats = 64;
	link_cycle(b, lines);
	p = walk(b, lines);	/* into the caches and the TLB */
	for (int r = 0; r < repeats; r++) {
		uint64_t t0 = bench_now_ns();

		p = walk(p, n);
		v[r] = (double)(bench_now_ns() - t0) / (double)n;
	}
	m = median(v, repeats);
	munmap(base, len);
	return m;
}
