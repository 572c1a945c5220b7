/* SPDX-License-Identifier: MIT */
/*
 * lib-hpmem: huge-page object memory.  Objects are zeroed, aligned, inside
 * their 2 MiB chunk with their cold companion, never overlap each other or
 * another's companion (patterns written everywhere survive), and freed
 * objects (pushed from several threads at once) come back zeroed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpmem.h"
#include "tap.h"


#define N 30000	/* several chunks of 64 + 192 byte objects */
#define HOT 64
#define COLD 192

static struct gdl_hpmem m;
static unsigned char *obj[N];

static int zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		if (c[i])
			return 0;
	return 1;
}

static void *freer(void *arg)
{
	long t = (long)arg;

	for (long i = t; i < N; i += 8)	/* threads 0..3: half the objects */
		gdl_hpmem_free(&m, obj[i]);
	return NULL;
}

static void alloc_free_reuse(void)
{
	gdl_hpmem_init(&m, HOT, COLD);
	for (int i = 0; i < N; i++) {
		unsigned char *p = gdl_hpmem_alloc(&m), *c;

		CHECK(p);
		CHECK(((uintptr_t)p & 63) == 0);
		c = gdl_hpmem_cold(p, HOT, COLD);
		CHECK(((uintptr_t)p & ~(GDL_HPMEM_CHUNK - 1)) ==
		      ((uintptr_t)(c + COLD - 1) & ~(GDL_HPMEM_CHUNK - 1)));
		CHECK(zero(p, HOT) && zero(c, COLD));
		memset(p, i & 0xff ? i & 0xff : 1, HOT);
		memset(c, ~i & 0xff ? ~i & 0xff : 1, COLD);
		obj[i] = p;
	}
	for (int i = 0; i < N; i++) {	/* nothing overwrote anything */
		unsigned char *c = gdl_hpmem_cold(obj[i], HOT, COLD);

		CHECK(obj[i][0] == (i & 0xff ? i & 0xff : 1) &&
		      obj[i][HOT - 1] == obj[i][0]);
		CHECK(c[0] == (~i & 0xff ? ~i & 0xff : 1) && c[COLD - 1] == c[0]);
	}
	pthread_t t[4];

	for (long k = 0; k < 4; k++)
		CHECK(pthread_create(&t[k], NULL, freer, (void *)k) == 0);
	for (int k = 0; k < 4; k++)
		pthread_join(t[k], NULL);
	/* The freed half comes back, zeroed, before any new memory. */
	for (int i = 0; i < N / 2; i++) {
		unsigned char *p = gdl_hpmem_alloc(&m);
		int found = 0;

		CHECK(p && zero(p, HOT) && zero(gdl_hpmem_cold(p, HOT, COLD), COLD));
		for (int j = 0; j < N && !found; j++)
			found = obj[j] == p && j % 8 < 4;
		CHECK(found);
	}
	gdl_hpmem_destroy(&m);

	/* Page-table nodes: 32 KiB, no companion. */
	gdl_hpmem_init(&m, 32768, 0);
	for (int i = 0; i < 200; i++) {
		unsigned char *p = gdl_hpmem_alloc(&m);

		CHECK(p && ((uintptr_t)p & 63) == 0 && zero(p, 32768));
		memset(p, 0xa5, 32768);
	}
	gdl_hpmem_destroy(&m);
}

int main(void)
{
	TAP_TEST(alloc_free_reuse);
	return tap_done();
}
