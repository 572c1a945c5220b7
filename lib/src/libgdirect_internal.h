/* SPDX-License-Identifier: MIT */
/*
 * libgdirect_internal.h - libgdirect's context and region structures.  Never installed.
 */
#ifndef GDL_INTERNAL_H
#define GDL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdirect.h"
#include "gdl_list.h"
#include "pin_backend.h"
#include "hpmem.h"
#include "pgtab.h"
#include "slotab.h"
#include "statsdir.h"
#include "tcache.h"

#define GDL_PAGE_SHIFT 16
#define GDL_PAGE_SIZE (1ULL << GDL_PAGE_SHIFT)
#define GDL_ALIGN_DOWN(x) ((x) & ~(GDL_PAGE_SIZE - 1))
#define GDL_ALIGN_UP(x) (((x) + GDL_PAGE_SIZE - 1) & ~(GDL_PAGE_SIZE - 1))

#define GDL_EXPORT __attribute__((visibility("default")))

/*
 * refs: GDL_REF_BIAS + the references counted here (the index's, and those
 * taken with a compare-and-swap or under ctx->lock), which may go below
 * zero when a reference counted in a thread's block (tcache.h) is put
 * through this word; the true count adds the blocks' counts.  GDL_DEAD once
 * the region has left the index (invalidated, evicted or superseded); a
 * dead region takes no new references.  GDL_HOLD while an eviction checks
 * that nobody uses it (refused like dead, then cleared or made dead).
 * GDL_RELEASED: the one thread that found the true count of a dead region
 * at zero unpins it.
 */
#define GDL_DEAD (1ULL << 63)
#define GDL_HOLD (1ULL << 62)
#define GDL_RELEASED (1ULL << 61)
#define GDL_REF_BIAS (1ULL << 40)
#define GDL_REF_FLAGS (GDL_DEAD | GDL_HOLD | GDL_RELEASED)
#define GDL_REFS(v) ((int64_t)(((v) & ~GDL_REF_FLAGS) - GDL_REF_BIAS))

enum gdl_cause {
	GDL_CAUSE_EVICT,		/* threshold */
	GDL_CAUSE_EVICT_BAR,	/* pin ran out of BAR space */
	GDL_CAUSE_KERNEL,
	GDL_CAUSE_HOOKS,
	GDL_CAUSE_BUFFER_ID,
	GDL_CAUSE_SUPERSEDED,	/* replaced by a larger region */
	GDL_CAUSE_FLUSH,
};

/*
 * A region is one cache line holding all that a hit touches, from
 * ctx->regmem, where these lines pack densely (64 KiB of them per thousand
 * regions); the rest, which only misses, releases and mappings use, is its
 * cold companion (gdl_reg_cold(), by address arithmetic).
 */
struct gdirect_reg {
	uint64_t start, end;		/* pinned range */
	_Atomic uint64_t refs;
	uint64_t id;			/* unique in the process: tcache tags */
	_Atomic uint64_t stamp;		/* LRU: time of the last put here */
	const uint32_t *status;		/* the pin's status word, or NULL */
	struct gdirect_ctx *ctx;
} __attribute__((aligned(64)));

struct gdl_reg_cold {
	struct gdl_pin pin;
	uint64_t tag_base, tag_size, tag_id; /* allocation it was pinned for */
	int device;
	_Atomic(void *) map;		/* CPU mapping of [start, end) */
	pthread_mutex_t map_lock;
	/* On ctx->live while indexed, then on ctx->dying until released;
	 * under ctx->lock. */
	struct gdl_list node;
	struct gdirect_reg *rel_next;	/* a caller's list of killed regions */
};

_Static_assert(sizeof(struct gdirect_reg) == 64, "a region is one line");

static inline struct gdl_reg_cold *gdl_reg_cold(const struct gdirect_reg *r)
{
	return gdl_hpmem_cold(r, sizeof(struct gdirect_reg),
			     (sizeof(struct gdl_reg_cold) + 63) & ~(size_t)63);
}
#define GDL_RC(r) gdl_reg_cold(r)

