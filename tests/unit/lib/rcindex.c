/* SPDX-License-Identifier: MIT */
/*
 * lib-rcindex: the registration engine's index of live regions
 * (lib/src/rcindex.h) against the list walk it replaced.  Random inserts,
 * touches (a region made the most recently used), removals and lookups
 * over overlapping ranges, short and many-GiB long, in three domains and
 * three spaces, with regions of three allocation tags and of any flags;
 * each lookup's answer, flags and killed regions are compared with those
 * of a walk of a list kept most recently used first, as the engine's live
 * list is, and the tree's order, largest ends, heap of priorities and depth
 * are checked now and then.
 * Then the engine itself (gdl_rc_get, gdl_rc_put, gdl_rc_flush, its trim to
 * max_regions) with a fake kind, over objects' spaces in three domains:
 * each get's region, hit or registered, against a model of the engine
 * that looks up by the same walk.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdl_list.h"
#include "libgdirect_internal.h"
#include "rcindex.h"
#include "regcache.h"
#include "tap.h"

/* many_stale reads the index's count of visits, which only the test build
 * of the library keeps (tests/unit/lib/meson.build). */
#ifndef GDL_RCI_VISITS
#error "lib-rcindex needs GDL_RCI_VISITS and the library built with it"
#endif

#define PAGE 4096ULL
#define MAXREG 600

static int doms[3];
static const uint64_t spaces[3][4] = {
	{ 0, 0, 0, 0 }, { 7, 1, 1 << 20, 0x1000 }, { 7, 1, 1 << 20, 0x2000 },
};
static const uint64_t tags[3][2] = { { 0, 0 }, { 1 << 20, 1 }, { 1 << 20, 2 } };

struct model {
	struct gdl_list live;		/* most recently used first */
	struct gdl_rci index;
	int nlive;
	uint64_t ids;
	bool killed[MAXREG * 64];	/* by region id */
	int nkilled;
};

static struct model m;

static uint64_t rnd(uint64_t n)
{
	return ((uint64_t)rand() << 31 ^ (uint64_t)rand()) % n;
}

/* A range in the first 64 pages, or now and then one of many GiB. */
static void range(uint64_t *a, uint64_t *end)
{
	uint64_t p = rnd(64), n = 1 + rnd(rnd(4) ? 8 : 64);

	*a = p * PAGE;
	*end = *a + n * PAGE;
	if (!rnd(20))
		*end = *a + (1ULL << (33 + rnd(8)));	/* 8 GiB to 1 TiB */
	if (!rnd(30)) {				/* far away, above the others */
		*a += 1ULL << 45;
		*end += 1ULL << 45;
	}
}

/* A new live region, the most recently used. */
static struct gdl_rc_region *add(int dom, int space, int tag, uint64_t a,
				 uint64_t end, int attr)
{
	struct gdl_rc_region *r = calloc(1, sizeof(*r));

	CHECK(r);
	r->base = a;
	r->len = end - a;
	r->attr = attr;
	r->dom = &doms[dom];
	memcpy(r->space, spaces[space], sizeof(r->space));
	r->tag_base = tags[tag][0];
	r->tag_id = tags[tag][1];
	r->id = ++m.ids;
	gdl_list_add(&m.live, &r->node);
	gdl_rci_insert(&m.index, r);
	m.nlive++;
	return r;
}

/* Mostly the one allocation, so that regions live long enough to be
 * found, now and then another. */
static int pick_tag(void)
{
	return rnd(10) < 8 ? 1 : (int)rnd(3);
}

static void add_random(void)
{
	uint64_t a, end;

	range(&a, &end);
	add((int)rnd(3), (int)rnd(3), pick_tag(), a, end, (int)rnd(8));
}

static struct gdl_rc_region *nth(int k)
{
	struct gdl_rc_region *r, *n;

	gdl_list_for_each_safe(&m.live, r, n, node)
		if (!k--)
			return r;
	return NULL;
}

static void drop(struct gdl_rc_region *r)
{
	gdl_list_del(&r->node);
	gdl_rci_remove(&m.index, r);
	m.nlive--;
	free(r);
}

