/* SPDX-License-Identifier: MIT */
/*
 * lib-model: random operation sequences (fixed seeds, bounded length) against
 * a simple reference model of the cache.
 *
 * Exact configuration (no thresholds, unlimited BAR): the model predicts
 * every hit and miss and the exact bounds of every region (64 KiB rounding,
 * whole-allocation pinning under the cap, growth over overlapping regions of
 * the same allocation, invalidation on free as each mode sees it).
 * Pressure configuration (small thresholds and BAR): the model only checks
 * invariants: every answer covers the request, is never stale, the BAR is
 * never overrun, everything is unpinned at the end.
 * Wide shape (exact): allocations from 1 byte to 96 MiB, so regions span
 * thousands of 64 KiB pages and cross the 256 MiB span of a page-table
 * leaf, while allocations of a few KiB share pages.
 * In every configuration, classifications of random addresses (in live,
 * freed and reused allocations) are checked against the model.
 * The per-thread hit path (tcache.h) is driven too: a quarter of the gets
 * repeat the previous request (answered from the thread's last entry
 * unless something was killed since), another quarter one of the three
 * before it (answered through the thread's per-page hints, which may name
 * entries taken over since), and one in 32 runs on a short-lived
 * thread whose reference outlives it and is put by the main thread.
 * Races (pressure configuration): built against the library's race hooks
 * (GDL_RACE_HOOKS, lib/src/slotab.h), a quarter of the hook points a get
 * passes on its lookup path (slot word read; slot copied; reference
 * counted, slot not yet reread; count taken back, the slot having
 * changed) run a flush (an eviction racing the hit)
 * or a get + put of a random range of a random live allocation (a miss
 * that may supersede, that is kill, the very region being looked up, or
 * rewrite its slot between the hit's reads), checked like any answer.
 */
#include <pthread.h>
#include <stdbool.h>

#include <cuda.h>

#include "libgdirect_internal.h"
#include "tutil.h"

#define MAXA 24
#define MAXR 1024
#define MAXH 8

struct malloc_ { uint64_t base, size; bool live; };
struct mreg { uint64_t s, e; bool stale; bool live; };

static struct malloc_ al[MAXA];
static struct mreg mr[MAXR];
static struct gdirect_reg *held[MAXH];

/* The race hook's state (the run in progress). */
static struct {
	struct gdirect_ctx *c;
	struct gdl_backend *b;
	uint64_t rs;
	bool inside;
	unsigned long flushes, gets;
} race;

struct oneget {
	struct gdirect_ctx *c;
	uint64_t a, len;
	struct gdirect_reg *r;
	int rc;
};

static void *get_on_thread(void *arg)
{
	struct oneget *g = arg;

	g->rc = gdirect_reg_get(g->c, P(g->a), g->len, 0, &g->r);
	return NULL;
}

/* gdirect_reg_get, on this thread or on one that exits before we return. */
static int get(struct gdirect_ctx *c, uint64_t a, uint64_t len, bool thread,
	       struct gdirect_reg **r)
{
	struct oneget g = { c, a, len, NULL, -1 };
	pthread_t t;