/* The region whose cold part holds list node n. */
static inline struct gdirect_reg *gdl_reg_of(const struct gdl_list *n)
{
	return gdl_hpmem_hot(gdl_container_of(n, struct gdl_reg_cold, node),
			     sizeof(struct gdirect_reg),
			     (sizeof(struct gdl_reg_cold) + 63) & ~(size_t)63);
}

/* A classified allocation (the classification cache).  A hit reads the
 * first line only: the range and the answer, ready to copy. */
struct gdl_alloc {
	uint64_t base, size;
	struct gdirect_ptr_info info;	/* what gdirect_classify() answers */
	int type, device;
	uint64_t buffer_id;
	/* second line */
	_Atomic int sync_done __attribute__((aligned(64)));
	struct gdl_list node;		/* on ctx->alloc_list, under ctx->lock */
	struct gdirect_ctx *ctx;
} __attribute__((aligned(64)));

/*
 * A 64 KiB page shared by several cached allocations (small allocations
 * are packed) points to an immutable bucket of them, tagged with the low
 * bit; a page covered by one allocation points to it directly.  Only the
 * first and last page of an allocation can be shared, since cached
 * allocations never overlap.
 */
struct gdl_abucket {
	unsigned n;
	struct gdl_alloc *a[];
};
#define GDL_ABUCKET 1u

/*
 * A 64 KiB page holding no cached device allocation keeps its cached CPU
 * answers (GDIRECT_CTX_CACHE_HOST) in the slot itself: tag GDL_AHOST, and
 * bit GDL_AHOST_SHIFT + i set when 4 KiB page i of it is known to be CPU
 * memory.  A CPU answer is the same for every CPU address (type, device -1,
 * no allocation), so a host hit needs nothing but the slot.
 */
#define GDL_AHOST 2u
#define GDL_AHOST_SHIFT 16
#define GDL_AHOST_GRAIN_SHIFT 12
#define GDL_AHOST_PAGES (1u << (GDL_PAGE_SHIFT - GDL_AHOST_GRAIN_SHIFT))

/* The bit of address a's 4 KiB page in a GDL_AHOST slot. */
static inline uintptr_t gdl_ahost_bit(uint64_t a)
{
	return (uintptr_t)1 << (GDL_AHOST_SHIFT +
		((a >> GDL_AHOST_GRAIN_SHIFT) & (GDL_AHOST_PAGES - 1)));
}

struct gdl_pending {			/* a pin in progress */
	uint64_t start, end;
	bool freed;			/* a free of part of it was reported */
	struct gdl_pending *next;
};

/*
 * The fields of struct gdirect_stats kept in struct gdl_counters (the rest,
 * hits and classify_hits, are sharded below).  gdirect_stats() copies these
 * and publish.c prints every field, so a new counter is added here and in
 * gdirect.h only.
 */
#define GDL_COUNTER_FIELDS(X)						\
	X(misses) X(pin_waits) X(pins) X(pin_failures) X(unpins)	\
	X(evictions) X(evictions_bar) X(release_waits) X(inv_kernel)	\
	X(inv_hooks) X(inv_buffer_id) X(sync_memops) X(classify_misses)	\
	X(regions) X(bytes_pinned) X(sync_memops_vmm) X(mr_hits)	\
	X(mr_regs_dmabuf) X(mr_regs_peer) X(mr_regs_host) X(mr_evictions) \
	X(mr_deregs)
#define GDL_STATS_FIELDS(X) X(hits) X(classify_hits) GDL_COUNTER_FIELDS(X)

#define GDL_COUNTER_DECL(f) _Atomic uint64_t f;
struct gdl_counters {
	GDL_COUNTER_FIELDS(GDL_COUNTER_DECL)
};
#undef GDL_COUNTER_DECL

/*
 * Counters bumped on the hit paths, sharded by thread: one shared counter
 * written by every hit would bounce its cache line between cores and cost
 * more than the rest of the hit.
 */