static void touch(struct gdl_rc_region *r)
{
	gdl_list_move(&m.live, &r->node);
	gdl_rci_touch(&m.index, r);
}

/* The engine's lookup before the index: a walk of the live list, most
 * recently used first.  It kills nothing here: it marks in kill[] (by
 * id) what it would kill (its decisions do not depend on the kills,
 * which only take visited regions off the list). */
static struct gdl_rc_region *walk(const struct gdl_rci_req *q, int *attr,
				  bool *kill)
{
	static const uint64_t va[4];
	const uint64_t *sp = q->space ? q->space : va;
	struct gdl_rc_region *r, *n;

	gdl_list_for_each_safe(&m.live, r, n, node) {
		if (r->dom != q->dom || r->base >= q->end ||
		    q->a >= r->base + r->len ||
		    memcmp(r->space, sp, sizeof(r->space)))
			continue;
		if (r->tag_base != q->tag_base || r->tag_id != q->tag_id) {
			kill[r->id] = true;
			continue;
		}
		if (r->base > q->a || q->end > r->base + r->len)
			continue;
		if ((r->attr & *attr) != *attr) {
			*attr |= r->attr;
			kill[r->id] = true;
			continue;
		}
		return r;
	}
	return NULL;
}

static void kill_cb(struct gdl_rc_region *r, void *arg)
{
	CHECK(arg == &m);
	CHECK(!m.killed[r->id]);
	m.killed[r->id] = true;
	m.nkilled++;
	drop(r);
}

/* The subtree's regions in order, its largest end right; how many. */
static int check_tree(const struct gdl_rc_region *t,
		      const struct gdl_rc_region **prev)
{
	uint64_t mx;
	int n;

	if (!t)
		return 0;
	n = check_tree(t->tl, prev);
	if (*prev) {	/* (dom, space, base, id) ascending */
		const struct gdl_rc_region *p = *prev;
		uint64_t x[7] = { (uintptr_t)p->dom, p->space[0], p->space[1],
				  p->space[2], p->space[3], p->base, p->id };
		uint64_t y[7] = { (uintptr_t)t->dom, t->space[0], t->space[1],
				  t->space[2], t->space[3], t->base, t->id };
		int i = 0;

		while (i < 6 && x[i] == y[i])
			i++;
		CHECK(x[i] < y[i]);
	}
	*prev = t;
	n += 1 + check_tree(t->tr, prev);
	mx = t->base + t->len;
	if (t->tl && t->tl->tmax > mx)
		mx = t->tl->tmax;
	if (t->tr && t->tr->tmax > mx)
		mx = t->tr->tmax;
	CHECK_EQ(t->tmax, mx);
	return n;
}

/* The subtree's heap of priorities, each node's above its children's
 * (the order insertion and removal keep); its depth, in nodes. */
static int check_heap(const struct gdl_rc_region *t)
{
	int dl, dr;

	if (!t)
		return 0;
	if (t->tl)
		CHECK(gdl_rci_prio(t->tl) < gdl_rci_prio(t));
	if (t->tr)
		CHECK(gdl_rci_prio(t->tr) < gdl_rci_prio(t));
	dl = check_heap(t->tl);
	dr = check_heap(t->tr);
	return 1 + (dl > dr ? dl : dr);
}

/*
 * The index of the model's live regions: its order and largest ends
 * (check_tree), its heap of priorities, and its depth, at most
 * 4 log2(n + 1) + 8; the depth it returns.  The bound holds because a
 * treap whose priorities are independent of its keys' order has the shape
 * of a random binary search tree, whose height is about 2.99 log2 n for
 * large n (4.311 ln n, Devroye 1986) and seldom much above it; the
 * margin covers small trees and a hash that is only independent-looking.
 * The priorities here are fixed by the ids, so the depth is too: the check
 * does not flake, and a tree grown as a list (depth n) fails it from a
 * few dozen regions on.
 */
