/* SPDX-License-Identifier: MIT */
/*
 * lib-thread-exit: libgdirect called from another library's thread-exit
 * destructor, after its own destructors ran.  Destructors of
 * thread-specific data run in an unspecified order, so a communication
 * library that puts its registrations or classifies a pointer when its
 * thread ends may well run after libgdirect's.
 *  - A thread that gave its epoch slot, block of reference counts and
 *    statistics shard back uses none of them again (each is another
 *    thread's to claim by then: a new owner would reset the block under
 *    its references, or close its read section for it), and still gets
 *    right answers while a new thread claims and uses them.
 *  - A thread that still counts a reference in its block at exit keeps
 *    the block until a later destructor puts it, so that the put comes
 *    off the block and the block is free again at once.
 *  - A thread whose libgdirect destructors ran claims nothing new (a
 *    first block, epoch slot or statistics shard), since in the last
 *    round of destructors a claim would never be given back.
 *
 * Linked against the static library: the test reads the thread's
 * per-thread pointers, which the shared library does not export.  The
 * test functions run in this order in one process, and the main thread
 * never hits (it claims no block): the first free block is the one the
 * previous thread gave back, which the tests rely on to see who got it.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>

#include "epoch.h"
#include "libgdirect_internal.h"
#include "tcache.h"
#include "tutil.h"

enum { ROUNDS = 20000 };

struct late {
	struct gdirect_ctx *c;
	struct gdl_backend *b;
	uint64_t x;			/* a registered 64 KiB allocation */
	struct gdirect_reg *expect;	/* its region */
	struct gdirect_reg *held;	/* a reference the thread exits with */
	struct gdl_tc_block *block;	/* the exiting thread's block */
	struct gdl_epoch_slot *slot;	/* and its epoch slot */
	unsigned shard;			/* and its gdl_my_shard */
	pthread_key_t key;
	int calls;			/* of the test's destructor */
	int work_call;			/* the call that does the work */
	void (*work)(struct late *h);
	bool worked;
	/* The destructor's handshake with the thread that claims what the
	 * exiting thread gave back. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool released, claimed;
	struct gdl_tc_block *claimer_block;
};

static void late_destructor(void *arg);

/* A context with one registered allocation; the main thread's get is a
 * miss, so it claims no block. */
static void setup(struct late *h, void (*work)(struct late *), int work_call)
{
	struct gdirect_params p;

	*h = (struct late){
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
		.work = work,
		.work_call = work_call,
	};
	params(&p, GDIRECT_INV_HOOKS);
	h->c = mkctx(&p, &(struct fake_cfg){ 0 }, &h->b);
	h->x = fake_cuda_alloc(64 * KiB);
	CHECK(h->x);
	CHECK_EQ(gdirect_reg_get(h->c, P(h->x), 64 * KiB, 0, &h->expect), 0);
	gdirect_reg_put(h->expect);
	CHECK_EQ(pthread_key_create(&h->key, late_destructor), 0);
}

/* Every reference is back: the region is unused, released by a flush, its
 * pin undone once. */
static void teardown(struct late *h)
{
	struct fake_stats fs;

	CHECK(h->worked);
	CHECK_EQ(gdirect_flush(h->c), 1);
	fake_backend_stats(h->b, &fs);
	CHECK_EQ(fs.unpins, 1);
	CHECK_EQ(fs.bad_unpins, 0);
	CHECK_EQ(fs.live, 0);
	pthread_key_delete(h->key);
	gdirect_ctx_destroy(h->c);
	fake_cuda_reset();
}

/* Gets, puts and classifications of h->x, each answer checked. */
static void use(struct late *h, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		struct gdirect_ptr_info info;
		struct gdirect_reg *r;

		CHECK_EQ(gdirect_reg_get(h->c, P(h->x + (uint64_t)(i % 16) * 4096),
					 4096, 0, &r), 0);
		CHECK(r == h->expect);
		gdirect_reg_put(r);
		CHECK_EQ(gdirect_classify(h->c, P(h->x + 8), &info), 0);
		CHECK_EQ(info.type, GDIRECT_MEM_DEVICE);
		CHECK_EQ(info.alloc_base, h->x);
	}
}

/* What a thread uses once libgdirect's destructors gave its resources
 * back: the paths of a thread beyond the pools' limits, nothing else. */