/*
 * Up to GDL_SHARDS live threads each own a shard, which only they write: a
 * plain load and store, no locked instruction.  A thread gives its shard
 * back when it exits.  Threads beyond that, and exiting threads that gave
 * theirs back, spread over GDL_SHARDS_SHARED more, incremented atomically.
 */
#define GDL_SHARDS 16
#define GDL_SHARDS_SHARED 4
struct gdl_shard {
	_Atomic uint64_t hits, classify_hits;
} __attribute__((aligned(64)));

extern __thread unsigned gdl_my_shard	/* 1 + index; 0: not assigned yet */
	__attribute__((tls_model("initial-exec")));
/* gdl_my_shard_own holds the byte offset, in a context, of the shard this
 * thread owns, or 0 when it owns none (none assigned yet, or a shared
 * one).  The hit paths' inline count reads it so that it needs one test
 * and no arithmetic on the shard index. */
extern __thread unsigned gdl_my_shard_own
	__attribute__((tls_model("initial-exec")));
unsigned gdl_shard_assign(void);
/* gdl_shard_inc_slow() is GDL_SHARD_INC out of line, for hit paths whose
 * inline count was refused.  It assigns the thread a shard first if it has
 * none, and returns 0 so that a hit path can tail-call it. */
int gdl_shard_inc_slow(struct gdirect_ctx *c, size_t field);

/* GDL_SHARD_INC adds one to field f of the thread's shard.  It counts inline
 * when the thread owns a shard, and calls gdl_shard_inc_slow() otherwise,
 * because only an owned shard can be written without a locked
 * instruction. */
#define GDL_SHARD_INC(c, f) do {						\
	struct gdirect_ctx *sc_ = (c);					\
									\
	if (__builtin_expect(!GDL_SHARD_TRY_INC(sc_, f), 0))		\
		gdl_shard_inc_slow(sc_, offsetof(struct gdl_shard, f));	\
} while (0)

/* GDL_SHARD_TRY_INC is GDL_SHARD_INC without a call, for hit paths kept leaf
 * functions.  It returns false and counts nothing when the thread owns no
 * shard (none yet, or a shared one); the caller then counts the hit with
 * gdl_shard_inc_slow(). */
#define GDL_SHARD_TRY_INC(c, f) \
	gdl_shard_try_inc((c), offsetof(struct gdl_shard, f))

/* Reported frees a context remembers (free_log). */
#define GDL_FREE_LOG 16

struct gdirect_ctx {
	struct gdirect_params p;
	struct gdl_backend *backend;	/* NULL: no pinning device */
	/* The kill generation is a process-wide unique value (from
	 * gdl_kgen).  It is replaced whenever a region of this context is
	 * killed or held, after the region's index slots changed.  A thread's
	 * entry that saw its region live at kgen can therefore trust, while
	 * kgen is unchanged, that the region is still live and that it is
	 * this context's region. */
	_Atomic uint64_t kgen;
	uint64_t fork_gen;		/* gdl_fork_gen when created */

	/* Page tables, read without locks (epoch sections), written under
	 * lock: every 64 KiB page of a live region points to it (regions are
	 * 64 KiB aligned and never overlap, so a page has at most one);
	 * every page of a cached allocation to it or to its bucket. */
	struct gdl_pgtab index;		/* live regions */
	struct gdl_slotab slots;	/* the same, as the hit path reads it */
	struct gdl_pgtab allocs;		/* classification cache */
	struct gdl_hpmem regmem;	/* struct gdirect_reg, in huge pages */
	struct gdl_hpmem allocmem;	/* struct gdl_alloc, likewise */

