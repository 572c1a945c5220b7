/* SPDX-License-Identifier: MIT */
/*
 * lib-concurrency (also under TSan):
 *  - a hit never waits for another thread's pin (one held open until
 *    the hits are done);
 *  - concurrent misses on one range pin once (lib-release-wait: a pin out of
 *    BAR space waits for another thread's releases);
 *  - many threads hitting, missing, freeing and flushing: every answer
 *    covers the request and is never stale, nothing leaks;
 *  - hit counts are exact with more live threads than owned counter shards
 *    and with shards handed from exited threads to new ones;
 *  - meanwhile, classifications of each thread's small allocations (a few
 *    KiB, packed several to a 64 KiB page with other threads' ones, whose
 *    frees rebuild that page's bucket) always find their own allocation;
 *  - the index slots the lookup path reads (slotab.h) against their
 *    writers: hits on multi-page ranges of one allocation while misses
 *    supersede the regions under them (slots rewritten: torn reads),
 *    thresholds and flushes evict them (slots held, then emptied: an
 *    eviction racing a hit) and supersession kills them (a kill racing a
 *    hit): every answer covers the request and stays pinned while held.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "tutil.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct slow_arg {
	struct gdirect_ctx *c;
	uint64_t a;
};

static void *slow_miss(void *p)
{
	struct slow_arg *s = p;
	struct gdirect_reg *r;

	CHECK_EQ(gdirect_reg_get(s->c, P(s->a), 1, 0, &r), 0);
	gdirect_reg_put(r);
	return NULL;
}

/*
 * A pin that cannot return until the hits are done: the fake backend's
 * after_pin holds it (the pages pinned, the miss path not yet told) until
 * the hitting thread says it has finished.  Hits that waited for the pin
 * would wait for ever; the hold gives up after HOLD_S seconds so that the
 * test fails instead of hanging.
 */
#define HOLD_S 30

struct pin_hold {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool armed, held, hits_done, gave_up;
};

static void hold_pin(void *arg)
{
	struct pin_hold *h = arg;
	struct timespec until;

	pthread_mutex_lock(&h->lock);
	if (h->armed) {
		h->held = true;
		pthread_cond_broadcast(&h->cond);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += HOLD_S;
		while (!h->hits_done && !h->gave_up)
			if (pthread_cond_timedwait(&h->cond, &h->lock, &until))
				h->gave_up = true;
	}
	pthread_mutex_unlock(&h->lock);
}

static void hit_during_pin(void)
{
	static struct pin_hold h = {
		PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
		false, false, false, false,
	};
	struct gdirect_params p;
	struct gdirect_reg *r;
	pthread_t t;

	params(&p, GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){
		.after_pin = hold_pin, .after_pin_arg = &h }, NULL);
	uint64_t x = fake_cuda_alloc(64 * KiB), y = fake_cuda_alloc(64 * KiB);

	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);	/* warm */
	gdirect_reg_put(r);
	struct slow_arg sa = { c, y };

	pthread_mutex_lock(&h.lock);
	h.armed = true;
	pthread_mutex_unlock(&h.lock);
	CHECK_EQ(pthread_create(&t, NULL, slow_miss, &sa), 0);
	pthread_mutex_lock(&h.lock);
	while (!h.held)
		pthread_cond_wait(&h.cond, &h.lock);
	pthread_mutex_unlock(&h.lock);
	/* The other thread's pin is held until these are done. */
	for (int i = 0; i < 2000; i++) {
		CHECK_EQ(gdirect_reg_get(c, P(x + i % 1000), 8, 0, &r), 0);
		gdirect_reg_put(r);
	}
	pthread_mutex_lock(&h.lock);
	h.hits_done = true;
	pthread_cond_broadcast(&h.cond);
	pthread_mutex_unlock(&h.lock);
	pthread_join(t, NULL);
	/* None waited for the pin: it was still held when they ended. */
	CHECK(!h.gave_up);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

struct same_arg {
	struct gdirect_ctx *c;
	uint64_t a;
	pthread_barrier_t *bar;
	struct gdirect_reg *got;
};

static void *same_miss(void *p)
{
	struct same_arg *s = p;

	pthread_barrier_wait(s->bar);
	CHECK_EQ(gdirect_reg_get(s->c, P(s->a), 4 * KiB, 0, &s->got), 0);
	return NULL;
}

static void misses_pin_once(void)
{
	enum { N = 8 };
	struct gdirect_params p;
	struct gdl_backend *b;
	struct fake_stats fs;
	struct gdirect_stats st;
	pthread_t t[N];
	struct same_arg sa[N];
	pthread_barrier_t bar;

	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ .pin_ns = 100000000 }, &b);
	uint64_t x = fake_cuda_alloc(256 * KiB);

	pthread_barrier_init(&bar, NULL, N);
	for (int i = 0; i < N; i++) {
		sa[i] = (struct same_arg){ c, x + i * 100, &bar, NULL };
		CHECK_EQ(pthread_create(&t[i], NULL, same_miss, &sa[i]), 0);
	}
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	fake_backend_stats(b, &fs);
	gdirect_stats(c, &st);
	tap_diag("%d concurrent misses: %lu pin(s), %llu waited", N, fs.pins,
	       (unsigned long long)st.pin_waits);
	CHECK_EQ(fs.pins, 1);
	CHECK_EQ(fake_cuda_sync_count(x), 1);
	for (int i = 0; i < N; i++) {
		CHECK(sa[i].got == sa[0].got);
		gdirect_reg_put(sa[i].got);
	}
	pthread_barrier_destroy(&bar);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

