/* SPDX-License-Identifier: MIT */
/*
 * lib-verbs-race: the verbs registration cache's concurrent paths, over the
 * fake verbs calls of fake_ibv.h, for TSan (suite tsan) and ASan (unit),
 * against the library built with its race hooks (slotab.h), each test in a
 * child process of its own:
 *
 *  - frees reported while one thread gets: a registration that a free
 *    began inside of is given back and retried, never answered; a free
 *    begun after the classification a region was registered on and
 *    reported before the region is read has killed it; nothing stays
 *    registered once the memory is gone;
 *  - a free reported between a get's classification and its registration
 *    (a race hook): the registration is given back and the get starts
 *    over;
 *  - two threads missing on one range at once: both register, one region
 *    stays and the other is deregistered, both gets answer that region;
 *  - eviction while others get and put: a NIC that holds two regions at
 *    most, four threads over eight allocations; every get answers a
 *    region covering its request or -ENOMEM, and nothing leaks.
 */
#define TAP_FORK

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

#include <cuda.h>

#include "fake_ibv.h"
#include "gdirect_verbs.h"
#include "libgdirect_internal.h"
#include "tutil.h"

static struct gdirect_ctx *vctx(void)
{
	struct gdirect_params p;
	struct gdirect_ctx *c = NULL;
	CUcontext cu;

	params(&p, GDIRECT_INV_HOOKS);
	p.device_path = "/nonexistent/gdirect";
	p.mr_path = GDIRECT_MR_PATH_PEER;
	fibv_reset();
	CHECK_EQ(cuDevicePrimaryCtxRetain(&cu, 0), CUDA_SUCCESS);
	CHECK_EQ(cuCtxSetCurrent(cu), CUDA_SUCCESS);
	CHECK_EQ(gdirect_ctx_create(&p, &c), 0);
	return c;
}

