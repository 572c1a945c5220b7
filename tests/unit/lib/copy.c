/* SPDX-License-Identifier: MIT */
/*
 * lib-copy: every copy implementation this CPU has, both directions, byte-
 * exact for sizes 1 B .. 16 MiB at misaligned offsets on both sides, never
 * touching a byte outside the destination.  Ordinary memory stands in for
 * the BAR mapping.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gdirect.h>

#include "copy.h"
#include "tap.h"


#define GUARD 128
#define MAXSZ (16u << 20)

static uint8_t *src, *dst;

static void one(void (*fn)(void *, const void *, size_t), size_t n,
		size_t soff, size_t doff)
{
	uint8_t g = (uint8_t)(n * 31 + soff * 7 + doff);

	memset(dst, g, GUARD + doff + n + GUARD);
	fn(dst + GUARD + doff, src + soff, n);
	CHECK(!memcmp(dst + GUARD + doff, src + soff, n));
	for (size_t i = 0; i < GUARD + doff; i++)
		CHECK(dst[i] == g);
	for (size_t i = GUARD + doff + n; i < GUARD + doff + n + GUARD; i++)
		CHECK(dst[i] == g);
}

static void every_size_and_alignment(void)
{
	static const size_t offs[] = { 0, 1, 3, 7, 15, 16, 31, 33, 63 };
	size_t sizes[128], ns = 0;
	int tested = 0;

	for (size_t s = 1; s <= 300; s++)
		if (s < 70 || s % 16 <= 1 || s % 16 == 15)
			if (ns < 100)
				sizes[ns++] = s;
	for (size_t s = 512; s <= MAXSZ && ns < 126; s *= 2) {
		sizes[ns++] = s - 1;
		if (s < MAXSZ)
			sizes[ns++] = s + 3;
	}
	sizes[ns++] = MAXSZ - 64;
	src = malloc(MAXSZ + 128);
	dst = malloc(MAXSZ + 2 * GUARD + 128);
	CHECK(src && dst);
	for (size_t i = 0; i < MAXSZ + 128; i++)
		src[i] = (uint8_t)(i * 2654435761u >> 13);

	for (int k = 0; gdl_copy_impls[k]; k++) {
		const struct gdl_copy_impl *im = gdl_copy_impls[k];

		if (!im->supported()) {
			tap_diag("%-10s not supported by this CPU: skipped", im->name);
			continue;
		}
		for (size_t i = 0; i < ns; i++)
			for (size_t a = 0; a < sizeof(offs) / sizeof(offs[0]); a++)
				for (size_t b = 0; b < sizeof(offs) / sizeof(offs[0]); b++) {
					/* big sizes: fewer offset pairs */
					if (sizes[i] > 65536 && (a + b) % 4)
						continue;
					one(im->to_map, sizes[i], offs[a], offs[b]);
					one(im->from_map, sizes[i], offs[a], offs[b]);
				}
		tap_diag("%-10s ok (%zu sizes, 1 B .. %u B)", im->name, ns, MAXSZ);
		tested++;
	}
	/* The public entry points go through the selected implementation. */
	CHECK(gdl_copy_select("generic") == 0);
	CHECK(!strcmp(gdirect_copy_impl(), "generic"));
	CHECK(gdl_copy_select("nonexistent") == -2 /* -ENOENT */);
	one(gdirect_copy_to_mapping, 1000, 1, 3);
	one(gdirect_copy_from_mapping, 1000, 3, 1);
	CHECK(tested >= 2);
	free(src);
	free(dst);
}

int main(void)
{
	TAP_TEST(every_size_and_alignment);
	return tap_done();
}