	if (!thread)
		return gdirect_reg_get(c, P(a), len, 0, r);
	CHECK_EQ(pthread_create(&t, NULL, get_on_thread, &g), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	*r = g.r;
	return g.rc;
}

static uint64_t rnd(uint64_t *st)
{
	*st ^= *st << 13;
	*st ^= *st >> 7;
	*st ^= *st << 17;
	return *st;
}

static void race_hook(enum gdl_race_point pt)
{
	uint64_t x;
	int k;

	/* Only a hit's points: the others are run with the context's lock
	 * held (a flush or a get from there would take it again). */
	if (pt != GDL_RACE_SLOT_FIELDS && pt != GDL_RACE_SLOT_COPIED &&
	    pt != GDL_RACE_COUNTED && pt != GDL_RACE_BACKED_OFF)
		return;
	x = rnd(&race.rs);
	k = (int)((x >> 8) % MAXA);
	if (race.inside || x % 4)
		return;
	race.inside = true;
	if (x % 8 == 0) {
		gdirect_flush(race.c);
		race.flushes++;
	} else if (al[k].live) {
		uint64_t len = 1 + (x >> 20) % al[k].size;
		uint64_t a = al[k].base + (x >> 40) % (al[k].size - len + 1);
		struct gdirect_reg *r;
		struct gdirect_reg_info ri;

		CHECK_EQ(gdirect_reg_get(race.c, P(a), len, 0, &r), 0);
		CHECK_EQ(gdirect_reg_info(r, &ri), 0);
		CHECK(ri.valid);
		CHECK(ri.addr <= a && a + len <= ri.addr + ri.size);
		CHECK(fake_backend_pin_fresh(race.b, ri.kernel_handle, a));
		gdirect_reg_put(r);
		race.gets++;
	}
	race.inside = false;
}

static uint64_t down(uint64_t x) { return x & ~0xffffULL; }
static uint64_t up(uint64_t x) { return (x + 0xffff) & ~0xffffULL; }

static int model_find(uint64_t a, uint64_t e)
{
	for (int i = 0; i < MAXR; i++)
		if (mr[i].live && mr[i].s <= a && e <= mr[i].e)
			return i;
	return -1;
}

/* The library's miss, in the model: the region it will create. */
static void model_miss(int k, uint64_t a, uint64_t e, uint64_t cap,
		       uint64_t *ps, uint64_t *pe)
{
	uint64_t ab = down(al[k].base), ae = up(al[k].base + al[k].size);

	if (cap && al[k].size <= cap) {
		*ps = ab;
		*pe = ae;
	} else {
		*ps = down(a);
		*pe = up(e);
	}
	for (bool grew = true; grew;) {
		grew = false;
		for (int i = 0; i < MAXR; i++) {
			if (!mr[i].live || mr[i].e <= *ps || *pe <= mr[i].s)
				continue;
			if (mr[i].s < ab || mr[i].e > ae)
				continue;
			if (mr[i].s < *ps) { *ps = mr[i].s; grew = true; }
			if (mr[i].e > *pe) { *pe = mr[i].e; grew = true; }
		}
	}
	for (int i = 0; i < MAXR; i++)
		if (mr[i].live && mr[i].s < *pe && *ps < mr[i].e)
			mr[i].live = false;
	for (int i = 0; i < MAXR; i++)
		if (!mr[i].live) {
			mr[i] = (struct mreg){ *ps, *pe, false, true };
			return;
		}
	CHECK(!"model full");
}

/* gdirect_classify(a) must tell what the model says is at a. */
static void check_classify(struct gdirect_ctx *c, uint64_t a)
{
	struct gdirect_ptr_info in;
	int k = -1;

	for (int i = 0; i < MAXA; i++)
		if (al[i].live && a >= al[i].base && a < al[i].base + al[i].size)
			k = i;
	CHECK_EQ(gdirect_classify(c, P(a), &in), 0);
	if (k < 0) {
		CHECK_EQ(in.type, GDIRECT_MEM_CPU);
		return;
	}
	CHECK_EQ(in.type, GDIRECT_MEM_DEVICE);
	CHECK_EQ(in.alloc_base, al[k].base);
	CHECK_EQ(in.alloc_size, al[k].size);
}

static void run(unsigned inv, bool exact, bool wide, bool races,
		uint64_t seed, int steps)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_stats st;
	struct fake_stats fs;
	uint64_t rs = seed, hits = 0, misses = 0;
	/* The last NREC gets (index 0 the latest): repeating one of them
	 * drives the thread's per-page hints, not only its last entry. */
	enum { NREC = 4 };
	uint64_t rec_a[NREC] = { 0 }, rec_len[NREC] = { 0 };
	int rec_k[NREC] = { -1, -1, -1, -1 };
	/* Tag checks validate one allocation per region: keep allocations
	 * from sharing 64 KiB pages there (see docs/libgdirect.md). */
	uint64_t minsz = inv == GDIRECT_INV_BUFFER_ID ? 64 * KiB : 1;

