/* SPDX-License-Identifier: MIT */
/*
 * rcindex.c - the registration engine's index of live regions
 * (rcindex.h): a treap by (dom, space, base, id) with the largest end of
 * each subtree.
 */
#include "rcindex.h"

#include <stdbool.h>
#include <stddef.h>

static const uint64_t rci_va[4];

static int rci_cmp_u64(uint64_t x, uint64_t y)
{
	return x < y ? -1 : x > y;
}

/* r's (dom, space) against dom, space: <0, 0, >0. */
static int rci_cmp_key(const struct gdl_rc_region *r, const void *dom,
		       const uint64_t *space)
{
	int c = rci_cmp_u64((uintptr_t)r->dom, (uintptr_t)dom);

	for (int i = 0; !c && i < 4; i++)
		c = rci_cmp_u64(r->space[i], space[i]);
	return c;
}

/* Whether r comes before s in the index's order. */
static bool rci_before(const struct gdl_rc_region *r,
		       const struct gdl_rc_region *s)
{
	int c = rci_cmp_key(r, s->dom, s->space);

	if (!c)
		c = rci_cmp_u64(r->base, s->base);
	if (!c)
		c = rci_cmp_u64(r->id, s->id);
	return c < 0;
}

static uint64_t rci_max(const struct gdl_rc_region *t)
{
	return t ? t->tmax : 0;
}

/* t's largest end, from its own and its children's. */
static void rci_update(struct gdl_rc_region *t)
{
	uint64_t m = t->base + t->len;

	if (rci_max(t->tl) > m)
		m = rci_max(t->tl);
	if (rci_max(t->tr) > m)
		m = rci_max(t->tr);
	t->tmax = m;
}

/* Split t into the regions before r (*l) and the others (*g). */
static void rci_split(struct gdl_rc_region *t, const struct gdl_rc_region *r,
		      struct gdl_rc_region **l, struct gdl_rc_region **g)
{
	if (!t) {
		*l = *g = NULL;
	} else if (rci_before(t, r)) {
		rci_split(t->tr, r, &t->tr, g);
		rci_update(t);
		*l = t;
	} else {
		rci_split(t->tl, r, l, &t->tl);
		rci_update(t);
		*g = t;
	}
}

/* The treap of a's regions then b's, every one of a's before b's. */
static struct gdl_rc_region *rci_merge(struct gdl_rc_region *a,
				       struct gdl_rc_region *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (gdl_rci_prio(a) > gdl_rci_prio(b)) {
		a->tr = rci_merge(a->tr, b);
		rci_update(a);
		return a;
	}
	b->tl = rci_merge(a, b->tl);
	rci_update(b);
	return b;
}

static struct gdl_rc_region *rci_ins(struct gdl_rc_region *t,
				     struct gdl_rc_region *r)
{
	if (!t)
		return r;
	if (gdl_rci_prio(r) > gdl_rci_prio(t)) {
		rci_split(t, r, &r->tl, &r->tr);
		rci_update(r);
		return r;
	}
	if (rci_before(r, t))
		t->tl = rci_ins(t->tl, r);
	else
		t->tr = rci_ins(t->tr, r);
	rci_update(t);
	return t;
}

static struct gdl_rc_region *rci_del(struct gdl_rc_region *t,
				     struct gdl_rc_region *r)
{
	if (!t)		/* not in the index: the caller's bug */
		return NULL;
	if (t == r)
		return rci_merge(r->tl, r->tr);
	if (rci_before(r, t))
		t->tl = rci_del(t->tl, r);
	else
		t->tr = rci_del(t->tr, r);
	rci_update(t);
	return t;
}

void gdl_rci_insert(struct gdl_rci *x, struct gdl_rc_region *r)
{
	r->tl = r->tr = NULL;
	r->tmax = r->base + r->len;
	gdl_rci_touch(x, r);
	x->root = rci_ins(x->root, r);
}

void gdl_rci_remove(struct gdl_rci *x, struct gdl_rc_region *r)
{
	x->root = rci_del(x->root, r);
	r->tl = r->tr = NULL;
	if (x->mru == r)
		x->mru = NULL;
}

/* One scan of the regions overlapping a request, and what it found. */
struct rci_scan {
	const struct gdl_rci_req *q;
	const uint64_t *space;		/* q's, rci_va for NULL */
	/* The most recently used region of the request's allocation that
	 * covers it (NULL: none). */
	struct gdl_rc_region *best;
	uint64_t best_stamp;		/* 0 without best */
	/* Every region of another allocation it overlaps, linked through
	 * tkill (NULL: none); with all, every region it overlaps. */
	struct gdl_rc_region *stale;
	bool all;
#ifdef GDL_RCI_VISITS
	uint64_t visits;
#endif
};

/* r overlaps the request. */
static void rci_visit(struct rci_scan *s, struct gdl_rc_region *r)
{
	const struct gdl_rci_req *q = s->q;

#ifdef GDL_RCI_VISITS
	s->visits++;
#endif
	if (s->all || r->tag_base != q->tag_base || r->tag_id != q->tag_id) {
		r->tkill = s->stale;
		s->stale = r;
		return;
	}
	if (r->base <= q->a && q->end <= r->base + r->len &&
	    r->stamp > s->best_stamp) {
		s->best = r;
		s->best_stamp = r->stamp;
	}
}

