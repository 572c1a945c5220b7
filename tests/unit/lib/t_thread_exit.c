/* SPDX-License-Identifier: MIT */
/*
 * t_thread_exit: libgdirect called from another library's thread-exit
 * destructor, after its own destructors gave back the thread's epoch slot,
 * its block of reference counts and its statistics shard.  Destructors of
 * thread-specific data run in an unspecified order, so a communication
 * library that puts its registrations or classifies a pointer when its
 * thread ends may well run after libgdirect's.  By then each of those is
 * another thread's to claim; the exiting thread must use none of them
 * again (a new owner would reset the block under its references, or close
 * its read section for it), and still get right answers: references
 * through the regions' shared words, read sections under the overflow
 * lock, counts in a shared shard.
 *
 * Linked against the static library: the test reads the thread's
 * per-thread pointers, which the shared library does not export.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "epoch.h"
#include "libgdirect_internal.h"
#include "tcache.h"
#include "tutil.h"

enum { ROUNDS = 20000 };

struct late {
	struct gdirect_ctx *c;
	uint64_t x;			/* a registered 64 KiB allocation */
	struct gdirect_reg *expect;	/* its region */
	struct gdirect_reg *held;	/* counted in the exiting block */
	pthread_key_t key;
	int calls;			/* of the destructor */
	bool checked;			/* its second call ran the checks */
	/* The destructor's handshake with the thread that claims what the
	 * exiting thread gave back. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool released, claimed;
};

/* What a thread holds of the library's per-thread state is its own: no
 * slot or block with its owned flag down, and once the library's
 * destructor gave its shard back, no private shard. */
static void check_owns_what_it_uses(bool gave_back)
{
	struct gd_epoch_slot *s = gd_epoch_my_slot;
	struct gd_tc_block *b = gd_tc_mine;

	CHECK(s == NULL || s == &gd_epoch_overflow || atomic_load(&s->owned));
	CHECK(b == NULL || b == &gd_tc_none || atomic_load(&b->owned));
	/* A private shard is written without atomics: never a given-back
	 * one.  (Which private shards are owned is the library's secret;
	 * after its destructor the thread needs none.) */
	if (gave_back)
		CHECK(gd_my_shard == 0 || gd_my_shard > GD_SHARDS);
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

/*
 * The exiting thread's destructor.  Its first call sets its value again,
 * which asks for another round of destructors: the second call comes
 * after every destructor of the first round, libgdirect's among them,
 * whatever the order of the keys.
 */
static void late_destructor(void *arg)
{
	struct late *h = arg;

	if (++h->calls == 1) {
		CHECK_EQ(pthread_setspecific(h->key, h), 0);
		return;
	}
	check_owns_what_it_uses(true);
	/* Let another thread claim what was given back, and use it while
	 * this one goes on. */
	pthread_mutex_lock(&h->lock);
	h->released = true;
	pthread_cond_broadcast(&h->cond);
	while (!h->claimed)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
	use(h, ROUNDS);
	check_owns_what_it_uses(true);
	gdirect_reg_put(h->held);	/* counted in the given-back block */
	h->checked = true;
}

static void *exiting(void *arg)
{
	struct late *h = arg;

	use(h, 4);		/* hits through the thread's own block */
	CHECK_EQ(gdirect_reg_get(h->c, P(h->x), 1, 0, &h->held), 0);
	CHECK(h->held == h->expect);
	CHECK_EQ(pthread_setspecific(h->key, h), 0);
	return NULL;
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
	check_owns_what_it_uses(false);
	pthread_mutex_lock(&h->lock);
	h->claimed = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	use(h, ROUNDS);
	return NULL;
}

static void late_calls_use_nothing_given_back(void)
{
	struct gdirect_params p;
	struct gd_backend *b;
	struct gdirect_stats st0, st;
	struct fake_stats fs;
	pthread_t t1, t2;
	struct late h = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};

	params(&p, GDIRECT_INV_HOOKS);
	h.c = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	h.x = fake_cuda_alloc(64 * KiB);
	CHECK(h.x);
	/* The main thread registers first: the library's keys exist before
	 * the test's, and slot, block and shard 0 are the main thread's. */
	CHECK_EQ(gdirect_reg_get(h.c, P(h.x), 64 * KiB, 0, &h.expect), 0);
	gdirect_reg_put(h.expect);
	CHECK_EQ(pthread_key_create(&h.key, late_destructor), 0);
	gdirect_stats(h.c, &st0);

	CHECK_EQ(pthread_create(&t1, NULL, exiting, &h), 0);
	CHECK_EQ(pthread_create(&t2, NULL, claimer, &h), 0);
	CHECK_EQ(pthread_join(t1, NULL), 0);
	CHECK_EQ(pthread_join(t2, NULL), 0);
	CHECK(h.checked);

	/* Every get was counted once, and every reference is back: the
	 * region is unused, released by a flush, its pin undone once. */
	gdirect_stats(h.c, &st);
	CHECK_EQ(st.hits - st0.hits, (uint64_t)(4 + 1 + ROUNDS + 1 + ROUNDS));
	CHECK_EQ(st.misses, st0.misses);
	CHECK_EQ(gdirect_flush(h.c), 1);
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.unpins, 1);
	CHECK_EQ(fs.bad_unpins, 0);
	CHECK_EQ(fs.live, 0);
	pthread_key_delete(h.key);
	gdirect_ctx_destroy(h.c);
	fake_cuda_reset();
}

int main(void)
{
	need_fake_cuda();
	TAP_TEST(late_calls_use_nothing_given_back);
	return tap_done();
}