struct stress_arg {
	struct gdirect_ctx *c;
	struct gdl_backend *b;
	uint64_t shared;
	unsigned seed;
	_Atomic int *stop;
};

static void *stress(void *p)
{
	struct stress_arg *s = p;
	uint64_t mine[4] = { 0 }, small[2] = { 0 }, small_sz[2] = { 0 };
	unsigned rs = s->seed;

	for (int it = 0; it < 3000; it++) {
		int op = rand_r(&rs) % 100, k = rand_r(&rs) % 4;
		struct gdirect_reg *r;
		struct gdirect_reg_info ri;

		if (!mine[k]) {
			/* Whole 64 KiB pages: no page shared with another
			 * thread's memory (the small allocations below are
			 * packed into free pages), whose frees would race
			 * with our freshness check of the whole pin. */
			mine[k] = fake_cuda_alloc(64 * KiB * (1 + rand_r(&rs) % 5));
			CHECK(mine[k]);
		} else if (op < 10) {
			gdirect_notify_free(P(mine[k]), 0);
			CHECK_EQ(cuMemFree_v2(mine[k]), CUDA_SUCCESS);
			mine[k] = 0;
		} else if (op < 12) {
			gdirect_flush(s->c);
		} else if (op < 28) {
			int j = k % 2;
			struct gdirect_ptr_info in;

			if (!small[j]) {
				small_sz[j] = 1 + rand_r(&rs) % (8 * KiB);
				small[j] = fake_cuda_alloc(small_sz[j]);
				CHECK(small[j]);
			} else if (op < 15) {
				gdirect_notify_free(P(small[j]), 0);
				CHECK_EQ(cuMemFree_v2(small[j]), CUDA_SUCCESS);
				small[j] = 0;
			} else {
				uint64_t a = small[j] + rand_r(&rs) % small_sz[j];

				CHECK_EQ(gdirect_classify(s->c, P(a), &in), 0);
				CHECK_EQ(in.type, GDIRECT_MEM_DEVICE);
				CHECK_EQ(in.alloc_base, small[j]);
				CHECK_EQ(in.alloc_size, small_sz[j]);
			}
		} else {
			uint64_t a = op < 50 ? s->shared + rand_r(&rs) % 4096 : mine[k];

			CHECK_EQ(gdirect_reg_get(s->c, P(a), 16, 0, &r), 0);
			CHECK_EQ(gdirect_reg_info(r, &ri), 0);
			CHECK(ri.addr <= a && a + 16 <= ri.addr + ri.size);
			CHECK(fake_backend_pin_fresh(s->b, ri.kernel_handle, a));
			gdirect_reg_put(r);
		}
	}
	for (int j = 0; j < 2; j++)
		if (small[j]) {
			gdirect_notify_free(P(small[j]), 0);
			cuMemFree_v2(small[j]);
		}
	for (int k = 0; k < 4; k++)
		if (mine[k]) {
			gdirect_notify_free(P(mine[k]), 0);
			cuMemFree_v2(mine[k]);
		}
	return NULL;
}

static void stress_all(unsigned inv)
{
	enum { N = 4 };
	struct gdirect_params p;
	struct gdl_backend *b;
	pthread_t t[N];
	struct stress_arg sa[N];
	_Atomic int stop = 0;
	struct gdirect_stats st;

	params(&p, inv);
	p.max_regions = 16;
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){
		.bar_bytes = 4 * MiB,
		.revoke_on_free = (inv & GDIRECT_INV_KERNEL) != 0 }, &b);
	uint64_t shared = fake_cuda_alloc(64 * KiB);

	for (int i = 0; i < N; i++) {
		sa[i] = (struct stress_arg){ c, b, shared, 1234u + i, &stop };
		CHECK_EQ(pthread_create(&t[i], NULL, stress, &sa[i]), 0);
	}
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	gdirect_stats(c, &st);
	tap_diag("stress inv %u: %llu hits %llu misses %llu evictions %llu/%llu BAR "
		 "evictions, %llu waits", inv, (unsigned long long)st.hits,
	       (unsigned long long)st.misses, (unsigned long long)st.evictions,
	       (unsigned long long)st.evictions_bar,
	       (unsigned long long)st.pin_failures,
	       (unsigned long long)st.pin_waits);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

struct hits_arg {
	struct gdirect_ctx *c;
	uint64_t a;
	int n;
};

