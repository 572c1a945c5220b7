// SPDX-License-Identifier: MIT
/*
 * release-wait.c - a pin out of BAR space waits for the releases under
 * way instead of failing.
 *
 * Two regions fill the BAR; another thread's flush kills both and starts
 * releasing them, and its unpins are held (the fake backend's
 * before_unpin) before they give the space back.  A miss then finds the
 * BAR full and nothing left to evict: it must wait for a release to end
 * rather than fail with -ENOMEM.  The unpins are let go only once the
 * miss waits (the library's race hook GDL_RACE_RELEASE_WAIT), so the
 * interleaving is the same every run, without a timed wait: exactly one
 * -ENOMEM from the backend, one release wait, no pin failure, nothing left
 * pinned.  A wait_for_releases that gives up at once fails it.
 */
#include <pthread.h>
#include <stdbool.h>

#include "libgdirect_internal.h"
#include "tutil.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool unpinning, gate_open;	/* under mu */

/* The fake backend's unpin: it has begun; held until the gate opens. */
static void before_unpin(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	unpinning = true;
	pthread_cond_broadcast(&cv);
	while (!gate_open)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

static void open_gate(void)
{
	pthread_mutex_lock(&mu);
	gate_open = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

/* Run with the context's lock held: the unpins go on, and their ends
 * take that lock only once the miss waits. */
static void hook(enum gdl_race_point p)
{
	if (p == GDL_RACE_RELEASE_WAIT)
		open_gate();
}

static void *flush_thread(void *p)
{
	gdirect_flush(p);
	return NULL;
}

static void pin_waits_for_release(void)
{
	struct gdirect_params p;
	struct gdirect_stats st;
	struct fake_stats fs;
	struct gdl_backend *b;
	struct gdirect_reg *r;
	pthread_t t;
	int rc;

	params(&p, GDIRECT_INV_HOOKS);
	/* Room for two 64 KiB pins. */
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){
		.bar_bytes = 128 * KiB, .before_unpin = before_unpin }, &b);
	uint64_t x = fake_cuda_alloc(64 * KiB), y = fake_cuda_alloc(64 * KiB);
	uint64_t z = fake_cuda_alloc(64 * KiB);

	CHECK(x && y && z);
	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
	gdirect_reg_put(r);
	CHECK_EQ(gdirect_reg_get(c, P(y), 1, 0, &r), 0);
	gdirect_reg_put(r);
	gdl_race_hook = hook;
	/* Another thread flushes: both regions die, their release begins. */
	CHECK_EQ(pthread_create(&t, NULL, flush_thread, c), 0);
	pthread_mutex_lock(&mu);
	while (!unpinning)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	/* The BAR is still full and nothing is left to evict. */
	rc = gdirect_reg_get(c, P(z), 1, 0, &r);
	open_gate();		/* if the miss never waited */
	CHECK_EQ(pthread_join(t, NULL), 0);
	gdl_race_hook = NULL;
	CHECK_EQ(rc, 0);
	gdirect_reg_put(r);
	gdirect_stats(c, &st);
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.enomem, 1);
	CHECK_EQ(st.release_waits, 1);
	CHECK_EQ(st.pin_failures, 0);
	flush_destroy_clean(c, b);
}

int main(void)
{
	need_fake_cuda();
	TAP_TEST(pin_waits_for_release);
	return tap_done();
}
