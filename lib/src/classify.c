/* SPDX-License-Identifier: MIT */
/*
 * classify.c - pointer classification and its cache.
 *
 * The cache is an immutable interval table of allocations (ivtab.h) read
 * without locks: a repeated query costs a binary search.  Entries are
 * dropped when the allocation is freed: by the free hooks, by gdirect.ko's
 * revocation events, and whenever a fresh CUDA query disagrees.  Without
 * hooks, frees of memory that was never pinned are invisible, so a cached
 * device answer is then confirmed with one BUFFER_ID query.
 *
 * CPU answers are not cached unless GDIRECT_CTX_CACHE_HOST is set: the
 * library does not see munmap, and a CPU range may later be reused for
 * device memory (the emulated driver maps device memory with mmap).
 */
#include <errno.h>
#include <stdlib.h>

#include "cuda_dl.h"
#include "epoch.h"
#include "internal.h"

#define HOST_GRAIN 4096ULL
#define GD_ALLOCS_MAX 4096

static void alloc_free(void *p)
{
	free(p);
}

static void tab_free(void *p)
{
	free(p);
}

/* Replace the table, dropping del[] (retired) and adding add. */
static int allocs_edit_locked(struct gdirect_ctx *c, void **del, size_t ndel,
			      const struct gd_iv *add)
{
	struct gd_ivtab *old = atomic_load(&c->allocs);
	struct gd_ivtab *nt = gd_ivtab_edit(old, del, ndel, add);

	if (!nt)
		return -ENOMEM;
	atomic_store(&c->allocs, nt);
	if (old)
		gd_epoch_retire(old, tab_free);
	for (size_t i = 0; i < ndel; i++)
		gd_epoch_retire(del[i], alloc_free);
	return 0;
}

void gd_allocs_drop_locked(struct gdirect_ctx *c, uint64_t start, uint64_t end)
{
	void *del[64];
	size_t n;

	do {
		n = gd_ivtab_overlaps(atomic_load(&c->allocs), start, end, del, 64);
		if (!n || allocs_edit_locked(c, del, n < 64 ? n : 64, NULL) < 0)
			return;
	} while (n > 64);
}

/* The cache entry for q (under ctx->lock), made if needed. */
struct gd_alloc *gd_alloc_update(struct gdirect_ctx *c, const void *qv)
{
	const struct gd_cuquery *q = qv;
	uint64_t s = q->base, e = q->base + q->size;
	struct gd_alloc *al;

	if (q->type == GDIRECT_MEM_CPU) {
		s = q->base & ~(HOST_GRAIN - 1);
		e = (q->base + HOST_GRAIN) & ~(HOST_GRAIN - 1);
	}
	al = gd_ivtab_find(atomic_load(&c->allocs), s, e);
	if (al && al->base == s && al->size == e - s && al->type == q->type &&
	    al->buffer_id == q->buffer_id)
		return al;
	gd_allocs_drop_locked(c, s, e);
	/* Bound the cache: frees of unpinned memory are invisible without
	 * hooks, so entries could pile up.  Forgetting costs a re-query (and
	 * a repeated, harmless SYNC_MEMOPS) later. */
	struct gd_ivtab *t = atomic_load(&c->allocs);

	if (t && t->n >= GD_ALLOCS_MAX) {
		struct gd_ivtab *empty = gd_ivtab_edit(NULL, NULL, 0, NULL);

		if (empty) {
			atomic_store(&c->allocs, empty);
			for (size_t i = 0; i < t->n; i++)
				gd_epoch_retire(t->e[i].obj, alloc_free);
			gd_epoch_retire(t, tab_free);
		}
	}
	al = calloc(1, sizeof(*al));
	if (!al)
		return NULL;
	al->base = s;
	al->size = e - s;
	al->type = q->type;
	al->device = q->device;
	al->buffer_id = q->buffer_id;
	struct gd_iv iv = { s, e, al };

	if (allocs_edit_locked(c, NULL, 0, &iv) < 0) {
		free(al);
		return NULL;
	}
	return al;
}

void gd_allocs_free_all(struct gdirect_ctx *c)
{
	struct gd_ivtab *t = atomic_load(&c->allocs);

	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->e[i].obj);
	free(t);
	atomic_store(&c->allocs, NULL);
}

static void fill(struct gdirect_ptr_info *info, int type, int device,
		 uint64_t base, uint64_t size, uint64_t id)
{
	info->type = type;
	info->device = type == GDIRECT_MEM_CPU ? -1 : device;
	info->alloc_base = type == GDIRECT_MEM_CPU ? 0 : base;
	info->alloc_size = type == GDIRECT_MEM_CPU ? 0 : size;
	info->buffer_id = type == GDIRECT_MEM_CPU ? 0 : id;
}

GD_EXPORT int gdirect_classify(struct gdirect_ctx *c, const void *ptr,
			       struct gdirect_ptr_info *info)
{
	uint64_t a = (uintptr_t)ptr;
	struct gd_cuquery q;
	struct gd_epoch_slot *s;
	struct gd_alloc *al;
	bool hit = false;

	if (!c || !info)
		return gd_err(-EINVAL, "invalid argument");
	if (atomic_load_explicit(&gd_fork_gen, memory_order_relaxed) != c->fork_gen)
		return gd_err(-EPERM, "context inherited across fork");
	if (!gd_cuda_available()) {
		/* No driver: everything is CPU memory, nothing to cache. */
		fill(info, GDIRECT_MEM_CPU, -1, 0, 0, 0);
		SHARD_INC(c, classify_hits);
		return 0;
	}
	s = gd_epoch_enter();
	al = gd_ivtab_find(atomic_load(&c->allocs), a, a + 1);
	if (al) {
		fill(info, al->type, al->device, al->base, al->size,
		     al->buffer_id);
		hit = true;
	}
	gd_epoch_exit(s);
	if (hit && info->type != GDIRECT_MEM_CPU &&
	    !(c->p.invalidation & GDIRECT_INV_HOOKS)) {
		uint64_t id;

		hit = gd_cuda_buffer_id(a, &id) == 0 && id == info->buffer_id;
	}
	if (hit) {
		SHARD_INC(c, classify_hits);
		return 0;
	}
	ST_INC(c, classify_misses);
	gd_cuda_query(a, &q);
	if (q.type == GDIRECT_MEM_CPU)
		q.base = a;
	fill(info, q.type, q.device, q.base, q.size, q.buffer_id);
	if (q.type != GDIRECT_MEM_CPU || (c->p.flags & GDIRECT_CTX_CACHE_HOST)) {
		pthread_mutex_lock(&c->lock);
		gd_alloc_update(c, &q);
		pthread_mutex_unlock(&c->lock);
	}
	return 0;
}