	pthread_mutex_t lock;		/* writers of both tables, lists below */
	pthread_cond_t pin_done;
	/* Dead regions whose release is owned by some thread (or queued on
	 * gc) but not yet unpinned: BAR space on its way back.  A miss that
	 * finds nothing left to evict waits for them (rcache.c). */
	atomic_uint releasing;
	atomic_uint release_waiters;
	uint64_t release_gen;		/* under lock: bumped by each release */
	pthread_cond_t released;	/* with lock: release_gen or drain moved */
	struct gdl_list live;		/* indexed regions (cold part's node) */
	struct gdl_list dying;		/* dead, not yet released */
	bool drain_due;			/* dying gained regions a drain may release */
	struct gdl_pending *pending;
	/* Pins' driver queries in progress (rcache.c): an answer asked for
	 * before a free of its memory was reported describes the freed
	 * allocation, so it is pinned only if no free of its range was
	 * reported meanwhile (notify.c marks them), else asked again. */
	struct gdl_pending *queries;
	/* Reported frees, counted under lock, and the last GDL_FREE_LOG of
	 * them (free_log[seq % GDL_FREE_LOG]): a classification caches its
	 * driver answer only if none of the frees reported since it asked
	 * overlaps its address (classify.c), which costs a miss of uncached
	 * host memory no lock. */
	_Atomic uint64_t free_seq;
	struct { uint64_t start, end; } free_log[GDL_FREE_LOG];
	uint64_t nregions, nbytes;	/* live, under lock */
	struct gdl_list alloc_list;	/* the cached allocations */
	uint64_t nallocs;

	struct gdl_counters st;
	struct gdl_shard shard[GDL_SHARDS + GDL_SHARDS_SHARED];

	struct gdirect_ctx *reg_next;	/* global list, for notify_free */
	/* The NIC kind's registration engine (regcache.c, verbs.c); NULL
	 * in a library built without verbs. */
	struct gdl_rc *mr;
	struct gdl_publisher *pub;	/* GDIRECT_CTX_PUBLISH_STATS, or NULL */
};

extern _Atomic uint64_t gdl_fork_gen;

/*
 * The fork check, the only one: true when c was created before a fork and
 * this process is the child.  A relaxed load is enough, because only the
 * atfork child handler writes gdl_fork_gen, while the child has a single
 * thread, and threads started later see the value through pthread_create.
 * It is inline because the lookup and classification hit paths call it.
 */
static inline bool gdl_inherited(const struct gdirect_ctx *c)
{
	return atomic_load_explicit(&gdl_fork_gen, memory_order_relaxed) !=
	       c->fork_gen;
}

/*
 * LRU stamps.  Exact order would need one counter written by every put,
 * and that counter's cache line would bounce between cores
 * (tests/reference/notes/rcache-targets.md has the cost).  So a stamp is the process's LRU
 * era, which every miss advances (a line that hits only read), in the
 * high bits, and a per-thread sequence number in the low 24.  It is exact
 * within a thread, and across threads exact up to the puts made between
 * two misses, which is what an eviction (done by a miss) needs to tell
 * apart.  A put reads no clock, because a clock read costs more than the
 * rest of the put (docs/libgdirect.md).
 */
extern __thread uint64_t gdl_my_seq __attribute__((tls_model("initial-exec")));
/* The LRU era, process-wide (advanced by every miss of every context):
 * a put finds it without reading its region or context. */
extern _Atomic uint64_t gdl_lru_era;

static inline uint64_t gdl_lru_stamp(void)
{
	return atomic_load_explicit(&gdl_lru_era, memory_order_relaxed) << 24 |
	       (++gdl_my_seq & 0xffffff);
}

/*
 * Where kill generations come from: a process-wide counter, whose every
 * value is some context's kgen for a while (ctx->kgen).  A put whose
 * entry recorded the newest value knows that nothing was killed or held
 * anywhere since, without reading its region or context (put_ref,
 * rcache_hit.h).
 */
extern _Atomic uint64_t gdl_kgen;

/*
 * The live region holding all of [a, e), or NULL: one page-table lookup and
 * a bounds check (a page belongs to one region at most).  In an epoch
 * section, or under ctx->lock.
 */
