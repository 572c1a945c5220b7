/* SPDX-License-Identifier: MIT */
#include "replay.h"

#include <stdlib.h>

struct player {
	struct inst *in;
	const uint64_t *trace;
	size_t len;
	unsigned long fails;
};

static void *play(void *p)
{
	struct player *pl = p;
	const struct cache_ops *ops = pl->in->ops;

	for (size_t i = 0; i < pl->len; i++) {
		void *ref;

		if (ops->get(pl->in->c, pl->trace[i], GPU_PAGE, &ref)) {
			pl->fails++;
			continue;
		}
		ops->put(pl->in->c, ref);
	}
	return NULL;
}

struct replay_result replay(struct inst *in, uint64_t *const *traces,
			    size_t len, int nthreads)
{
	struct player pl[16];
	struct replay_result r = { 0 };
	uint64_t t0;

	for (int t = 0; t < nthreads; t++)
		pl[t] = (struct player){ in, traces[t], len, 0 };
	fake_backend_reset_stats(in->dev);
	t0 = bench_now_ns();
	run_threads(nthreads, play, pl, sizeof(pl[0]));
	r.ns_per_op = (double)(bench_now_ns() - t0) / (double)(len * nthreads);
	for (int t = 0; t < nthreads; t++)
		r.fails += pl[t].fails;
	fake_backend_stats(in->dev, &r.dev);
	return r;
}

uint64_t *zipfish_trace(const uint64_t *bufs, size_t n, size_t nhot,
			unsigned hot_pct, size_t len, uint64_t seed)
{
	uint64_t *t = malloc(len * sizeof(*t)), s = seed;

	if (!t)
		abort();
	for (size_t i = 0; i < len; i++) {
		uint64_t a = rnd(&s), b = rnd(&s);

		t[i] = a % 100 < hot_pct ? bufs[b % nhot] : bufs[b % n];
	}
	return t;
}
