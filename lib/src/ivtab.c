/* SPDX-License-Identifier: MIT */
#include "ivtab.h"

#include <stdlib.h>
#include <string.h>

size_t gd_ivtab_overlaps(const struct gd_ivtab *t, uint64_t start, uint64_t end,
			 void **objs, size_t max)
{
	size_t lo = 0, hi, n = 0;

	if (!t || !t->n)
		return 0;
	/* first entry with e.end > start */
	hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->e[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < t->n && t->e[i].start < end; i++) {
		if (n < max)
			objs[n] = t->e[i].obj;
		n++;
	}
	return n;
}

static int deleted(void *obj, void *const *del, size_t ndel)
{
	for (size_t i = 0; i < ndel; i++)
		if (del[i] == obj)
			return 1;
	return 0;
}

struct gd_ivtab *gd_ivtab_edit(const struct gd_ivtab *t, void *const *del,
			       size_t ndel, const struct gd_iv *add)
{
	size_t old = t ? t->n : 0, n = 0;
	struct gd_ivtab *nt = malloc(sizeof(*nt) + (old + 1) * sizeof(struct gd_iv));
	int added = add == NULL;

	if (!nt)
		return NULL;
	for (size_t i = 0; i < old; i++) {
		if (ndel && deleted(t->e[i].obj, del, ndel))
			continue;
		if (!added && add->start < t->e[i].start) {
			nt->e[n++] = *add;
			added = 1;
		}
		nt->e[n++] = t->e[i];
	}
	if (!added)
		nt->e[n++] = *add;
	nt->n = n;
	return nt;
}