static void check_uses_nothing_given_back(void)
{
	CHECK(gdl_epoch_my_slot == &gdl_epoch_overflow);
	CHECK(gdl_tc_mine == &gdl_tc_none);
	CHECK(gdl_my_shard > GDL_SHARDS);
	CHECK_EQ(gdl_my_shard_own, 0);	/* what the inline count reads */
}

/*
 * The test's thread-exit destructor (its key made by setup(), its value
 * set by exiting()): it sets its value again until its call number
 * h->work_call, which asks for another round
 * of destructors each time; so that call comes after every destructor of
 * the first round, libgdirect's among them, whatever the order of the
 * keys.
 */
static void late_destructor(void *arg)
{
	struct late *h = arg;

	if (++h->calls < h->work_call) {
		CHECK_EQ(pthread_setspecific(h->key, h), 0);
		return;
	}
	h->work(h);
	h->worked = true;
}

enum calls { GETS_AND_CLASSIFY, CLASSIFY_ONLY, GETS_ONLY, MISS_ONLY };

struct exiting_arg {
	struct late *h;
	int hits;		/* before it exits */
	bool hold;		/* exit holding a reference */
	enum calls calls;	/* what it does before it exits */
};

static void *exiting(void *arg)
{
	struct exiting_arg *a = arg;
	struct late *h = a->h;

	if (a->calls == MISS_ONLY) {
		struct gdirect_ptr_info info;
		uint64_t y = fake_cuda_alloc(64 * KiB);

		CHECK(y);
		CHECK_EQ(gdirect_classify(h->c, P(y), &info), 0);
		CHECK_EQ(info.alloc_base, y);
	}
	for (int i = 0; i < a->hits; i++) {
		struct gdirect_ptr_info info;
		struct gdirect_reg *r;

		if (a->calls == MISS_ONLY)
			break;
		if (a->calls != CLASSIFY_ONLY) {
			CHECK_EQ(gdirect_reg_get(h->c, P(h->x), 1, 0, &r), 0);
			gdirect_reg_put(r);
		}
		if (a->calls != GETS_ONLY)
			CHECK_EQ(gdirect_classify(h->c, P(h->x), &info), 0);
	}
	if (a->hold) {
		CHECK_EQ(gdirect_reg_get(h->c, P(h->x), 1, 0, &h->held), 0);
		CHECK(h->held == h->expect);
	}
	h->block = gdl_tc_mine;
	h->slot = gdl_epoch_my_slot;
	h->shard = gdl_my_shard;
	CHECK_EQ(pthread_setspecific(h->key, h), 0);
	return NULL;
}

/* Run exiting() in a thread with the test's destructor, and wait for it. */
static void exit_thread(struct late *h, int hits, bool hold, enum calls calls)
{
	struct exiting_arg a = { h, hits, hold, calls };
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, exiting, &a), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
}

/* ---- a thread that gave everything back ----------------------------- */

static void gave_back_work(struct late *h)
{
	check_uses_nothing_given_back();
	/* Let another thread claim what was given back, and use it while
	 * this one goes on. */
	pthread_mutex_lock(&h->lock);
	h->released = true;
	pthread_cond_broadcast(&h->cond);
	while (!h->claimed)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
	use(h, ROUNDS);
	check_uses_nothing_given_back();
}

/* A new thread: claims the first free slot, block and shard (the exiting
 * thread's), then hits while the exiting thread's destructor does. */
static void *claimer(void *arg)
{
	struct late *h = arg;

	pthread_mutex_lock(&h->lock);
	while (!h->released)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
	use(h, 1);
	h->claimer_block = gdl_tc_mine;
	pthread_mutex_lock(&h->lock);
	h->claimed = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	use(h, ROUNDS);
	return NULL;
}

static void late_calls_use_nothing_given_back(void)
{
	struct gdirect_stats st0, st;
	struct late h;
	pthread_t t2;

	setup(&h, gave_back_work, 2);
	gdirect_stats(h.c, &st0);
	CHECK_EQ(pthread_create(&t2, NULL, claimer, &h), 0);
	exit_thread(&h, 4, false, GETS_AND_CLASSIFY);
	CHECK_EQ(pthread_join(t2, NULL), 0);
	/* The new thread did get the given-back block, while the exiting
	 * thread hit after giving it back. */
	CHECK(h.block != NULL && h.block != &gdl_tc_none);
	CHECK(h.claimer_block == h.block);
	/* Every get and classification was counted once. */
	gdirect_stats(h.c, &st);
	CHECK_EQ(st.hits - st0.hits, (uint64_t)(4 + ROUNDS + 1 + ROUNDS));
	CHECK_EQ(st.classify_hits - st0.classify_hits,
		 (uint64_t)(4 + ROUNDS + 1 + ROUNDS));
	CHECK_EQ(st.misses, st0.misses);
	teardown(&h);
}

