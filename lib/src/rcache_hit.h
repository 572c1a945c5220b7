/* SPDX-License-Identifier: MIT */
/*
 * rcache_hit.h - the registration cache's hit path: gdirect_reg_get(),
 * gdirect_reg_put() and what they inline.
 *
 * rcache.c includes this file once, between its kill and eviction code
 * and its miss path; nothing else may include it.  It is a header rather
 * than a file of its own because the hit inlines across the two: the
 * miss path shares validate() and put_ref(), and the hit calls
 * invalidate(), miss() and put_ref_slow() of rcache.c.  Moving the code
 * here changed no instruction of libgdirect.so.
 *
 * There are two hit paths:
 *  - The recent path (tc_recent) serves a request that lies in the region
 *    this thread last took through an entry in the request's page (the
 *    thread's per-page hints, tcache.h), provided nothing of the context
 *    was killed since (ctx->kgen is unchanged).  It counts the reference
 *    in that entry and checks the status word.  It does no lookup and
 *    does not read the region.
 *  - The lookup path (lookup_ref) copies the request page's slot in the
 *    hit path's index (slotab.h: 32 bytes per 64 KiB page, read as a
 *    seqlock), so it does not read the region's line either.  It counts
 *    the reference in the thread's entry for that region and reads the
 *    slot's word again.  When the entry is taken by another region that
 *    still counts references, it counts in r->refs instead, with a
 *    compare-and-swap in an epoch section (word_take).  Then it runs the
 *    validity check of the selected invalidation modes (validate).
 * A put takes the count off the thread's entry (or off r->refs) and
 * stores the LRU stamp there.  When the entry recorded the newest kill
 * generation of the process, the put does not read the region at all.
 *
 * The hit path keeps five constraints.  Each holds for the reason given,
 * and a change that breaks one needs a new argument, not only new code.
 *
 * 1. A hit takes no lock.  Getters and killers agree through a Dekker
 *    handshake instead (tcache.h: count, reader fence, reread the kill
 *    signal, which is the slot's word on the lookup path, slotab.h, and
 *    ctx->kgen on the recent path), and a region stays readable through
 *    epoch reclamation (epoch.h).  Only invalidate() and miss() take
 *    ctx->lock, and a get reaches them only after its hit failed; a put
 *    takes it only in put_ref_slow(), when it drops the last reference to
 *    a dead region and releases it.  The one lock inside a hit belongs to
 *    threads beyond GDL_EPOCH_SLOTS: their epoch sections (in word_take)
 *    share an rwlock (epoch.c).
 * 2. A hit makes no system call and, where membarrier is available,
 *    executes no locked instruction on the recent path, on a lookup hit
 *    through the thread's entry, or on the fast put.  The reader's fence
 *    (gdl_epoch_reader_fence) is a compiler barrier because the writers'
 *    side (gdl_epoch_sync_readers) pays with membarrier; without
 *    membarrier it is a full fence, a locked instruction.  The other
 *    cases' locked instructions are word_take()'s compare-and-swap,
 *    put_ref_slow()'s decrement of r->refs, and the shared statistics
 *    shards' add (gdl_shard_inc_slow, for threads beyond GDL_SHARDS).
 *    System calls come only with a thread's first hit, which claims its
 *    block of counts, epoch slot and shard (gdl_tc_claim, gdl_shard_assign)
 *    once, and with the put of a dead region's last reference, whose
 *    release fences the readers and unpins.
 * 3. A hit writes only lines that no other thread writes: its entry's
 *    count (and, when it takes the entry over, the entry's other fields),
 *    the put's LRU stamp beside the count, its hints and gdl_tc_last
 *    (thread-local), its epoch slot, and its statistics shard (a line of
 *    the context that only this thread writes).  Other threads read these
 *    lines (a killer's scan of the counts, gdirect_stats) but write them
 *    only when a releaser marks a released region's entries gone
 *    (gdl_tc_gone), once per release.  The documented exceptions write
 *    shared lines: word_take() counts in r->refs, put_ref_slow() puts
 *    such a reference in r->refs and r->stamp, and gdl_shard_inc_slow()
 *    counts in a shared shard.
 * 4. gdirect_reg_get() is a leaf function on a recent hit: it calls
 *    nothing and saves no register (its prologue pushes nothing).  Every
 *    other case leaves it by a tail call to a function kept out of line
 *    (noinline) so that its register pressure is not the recent path's:
 *    reg_get_lookup(), gdl_shard_inc_slow(), gdl_err().  On a lookup hit,
 *    reg_get_lookup() calls only these out-of-line slow paths:
 *    gdl_tc_claim() (the thread's first count), gdl_slotab_leaf_slow() (a
 *    leaf that is not in the thread's slot hints), word_take() (the entry
 *    counts another region), validate_tag() (BUFFER_ID mode, a CUDA call
 *    on every hit) and gdl_shard_inc_slow().  put_ref() calls only
 *    put_ref_slow().  New work on a hit goes into one of these or into a
 *    new noinline function, because an inline call would make the caller
 *    save registers on every hit.
 * 5. A hit reads little, and never a region it does not hold.  The recent
 *    path reads this thread's lines (gdl_tc_last, gdl_tc_mine, its entry and
 *    hint, gdl_my_shard_own), gdl_epoch_light, ctx->kgen, the region's
 *    status word in kernel mode, and its shard.  The lookup path also
 *    reads gdl_fork_gen and ctx->fork_gen, ctx->slots and one slot (its
 *    thread's slot hint, or the table's nodes), ctx->p.invalidation, the
 *    region's line only in word_take() inside an epoch section, and the
 *    region's cold part only in validate_tag().  The fast put reads its
 *    entry, gdl_kgen and gdl_lru_era, and neither the region (whose address
 *    picks the entry) nor its context.  A region is dereferenced only
 *    under a counted reference or inside an epoch section, and the slot's
 *    region pointer is handed out only once the count is in and the slot
 *    unchanged (docs/libgdirect.md, "Lifetime").
 *
 * To change the hit path safely (CONTRIBUTING.md has the same list):
 *  - Keep or rewrite, in the same commit, the comments of the protocol:
 *    this file's, tcache.h's, slotab.h's, epoch.c's, and docs/libgdirect.md
 *    ("Hit paths").
 *  - Run the race-hook tests.  They link libgdirect_races, the library
 *    built with -DGDL_RACE_HOOKS, where each GDL_RACE() point (slotab.h)
 *    calls a hook that the test sets: tests/unit/lib/slot.c,
 *    model.c, evict-race.c, release-wait.c.  A new window in the
 *    protocol gets a new gdl_race_point and a test that runs the race
 *    there.
 *  - Run the unit suite (meson test -C build --suite unit; under ASan and
 *    UBSan in build-san) and the TSan suite several times (meson test -C
 *    build-tsan --suite tsan --repeat 10): a race shows up by chance.
 *  - Run the guest test against the real driver,
 *    tests/guest/lib/rcache.c (make test).
 *  - Measure the hit before and after with make bench
 *    (bench/rcache/run.sh, which runs bench/rcache/rcache_bench; --quick
 *    or --repeats N for a short run), and put both figures in the commit
 *    message.
 *  - Count the instructions: objdump -d --no-show-raw-insn
 *    build/lib/libgdirect.so, function gdirect_reg_get, built at -O2
 *    (meson's debugoptimized default).  A recent hit through the thread's
 *    last entry, with a status word to check (kernel mode, a default) and
 *    a shard of its own, runs 52 instructions from the entry to its ret.
 *    A change that adds to that count says why in its commit message.
 */
