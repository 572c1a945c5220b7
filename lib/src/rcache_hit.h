/* SPDX-License-Identifier: MIT */
/*
 * rcache_hit.h - the registration cache's hit path: gdirect_reg_get(),
 * gdirect_reg_put() and what they inline.  rcache.c includes it once,
 * between its kill code and its miss path, so that the hit inlines across
 * both; nothing else includes it.  This comment is the one statement of
 * the hit path's protocol; CONTRIBUTING.md and docs/libgdirect.md cite it.
 *
 * A get tries the recent path (tc_recent: the thread's last entry or its
 * hint for the page, trusted while ctx->kgen is unchanged), then the
 * lookup path (lookup_ref: the page's slot in slotab.h, read as a
 * seqlock), then the miss path in rcache.c.  A reference is counted in the
 * thread's own entry (tcache.h) or, when that entry counts another region,
 * in r->refs (word_take).  The hit path keeps these invariants:
 *
 * 1. A hit takes no lock.  Getters and killers agree through the Dekker
 *    handshake of tcache.h, and a region stays readable through epoch
 *    reclamation (epoch.h), so a lock would only serialize readers.  Locks
 *    come after a hit failed (invalidate(), miss()), on the put of a dead
 *    region's last reference (put_ref_slow()), and in the epoch sections
 *    of threads beyond GDL_EPOCH_SLOTS, which share an rwlock.
 * 2. A hit makes no system call, and with membarrier the recent path, a
 *    lookup hit through the thread's entry and the fast put execute no
 *    locked instruction: the reader's fence is a compiler barrier because
 *    the writers pay with membarrier.  The exceptions are word_take()'s
 *    compare-and-swap, put_ref_slow(), gdl_shard_inc_slow(), and a
 *    thread's first hit, which claims its block, epoch slot and shard.
 * 3. A hit writes only lines that no other thread writes (its entry, its
 *    hints and gdl_tc_last, its epoch slot, its statistics shard), so hits
 *    of different threads never contend for a line.  Other threads write
 *    those lines only when a release marks entries gone (gdl_tc_gone).  The
 *    exceptions are word_take(), put_ref_slow() and gdl_shard_inc_slow().
 * 4. gdirect_reg_get() is a leaf on a recent hit and leaves every other
 *    case by a tail call to a noinline function; reg_get_lookup() and
 *    put_ref() call only noinline slow paths.  An inline call would make
 *    the caller save registers on every hit, so new work goes into a
 *    noinline function.
 * 5. A hit dereferences a region only under a counted reference or inside
 *    an epoch section, and hands out the slot's region pointer only once
 *    the count is in and the slot is unchanged, because a region with no
 *    reference may be freed at any time.  The recent path and the fast put
 *    do not read the region at all; the lookup path reads its line only in
 *    word_take() and its cold part only in validate_tag().
 *
 * A change to the hit path keeps these comments true in the same commit
 * (with tcache.h's, slotab.h's and epoch.c's), adds a GDL_RACE() point and
 * a race-hook test for a new window (tests/unit/lib/slot.c, model.c,
 * evict-race.c, release-wait.c), passes the unit suite under ASan and
 * UBSan, the tsan suite repeated, and tests/guest/lib/rcache.c, and puts
 * make bench's hit figures before and after in its commit message.
 */
#ifndef GDL_RCACHE_HIT_H
#define GDL_RCACHE_HIT_H

/* ---- recent path ------------------------------------------------------- */

/*
 * Whether x's range holds [a, e), with a < e < 2^63.  Addresses are below
 * 2^63, so one sign test answers both comparisons: one branch, not two
 * unpredictable ones.
 */
static inline bool tc_covers(const struct gdl_tc_ent *x, uint64_t a,
			     uint64_t e)
{
	return (int64_t)((a - x->start) | (x->end - e)) >= 0;
}

/*
 * The recent path: the entry is trusted while c->kgen equals the kgen it
 * recorded, because kgen values are unique and change on every kill of c.
 * The count goes in before kgen is read again (the Dekker recheck).
 */
static inline struct gdl_tc_ent *tc_recent(struct gdirect_ctx *c,
					  uint64_t a, uint64_t e)
{
	struct gdl_tc_ent *x = gdl_tc_last;
	int64_t n;

	if (__builtin_expect(!x || !tc_covers(x, a, e), 0)) {
		struct gdl_tc_block *b = gdl_tc_mine;

		if (!b)
			return NULL;
		x = *gdl_tc_hint(b, a);	/* gdl_tc_none's hints are NULL */
		if (!x || !tc_covers(x, a, e))
			return NULL;
		gdl_tc_last = x;
	}
	n = atomic_load_explicit(&x->n, memory_order_relaxed);
	atomic_store_explicit(&x->n, n + 1, memory_order_release);
	gdl_epoch_reader_fence();
	if (__builtin_expect(atomic_load_explicit(&c->kgen, memory_order_acquire)
			     != x->kgen || (x->status &&
			     __atomic_load_n(x->status, __ATOMIC_ACQUIRE) !=
			     GDL_STATUS_PINNED), 0)) {
		atomic_store_explicit(&x->n, n, memory_order_release);
		return NULL;
	}
	return x;
}