	memset(al, 0, sizeof(al));
	memset(mr, 0, sizeof(mr));
	memset(held, 0, sizeof(held));
	params(&p, inv);
	p.whole_alloc_max = 512 * KiB;
	if (exact) {
		p.max_regions = 0;
		p.max_bytes = 0;
	} else {
		p.max_regions = 6;
		p.max_bytes = 1 * MiB;
	}
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){
		.bar_bytes = exact ? 0 : 4 * MiB,
		.revoke_on_free = inv == GDIRECT_INV_KERNEL }, &b);
	if (races) {
		race.c = c;
		race.b = b;
		race.rs = seed ^ 0x9e3779b97f4a7c15ULL;
		race.flushes = race.gets = 0;
		gdl_race_hook = race_hook;
	}

	for (int step = 0; step < steps; step++) {
		int op = rnd(&rs) % 100, k = rnd(&rs) % MAXA;

		if (op < 15 && !al[k].live) {			/* alloc */
			uint64_t sz = minsz + rnd(&rs) % (1 * MiB);

			if (wide && k % 4 == 0)
				sz = minsz + rnd(&rs) % (96 * MiB);
			else if (wide && k % 4 == 1)
				sz = minsz + rnd(&rs) % (8 * KiB);
			al[k].base = fake_cuda_alloc(sz);
			if (wide && !al[k].base)
				continue;	/* arena fragmented: skip */
			CHECK(al[k].base);
			al[k].size = sz;
			al[k].live = true;
		} else if (op < 25 && al[k].live) {		/* free */
			/* Keep frees of held memory out: that is a user bug. */
			bool busy = false;

			for (int h = 0; h < MAXH; h++) {
				struct gdirect_reg_info ri;

				if (held[h] && !gdirect_reg_info(held[h], &ri) &&
				    ri.addr < al[k].base + al[k].size &&
				    al[k].base < ri.addr + ri.size)
					busy = true;
			}
			if (busy)
				continue;
			if (inv & GDIRECT_INV_HOOKS)
				gdirect_notify_free(P(al[k].base), al[k].size);
			CHECK_EQ(cuMemFree_v2(al[k].base), CUDA_SUCCESS);
			al[k].live = false;
			for (int i = 0; i < MAXR; i++)
				if (mr[i].live && mr[i].s < al[k].base + al[k].size &&
				    al[k].base < mr[i].e) {
					/* kernel/hooks: gone now; tags: stale
					 * until looked up */
					if (inv == GDIRECT_INV_BUFFER_ID)
						mr[i].stale = true;
					else
						mr[i].live = false;
				}
		} else if (op < 85 && al[k].live) {		/* get */
			uint64_t off = rnd(&rs) % al[k].size;
			uint64_t len = 1 + rnd(&rs) % (al[k].size - off);
			uint64_t a = al[k].base + off, e = a + len;
			bool on_thread = rnd(&rs) % 32 == 0;

			uint64_t pick = rnd(&rs) % 8;
			/* 1/4: the previous request; 1/4: one of the three
			 * before it */
			int j = pick < 2 ? 0 : pick < 4 ? 1 + (int)(pick % 3) : -1;

			if (j >= 0) {
				int lk = rec_k[j];

				if (lk >= 0 && al[lk].live && al[lk].base <= rec_a[j] &&
				    rec_a[j] + rec_len[j] <=
				    al[lk].base + al[lk].size) {
					k = lk;	/* a recent request again */
					a = rec_a[j];
					len = rec_len[j];
					e = a + len;
				}
			}
			for (int q = NREC - 1; q > 0; q--) {
				rec_k[q] = rec_k[q - 1];
				rec_a[q] = rec_a[q - 1];
				rec_len[q] = rec_len[q - 1];
			}
			rec_k[0] = k;
			rec_a[0] = a;
			rec_len[0] = len;
			struct gdirect_reg *r;
			struct gdirect_reg_info ri;
			/* Under pressure hold at most two regions (<= 2.2
			 * MiB), so a 4 MiB BAR always has room once the
			 * unused ones are evicted. */
			int h = rnd(&rs) % (exact ? MAXH : 2);

			if (held[h]) {
				gdirect_reg_put(held[h]);
				held[h] = NULL;
			}
			int i = model_find(a, e);
			bool want_hit = false;
			uint64_t ps = 0, pe = 0;

			if (exact) {
				if (i >= 0 && mr[i].stale)
					mr[i].live = false;
				else if (i >= 0)
					want_hit = true;
				if (!want_hit)
					model_miss(k, a, e, p.whole_alloc_max,
						   &ps, &pe);
			}
			CHECK_EQ(get(c, a, len, on_thread, &r), 0);
			CHECK_EQ(gdirect_reg_info(r, &ri), 0);
			CHECK(ri.valid);
			CHECK(ri.addr <= a && e <= ri.addr + ri.size);
			if (!fake_backend_pin_fresh(b, ri.kernel_handle, a)) {
				TAP_FAIL("inv %u exact %d seed %llu step %d: "
					 "stale registration [%#llx,+%#llx) for %#llx",
					 inv, exact, (unsigned long long)seed, step,
					 (unsigned long long)ri.addr,
					 (unsigned long long)ri.size,
					 (unsigned long long)a);
			}
			gdirect_stats(c, &st);
			if (exact) {
				hits += want_hit;
				misses += !want_hit;
				CHECK_EQ(st.hits, hits);
				CHECK_EQ(st.misses, misses);
				if (!want_hit) {
					CHECK_EQ(ri.addr, ps);
					CHECK_EQ(ri.addr + ri.size, pe);
				} else {
					CHECK_EQ(ri.addr, mr[i].s);
					CHECK_EQ(ri.addr + ri.size, mr[i].e);
				}
			}
			if (rnd(&rs) % 2)
				held[h] = r;
			else
				gdirect_reg_put(r);
		} else if (op < 87) {
			gdirect_process_events(c);
		} else if (op < 88 && exact) {
			/* flush: the model forgets unused regions */
			gdirect_flush(c);
			for (int j = 0; j < MAXR; j++) {
				bool busy = false;

				for (int h = 0; h < MAXH; h++) {
					struct gdirect_reg_info ri;

					if (held[h] && !gdirect_reg_info(held[h], &ri)
					    && ri.addr == mr[j].s &&
					    ri.addr + ri.size == mr[j].e && ri.valid)
						busy = true;
				}
				if (!busy)
					mr[j].live = false;
			}
		}
		if (rnd(&rs) % 4 == 0) {
			int j = rnd(&rs) % MAXA;

			/* (freed slots keep their old range: a probe there
			 * checks that the free was seen) */
			if (al[j].size)
				check_classify(c, al[j].base +
					       rnd(&rs) % al[j].size);
		}
		fake_backend_stats(b, &fs);
		if (!exact)
			CHECK(fs.bar_used <= 4 * MiB);
	}
	for (int h = 0; h < MAXH; h++)
		gdirect_reg_put(held[h]);
	if (races) {
		gdl_race_hook = NULL;
		tap_diag("races: %lu flushes and %lu gets inside hits",
			 race.flushes, race.gets);
		CHECK(race.flushes > 0 && race.gets > 0);
	}
	gdirect_stats(c, &st);
	tap_diag("inv %u %s seed %llu: %llu hits, %llu misses, %llu evictions, "
		 "%llu BAR evictions, %llu invalidations", inv,
	       exact ? (wide ? "wide" : "exact") : "pressure", (unsigned long long)seed,
	       (unsigned long long)st.hits, (unsigned long long)st.misses,
	       (unsigned long long)st.evictions,
	       (unsigned long long)st.evictions_bar,
	       (unsigned long long)(st.inv_kernel + st.inv_hooks + st.inv_buffer_id));
	gdirect_ctx_destroy(c);	/* the fake aborts if a pin is left */
	fake_cuda_reset();
}