static int check_index(void)
{
	const struct gdl_rc_region *prev = NULL;
	int depth, lg = 0;

	CHECK_EQ(check_tree(m.index.root, &prev), m.nlive);
	depth = check_heap(m.index.root);
	while ((1LL << lg) < (long long)m.nlive + 1)
		lg++;
	if (depth > 4 * lg + 8)
		TAP_FAIL("depth %d with %d regions, above 4 log2(n + 1) + 8 = %d",
			 depth, m.nlive, 4 * lg + 8);
	return depth;
}

/* The live list's stamps fall from its front to its back. */
static void check_stamps(void)
{
	struct gdl_rc_region *r, *n;
	uint64_t last = UINT64_MAX;

	gdl_list_for_each_safe(&m.live, r, n, node) {
		CHECK(r->stamp < last);
		last = r->stamp;
	}
}

static void lookup(int *hits, int *kills)
{
	static bool want[MAXREG * 64];
	static struct gdl_rci_req q;
	struct gdl_rc_region *expect, *got;
	int t = pick_tag(), attr0 = (int)(rnd(2) ? rnd(8) : rnd(2)), a1, a2;
	int s = (int)rnd(3);

	/* Now and then the last request again (its region, if it hit, the
	 * most recently used), or with other flags. */
	if (!q.dom || rnd(4)) {
		range(&q.a, &q.end);
		if (rnd(2)) {	/* inside one page, as most requests are */
			q.a += rnd(PAGE);
			q.end = q.a + 1 + rnd(PAGE);
		}
		q.dom = &doms[rnd(3)];
		q.space = s ? spaces[s] : (rnd(2) ? spaces[0] : NULL);
		q.tag_base = tags[t][0];
		q.tag_id = tags[t][1];
	}
	memset(want, 0, (m.ids + 1) * sizeof(want[0]));
	memset(m.killed, 0, (m.ids + 1) * sizeof(m.killed[0]));
	a1 = a2 = attr0;
	expect = walk(&q, &a1, want);
	m.nkilled = 0;
	got = gdl_rci_lookup(&m.index, &q, &a2, kill_cb, &m);
	CHECK(got == expect);
	CHECK_EQ(a2, a1);
	for (uint64_t id = 1; id <= m.ids; id++)
		if (want[id] != m.killed[id])
			TAP_FAIL("region %llu: the walk %s it, the index %s",
				 (unsigned long long)id,
				 want[id] ? "kills" : "keeps",
				 m.killed[id] ? "kills" : "keeps");
	*kills += m.nkilled;
	if (got) {	/* the engine's hit makes it the most recently used */
		(*hits)++;
		touch(got);
	}
}

/* A reported free of a random range: the index kills exactly the regions
 * of virtual addresses, in any domain, that a walk of the live list finds
 * overlapping it (the engine's free-notify before the index). */
static void notify(int *kills)
{
	static bool want[MAXREG * 64];
	static const uint64_t va[4];
	struct gdl_rc_region *r, *n;
	uint64_t a, end;

	range(&a, &end);
	memset(want, 0, (m.ids + 1) * sizeof(want[0]));
	memset(m.killed, 0, (m.ids + 1) * sizeof(m.killed[0]));
	gdl_list_for_each_safe(&m.live, r, n, node)
		if (r->base < end && a < r->base + r->len &&
		    !memcmp(r->space, va, sizeof(va)))
			want[r->id] = true;
	m.nkilled = 0;
	gdl_rci_kill_va(&m.index, a, end, kill_cb, &m);
	for (uint64_t id = 1; id <= m.ids; id++)
		if (want[id] != m.killed[id])
			TAP_FAIL("free of [%#llx, %#llx): region %llu: the walk "
				 "%s it, the index %s", (unsigned long long)a,
				 (unsigned long long)end,
				 (unsigned long long)id,
				 want[id] ? "kills" : "keeps",
				 m.killed[id] ? "kills" : "keeps");
	*kills += m.nkilled;
}

