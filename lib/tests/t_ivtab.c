/* SPDX-License-Identifier: MIT */
/* t_ivtab: the interval table against brute force, on random edits. */
#include <stdio.h>
#include <stdlib.h>

#include "ivtab.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: %s\n", __FILE__, \
	__LINE__, #c); exit(1); } } while (0)

#define SLOTS 64	/* interval i may occupy [i*100, i*100+100) */

int main(void)
{
	struct gd_ivtab *t = NULL;
	uint64_t len[SLOTS] = { 0 };	/* 0: absent */
	int tag[SLOTS];

	srand(1);
	for (int step = 0; step < 20000; step++) {
		int i = rand() % SLOTS;
		struct gd_ivtab *nt;

		if (len[i]) {
			void *del = &tag[i];

			nt = gd_ivtab_edit(t, &del, 1, NULL);
			len[i] = 0;
		} else {
			len[i] = 1 + rand() % 100;
			struct gd_iv iv = { i * 100, i * 100 + len[i], &tag[i] };

			nt = gd_ivtab_edit(t, NULL, 0, &iv);
		}
		CHECK(nt);
		free(t);
		t = nt;
		/* sorted, and exactly the present intervals */
		size_t n = 0;

		for (int k = 0; k < SLOTS; k++)
			n += len[k] != 0;
		CHECK(t->n == n);
		for (size_t k = 1; k < t->n; k++)
			CHECK(t->e[k - 1].end <= t->e[k].start);
		/* random queries */
		for (int q = 0; q < 20; q++) {
			uint64_t s = rand() % (SLOTS * 100), e = s + 1 + rand() % 150;
			int k = s / 100;
			void *want = len[k] && e <= k * 100 + len[k] ? &tag[k] : NULL;
			void *ov[SLOTS];
			size_t no = 0;

			CHECK(gd_ivtab_find(t, s, e) == want);
			for (int j = 0; j < SLOTS; j++)
				if (len[j] && (uint64_t)j * 100 < e &&
				    s < j * 100 + len[j])
					no++;
			CHECK(gd_ivtab_overlaps(t, s, e, ov, SLOTS) == no);
		}
	}
	free(t);
	printf("ok\n");
	return 0;
}