/* ---- a thread that exits holding a reference ------------------------ */

static void held_work(struct late *h)
{
	/* The reference is still counted in the block, which the thread
	 * has kept: the put comes off it. */
	CHECK(gdl_tc_mine == h->block);
	CHECK_EQ(atomic_load(&h->block->owned), 1);
	gdirect_reg_put(h->held);
}

static void *first_hit(void *arg)
{
	struct late *h = arg;
	struct gdirect_reg *r;

	CHECK_EQ(gdirect_reg_get(h->c, P(h->x), 1, 0, &r), 0);
	gdirect_reg_put(r);
	h->claimer_block = gdl_tc_mine;
	return NULL;
}

static void late_put_comes_off_the_block(void)
{
	struct late h;
	pthread_t t;

	setup(&h, held_work, 2);
	exit_thread(&h, 2, true, GETS_AND_CLASSIFY);
	CHECK(h.block != NULL && h.block != &gdl_tc_none);
	/* Nothing is left counted in the block: the next thread gets it
	 * (with the put off the shared word instead, the block would keep
	 * a count of 1 until the region goes, and the next thread another
	 * block). */
	CHECK_EQ(pthread_create(&t, NULL, first_hit, &h), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK(h.claimer_block == h.block);
	teardown(&h);
}

/* ---- first claims in a late round ----------------------------------- */

static void last_round_work(struct late *h)
{
	struct gdirect_reg *r;

	/* The thread's first get or first classification: it would claim
	 * its first block or epoch slot. */
	CHECK_EQ(gdirect_reg_get(h->c, P(h->x), 1, 0, &r), 0);
	CHECK(r == h->expect);
	gdirect_reg_put(r);
	use(h, 2);
	check_uses_nothing_given_back();
}

/* A late round of destructors, by a thread that only classified (no
 * block yet), by one that only got registrations (no epoch slot yet) and
 * by one whose only call was a classification that missed (no block and
 * no statistics shard yet: only hits are counted in shards): each first
 * claim is refused; the rest is the given-back case above.
 * Round 3 of 4 rather than the last, where a claim would never be given
 * back: ThreadSanitizer tears down its own state of the thread in the last
 * round, and nothing instrumented may run there.  A claim refused in round
 * 3 is refused in round 4 alike. */
static void late_first_claims_nothing(void)
{
	struct gdirect_stats st0, st;
	struct late h;

	setup(&h, last_round_work, PTHREAD_DESTRUCTOR_ITERATIONS - 1);
	gdirect_stats(h.c, &st0);
	exit_thread(&h, 3, false, CLASSIFY_ONLY);
	CHECK(h.block == NULL);
	CHECK(h.slot != NULL && h.slot != &gdl_epoch_overflow);
	CHECK(h.worked);
	h.calls = 0;
	h.worked = false;
	exit_thread(&h, 3, false, GETS_ONLY);
	CHECK(h.block != NULL && h.block != &gdl_tc_none);
	CHECK(h.slot == NULL);
	h.calls = 0;
	h.worked = false;
	exit_thread(&h, 0, false, MISS_ONLY);
	CHECK(h.block == NULL);
	CHECK_EQ(h.shard, 0);
	/* An epoch slot: so one of libgdirect's destructors ran. */
	CHECK(h.slot != NULL && h.slot != &gdl_epoch_overflow);
	gdirect_stats(h.c, &st);
	/* work, gets, work, work */
	CHECK_EQ(st.hits - st0.hits, 3 + 3 + 3 + 3);
	/* classify, work, work, work */
	CHECK_EQ(st.classify_hits - st0.classify_hits, 3 + 2 + 2 + 2);
	CHECK_EQ(st.classify_misses - st0.classify_misses, 1);
	teardown(&h);
}

int main(void)
{
	need_fake_cuda();
	TAP_TEST(late_calls_use_nothing_given_back);
	TAP_TEST(late_put_comes_off_the_block);
	TAP_TEST(late_first_claims_nothing);
	return tap_done();
}