#ifndef GDL_RCACHE_HIT_H
#define GDL_RCACHE_HIT_H

/* ---- recent path ------------------------------------------------------- */

/*
 * tc_covers() tells whether entry x's range holds [a, e), where
 * a < e < 2^63.  It uses one branch rather than two, because on random
 * requests "a is below the last entry's start" is a coin toss for the
 * predictor.  Entries' ranges are user addresses, below 2^63, so the sign
 * of each difference answers its comparison.  An empty entry (0 to 0)
 * holds nothing, since e > 0.
 */
static inline bool tc_covers(const struct gdl_tc_ent *x, uint64_t a,
			     uint64_t e)
{
	return (int64_t)((a - x->start) | (x->end - e)) >= 0;
}

/*
 * tc_recent() is the recent path.  It tries the entry of this thread's
 * last acquisition through an entry, then the entry that the thread's
 * hint for a's page names.  It takes that entry if it covers [a, e) and
 * nothing of c was killed since the entry saw its region live (c->kgen is
 * unchanged).  Because kgen values are unique, an unchanged kgen also
 * proves that the entry's region is c's.  It counts the reference in the
 * entry, and only then, after the reader fence, compares c->kgen with the
 * entry's (the Dekker recheck, tcache.h) and checks the status word.  It
 * reads no region, no slot and no field of c but kgen, and writes only
 * this thread's lines.  It returns the entry, whose r is the region, or
 * NULL with the count taken back.
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
 * tc_take() counts a reference to the region of slot s in this thread's
 * entry for it.  *k is the slot's copy, which showed the region live, and
 * kgen was read before the copy.  The entry is taken over if it counts
 * nothing.  Then the slot's word is read again (the Dekker recheck,
 * slotab.h): a kill or hold that races the count either shows in this
 * read or finds the count when it scans every thread's counts.  Only a
 * recheck that passes records kgen in the entry, because the recent path
 * trusts an entry exactly as long as c->kgen equals it.  tc_take() reads
 * nothing of the region.  It returns false if the entry is another
 * region's or the slot changed meanwhile (killed or held).
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

		/* The tag is cleared before the count changes, so a scan
		 * that read the old tag before this count finds the tag
		 * changed when it reads it again (gdl_tc_count). */
		atomic_store_explicit(&x->tag, 0, memory_order_relaxed);
		n = 0;
		atomic_store_explicit(&x->n, 1, memory_order_release);
		x->r = k->r;
		x->start = (p - (uint32_t)k->span) << GDL_PAGE_SHIFT;
		/* Tag mode checks every hit with a CUDA call, so it has
		 * no recent path: the entry's range stays empty. */
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
 * word_take() counts the reference in the region's shared word.  The
 * lookup path does this when this thread's entry for the region counts
 * another region.  A compare-and-swap refuses a dead or held region.  The
 * epoch section is entered before the slot is found unchanged, so r's
 * memory stays alive until the count is done.  This is the lookup path's
 * one write to a line that other threads write.  It is kept out of line
 * so that its epoch section and compare-and-swap loop do not add to the
 * lookup path's register pressure.
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
 * lookup_ref() is the lookup path.  When the slot of the request's first
 * page, copied consistently, names a live region whose extent holds
 * [a, e), it counts a reference in this thread's entry (or in the
 * region's word).  It reads one slot (32 bytes of one line) and the
 * thread's own lines, and reads the region's line only when the entry is
 * another region's.  It returns the region and sets *st to the status
 * word to check (NULL for none), or returns NULL to send the request to
 * the miss path.
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
	/* The slot says the page is the region's, so only the region's end
	 * can fall short of the request. */
	if (e > (p + (k.span >> 32) + 1) << GDL_PAGE_SHIFT)
		return NULL;
	/* The validity check reads the status word next, and that read
	 * likely misses the cache, so start it now. */
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