static void against_the_walk(void)
{
	int hits = 0, kills = 0, lookups = 0, depth = 0, frees = 0, fkills = 0;

	srand(11);
	gdl_list_init(&m.live);
	for (int step = 0; step < 40000; step++) {
		int op = (int)rnd(10);

		if (op < 4 && m.nlive < MAXREG && m.ids < MAXREG * 64 - 1) {
			add_random();
		} else if (op < 5 && m.nlive) {
			touch(nth((int)rnd(m.nlive)));
		} else if (op < 6 && !rnd(3) && m.nlive) {
			drop(nth((int)rnd(m.nlive)));
		} else if (op == 6 && !rnd(4)) {
			notify(&fkills);
			frees++;
		} else if (m.ids < MAXREG * 64 - 1) {
			lookup(&hits, &kills);
			lookups++;
		}
		if (step % 500 == 0) {
			int d = check_index();

			if (d > depth)
				depth = d;
			check_stamps();
		}
	}
	tap_diag("%d lookups: %d hits, %d regions killed, %d live at the end, "
		 "depth at most %d; %d frees killed %d regions", lookups, hits,
		 kills, m.nlive, depth, frees, fkills);
	CHECK(hits > 1000 && kills > 1000);
	CHECK(frees > 500 && fkills > 500);
	while (m.nlive)
		drop(nth(0));
	CHECK(m.index.root == NULL);
}

/* Many regions, one of them long: a lookup finds the long one wherever it
 * starts, past thousands of short ones. */
static void long_regions(void)
{
	struct gdl_rci_req q = { .dom = &doms[0] };
	struct gdl_rc_region *big, *small[4000], *s;
	int attr;

	memset(&m, 0, sizeof(m));
	gdl_list_init(&m.live);
	for (int i = 0; i < 4000; i++)
		small[i] = add(0, 0, 0, (uint64_t)i << 20,
			       ((uint64_t)i << 20) + PAGE, 1);
	big = add(0, 0, 0, 5 * PAGE, 5 * PAGE + (1ULL << 40), 3);
	for (int i = 0; i < 4000; i += 2)
		touch(small[i]);	/* more recent than the long one */
	check_index();
	/* Between the short ones, inside the long one: it alone serves. */
	q.a = (3999ULL << 20) + 2 * PAGE;
	q.end = q.a + 100;
	attr = 2;
	CHECK(gdl_rci_lookup(&m.index, &q, &attr, kill_cb, &m) == big);
	/* On a short one more recent than the long one: the short one while
	 * its flags do; asked for more, it dies and the long one serves with
	 * the flags of both. */
	q.a = 3000ULL << 20;
	q.end = q.a + 1;
	attr = 1;
	s = gdl_rci_lookup(&m.index, &q, &attr, kill_cb, &m);
	CHECK(s == small[3000]);
	attr = 2;
	memset(m.killed, 0, sizeof(m.killed));
	CHECK(gdl_rci_lookup(&m.index, &q, &attr, kill_cb, &m) == big);
	CHECK_EQ(attr, 3);
	CHECK_EQ(m.nlive, 4000);
	/* On an odd one, less recent than the long one: the long one, and
	 * the short one is left alone. */
	q.a = 3001ULL << 20;
	q.end = q.a + 1;
	attr = 1;
	CHECK(gdl_rci_lookup(&m.index, &q, &attr, kill_cb, &m) == big);
	CHECK_EQ(m.nlive, 4000);
	check_index();
	while (m.nlive)
		drop(nth(0));
	CHECK(m.index.root == NULL);
}

/*
 * One request over many regions of another allocation (a range freed
 * while cached in small pieces, then asked for whole): the lookup kills
 * them all, and visits each a bounded number of times, not once per
 * batch of kills.
 */
