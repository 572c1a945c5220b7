/* SPDX-License-Identifier: MIT */
/*
 * classify.c - pointer classification and its cache.
 *
 * The cache is a page table of allocations (pgtab.h; a 64 KiB page shared
 * by small allocations points to an immutable bucket of them) read without
 * locks: a repeated query costs one page-table lookup.  Entries are
 * dropped when the allocation is freed: by the free hooks, by gdirect.ko's
 * revocation events, and whenever a fresh CUDA query disagrees.  Without
 * hooks, frees of memory that was never pinned are invisible, so a cached
 * device answer is then confirmed with one BUFFER_ID query.
 *
 * CPU answers are not cached unless GDIRECT_CTX_CACHE_HOST is set: the
 * library does not see munmap, and a CPU range may later be reused for
 * device memory (the emulated driver maps device memory with mmap).  When
 * they are, a 64 KiB page without cached device allocations keeps them as
 * a bitmap of its 4 KiB pages in its slot (GDL_AHOST): a host hit is the
 * slot's load and a bit test.  A page shared with cached device
 * allocations keeps them as 4 KiB entries in its bucket instead.
 */
#include <errno.h>
#include <stdlib.h>

#include "cuda_dl.h"
#include "epoch.h"
#include "libgdirect_internal.h"

#define HOST_GRAIN (1ULL << GDL_AHOST_GRAIN_SHIFT)
#define GDL_ALLOCS_MAX 4096

static void alloc_free(void *p)
{
	struct gdl_alloc *al = p;

	/* The context outlives its retired entries (destroy waits). */
	gdl_hpmem_free(&al->ctx->allocmem, al);
}

static void bucket_free(void *p)
{
	free(p);
}

static bool is_bucket(void *v)
{
	return (uintptr_t)v & GDL_ABUCKET;
}

static bool is_host(void *v)
{
	return (uintptr_t)v & GDL_AHOST;
}

/* What of slot value v allocations must keep: host bits are not kept
 * where an allocation is indexed (forgetting them costs a miss). */
static void *dev_part(void *v)
{
	return is_host(v) ? NULL : v;
}

static struct gdl_abucket *bucket_of(void *v)
{
	return (struct gdl_abucket *)((uintptr_t)v & ~(uintptr_t)GDL_ABUCKET);
}

/* A new bucket: what page slot v holds, plus al. */
static struct gdl_abucket *bucket_with(void *v, struct gdl_alloc *al)
{
	unsigned n = is_bucket(v) ? bucket_of(v)->n : 1;
	struct gdl_abucket *b = malloc(sizeof(*b) + (n + 1) * sizeof(b->a[0]));

	if (!b)
		return NULL;
	if (is_bucket(v))
		for (unsigned i = 0; i < n; i++)
			b->a[i] = bucket_of(v)->a[i];
	else
		b->a[0] = v;
	b->a[n] = al;
	b->n = n + 1;
	return b;
}

/* Replace page p's slot (old value v) with nv, retiring v's bucket. */
static void slot_replace(struct gdirect_ctx *c, uint64_t p, void *v, void *nv)
{
	gdl_pgtab_set(&c->allocs, p, nv);
	if (is_bucket(v))
		gdl_epoch_retire(bucket_of(v), bucket_free);
}

static void *tagged(struct gdl_abucket *b)
{
	return (void *)((uintptr_t)b | GDL_ABUCKET);
}

/* Point al's pages at it.  Only its first and last page can hold other
 * allocations (cached allocations never overlap), so at most two buckets
 * are needed, and they are made before anything changes. */
static int alloc_index(struct gdirect_ctx *c, struct gdl_alloc *al)
{
	uint64_t p0 = gdl_pg_first(al->base), p1 = gdl_pg_last(al->base + al->size);
	struct gdl_abucket *b0 = NULL, *b1 = NULL;
	void *v0, *v1;

	if (gdl_pgtab_reserve(&c->allocs, p0, p1))
		return -ENOMEM;
	v0 = dev_part(gdl_pgtab_get(&c->allocs, p0));
	v1 = dev_part(gdl_pgtab_get(&c->allocs, p1));
	if ((v0 && !(b0 = bucket_with(v0, al))) ||
	    (p1 != p0 && v1 && !(b1 = bucket_with(v1, al)))) {
		free(b0);
		return -ENOMEM;
	}
	for (uint64_t p = p0; p <= p1; p++) {
		void *v = gdl_pgtab_get(&c->allocs, p);

		if (p == p0 && b0)
			slot_replace(c, p, v, tagged(b0));
		else if (p == p1 && b1)
			slot_replace(c, p, v, tagged(b1));
		else
			slot_replace(c, p, v, al);
	}
	return 0;
}

