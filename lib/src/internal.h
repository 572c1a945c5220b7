/* SPDX-License-Identifier: MIT */
/*
 * internal.h - libgdirect's context and region structures.  Never installed.
 */
#ifndef GD_INTERNAL_H
#define GD_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "gdirect.h"
#include "backend.h"
#include "ivtab.h"

#define GD_PAGE_SHIFT 16
#define GD_PAGE_SIZE (1ULL << GD_PAGE_SHIFT)
#define GD_ALIGN_DOWN(x) ((x) & ~(GD_PAGE_SIZE - 1))
#define GD_ALIGN_UP(x) (((x) + GD_PAGE_SIZE - 1) & ~(GD_PAGE_SIZE - 1))

#define GD_EXPORT __attribute__((visibility("default")))

/*
 * refs: number of references, plus GD_DEAD once the region has left the
 * index (invalidated, evicted or superseded).  A dead region takes no new
 * references; whoever sees it reach GD_DEAD|0 and wins 'released' unpins.
 */
#define GD_DEAD 0x80000000u
#define GD_REFS(v) ((v) & ~GD_DEAD)

enum gd_cause {
	GD_CAUSE_EVICT,		/* threshold */
	GD_CAUSE_EVICT_BAR,	/* pin ran out of BAR space */
	GD_CAUSE_KERNEL,
	GD_CAUSE_HOOKS,
	GD_CAUSE_BUFFER_ID,
	GD_CAUSE_SUPERSEDED,	/* replaced by a larger region */
	GD_CAUSE_FLUSH,
};

struct gdirect_reg {
	uint64_t start, end;		/* pinned range */
	_Atomic uint32_t refs;
	atomic_flag released;
	_Atomic uint64_t stamp;		/* LRU: time of the last put */
	struct gd_pin pin;
	uint64_t tag_base, tag_size, tag_id; /* allocation it was pinned for */
	int device;
	struct gdirect_ctx *ctx;
	_Atomic(void *) map;		/* CPU mapping of [start, end) */
	pthread_mutex_t map_lock;
	struct gdirect_reg *prev, *next; /* ctx->regions, while live */
	struct gdirect_reg *gc_next;	/* ctx->gc, deferred release */
};

/* A classified allocation (the classification cache). */
struct gd_alloc {
	uint64_t base, size;
	int type, device;
	uint64_t buffer_id;
	_Atomic int sync_done;
};

struct gd_pending {			/* a pin in progress */
	uint64_t start, end;
	struct gd_pending *next;
};

struct gd_counters {
	_Atomic uint64_t misses, pin_waits, pins, pin_failures, unpins,
		evictions, evictions_bar, inv_kernel, inv_hooks, inv_buffer_id,
		sync_memops, classify_misses, regions, bytes_pinned;
};

/*
 * Counters bumped on the hit paths, sharded by thread: one shared counter
 * written by every hit would bounce its cache line between cores and cost
 * more than the rest of the hit.
 */
#define GD_SHARDS 16
struct gd_shard {
	_Atomic uint64_t hits, classify_hits;
} __attribute__((aligned(64)));

unsigned gd_shard_index(void);
#define SHARD_INC(c, f) atomic_fetch_add_explicit(				\
	&(c)->shard[gd_shard_index()].f, 1, memory_order_relaxed)

struct gdirect_ctx {
	struct gdirect_params p;
	struct gd_backend *backend;	/* NULL: no pinning device */
	uint64_t fork_gen;		/* gd_fork_gen when created */

	/* Published tables, read without locks (epoch sections). */
	_Atomic(struct gd_ivtab *) index;	/* live regions */
	_Atomic(struct gd_ivtab *) allocs;	/* classification cache */

	pthread_mutex_t lock;		/* writers of both tables, lists below */
	pthread_cond_t pin_done;
	struct gdirect_reg regions;	/* list head of live regions */
	struct gd_pending *pending;
	struct gdirect_reg *gc;		/* dead, unused, release deferred */
	uint64_t nregions, nbytes;	/* live, under lock */

	struct gd_counters st;
	struct gd_shard shard[GD_SHARDS];

	struct gdirect_ctx *reg_next;	/* global list, for notify_free */
};

extern _Atomic uint64_t gd_fork_gen;

/*
 * LRU stamps.  Exact order would need one counter written by every put,
 * whose cache line then bounces between cores (measured: 8 threads hitting
 * took ~500 ns a hit instead of ~200).  So: the coarse monotonic clock (a
 * vDSO read of a page nobody writes; ms resolution) in the high bits, and a
 * per-thread sequence number in the low 24: exact within a thread,
 * millisecond-accurate across threads, which is plenty to choose what to
 * unpin.
 */
uint64_t gd_lru_stamp(void);

/* errmsg.c */
int gd_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* rcache.c */
void gd_region_put_internal(struct gdirect_reg *r);
void gd_kill_locked(struct gdirect_ctx *c, struct gdirect_reg **v, size_t n,
		    enum gd_cause cause, struct gdirect_reg **release);
void gd_release_list(struct gdirect_reg *list);
int gd_drain(struct gdirect_ctx *c);
int gd_ctx_create_backend(const struct gdirect_params *p,
			  struct gd_backend *b, struct gdirect_ctx **out);

/* classify.c */
struct gd_alloc *gd_alloc_update(struct gdirect_ctx *c, const void *q);
void gd_allocs_drop_locked(struct gdirect_ctx *c, uint64_t start, uint64_t end);
void gd_allocs_free_all(struct gdirect_ctx *c);

/* ctx.c */
void gd_ctx_list_add(struct gdirect_ctx *c);
void gd_ctx_list_del(struct gdirect_ctx *c);
void gd_ctx_list_foreach(void (*fn)(struct gdirect_ctx *, void *), void *arg);

#define ST_INC(c, f) atomic_fetch_add_explicit(&(c)->st.f, 1, memory_order_relaxed)
#define ST_ADD(c, f, v) atomic_fetch_add_explicit(&(c)->st.f, (v), memory_order_relaxed)
#define ST_SUB(c, f, v) atomic_fetch_sub_explicit(&(c)->st.f, (v), memory_order_relaxed)

#endif