/* ---- lookup path ------------------------------------------------------- */

/*
 * Counts a reference to slot s's region in this thread's entry, then
 * rereads the slot's word (the Dekker recheck).  kgen, read before the
 * copy *k, is recorded only after the recheck passes, because the recent
 * path trusts the entry as long as c->kgen equals it.
 */
static inline bool tc_take(struct gdirect_ctx *c, const struct gdl_slot *s,
			   const struct gdl_slot_copy *k, uint64_t kgen,
			   uint64_t a)
{
	struct gdl_tc_block *b = gdl_tc_block();
	struct gdl_tc_ent *x;
	uint64_t t, id = k->w >> 1;
	int64_t n;

	if (!b)
		return false;
	x = &b->e[gdl_tc_way(k->r)];
	t = atomic_load_explicit(&x->tag, memory_order_relaxed);
	n = atomic_load_explicit(&x->n, memory_order_relaxed);
	if (t == id) {
		atomic_store_explicit(&x->n, n + 1, memory_order_release);
	} else if (n == 0 || (t & GDL_TC_GONE)) {
		uint64_t p = a >> GDL_PAGE_SHIFT;

		/* Tag cleared first: a scan rereads it (gdl_tc_count). */
		atomic_store_explicit(&x->tag, 0, memory_order_relaxed);
		n = 0;
		atomic_store_explicit(&x->n, 1, memory_order_release);
		x->r = k->r;
		x->start = (p - (uint32_t)k->span) << GDL_PAGE_SHIFT;
		/* Tag mode has no recent path: an empty range. */
		x->end = c->p.invalidation & GDIRECT_INV_BUFFER_ID ? 0 :
			 (p + (k->span >> 32) + 1) << GDL_PAGE_SHIFT;
		x->status = k->status;
		x->kgen = 0;
		atomic_store_explicit(&x->tag, id, memory_order_release);
	} else {
		return false;
	}
	GDL_RACE(GDL_RACE_COUNTED);
	gdl_epoch_reader_fence();
	if (__builtin_expect(atomic_load_explicit(&s->w, memory_order_relaxed)
			     != k->w, 0)) {
		atomic_store_explicit(&x->n, n, memory_order_release);
		GDL_RACE(GDL_RACE_BACKED_OFF);
		return false;
	}
	x->kgen = kgen;
	*gdl_tc_hint(b, a) = x;
	gdl_tc_last = x;
	return true;
}

/*
 * Counts in r->refs when the thread's entry is another region's.  The
 * epoch section opens before the slot is rechecked, so r stays allocated
 * until the compare-and-swap, which refuses a dead or held region.
 */
static __attribute__((noinline)) bool word_take(const struct gdl_slot *s,
						const struct gdl_slot_copy *k)
{
	struct gdl_epoch_slot *es = gdl_epoch_enter();
	struct gdirect_reg *r = k->r;
	bool ok = false;

	if (atomic_load_explicit(&s->w, memory_order_acquire) == k->w) {
		uint64_t v = atomic_load_explicit(&r->refs, memory_order_relaxed);

		do {
			if (v & (GDL_DEAD | GDL_HOLD))
				break;
			ok = atomic_compare_exchange_weak_explicit(&r->refs,
					&v, v + 1, memory_order_acquire,
					memory_order_relaxed);
		} while (!ok);
	}
	gdl_epoch_exit(es);
	return ok;
}

/*
 * The lookup path: returns the counted region and its status word in *st,
 * or NULL for the miss path.
 */
static inline struct gdirect_reg *lookup_ref(struct gdirect_ctx *c,
					     uint64_t a, uint64_t e,
					     const uint32_t **st)
{
	uint64_t kgen = atomic_load_explicit(&c->kgen, memory_order_acquire);
	uint64_t p = a >> GDL_PAGE_SHIFT;
	const struct gdl_slot *s = gdl_slotab_get(&c->slots, p);
	struct gdl_slot_copy k;

	if (!s || !gdl_slot_read(s, &k))
		return NULL;
	if (e > (p + (k.span >> 32) + 1) << GDL_PAGE_SHIFT)
		return NULL;
	if (k.status)
		__builtin_prefetch(k.status);
	GDL_RACE(GDL_RACE_SLOT_COPIED);
	if (!tc_take(c, s, &k, kgen, a) && !word_take(s, &k))
		return NULL;
	*st = k.status;
	return k.r;
}