/*
 * Visit the regions of t's subtree in the request's (dom, space) that
 * overlap [a, end).  A subtree whose largest end is at most a holds none;
 * one wholly before or after the key in the order holds none of its
 * regions; past a region of the key starting at or after end, every
 * later one of the key starts there too.  Left children recurse, right
 * ones loop: the recursion is as deep as the tree.
 */
static void rci_scan(struct gdl_rc_region *t, struct rci_scan *s)
{
	const struct gdl_rci_req *q = s->q;

	while (t && t->tmax > q->a) {
		int c = rci_cmp_key(t, q->dom, s->space);

		if (c < 0) {
			t = t->tr;
		} else if (c > 0) {
			t = t->tl;
		} else {
			rci_scan(t->tl, s);
			if (t->base >= q->end)
				return;
			if (q->a < t->base + t->len)
				rci_visit(s, t);
			t = t->tr;
		}
	}
}

/*
 * The walk (rcindex.h) in stamps: it visits the overlapping regions by
 * decreasing stamp, kills those of another allocation until it reaches
 * the region it stops at, and stops at the first covering region of the
 * request's allocation that has every flag of *attr, killing the
 * covering ones without (which adds their flags to *attr, so that the
 * next one must have those too).  So each round below scans the
 * overlapping regions once, finding the covering region of the request's
 * allocation with the largest stamp (best) and linking every region of
 * another allocation; it kills those of them with a larger stamp than
 * best's (killing them changes no region of the request's allocation, so
 * best stays the walk's candidate), then returns best if it has the
 * flags, or kills it and goes round again, the next best being the
 * walk's next candidate.  A round costs one scan whatever it kills, and
 * there are as many rounds as covering regions killed for their flags,
 * plus one.  Regions of another allocation below the returned one are
 * left alive, as the walk leaves them: the lookup kills the same set of
 * regions as the walk (in the tree's order, not the walk's) and returns
 * what it returns, which the unit test lib-rcindex checks against the
 * walk itself.
 *
 * The most recently used region, when the index knows it, is the walk's
 * first: if it is of the request's domain, space and allocation, covers
 * the request and has every flag, the walk returns it having killed
 * nothing, and so does this, without a scan.
 */
struct gdl_rc_region *gdl_rci_lookup(struct gdl_rci *x,
				     const struct gdl_rci_req *q, int *attr,
				     void (*kill)(struct gdl_rc_region *r,
						  void *arg),
				     void *arg)
{
	struct gdl_rc_region *m = x->mru;

	if (m && !rci_cmp_key(m, q->dom, q->space ? q->space : rci_va) &&
	    m->tag_base == q->tag_base && m->tag_id == q->tag_id &&
	    m->base <= q->a && q->end <= m->base + m->len &&
	    (m->attr & *attr) == *attr)
		return m;
	for (;;) {
		struct rci_scan s = {
			.q = q, .space = q->space ? q->space : rci_va,
		};

		struct gdl_rc_region *r, *next;

		rci_scan(x->root, &s);
#ifdef GDL_RCI_VISITS
		x->visits += s.visits;
#endif
		for (r = s.stale; r; r = next) {
			next = r->tkill;
			r->tkill = NULL;
			if (r->stamp > s.best_stamp)
				kill(r, arg);
		}
		if (!s.best)
			return NULL;
		if ((s.best->attr & *attr) != *attr) {
			*attr |= s.best->attr;
			kill(s.best, arg);
			continue;
		}
		return s.best;
	}
}

/* The first region, in the index's order, of a domain after dom (any
 * domain where first): the start of the next domain's regions. */
static struct gdl_rc_region *rci_next_dom(struct gdl_rc_region *t,
					  const void *dom, bool first)
{
	struct gdl_rc_region *next = NULL;

	while (t) {
		if (first || (uintptr_t)t->dom > (uintptr_t)dom) {
			next = t;
			t = t->tl;
		} else {
			t = t->tr;
		}
	}
	return next;
}

/*
 * Virtual addresses are the smallest space in each domain's part of the
 * order, so a scan of each domain's virtual addresses (found one domain
 * after another by rci_next_dom) finds them all, however many objects'
 * spaces a domain holds besides.  The regions of one domain are linked
 * before any is killed: a kill rebuilds part of the tree the scan walks.
 */
void gdl_rci_kill_va(struct gdl_rci *x, uint64_t a, uint64_t end,
		     void (*kill)(struct gdl_rc_region *r, void *arg),
		     void *arg)
{
	struct gdl_rc_region *g = rci_next_dom(x->root, NULL, true);

	while (g && a < end) {
		const void *dom = g->dom;
		const struct gdl_rci_req q = { .dom = dom, .a = a, .end = end };
		struct rci_scan s = { .q = &q, .space = rci_va, .all = true };
		struct gdl_rc_region *r, *next;

		rci_scan(x->root, &s);
#ifdef GDL_RCI_VISITS
		x->visits += s.visits;
#endif
		for (r = s.stale; r; r = next) {
			next = r->tkill;
			r->tkill = NULL;
			kill(r, arg);
		}
		g = rci_next_dom(x->root, dom, false);
	}
}