/* Take al off its pages.  If a shrunk bucket cannot be allocated the page
 * is emptied: its other allocations become misses there, which is safe. */
static void alloc_unindex(struct gdirect_ctx *c, struct gdl_alloc *al)
{
	uint64_t p0 = gdl_pg_first(al->base), p1 = gdl_pg_last(al->base + al->size);

	for (uint64_t p = p0; p <= p1; p++) {
		void *v = gdl_pgtab_get(&c->allocs, p), *nv = NULL;
		struct gdl_abucket *b, *nb;
		unsigned k = 0;

		if (v == al) {
			gdl_pgtab_set(&c->allocs, p, NULL);
			continue;
		}
		if (!is_bucket(v))
			continue;
		b = bucket_of(v);
		for (unsigned i = 0; i < b->n; i++)
			k += b->a[i] == al;
		if (!k)
			continue;
		if (b->n - k == 1) {
			for (unsigned i = 0; i < b->n; i++)
				if (b->a[i] != al)
					nv = b->a[i];
		} else if (b->n - k > 1 &&
			   (nb = malloc(sizeof(*nb) + b->n * sizeof(nb->a[0])))) {
			nb->n = 0;
			for (unsigned i = 0; i < b->n; i++)
				if (b->a[i] != al)
					nb->a[nb->n++] = b->a[i];
			nv = tagged(nb);
		}
		slot_replace(c, p, v, nv);
	}
}

/* Forget al: off the pages and the list, freed after the grace period. */
static void alloc_drop(struct gdirect_ctx *c, struct gdl_alloc *al)
{
	alloc_unindex(c, al);
	gdl_list_del(&al->node);
	c->nallocs--;
	gdl_epoch_retire(al, alloc_free);
}

struct aov_walk {
	struct gdirect_ctx *c;
	uint64_t s, e;
	struct gdl_alloc **out;
	size_t n, max;
};

static int aov_add(struct aov_walk *w, struct gdl_alloc *al)
{
	if (al->base + al->size <= w->s || w->e <= al->base)
		return 0;
	for (size_t i = 0; i < w->n; i++)
		if (w->out[i] == al)
			return 0;
	w->out[w->n++] = al;
	return w->n == w->max;	/* full: stop, the caller comes back */
}

/* The bits of a GDL_AHOST slot of page whose 4 KiB pages meet [s, e). */
static uintptr_t host_bits(uint64_t page, uint64_t s, uint64_t e)
{
	uint64_t base = page << GDL_PAGE_SHIFT, g = 1ULL << GDL_AHOST_GRAIN_SHIFT;
	uintptr_t m = 0;

	/* Inclusive ends: the top page's end would wrap to 0. */
	for (unsigned i = 0; i < GDL_AHOST_PAGES; i++)
		if (base + i * g <= e - 1 && s <= base + i * g + (g - 1))
			m |= gdl_ahost_bit(base + i * g);
	return m;
}

static int aov_visit(uint64_t page, void *v, void *arg)
{
	struct aov_walk *w = arg;

	if (is_host(v)) {
		uintptr_t nv = (uintptr_t)v & ~host_bits(page, w->s, w->e);

		/* No reader dereferences a host slot: nothing to retire. */
		gdl_pgtab_set(&w->c->allocs, page,
			     nv == GDL_AHOST ? NULL : (void *)nv);
		return 0;
	}
	if (!is_bucket(v))
		return aov_add(arg, v);
	for (unsigned i = 0; i < bucket_of(v)->n; i++)
		if (aov_add(arg, bucket_of(v)->a[i]))
			return 1;
	return 0;
}