/*
 * validate_tag() runs the BUFFER_ID check: the allocation at a must still
 * have the buffer id that the region's allocation had when it was pinned.
 * A request outside the region's allocation is left to the miss path
 * (GDL_ASK_SLOW).  The check makes a CUDA call, so it is kept out of line:
 * inlined, it would cost registers in every mode and save nothing beside
 * the call.
 */
static __attribute__((noinline)) int validate_tag(struct gdirect_reg *r,
						  uint64_t a, uint64_t e)
{
	const struct gdl_reg_cold *x = RC(r);
	uint64_t id;

	if (a < x->tag_base || e > x->tag_base + x->tag_size)
		return GDL_ASK_SLOW;
	if (gdl_cuda_buffer_id(a, &id) < 0 || id != x->tag_id)
		return GDL_CAUSE_BUFFER_ID;
	return GDL_VALID;
}

/*
 * validate() checks a region that the lookup path (or the miss path, in
 * rcache.c) found against the selected invalidation modes.  It returns
 * GDL_VALID, a cause of invalidity, or GDL_ASK_SLOW when the tag check
 * needs the miss path (the request lies in another allocation than the
 * tag's).  st is r's status word, or NULL where kernel
 * mode checks none; the caller has it from the slot or the region.  It is
 * inline because in the default modes it costs a flag test and one load
 * of the status word.
 */
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
 * put_ref() puts a reference.  Its fast case is a reference that this
 * thread counted in its entry for r (found from r's address in the
 * thread's own block) when that entry names r, counts a reference, and
 * recorded the newest kill generation of the process (gdl_kgen).  An
 * unchanged gdl_kgen means that no context killed or held anything since
 * the entry saw r live, so r is not dead.  With several contexts, only
 * the one that killed or held last gets this case.  The put is then the
 * entry's two stores alone: it reads nothing of r or of its context, and
 * no line that another thread writes except gdl_kgen and gdl_lru_era, which
 * only kills and misses write.  A fork child's blocks start empty, so a
 * parent's region never matches.  Every other put goes to put_ref_slow()
 * in rcache.c.
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

/*
 * reg_get_lookup() serves a get that the recent path did not answer: it
 * tries the lookup path, then the miss path.  It is kept out of line so
 * that gdirect_reg_get(), whose recent path calls nothing, saves no
 * register.
 */
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
			SHARD_INC(c, hits);
			*out = r;
			return 0;
		}
		if (v != GDL_ASK_SLOW)
			invalidate(c, r, v);
		put_ref(r);
	}
	return miss(c, a, e, out);
}