static void many_stale(void)
{
	enum { N = 8192 };
	struct gdl_rci_req q = { .dom = &doms[0], .tag_base = tags[2][0],
				 .tag_id = tags[2][1] };
	uint64_t before;
	int attr = 1, depth;

	memset(&m, 0, sizeof(m));
	gdl_list_init(&m.live);
	for (int i = 0; i < N; i++)
		add(0, 0, 1, (uint64_t)i * PAGE, (uint64_t)(i + 1) * PAGE, 1);
	depth = check_index();	/* inserted in order, ids rising with bases */
	tap_diag("%d regions inserted in order: depth %d", N, depth);
	q.a = 0;
	q.end = (uint64_t)N * PAGE;
	before = m.index.visits;
	CHECK(gdl_rci_lookup(&m.index, &q, &attr, kill_cb, &m) == NULL);
	CHECK_EQ(m.nkilled, N);
	CHECK_EQ(m.nlive, 0);
	CHECK(m.index.root == NULL);
	/* One scan: each region once. */
	CHECK_EQ(m.index.visits - before, (uint64_t)N);
	tap_diag("%d stale regions killed by one lookup, %llu visits", N,
		 (unsigned long long)(m.index.visits - before));
}

/* The engine with a fake kind: a model of its live list, most recently
 * used first, with the references the test holds. */
struct ereg {
	struct gdl_rc_region *r;	/* the engine's region */
	int refs;
	bool live;			/* on the model's live list */
	bool gone;			/* deregistered */
	struct gdl_list node;
};

static struct {
	struct gdl_list live;
	int nlive, regs, deregs;
	struct ereg *last;		/* the region reg was last called for */
	struct ereg e[4096];
	int ne;
} em;

static int ereg_reg(struct gdirect_ctx *c, const struct gdirect_ptr_info *info,
		    struct gdl_rc_region *r, void *arg)
{
	(void)c; (void)info; (void)arg;
	CHECK(em.ne < 4096);
	em.last = &em.e[em.ne++];
	*em.last = (struct ereg){ .r = r };
	em.regs++;
	return 0;
}

static int ereg_dereg(struct gdl_rc_region *r)
{
	for (int i = 0; i < em.ne; i++)
		if (em.e[i].r == r && !em.e[i].gone)
			em.e[i].gone = true;
	em.deregs++;
	return 0;
}

static bool ereg_refused(int rc) { (void)rc; return false; }
static bool ereg_shares(const struct gdl_rc_region *r, const void *dom)
{
	return r->dom == dom;
}
static const char *ereg_dom_name(const void *dom) { (void)dom; return "d"; }
static void ereg_count(struct gdirect_ctx *c, enum gdl_rc_event ev)
{
	(void)c; (void)ev;
}
static void ereg_priv_free(void *priv) { (void)priv; }

static const struct gdl_rc_ops ereg_ops = {
	.region_size = sizeof(struct gdl_rc_region),
	.reg = ereg_reg, .dereg = ereg_dereg, .refused = ereg_refused,
	.shares = ereg_shares, .dom_name = ereg_dom_name,
	.count = ereg_count, .priv_free = ereg_priv_free,
};

static void em_unlive(struct ereg *x)
{
	gdl_list_del(&x->node);
	x->live = false;
	em.nlive--;
}

/* The model's answer to a get of [a, end) in space sp of dom: the walk,
 * killing what it kills. */
static struct ereg *em_lookup(const void *dom, const uint64_t *sp,
			      uint64_t a, uint64_t end, int *attr)
{
	struct ereg *x, *n;

	gdl_list_for_each_safe(&em.live, x, n, node) {
		struct gdl_rc_region *r = x->r;

		if (r->dom != dom || r->base >= end || a >= r->base + r->len ||
		    memcmp(r->space, sp, sizeof(r->space)))
			continue;
		if (r->base > a || end > r->base + r->len)
			continue;
		if ((r->attr & *attr) != *attr) {
			*attr |= r->attr;
			em_unlive(x);
			continue;
		}
		return x;
	}
	return NULL;
}

/* The engine's trim: unreferenced regions from the back while more than
 * max live. */
static void em_trim(int max)
{
	struct ereg *x = gdl_container_of(em.live.prev, struct ereg, node), *p;

	for (; &x->node != &em.live && em.nlive > max; x = p) {
		p = gdl_container_of(x->node.prev, struct ereg, node);
		if (!x->refs)
			em_unlive(x);
	}
}

