/* SPDX-License-Identifier: MIT */
/*
 * lib-pgtab: the page table against brute force, on random edits of pages
 * chosen around the boundaries of every level (leaf, middle nodes, the top
 * of the 48-bit page space), with walks over random and whole ranges.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pgtab.h"
#include "tap.h"


#define NPAGES 512

static uint64_t pages[NPAGES];	/* the pages this run uses, sorted */
static void *val[NPAGES];	/* the model */
static int tags[NPAGES];

struct seen {
	uint64_t p0, p1, last;
	size_t n;
	int stop_after;
};

static int visit(uint64_t page, void *v, void *arg)
{
	struct seen *s = arg;
	size_t i = 0;

	CHECK(page >= s->p0 && page <= s->p1);
	CHECK(s->n == 0 || page > s->last);	/* ascending, no repeats */
	while (i < NPAGES && pages[i] != page)
		i++;
	CHECK(i < NPAGES && val[i] == v);
	s->last = page;
	s->n++;
	return s->stop_after && (int)s->n == s->stop_after;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void against_a_model(void)
{
	const uint64_t top = (1ULL << 48) - 1;
	struct gdl_pgtab t;
	size_t n = 0;

	srand(7);
	/* Pages at and next to the boundaries of each level, plus random. */
	for (int l = 0; l < 4 && n < NPAGES - 8; l++)
		for (int k = 1; k <= 3; k++) {
			uint64_t b = (uint64_t)k << (12 * l);

			pages[n++] = b - 1;
			pages[n++] = b;
		}
	pages[n++] = 0;
	pages[n++] = top;
	pages[n++] = top - 1;
	while (n < NPAGES) {
		uint64_t p = ((uint64_t)rand() << 31 ^ (uint64_t)rand()) & top;

		pages[n++] = rand() % 2 ? p : p % 100000;
	}
	qsort(pages, NPAGES, sizeof(pages[0]), cmp);
	for (size_t i = 1; i < NPAGES; i++)	/* make them distinct */
		if (pages[i] <= pages[i - 1])
			pages[i] = pages[i - 1] + 1;
	CHECK(pages[NPAGES - 1] <= top + NPAGES);
	for (size_t i = 0; i < NPAGES; i++)
		pages[i] &= top;	/* (a wrap would only reuse a page) */
	qsort(pages, NPAGES, sizeof(pages[0]), cmp);
	for (size_t i = 1; i < NPAGES; i++)
		CHECK(pages[i] != pages[i - 1]);

	CHECK(gdl_pgtab_init(&t) == 0);
	for (int step = 0; step < 20000; step++) {
		size_t i = rand() % NPAGES;

		if (val[i]) {
			gdl_pgtab_set(&t, pages[i], NULL);
			val[i] = NULL;
		} else {
			CHECK(gdl_pgtab_reserve(&t, pages[i], pages[i]) == 0);
			val[i] = &tags[i];
			gdl_pgtab_set(&t, pages[i], val[i]);
		}
		if (step % 250)
			continue;
		for (size_t k = 0; k < NPAGES; k++) {
			CHECK(gdl_pgtab_get(&t, pages[k]) == val[k]);
			/* neighbours that are not used read NULL */
			if (pages[k] + 1 <= top && (k + 1 == NPAGES ||
						    pages[k + 1] != pages[k] + 1))
				CHECK(gdl_pgtab_get(&t, pages[k] + 1) == NULL);
		}
		/* walks: whole space, a random range, an early stop */
		for (int w = 0; w < 3; w++) {
			size_t a = rand() % NPAGES, b = rand() % NPAGES, want = 0;
			struct seen s = { 0, top, 0, 0, 0 };

			if (a > b) {
				size_t x = a; a = b; b = x;
			}
			if (w == 1) {
				s.p0 = pages[a] + (rand() % 2);
				s.p1 = pages[b];
			}
			for (size_t k = 0; k < NPAGES; k++)
				want += val[k] && pages[k] >= s.p0 &&
					pages[k] <= s.p1;
			if (w == 2 && want > 3)
				s.stop_after = 3;
			gdl_pgtab_walk(&t, s.p0, s.p1, visit, &s);
			CHECK(s.n == (s.stop_after ? 3 : want));
		}
	}
	/* A range reservation covers every page in it, across leaves. */
	CHECK(gdl_pgtab_reserve(&t, 4095, 3 * 4096 + 5) == 0);
	for (uint64_t p = 4095; p <= 3 * 4096 + 5; p++)
		gdl_pgtab_set(&t, p, &tags[0]);
	for (uint64_t p = 4095; p <= 3 * 4096 + 5; p++)
		CHECK(gdl_pgtab_get(&t, p) == &tags[0]);
	gdl_pgtab_destroy(&t);
}

int main(void)
{
	TAP_TEST(against_a_model);
	return tap_done();
}