/* The run tap_test() does next: a mode and a seed. */
static unsigned cur_inv;
static uint64_t cur_seed;

static void model_exact(void)
{
	run(cur_inv, true, false, false, cur_seed * 7919, 3000);
}

static void model_pressure(void)
{
	run(cur_inv, false, false, false, cur_seed * 104729, 3000);
}

static void model_races(void)
{
	run(cur_inv, false, false, true, cur_seed * 1299709, 3000);
}

static void model_wide(void)
{
	run(cur_inv, true, true, false, cur_seed * 15485863, 3000);
}

int main(void)
{
	static const unsigned modes[] = { GDIRECT_INV_KERNEL, GDIRECT_INV_HOOKS,
					  GDIRECT_INV_BUFFER_ID };
	static const char *const names[] = { "kernel", "hooks", "buffer_id" };
	char what[96];

	need_fake_cuda();
	for (int m = 0; m < 3; m++)
		for (uint64_t seed = 1; seed <= 4; seed++) {
			cur_inv = modes[m];
			cur_seed = seed;
			snprintf(what, sizeof(what), "%s, seed %llu: the model agrees, exact",
				 names[m], (unsigned long long)seed);
			tap_test(what, model_exact);
			snprintf(what, sizeof(what), "%s, seed %llu: the model agrees, under pressure",
				 names[m], (unsigned long long)seed);
			tap_test(what, model_pressure);
			snprintf(what, sizeof(what), "%s, seed %llu: the model agrees, "
				 "with races inside hits", names[m],
				 (unsigned long long)seed);
			tap_test(what, model_races);
			snprintf(what, sizeof(what), "%s, seed %llu: the model agrees, wide",
				 names[m], (unsigned long long)seed);
			tap_test(what, model_wide);
		}
	return tap_done();
}
