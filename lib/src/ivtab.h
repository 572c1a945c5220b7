/* SPDX-License-Identifier: MIT */
/*
 * ivtab.h - immutable sorted table of non-overlapping intervals.
 *
 * A table is never changed once published: writers build a new one
 * (copy-on-write) under their own lock and swap the pointer, so readers
 * search it with no lock at all (inside an epoch section, see epoch.h).
 * A lookup is a binary search: a few ns for thousands of entries.
 */
#ifndef GD_IVTAB_H
#define GD_IVTAB_H

#include <stddef.h>
#include <stdint.h>

struct gd_iv {
	uint64_t start, end;	/* [start, end) */
	void *obj;
};

struct gd_ivtab {
	size_t n;
	struct gd_iv e[];
};

/* The entry containing [start, end), or NULL. */
static inline void *gd_ivtab_find(const struct gd_ivtab *t, uint64_t start,
				  uint64_t end)
{
	size_t lo = 0, hi;

	if (!t || !t->n)
		return NULL;
	hi = t->n;
	/* last entry with e.start <= start */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->e[mid].start <= start)
			lo = mid;
		else
			hi = mid;
	}
	if (t->e[lo].start <= start && end <= t->e[lo].end)
		return t->e[lo].obj;
	return NULL;
}

/*
 * Collect up to max objects whose interval overlaps [start, end); returns
 * how many overlap (may exceed max).
 */
size_t gd_ivtab_overlaps(const struct gd_ivtab *t, uint64_t start, uint64_t end,
			 void **objs, size_t max);

/*
 * A new table: t without the entries whose obj is in del[0..ndel), plus
 * add (may be NULL).  The caller guarantees the result does not overlap.
 * NULL on allocation failure.
 */
struct gd_ivtab *gd_ivtab_edit(const struct gd_ivtab *t, void *const *del,
			       size_t ndel, const struct gd_iv *add);

#endif
