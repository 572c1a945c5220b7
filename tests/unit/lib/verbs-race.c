/* SPDX-License-Identifier: MIT */
/*
 * lib-verbs-race: the verbs registration cache's concurrent paths, over the
 * fake verbs calls of fake_ibv.h, for TSan (suite tsan) and ASan (unit):
 *
 *  - a free reported while a registration runs: the registration is given
 *    back and retried, never handed out for the freed memory, and nothing
 *    stays registered once the memory is gone;
 *  - two threads missing on one range at once: both register, one region
 *    stays and the other is deregistered, both gets answer that region;
 *  - eviction while others get and put: a NIC that holds two regions at
 *    most, four threads over eight allocations; every get answers a
 *    region covering its request or -ENOMEM, and nothing leaks.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include <cuda.h>

#include "fake_ibv.h"
#include "gdirect_verbs.h"
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
	atomic_ulong frees;
};

static void *free_loop(void *arg)
{
	struct freer *f = arg;

	while (!atomic_load(&f->stop)) {
		gdirect_notify_free(P(f->d), 1 * MiB);
		atomic_fetch_add(&f->frees, 1);
	}
	return NULL;
}

/* A registration that takes a while, so that frees land inside it. */
static void slow_reg(uint64_t addr, uint64_t len)
{
	(void)addr;
	(void)len;
	usleep(50);
}

static void free_during_registration(void)
{
	struct freer f = { .c = vctx(), .d = fake_cuda_alloc(1 * MiB) };
	struct gdirect_mr_info mi;
	pthread_t t;
	int ok = 0, again = 0;
	unsigned long f0;

	fibv.on_reg = slow_reg;
	CHECK_EQ(pthread_create(&t, NULL, free_loop, &f), 0);
	/* The gets run while the frees do: not before the freeing thread
	 * has started, and on (up to 200000 gets) until it has reported a
	 * thousand more, whatever the scheduler does on a loaded machine. */
	while (!atomic_load(&f.frees))
		usleep(100);
	f0 = atomic_load(&f.frees);
	for (int i = 0; i < 2000 || (atomic_load(&f.frees) < f0 + 1000 &&
				     i < 200000); i++) {
		struct gdirect_mr *m = NULL;
		int rc = gdirect_mr_get(f.c, &fibv_pd[0], P(f.d + 64), 64, 0,
					0, &m);

		if (rc == -EAGAIN) {
			again++;
			continue;
		}
		CHECK_EQ(rc, 0);
		CHECK_EQ(gdirect_mr_info(m, &mi), 0);
		CHECK_EQ(mi.base, f.d);
		ok++;
		gdirect_mr_put(m);
	}
	atomic_store(&f.stop, true);
	pthread_join(t, NULL);
	fibv.on_reg = NULL;
	tap_diag("%d gets answered, %d gave up after 8 tries, %lu frees reported, "
		 "%lu registrations, %lu deregistrations", ok, again,
		 atomic_load(&f.frees), fibv_regs(), fibv.deregs);
	CHECK(ok + again >= 2000);
	/* Some registrations were made while a free was reported. */
	CHECK(fibv_regs() > 1);
	vdone(f.c);
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
	TAP_TEST(two_misses);
	TAP_TEST(eviction_while_getting);
	return tap_done();
}