static void engine(void)
{
	struct gdirect_ctx *c = calloc(1, sizeof(*c));
	struct ereg *held[64];
	int nheld = 0, hits = 0, misses = 0;
	const int max = 40;
	struct gdl_rc *rc;

	CHECK(c);
	c->fork_gen = atomic_load(&gdl_fork_gen);
	c->p.max_regions = max;
	gdl_list_init(&em.live);
	CHECK_EQ(gdl_rc_create(c, &ereg_ops, &rc), 0);
	srand(3);
	for (int step = 0; step < 20000 && em.ne < 4000; step++) {
		int op = (int)rnd(10);

		if (op < 6 && nheld < 64) {
			int d = (int)rnd(3), sp = 1 + (int)rnd(2), attr, want;
			uint64_t a = rnd(16) * PAGE + rnd(2) * rnd(PAGE);
			uint64_t len = 1 + rnd(rnd(2) ? PAGE : 8 * PAGE);
			struct gdl_rc_req req = {
				.dom = &doms[d], .ptr = (const void *)(uintptr_t)a,
				.len = len, .attr = (int)(rnd(4) ? rnd(2) : rnd(8)),
				.space = spaces[sp], .space_size = 1ULL << 20,
			};
			struct gdl_rc_region *r = NULL;
			struct ereg *x;
			int regs = em.regs;
			bool hit;

			attr = req.attr;
			x = em_lookup(&doms[d], spaces[sp], a, a + len, &attr);
			hit = x != NULL;
			CHECK_EQ(gdl_rc_get(rc, c, &req, &r), 0);
			if (hit) {
				CHECK(r == x->r);
				CHECK_EQ(em.regs, regs);
				hits++;
			} else {
				CHECK_EQ(em.regs, regs + 1);
				x = em.last;
				CHECK(r == x->r);
				want = attr;
				CHECK_EQ(r->attr, want);
				CHECK_EQ(r->base, a & ~(PAGE - 1));
				CHECK_EQ(r->base + r->len,
					 (a + len + PAGE - 1) & ~(PAGE - 1));
				x->live = true;
				em.nlive++;
				gdl_list_add(&em.live, &x->node);
				misses++;
			}
			gdl_list_move(&em.live, &x->node);
			x->refs++;
			held[nheld++] = x;
			if (!hit)	/* the engine trims when it inserts */
				em_trim(max);
		} else if (op < 9 && nheld) {
			int k = (int)rnd(nheld);
			struct ereg *x = held[k];

			held[k] = held[--nheld];
			x->refs--;
			if (x->live)
				gdl_list_move(&em.live, &x->node);
			gdl_rc_put(x->r);
		} else {
			int d = (int)rnd(3);
			struct ereg *x, *n;

			gdl_list_for_each_safe(&em.live, x, n, node)
				if (x->r->dom == &doms[d] && !x->refs)
					em_unlive(x);
			gdl_rc_flush(rc, &doms[d]);
		}
		/* The engine holds live what the model does, and has released
		 * what the model killed and nobody holds, once drained. */
		gdl_rc_drain(rc);
		for (int i = 0; i < em.ne; i++) {
			struct ereg *x = &em.e[i];

			if (x->live)
				CHECK(!x->gone && gdl_rc_valid(x->r));
			else if (!x->refs)
				CHECK(x->gone);
			else
				CHECK(!x->gone && !gdl_rc_valid(x->r));
		}
	}
	tap_diag("%d gets: %d hits, %d registrations, %d deregistered",
		 hits + misses, hits, em.regs, em.deregs);
	CHECK(hits > 1000 && misses > 1000);
	while (nheld)
		gdl_rc_put(held[--nheld]->r);
	gdl_rc_destroy(rc, false);
	CHECK_EQ(em.deregs, em.regs);
	free(c);
}

int main(void)
{
	TAP_TEST(against_the_walk);
	TAP_TEST(long_regions);
	TAP_TEST(many_stale);
	TAP_TEST(engine);
	return tap_done();
}
