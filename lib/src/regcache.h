/* SPDX-License-Identifier: MIT */
/*
 * regcache.h - the registration engine: what a cache of registrations of
 * one kind owns whatever the kind registers with.
 *
 * The engine keeps the regions of one (context, kind): the live list
 * (most recently used first, the LRU's order) and its index by domain,
 * space and address (rcindex.h), the dying list of regions
 * killed while referenced and its drain, the registrations in flight and
 * whether their memory was freed meanwhile, the thresholds max_regions
 * and max_bytes, which range a request registers (verbs_range.h), the
 * tag of each GPU region (its allocation's base and BUFFER_ID, checked on
 * every hit and by the sweep), SYNC_MEMOPS before a GPU allocation's first
 * registration, eviction and retry when the kind is refused for lack of
 * resources, at most GDL_RC_TRIES tries of a get whose memory is freed
 * under it, and a put in a fork child that only counts.  The kind
 * supplies an ops table: how to register and deregister one range in a
 * domain, which errors mean "refused for lack of resources", and which
 * regions share the refusing resource.
 */
#ifndef GDL_REGCACHE_H
#define GDL_REGCACHE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdirect.h"
#include "gdl_list.h"

/* Tries of one get whose memory keeps being freed or reallocated under
 * it, as the BAR cache's miss (rcache.c). */
#define GDL_RC_TRIES 8

struct gdirect_ctx;
struct gdl_rc;

/* One cached registration; a kind's region embeds it first. */
struct gdl_rc_region {
	uint64_t base, len;		/* registered range */
	int attr;			/* the kind's flags; a hit needs them all */
	void *dom;			/* the domain it was registered in */
	bool host;			/* host memory (no tag) */
	/* The allocation it was registered for (0, 0 for host memory). */
	uint64_t tag_base, tag_id;
	/*
	 * The space base and len are in: all zero for the process's virtual
	 * addresses, else an object of the kind's (a caller's dma-buf: its
	 * device, inode, size, and iova less offset), whose regions no reported
	 * free, sweep or allocation tag concerns: the registration itself
	 * keeps the object alive.
	 */
	uint64_t space[4];
	uint64_t id;			/* unique in the process */
	/* Changed under the engine's lock, except by a fork child's put,
	 * which only counts (the lock may be held by a parent thread). */
	_Atomic long refs;
	bool dead;			/* dying: no new references */
	struct gdl_list node;		/* on live (MRU first) or dying */
	/* Its place in the index of live regions (rcindex.h): its
	 * children, the largest end in its subtree, and its stamp, larger
	 * than those of every region after it on the live list; tkill
	 * links it, during one lookup or reported free, to the other
	 * regions that call may kill (NULL otherwise). */
	struct gdl_rc_region *tl, *tr, *tkill;
	uint64_t tmax, stamp;
	struct gdl_rc *rc;
};

/* What the engine counts, through the kind's count op. */
enum gdl_rc_event {
	GDL_RC_HIT,
	GDL_RC_EVICT,
	GDL_RC_DEREG,
};

struct gdl_rc_ops {
	size_t region_size;		/* the kind's region, gdl_rc_region first */
	/*
	 * Register r->base, r->len in r->dom with r->attr for memory that
	 * info classified; arg is the caller's.  0, or a negative errno with
	 * the reason set (gdl_err).
	 */
	int (*reg)(struct gdirect_ctx *c, const struct gdirect_ptr_info *info,
		   struct gdl_rc_region *r, void *arg);
	/* Deregister r (registered by reg); 0 when it went back. */
	int (*dereg)(struct gdl_rc_region *r);
	/* Whether reg's error rc says: refused for lack of resources. */
	bool (*refused)(int rc);
	/* Whether r holds the resources a refusal in dom lacks (the same
	 * device), so that evicting it may make room. */
	bool (*shares)(const struct gdl_rc_region *r, const void *dom);
	/* The domain's name for messages. */
	const char *(*dom_name)(const void *dom);
	void (*count)(struct gdirect_ctx *c, enum gdl_rc_event ev);
	/* Free the kind's own state (*gdl_rc_priv), with the engine. */
	void (*priv_free)(void *priv);
};

/* A request of gdl_rc_get. */
struct gdl_rc_req {
	void *dom;
	const void *ptr;
	size_t len;
	int attr;
	void *arg;			/* passed to ops->reg */
	/* NULL: ptr is a virtual address.  Else ptr is an offset in the
	 * object that space names (gdl_rc_region.space), which is
	 * space_size bytes long (0: not known). */
	const uint64_t *space;
	uint64_t space_size;
};

int gdl_rc_create(struct gdirect_ctx *c, const struct gdl_rc_ops *ops,
		  struct gdl_rc **out);
/* Release every region nobody holds; regions still held are released by
 * their last put (which then frees the engine).  In a fork child the
 * registrations are the parent's: only the copies are freed. */
void gdl_rc_destroy(struct gdl_rc *rc, bool in_child);
/* The kind's own state, NULL until the kind sets it. */
void **gdl_rc_priv(struct gdl_rc *rc);

/*
 * A referenced region serving req, registering it on a miss.  The
 * errors of gdirect_mr_get (gdirect_verbs.h) with their reasons set.
 */
int gdl_rc_get(struct gdl_rc *rc, struct gdirect_ctx *c,
	       struct gdl_rc_req *req, struct gdl_rc_region **out);
void gdl_rc_put(struct gdl_rc_region *r);
/* Whether r may still be used: not killed and, for GPU memory, its
 * allocation's BUFFER_ID still its tag. */
bool gdl_rc_valid(const struct gdl_rc_region *r);

/* Release the dying regions nobody holds, when one died unreferenced
 * since the last drain.  How many.  rc may be NULL (no such kind). */
int gdl_rc_drain(struct gdl_rc *rc);
/* Without hooks: kill the unused GPU regions whose allocation is gone.
 * How many. */
int gdl_rc_sweep(struct gdl_rc *rc);
/* A free of [s, e) was reported: kill the regions overlapping it and
 * mark the registrations in flight over it freed.  The context's lock
 * is held (gdl_invalidate). */
void gdl_rc_notify_locked(struct gdl_rc *rc, uint64_t s, uint64_t e);
/* Deregister the unused regions of dom (of every domain: dom NULL).
 * How many, or -EBUSY when dom still has regions held. */
int gdl_rc_flush(struct gdl_rc *rc, const void *dom);

#endif