static inline struct gdirect_reg *gdl_region_find(const struct gdirect_ctx *c,
						 uint64_t a, uint64_t e)
{
	struct gdirect_reg *r = gdl_pgtab_get(&c->index, a >> GDL_PAGE_SHIFT);

	return r && r->start <= a && e <= r->end ? r : NULL;
}

/* The cached allocation holding address a in v, the value of a's slot in
 * ctx->allocs, or NULL.  Same rules. */
static inline struct gdl_alloc *gdl_alloc_in_slot(uintptr_t v, uint64_t a)
{
	const struct gdl_abucket *b;

	if (v & GDL_AHOST)	/* CPU answers only: no allocation */
		return NULL;
	if (!(v & GDL_ABUCKET)) {
		struct gdl_alloc *al = (struct gdl_alloc *)v;

		return al && a - al->base < al->size ? al : NULL;
	}
	b = (const struct gdl_abucket *)(v & ~(uintptr_t)GDL_ABUCKET);
	for (unsigned i = 0; i < b->n; i++)
		if (a - b->a[i]->base < b->a[i]->size)
			return b->a[i];
	return NULL;
}

/* The cached allocation holding address a, or NULL.  Same rules. */
static inline struct gdl_alloc *gdl_alloc_find(const struct gdirect_ctx *c,
					     uint64_t a)
{
	return gdl_alloc_in_slot((uintptr_t)gdl_pgtab_get(&c->allocs,
						       a >> GDL_PAGE_SHIFT), a);
}

/* Under ctx->lock: count a reported free of [s, e) and log it; of unknown
 * extent, it is logged as covering everything. */
static inline void gdl_free_log_locked(struct gdirect_ctx *c, uint64_t s,
				       uint64_t e, bool unknown)
{
	uint64_t n = atomic_load_explicit(&c->free_seq,
					  memory_order_relaxed) + 1;

	c->free_log[n % GDL_FREE_LOG].start = unknown ? 0 : s;
	c->free_log[n % GDL_FREE_LOG].end = unknown ? UINT64_MAX : e;
	atomic_store_explicit(&c->free_seq, n, memory_order_release);
}

/* Under ctx->lock: whether a free reported after count seq overlaps
 * address a (every one does once more than GDL_FREE_LOG came since). */
static inline bool gdl_freed_since_locked(const struct gdirect_ctx *c,
					  uint64_t seq, uint64_t a)
{
	uint64_t now = atomic_load_explicit(&c->free_seq, memory_order_relaxed);

	if (now - seq > GDL_FREE_LOG)
		return now != seq;
	for (uint64_t n = seq + 1; n <= now; n++)
		if (c->free_log[n % GDL_FREE_LOG].start <= a &&
		    a < c->free_log[n % GDL_FREE_LOG].end)
			return true;
	return false;
}

/* Under ctx->lock: announce a driver query about [s, e) (ctx->queries). */
static inline void gdl_query_announce_locked(struct gdirect_ctx *c,
					     struct gdl_pending *q,
					     uint64_t s, uint64_t e)
{
	*q = (struct gdl_pending){ .start = s, .end = e, .next = c->queries };
	c->queries = q;
}

/* Under ctx->lock: the query is over; returns whether a free of part of
 * its range was reported while it ran. */