static void *hits_n(void *p)
{
	struct hits_arg *h = p;
	struct gdirect_reg *r;

	for (int i = 0; i < h->n; i++) {
		CHECK_EQ(gdirect_reg_get(h->c, P(h->a), 64, 0, &r), 0);
		gdirect_reg_put(r);
	}
	return NULL;
}

static void hit_counts_exact(void)
{
	enum { WIDE = 24, SEQ = 40 };	/* both above the 16 owned shards */
	struct gdirect_params p;
	struct gdirect_stats st;
	struct gdirect_reg *r;
	pthread_t t[WIDE];
	uint64_t want = 0;

	params(&p, GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);
	struct hits_arg h = { c, fake_cuda_alloc(64 * KiB), 2000 };

	CHECK_EQ(gdirect_reg_get(c, P(h.a), 64, 0, &r), 0);	/* the miss */
	gdirect_reg_put(r);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < WIDE; i++)
			CHECK_EQ(pthread_create(&t[i], NULL, hits_n, &h), 0);
		for (int i = 0; i < WIDE; i++)
			pthread_join(t[i], NULL);
		want += WIDE * 2000;
	}
	h.n = 100;
	for (int i = 0; i < SEQ; i++) {	/* each takes an exited one's shard */
		CHECK_EQ(pthread_create(&t[0], NULL, hits_n, &h), 0);
		pthread_join(t[0], NULL);
		want += 100;
	}
	gdirect_stats(c, &st);
	CHECK_EQ(st.hits, want);
	CHECK_EQ(st.misses, 1);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

struct race_arg {
	struct gdirect_ctx *c;
	struct gdl_backend *b;
	uint64_t base, size;
	unsigned seed;
	_Atomic int *stop;
	unsigned long gets;
};

/* Gets of random ranges up to 96 KiB (one to three pages), each held for a
 * while: the pin must stay good for the whole hold. */
static void *race_hitter(void *p)
{
	struct race_arg *s = p;
	unsigned rs = s->seed;

	while (!atomic_load_explicit(s->stop, memory_order_relaxed)) {
		uint64_t len = 1 + rand_r(&rs) % (96 * KiB);
		uint64_t a = s->base + rand_r(&rs) % (s->size - len);
		struct gdirect_reg *r;
		struct gdirect_reg_info ri;

		CHECK_EQ(gdirect_reg_get(s->c, P(a), len, 0, &r), 0);
		CHECK_EQ(gdirect_reg_info(r, &ri), 0);
		CHECK(ri.addr <= a && a + len <= ri.addr + ri.size);
		CHECK(fake_backend_pin_fresh(s->b, ri.kernel_handle, a));
		for (int i = 0; i < 8; i++)	/* hold it: let evictions run */
			sched_yield();
		CHECK(fake_backend_pin_fresh(s->b, ri.kernel_handle, a));
		gdirect_reg_put(r);
		s->gets++;
	}
	return NULL;
}

static void *race_flusher(void *p)
{
	struct race_arg *s = p;

	while (!atomic_load_explicit(s->stop, memory_order_relaxed)) {
		gdirect_flush(s->c);
		sched_yield();
	}
	return NULL;
}

static void slot_races(void)
{
	enum { N = 3 };
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_stats st;
	pthread_t t[N + 1];
	struct race_arg ra[N + 1];
	_Atomic int stop = 0;
	unsigned long gets = 0;

	params(&p, GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS);
	p.whole_alloc_max = 0;	/* regions of the request's pages: they grow */
	p.max_regions = 3;
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	uint64_t base = fake_cuda_alloc(1 * MiB);

	CHECK(base);
	for (int i = 0; i <= N; i++) {
		ra[i] = (struct race_arg){ c, b, base, 1 * MiB, 77u + i, &stop, 0 };
		CHECK_EQ(pthread_create(&t[i], NULL,
					i < N ? race_hitter : race_flusher, &ra[i]), 0);
	}
	for (double t0 = now_ms(); now_ms() - t0 < 400;)
		usleep(10000);
	atomic_store(&stop, 1);
	for (int i = 0; i <= N; i++) {
		pthread_join(t[i], NULL);
		gets += ra[i].gets;
	}
	gdirect_stats(c, &st);
	tap_diag("slot races: %lu gets, %llu hits, %llu misses, %llu evictions, "
		 "%llu unpins", gets, (unsigned long long)st.hits,
		 (unsigned long long)st.misses, (unsigned long long)st.evictions,
		 (unsigned long long)st.unpins);
	CHECK(st.hits > 0 && st.misses > 0 && st.evictions > 0);
	flush_destroy_clean(c, b);	/* nothing is held: everything goes */
}

static void stress_hooks(void)
{
	stress_all(GDIRECT_INV_HOOKS);
}

static void stress_kernel(void)
{
	stress_all(GDIRECT_INV_KERNEL);
}

int main(void)
{
	need_fake_cuda();
	TAP_TEST(hit_during_pin);
	TAP_TEST(misses_pin_once);
	TAP_TEST(hit_counts_exact);
	TAP_TEST(stress_hooks);
	TAP_TEST(stress_kernel);
	TAP_TEST(slot_races);
	return tap_done();
}