static void vdone(struct gdirect_ctx *c)
{
	CHECK_EQ(gdirect_mr_flush(c) >= 0, 1);
	CHECK_EQ(fibv_live(), 0);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* ---- a free during registration ---------------------------------------- */

struct freer {
	struct gdirect_ctx *c;
	uint64_t d;
	atomic_bool stop;
	/* Frees begun, and frees reported (gdirect_notify_free returned). */
	atomic_ulong started, done;
};

static void *free_loop(void *arg)
{
	struct freer *f = arg;

	while (!atomic_load(&f->stop)) {
		atomic_fetch_add(&f->started, 1);
		gdirect_notify_free(P(f->d), 1 * MiB);
		atomic_fetch_add(&f->done, 1);
		/* Paced, so that most tries of a get meet no free and the
		 * frees' wake-ups land anywhere in the gets, on any number
		 * of CPUs. */
		usleep(20);
	}
	return NULL;
}

/* What the getting thread's hooks saw of its current get; only that
 * thread gets, so only it runs them. */
static struct {
	struct freer *f;
	int tries;			/* classifications of the current get */
	bool yield;			/* the CPU given up at each */
	unsigned long cls_started;	/* frees begun at the last one */
	unsigned long long waits;	/* registrations that met a free */
	int timeouts;			/* ... that waited 1 s in vain */
} gt;

static void count_try(enum gdl_race_point pt)
{
	if (pt != GDL_RACE_RC_CLASSIFIED)
		return;
	gt.tries++;
	gt.cls_started = atomic_load(&gt.f->started);
	/* In the gets that ask for it, a free due now lands between the
	 * classification and the registration. */
	if (gt.yield)
		sched_yield();
}

/* Wait until a free begun from now on has been reported: 1, or 0 after a
 * second in vain. */
static int meet_free(struct freer *f)
{
	unsigned long s = atomic_load(&f->started);

	for (int i = 0; i < 100000 && atomic_load(&f->done) <= s; i++)
		usleep(10);
	if (atomic_load(&f->done) > s)
		return 1;
	gt.timeouts++;
	return 0;
}

/* The first registration of each get lasts until a free begun inside it
 * has been reported; frees land in the later ones by chance. */
static void reg_meets_free(uint64_t addr, uint64_t len)
{
	(void)addr;
	(void)len;
	if (gt.tries == 1)
		gt.waits += meet_free(gt.f);
}

/*
 * Each get's first registration meets a free, which must make the get
 * give that registration back and try again: a region first answered by
 * a get was registered by one of its later tries.  And a free that began
 * after the classification a region was registered on, and was reported
 * before the region is looked at, killed the region (or made its get try
 * again), wherever it landed in the get: before the registration or
 * inside it, or after the get.
 */
static void free_during_registration(void)
{
	struct freer f = { .c = vctx(), .d = fake_cuda_alloc(1 * MiB) };
	struct gdirect_mr_info mi;
	pthread_t t;
	int ok = 0, again = 0, fresh = 0, killed = 0;
	uint32_t key = 0;
	unsigned long key_cls = 0;

	gt.f = &f;
	fibv.on_reg = reg_meets_free;
	gdl_race_hook = count_try;
	CHECK_EQ(pthread_create(&t, NULL, free_loop, &f), 0);
	for (int i = 0; i < 1000; i++) {
		struct gdirect_mr *m = NULL;
		unsigned long regs = fibv_regs(), done;
		int rc;

		/* Every eighth get follows a free, which killed the region
		 * the others hit (a scheduler may otherwise run them all
		 * between two frees). */
		if (i % 8 == 0)
			meet_free(&f);
		gt.tries = 0;
		gt.yield = i % 8 == 4;
		rc = gdirect_mr_get(f.c, &fibv_pd[0], P(f.d + 64), 64, 0, 0,
				    &m);
		done = atomic_load(&f.done);
		if (rc == -EAGAIN) {
			again++;
			continue;
		}
		CHECK_EQ(rc, 0);
		CHECK_EQ(gdirect_mr_info(m, &mi), 0);
		CHECK_EQ(mi.base, f.d);
		if (mi.lkey != key) {
			/* Registered by this get's last try, not its first. */
			CHECK(fibv_regs() > regs);
			CHECK(gt.tries > 1);
			key = mi.lkey;
			key_cls = gt.cls_started;
			fresh++;
		}
		if (done > key_cls) {
			CHECK(!mi.valid);
			killed++;
		}
		ok++;
		gdirect_mr_put(m);
	}
	atomic_store(&f.stop, true);
	pthread_join(t, NULL);
	gdl_race_hook = NULL;
	fibv.on_reg = NULL;
	tap_diag("%d gets answered (%d by a region they registered, %d by one "
		 "a free had killed meanwhile), %d gave up after 8 tries; "
		 "%lu frees, %llu of them inside a registration; "
		 "%lu registrations, %lu deregistrations", ok, fresh, killed,
		 again, atomic_load(&f.done), gt.waits, fibv_regs(),
		 fibv.deregs);
	CHECK_EQ(gt.timeouts, 0);
	CHECK(fresh > 0);
	vdone(f.c);
}

/* ---- a free between the classification and the registration ------------ */

static struct {
	uint64_t d;
	int tries;
} fc;

/* The get's first classification is followed by a free of its memory. */
static void free_once_classified(enum gdl_race_point pt)
{
	if (pt != GDL_RACE_RC_CLASSIFIED || fc.tries++)
		return;
	gdirect_notify_free(P(fc.d), 1 * MiB);
}

/*
 * A free reported after a get classified the memory, before it registers
 * it: the classification is stale, so the get starts over before it
 * registers anything; the region it answers, and caches, is the second
 * try's, the only one registered.
 */
static void free_after_classification(void)
{
	struct gdirect_ctx *c = vctx();
	struct gdirect_mr *m = NULL, *m2 = NULL;
	struct gdirect_mr_info mi;

	fc.d = fake_cuda_alloc(1 * MiB);
	fc.tries = 0;
	gdl_race_hook = free_once_classified;
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(fc.d + 64), 64, 0, 0, &m),
		 0);
	gdl_race_hook = NULL;
	CHECK_EQ(fc.tries, 2);
	CHECK_EQ(fibv_regs(), 1);
	CHECK_EQ(fibv.deregs, 0);
	CHECK_EQ(gdirect_mr_info(m, &mi), 0);
	CHECK(mi.valid);
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(fc.d), 64, 0, 0, &m2), 0);
	CHECK(m2 == m);
	CHECK_EQ(fibv_regs(), 1);
	gdirect_mr_put(m2);
	gdirect_mr_put(m);
	vdone(c);
}