static inline bool gdl_query_done_locked(struct gdirect_ctx *c,
					 struct gdl_pending *q)
{
	for (struct gdl_pending **pp = &c->queries; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	return q->freed;
}

/* gdl_my_shard_own uses 0 to mean "no shard", so no shard may sit at
 * offset 0, and every shard's offset must fit its unsigned. */
_Static_assert(offsetof(struct gdirect_ctx, shard) != 0,
	       "a shard at offset 0 would read as no shard");
_Static_assert(sizeof(struct gdirect_ctx) <= UINT32_MAX,
	       "shard offsets are unsigned");

static inline bool gdl_shard_try_inc(struct gdirect_ctx *c, size_t field)
{
	unsigned off = gdl_my_shard_own;
	_Atomic uint64_t *ctr;

	if (__builtin_expect(off == 0, 0))
		return false;
	/* Only this thread writes its own shard: no locked instruction. */
	ctr = (_Atomic uint64_t *)((char *)c + off + field);
	atomic_store_explicit(ctr, atomic_load_explicit(ctr,
			memory_order_relaxed) + 1, memory_order_relaxed);
	return true;
}

/* Bounds of the settings (environment and parameters). */
#define GDL_MAX_REGIONS_LIMIT (1ULL << 32)
#define GDL_MAX_BYTES_LIMIT (1ULL << 50)

/* errmsg.c */
int gdl_err(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* rcache.c */
int gdl_regions_init(struct gdirect_ctx *c);
void gdl_kill_locked(struct gdirect_ctx *c, struct gdirect_reg **v, size_t n,
		    enum gdl_cause cause, struct gdirect_reg **killed);
size_t gdl_release_try(struct gdirect_ctx *c);
void gdl_release_wake(struct gdirect_ctx *c);
size_t gdl_regions_overlapping(struct gdirect_ctx *c, uint64_t s, uint64_t e,
			      struct gdirect_reg **out, size_t max);
int gdl_drain(struct gdirect_ctx *c);
struct gdl_cuquery;
int gdl_sync_memops(struct gdirect_ctx *c, const struct gdl_cuquery *q,
		    int *cu_err, const bool *freed);

/*
 * notify.c: [s, e) was freed (e == s: the cached allocation at s, length
 * unknown).  Every region of c over it, of either kind, is killed, the
 * classification cache forgets it and registrations in progress over it
 * are told.  Takes ctx->lock; makes no CUDA or driver call.
 */
void gdl_invalidate(struct gdirect_ctx *c, uint64_t s, uint64_t e);

/* publish.c: statistics for `gdirect stat`, when the context opts in. */
int gdl_publish_start(struct gdirect_ctx *c);
void gdl_publish_stop(struct gdirect_ctx *c);
void gdl_publish_drop_in_child(struct gdirect_ctx *c);

/* classify.c */
struct gdl_alloc *gdl_alloc_update(struct gdirect_ctx *c, const void *q);
void gdl_allocs_drop_locked(struct gdirect_ctx *c, uint64_t start,
			    uint64_t end);
void gdl_allocs_free_all(struct gdirect_ctx *c);
int gdl_allocs_init(struct gdirect_ctx *c);

/* verbs.c (built with libibverbs): the NIC kind's engine (ctx->mr),
 * which lives and dies with its context (regcache.h). */
#ifdef GDL_HAVE_VERBS
int gdl_mr_init(struct gdirect_ctx *c);
#endif

/* The two versions of gdirect_mr_info (verbs.c says why): the one of
 * GDIRECT_0.2 writes GDL_MR_INFO_V02_SIZE bytes, the fields before valid
 * in struct gdirect_mr_info of gdirect_verbs.h. */
struct gdirect_mr;
struct gdirect_mr_info;
#define GDL_MR_INFO_V02_SIZE 48
int gdl_mr_info_v02(const struct gdirect_mr *m, void *info);
int gdl_mr_info_v03(const struct gdirect_mr *m, struct gdirect_mr_info *info);

/* ctx.c */
int gdl_ctx_create_backend(const struct gdirect_params *p,
			   struct gdl_backend *b, struct gdirect_ctx **out);
void gdl_ctx_list_add(struct gdirect_ctx *c);
void gdl_ctx_list_del(struct gdirect_ctx *c);
void gdl_ctx_list_foreach(void (*fn)(struct gdirect_ctx *, void *), void *arg);

#define GDL_ST_INC(c, f) atomic_fetch_add_explicit(&(c)->st.f, 1, memory_order_relaxed)
#define GDL_ST_ADD(c, f, v) atomic_fetch_add_explicit(&(c)->st.f, (v), memory_order_relaxed)
#define GDL_ST_SUB(c, f, v) atomic_fetch_sub_explicit(&(c)->st.f, (v), memory_order_relaxed)

#endif