void gdl_allocs_drop_locked(struct gdirect_ctx *c, uint64_t start, uint64_t end)
{
	struct gdl_alloc *del[64];
	struct aov_walk w;

	if (end <= start)
		return;
	do {
		w = (struct aov_walk){ c, start, end, del, 0, 64 };
		gdl_pgtab_walk(&c->allocs, gdl_pg_first(start), gdl_pg_last(end),
			      aov_visit, &w);
		for (size_t i = 0; i < w.n; i++)
			alloc_drop(c, del[i]);
	} while (w.n == w.max);
}

int gdl_allocs_init(struct gdirect_ctx *c)
{
	gdl_list_init(&c->alloc_list);
	gdl_hpmem_init(&c->allocmem, sizeof(struct gdl_alloc), 0);
	return gdl_pgtab_init(&c->allocs);
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

/* The cache entry for q (under ctx->lock), made if needed. */
struct gdl_alloc *gdl_alloc_update(struct gdirect_ctx *c, const void *qv)
{
	const struct gdl_cuquery *q = qv;
	uint64_t s = q->base, e = q->base + q->size;
	struct gdl_alloc *al;

	if (q->type == GDIRECT_MEM_CPU) {
		s = q->base & ~(HOST_GRAIN - 1);
		e = (q->base + HOST_GRAIN) & ~(HOST_GRAIN - 1);
	}
	al = gdl_alloc_find(c, s);
	if (al && al->base == s && al->size == e - s && al->type == q->type &&
	    al->buffer_id == q->buffer_id)
		return al;
	gdl_allocs_drop_locked(c, s, e);
	/* Bound the cache: frees of unpinned memory are invisible without
	 * hooks, so entries could pile up.  Forgetting costs a re-query (and
	 * a repeated, harmless SYNC_MEMOPS) later.  The bound grows with the
	 * live registrations, each of which made an entry: flushing those
	 * every GDL_ALLOCS_MAX misses would make every registration beyond
	 * them pay for an insertion into cold memory and a drop. */
	if (c->nallocs >= GDL_ALLOCS_MAX && c->nallocs >= 2 * c->nregions)
		while (!gdl_list_empty(&c->alloc_list))
			alloc_drop(c, gdl_container_of(c->alloc_list.next,
						       struct gdl_alloc, node));
	al = gdl_hpmem_alloc(&c->allocmem);	/* zeroed */
	if (!al)
		return NULL;
	al->ctx = c;
	al->base = s;
	al->size = e - s;
	al->type = q->type;
	al->device = q->device;
	fill(&al->info, q->type, q->device, s, e - s, q->buffer_id);
	al->buffer_id = q->buffer_id;
	if (alloc_index(c, al) < 0) {
		gdl_hpmem_free(&c->allocmem, al);
		return NULL;
	}
	gdl_list_add_tail(&c->alloc_list, &al->node);
	c->nallocs++;
	return al;
}

/* Cache "CPU" for the 4 KiB page of q->base (under ctx->lock).  Not
 * cached if out of memory: a miss next time. */
static void host_update(struct gdirect_ctx *c, const struct gdl_cuquery *q)
{
	uint64_t p = q->base >> GDL_PAGE_SHIFT;
	void *v;

	if (gdl_pgtab_reserve(&c->allocs, p, p))
		return;
	v = gdl_pgtab_get(&c->allocs, p);
	if (v && !is_host(v)) {
		/* Cached device allocations share the page: a 4 KiB entry. */
		gdl_alloc_update(c, q);
		return;
	}
	gdl_pgtab_set(&c->allocs, p, (void *)((uintptr_t)v | GDL_AHOST |
					     gdl_ahost_bit(q->base)));
}

static int free_bucket(uint64_t page, void *v, void *arg)
{
	(void)page;
	(void)arg;
	if (is_bucket(v))
		free(bucket_of(v));
	return 0;
}

/* No readers left (context destroy, fork child): free everything now. */
void gdl_allocs_free_all(struct gdirect_ctx *c)
{
	if (!c->allocs.root)
		return;
	gdl_pgtab_walk(&c->allocs, 0, UINT64_MAX, free_bucket, NULL);
	gdl_hpmem_destroy(&c->allocmem);
	gdl_list_init(&c->alloc_list);
	c->nallocs = 0;
	gdl_pgtab_destroy(&c->allocs);
}


/*
 * The hit path's own page-table hints: the leaf of each of the last
 * 256 MiB ranges looked up, one per value of the range's low prefix bits
 * (a process's device memory spans a few ranges side by side: 4096
 * allocations of 64 KiB took four on an H100).  Kept as arrays of words
 * in one thread-local, so that a field of an entry is addressed from the
 * thread pointer, the variable's offset and the index alone: no register
 * for the thread's base or an entry's address.  Same rules as struct
 * gdl_pg_hint.
 */
#define CLASSIFY_HINTS 8
static __thread struct {
	uint64_t serial[CLASSIFY_HINTS], prefix[CLASSIFY_HINTS];
	const struct gdl_pgnode *leaf[CLASSIFY_HINTS];
} ch __attribute__((tls_model("initial-exec")));

/* Every case: checks, cache, BUFFER_ID, the driver's answer. */
static __attribute__((noinline)) int classify_full(struct gdirect_ctx *c,
						   const void *ptr,
						   struct gdirect_ptr_info *info)
{
	uint64_t a = (uintptr_t)ptr;
	struct gdl_cuquery q;
	struct gdl_epoch_slot *s;
	struct gdl_alloc *al;
	uintptr_t v;
	uint64_t seq;
	bool hit = false;

	if (!c || !info)
		return gdl_err(-EINVAL, "invalid argument");
	if (gdl_inherited(c))
		return gdl_err(-EPERM, "context inherited across fork");
	/* The cache first: it only holds answers a driver gave. */
	s = gdl_epoch_enter();
	v = (uintptr_t)gdl_pgtab_get(&c->allocs, a >> GDL_PAGE_SHIFT);
	if (v & GDL_AHOST) {
		/* Host answers: the slot's bit is the whole entry. */
		if (v & gdl_ahost_bit(a)) {
			fill(info, GDIRECT_MEM_CPU, -1, 0, 0, 0);
			hit = true;
		}
	} else if ((al = gdl_alloc_in_slot(v, a))) {
		*info = al->info;
		hit = true;
	}
	gdl_epoch_exit(s);
	if (hit && info->type != GDIRECT_MEM_CPU &&
	    !(c->p.invalidation & GDIRECT_INV_HOOKS)) {
		uint64_t id;

		hit = gdl_cuda_buffer_id(a, &id) == 0 && id == info->buffer_id;
	}
	if (!hit && !gdl_cuda_available()) {
		/* No driver: everything is CPU memory, nothing to cache. */
		fill(info, GDIRECT_MEM_CPU, -1, 0, 0, 0);
		hit = true;
	}
	if (hit) {
		GDL_SHARD_INC(c, classify_hits);
		return 0;
	}
	GDL_ST_INC(c, classify_misses);
	/* A free of this address reported while the driver answers keeps
	 * the answer out of the cache: cached, it would outlive the free it
	 * missed, and hand out the freed allocation's BUFFER_ID, and its
	 * regions, to the next allocation at the address.  The frees are
	 * counted and the last GDL_FREE_LOG logged (gdl_free_log_locked), so
	 * the check takes no lock here and only frees elsewhere in a burst
	 * longer than the log cost a needless miss later. */
	seq = atomic_load_explicit(&c->free_seq, memory_order_acquire);
	gdl_cuda_query(a, &q);
	GDL_RACE(GDL_RACE_CLASSIFY_QUERIED);
	if (q.type == GDIRECT_MEM_CPU)
		q.base = a;
	fill(info, q.type, q.device, q.base, q.size, q.buffer_id);
	if (q.type == GDIRECT_MEM_CPU && !(c->p.flags & GDIRECT_CTX_CACHE_HOST))
		return 0;
	pthread_mutex_lock(&c->lock);
	if (!gdl_freed_since_locked(c, seq, a)) {
		if (q.type != GDIRECT_MEM_CPU)
			gdl_alloc_update(c, &q);
		else
			host_update(c, &q);
	}
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static inline int classify_hit(struct gdirect_ctx *c, const void *ptr,
			       struct gdirect_ptr_info *info)
	__attribute__((always_inline));

/* No hint for ptr's 256 MiB range: walk to its leaf, keep it in the
 * range's hint and answer again through it (a range the cache has no leaf
 * for gets no hint: the full path).  Interior nodes live as long as the
 * table, so the walk needs no read section.  The answer is the hit path's
 * own copy, not a call of the exported function, which a preloaded
 * library could interpose. */
static __attribute__((noinline)) int classify_rehint(struct gdirect_ctx *c,
						     const void *ptr,
						     struct gdirect_ptr_info *info)
{
	uint64_t page = (uintptr_t)ptr >> GDL_PAGE_SHIFT;
	uint64_t prefix = page >> GDL_PG_BITS;
	unsigned hint = prefix & (CLASSIFY_HINTS - 1);
	const struct gdl_pgnode *n = gdl_pgtab_leaf(&c->allocs, page);

	if (!n)
		return classify_full(c, ptr, info);
	ch.serial[hint] = c->allocs.serial;
	ch.prefix[hint] = prefix;
	ch.leaf[hint] = n;
	return classify_hit(c, ptr, info);
}

/*
 * The cache hit, kept a leaf function: anything it does not answer
 * outright (a miss, a BUFFER_ID check, a thread's first call, an overflow
 * epoch slot, a bad argument) goes to classify_full(), which starts over
 * (a range without a hint to classify_rehint(), which makes one first).
 * What the hit path did before giving up, classify_full() redoes or
 * ignores: the read section is closed, the hints are caches, and *info,
 * written only when the answer was found, is written again.  With no
 * call left on it, no callee-saved register is saved and restored around
 * a hit: that was a fifth of its instructions, and instructions are what
 * a hit costs when a hyperthread sibling shares the core
 * (docs/performance.md).  The epoch slot is read again from the
 * thread-local at the exits rather than kept in a register: a register
 * kept live across the lookup was one pushed.
 */
static inline int classify_hit(struct gdirect_ctx *c, const void *ptr,
			       struct gdirect_ptr_info *info)
{
	struct gdl_epoch_slot *s = gdl_epoch_own_slot();
	uint64_t a = (uintptr_t)ptr, prefix = a >> (GDL_PAGE_SHIFT + GDL_PG_BITS);
	const struct gdl_alloc *al;
	unsigned hint;
	uintptr_t v;

	if (__builtin_expect(!c, 0) || __builtin_expect(!info, 0) ||
	    __builtin_expect(!s, 0) ||
	    __builtin_expect(gdl_inherited(c), 0))
		return classify_full(c, ptr, info);
	hint = prefix & (CLASSIFY_HINTS - 1);
	if (__builtin_expect(ch.serial[hint] != c->allocs.serial ||
			     ch.prefix[hint] != prefix, 0))
		return classify_rehint(c, ptr, info);
	gdl_epoch_enter_own(s);
	v = (uintptr_t)atomic_load_explicit(
		&ch.leaf[hint]->s[gdl_pg_idx(a >> GDL_PAGE_SHIFT, GDL_PG_LEVELS - 1)],
		memory_order_acquire);
	if (v & GDL_AHOST) {
		if (!(v & gdl_ahost_bit(a)))
			goto miss;
		gdl_epoch_exit_own(gdl_epoch_my_slot);
		fill(info, GDIRECT_MEM_CPU, -1, 0, 0, 0);
	} else {
		al = gdl_alloc_in_slot(v, a);
		if (!al || (al->info.type != GDIRECT_MEM_CPU &&
			    !(c->p.invalidation & GDIRECT_INV_HOOKS)))
			goto miss;
		*info = al->info;
		gdl_epoch_exit_own(gdl_epoch_my_slot);
	}
	/* A thread that owns no shard counts the hit out of line. */
	if (__builtin_expect(!GDL_SHARD_TRY_INC(c, classify_hits), 0))
		return gdl_shard_inc_slow(c, offsetof(struct gdl_shard,
						     classify_hits));
	return 0;
miss:
	gdl_epoch_exit_own(gdl_epoch_my_slot);
	return classify_full(c, ptr, info);
}

GDL_EXPORT int gdirect_classify(struct gdirect_ctx *c, const void *ptr,
			       struct gdirect_ptr_info *info)
{
	return classify_hit(c, ptr, info);
}