/* ---- two misses on one range ------------------------------------------- */

static pthread_barrier_t both_in;

/* Both threads are inside a registration before either ends. */
static void wait_both(uint64_t addr, uint64_t len)
{
	(void)addr;
	(void)len;
	pthread_barrier_wait(&both_in);
}

struct getter {
	struct gdirect_ctx *c;
	uint64_t d;
	struct gdirect_mr *m;
	int rc;
};

static void *get_once(void *arg)
{
	struct getter *g = arg;

	g->rc = gdirect_mr_get(g->c, &fibv_pd[0], P(g->d), 64, 0, 0, &g->m);
	return NULL;
}

static void two_misses(void)
{
	struct gdirect_ctx *c = vctx();
	uint64_t d = fake_cuda_alloc(1 * MiB);
	struct getter g[2] = { { c, d, NULL, 1 }, { c, d + 4096, NULL, 1 } };
	pthread_t t[2];

	pthread_barrier_init(&both_in, NULL, 2);
	fibv.on_reg = wait_both;
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, get_once, &g[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	fibv.on_reg = NULL;
	pthread_barrier_destroy(&both_in);
	CHECK_EQ(g[0].rc, 0);
	CHECK_EQ(g[1].rc, 0);
	CHECK(g[0].m == g[1].m);
	CHECK_EQ(fibv_regs(), 2);
	CHECK_EQ(fibv_live(), 1);
	gdirect_mr_put(g[0].m);
	gdirect_mr_put(g[1].m);
	vdone(c);
}

/* ---- eviction while others get and put --------------------------------- */

struct churn {
	struct gdirect_ctx *c;
	uint64_t *d;
	unsigned seed;
	int ok, refused;
};

static void *churn_loop(void *arg)
{
	struct churn *w = arg;
	struct gdirect_mr_info mi;

	for (int i = 0; i < 1500; i++) {
		struct gdirect_mr *m = NULL;
		uint64_t a = w->d[rand_r(&w->seed) % 8] + 128;
		int rc = gdirect_mr_get(w->c, &fibv_pd[0], P(a), 64, 0, 0, &m);

		if (rc == -ENOMEM) {
			w->refused++;
			continue;
		}
		if (rc || gdirect_mr_info(m, &mi) || a < mi.base ||
		    a + 64 > mi.base + mi.length) {
			w->ok = -1000000;
			gdirect_mr_put(m);
			continue;
		}
		w->ok++;
		gdirect_mr_put(m);
	}
	return NULL;
}

static void eviction_while_getting(void)
{
	struct gdirect_ctx *c = vctx();
	struct churn w[4];
	pthread_t t[4];
	uint64_t d[8];
	struct gdirect_stats st;
	int ok = 0, refused = 0;

	for (int i = 0; i < 8; i++)
		d[i] = fake_cuda_alloc(64 * KiB);
	fibv.limit[0] = 2;
	for (int i = 0; i < 4; i++) {
		w[i] = (struct churn){ c, d, 17u * (unsigned)i + 1, 0, 0 };
		CHECK_EQ(pthread_create(&t[i], NULL, churn_loop, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ok += w[i].ok;
		refused += w[i].refused;
	}
	fibv.limit[0] = 0;
	gdirect_stats(c, &st);
	tap_diag("%d gets answered, %d refused, %llu evictions", ok, refused,
		 (unsigned long long)st.mr_evictions);
	CHECK(ok > 0);
	CHECK_EQ(ok + refused, 4 * 1500);
	CHECK(st.mr_evictions > 0);
	vdone(c);
}

int main(void)
{
	need_fake_cuda();
	TAP_TEST(free_during_registration);
	TAP_TEST(free_after_classification);
	TAP_TEST(two_misses);
	TAP_TEST(eviction_while_getting);
	return tap_done();
}