/*
 * gdirect_reg_get() checks its arguments, then tries the recent path.  On
 * a recent hit it calls nothing: it is a leaf function that saves no
 * register.  Everything else leaves it by a tail call: reg_get_lookup(),
 * gdl_shard_inc_slow() or gdl_err().
 */
GDL_EXPORT int gdirect_reg_get(struct gdirect_ctx *c, const void *ptr,
			      size_t len, unsigned int flags,
			      struct gdirect_reg **out)
{
	uint64_t a = (uintptr_t)ptr, e = a + len;
	struct gdl_tc_ent *x;

	/* No user address reaches 2^63, and tc_covers() relies on that.
	 * With a and len - 1 below 2^63, a + len cannot wrap, so one test of
	 * bit 63 refuses a zero length, a wrapped end and an end reaching
	 * 2^63 (three branches here, not six). */
	if (!c || !out || flags || (a | ((uint64_t)len - 1) | e) >> 63)
		return gdl_err(-EINVAL, "invalid argument");
	/* The recent path may run before the fork check, because a fork
	 * child starts with empty entries and only lookup_ref(), which runs
	 * after that check, fills them. */
	x = tc_recent(c, a, e);
	if (__builtin_expect(x == NULL, 0))
		return reg_get_lookup(c, a, e, out);
	*out = x->r;
	/* A thread that owns no statistics shard counts out of line, so
	 * that the recent path calls nothing and saves no registers.  Such
	 * a thread has none yet (a lookup filled its entries, but that hit
	 * then failed validation) or uses one of the shared ones. */
	if (__builtin_expect(!SHARD_TRY_INC(c, hits), 0))
		return gdl_shard_inc_slow(c, offsetof(struct gdl_shard, hits));
	return 0;
}

/* gdirect_reg_put() puts a reference that gdirect_reg_get() took; a NULL
 * r does nothing. */
GDL_EXPORT void gdirect_reg_put(struct gdirect_reg *r)
{
	if (r)
		put_ref(r);
}

#endif