#define GDL_VALID 0
#define GDL_ASK_SLOW (-1)

/* The BUFFER_ID check: the allocation at a still has the region's buffer
 * id.  It makes a CUDA call, so it stays out of line. */
static __attribute__((noinline)) int validate_tag(struct gdirect_reg *r,
						  uint64_t a, uint64_t e)
{
	const struct gdl_reg_cold *x = GDL_RC(r);
	uint64_t id;

	if (a < x->tag_base || e > x->tag_base + x->tag_size)
		return GDL_ASK_SLOW;
	if (gdl_cuda_buffer_id(a, &id) < 0 || id != x->tag_id)
		return GDL_CAUSE_BUFFER_ID;
	return GDL_VALID;
}

/* Checks r against the selected invalidation modes: GDL_VALID, a cause,
 * or GDL_ASK_SLOW for the miss path.  st is NULL where none is checked. */
static inline int validate(struct gdirect_ctx *c, struct gdirect_reg *r,
			   const uint32_t *st, uint64_t a, uint64_t e)
{
	uint32_t inv = c->p.invalidation;

	if ((inv & GDIRECT_INV_KERNEL) && st &&
	    __builtin_expect(__atomic_load_n(st, __ATOMIC_ACQUIRE) !=
			     GDL_STATUS_PINNED, 0))
		return GDL_CAUSE_KERNEL;
	if (__builtin_expect(inv & GDIRECT_INV_BUFFER_ID, 0))
		return validate_tag(r, a, e);
	return GDL_VALID;
}

/* ---- put --------------------------------------------------------------- */

/*
 * The fast put needs no read of r: an entry that names r and recorded the
 * process's newest kill generation (gdl_kgen) proves r is not dead, since
 * nothing was killed or held anywhere since.  Other puts go to
 * put_ref_slow().
 */
static inline void put_ref(struct gdirect_reg *r)
{
	struct gdl_tc_block *b = gdl_tc_mine;

	if (__builtin_expect(b != NULL, 1)) {
		struct gdl_tc_ent *x = &b->e[gdl_tc_way(r)];
		int64_t n = atomic_load_explicit(&x->n, memory_order_relaxed);

		if (__builtin_expect(x->r == r && n > 0 && x->kgen ==
				     atomic_load_explicit(&gdl_kgen,
							  memory_order_relaxed),
				     1)) {
			atomic_store_explicit(&x->stamp, gdl_lru_stamp(),
					      memory_order_relaxed);
			atomic_store_explicit(&x->n, n - 1,
					      memory_order_release);
			return;
		}
	}
	put_ref_slow(r);
}

/* ---- entry points ------------------------------------------------------ */

/* The lookup path, then the miss path; out of line (invariant 4). */
static __attribute__((noinline)) int reg_get_lookup(struct gdirect_ctx *c,
						    uint64_t a, uint64_t e,
						    struct gdirect_reg **out)
{
	const uint32_t *st = NULL;
	struct gdirect_reg *r;

	if (gdl_inherited(c))
		return gdl_err(-EPERM, "context inherited across fork");
	r = lookup_ref(c, a, e, &st);
	if (r) {
		int v = validate(c, r, st, a, e);

		if (__builtin_expect(v == GDL_VALID, 1)) {
			GDL_SHARD_INC(c, hits);
			*out = r;
			return 0;
		}
		if (v != GDL_ASK_SLOW)
			invalidate(c, r, v);
		put_ref(r);
	}
	return miss(c, a, e, out);
}

/* A leaf on a recent hit; every other case is a tail call (invariant 4). */
GDL_EXPORT int gdirect_reg_get(struct gdirect_ctx *c, const void *ptr,
			      size_t len, unsigned int flags,
			      struct gdirect_reg **out)
{
	uint64_t a = (uintptr_t)ptr, e = a + len;
	struct gdl_tc_ent *x;

	/* With a and len - 1 below 2^63, a + len cannot wrap, so bit 63
	 * refuses a zero length, a wrap and an end at 2^63 (tc_covers()). */
	if (!c || !out || flags || (a | ((uint64_t)len - 1) | e) >> 63)
		return gdl_err(-EINVAL, "invalid argument");
	/* Before the fork check: a fork child's entries start empty. */
	x = tc_recent(c, a, e);
	if (__builtin_expect(x == NULL, 0))
		return reg_get_lookup(c, a, e, out);
	*out = x->r;
	if (__builtin_expect(!GDL_SHARD_TRY_INC(c, hits), 0))
		return gdl_shard_inc_slow(c, offsetof(struct gdl_shard, hits));
	return 0;
}

/* A NULL r does nothing. */
GDL_EXPORT void gdirect_reg_put(struct gdirect_reg *r)
{
	if (r)
		put_ref(r);
}

#endif
