/* SPDX-License-Identifier: MIT */
/*
 * rcindex.h - the registration engine's index of its live regions
 * (regcache.h), by domain, space and address, and the lookup it serves.
 *
 * The index is a treap (a binary search tree balanced by a random
 * priority per node, here a hash of the region's unique id) of the live
 * regions ordered by (dom, space, base, id), each node keeping the largest
 * end (base + len) in its subtree.  A lookup of [a, end) in one (dom,
 * space) follows the order down to that key and skips every subtree
 * whose largest end is at most a, so that it visits O(log n) nodes for
 * each region overlapping the request (O(log n) where none does),
 * however long they are (a region of many GiB is one node, found through
 * the ends its ancestors keep).
 *
 * Each region also holds its stamp: the value of a clock the index
 * advances whenever a region is inserted or touched (made the most
 * recently used).  The engine touches a region wherever it moves it to
 * the front of its live list, so that the list's order, most recently
 * used first, is the order of decreasing stamps: the lookup reproduces
 * the list walk's answer from the stamps without the list.
 *
 * Nothing here locks: the engine's lock guards the index, as it guards
 * the live list.
 */
#ifndef GDL_RCINDEX_H
#define GDL_RCINDEX_H

#include <stdint.h>

#include "regcache.h"

struct gdl_rci {
	struct gdl_rc_region *root;
	uint64_t clock;		/* the last stamp given; stamps start at 1 */
	/* The region with the largest stamp, the front of the live list
	 * (NULL once it leaves the index), which a lookup tries first: a
	 * request served by the region it last got is answered without a
	 * descent. */
	struct gdl_rc_region *mru;
#ifdef GDL_RCI_VISITS
	/* The regions lookups have visited, in all: what lib-rcindex bounds
	 * (each lookup scans the overlapping regions once per round).  It is
	 * counted only in the test build of the library (libgdirect_races,
	 * lib/meson.build), so that the library's lookups pay nothing for
	 * the test. */
	uint64_t visits;
#endif
};

/* A node's priority: a hash of the region's id (splitmix64's finalizer),
 * unique ids giving independent-looking priorities, so that the treap's
 * expected depth is O(log n) whatever order regions come in.  The
 * finalizer is a bijection, so distinct ids have distinct priorities; a
 * node's priority is larger than its children's (lib-rcindex checks it). */
static inline uint64_t gdl_rci_prio(const struct gdl_rc_region *r)
{
	uint64_t z = r->id + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* r, not in the index, goes in as the most recently used region. */
void gdl_rci_insert(struct gdl_rci *x, struct gdl_rc_region *r);
/* r, in the index, comes out. */
void gdl_rci_remove(struct gdl_rci *x, struct gdl_rc_region *r);
/* r, in the index, becomes the most recently used region. */
static inline void gdl_rci_touch(struct gdl_rci *x, struct gdl_rc_region *r)
{
	r->stamp = ++x->clock;
	x->mru = r;
}

/* What a lookup asks: [a, end) of dom in space (NULL: virtual addresses)
 * for the allocation tagged (tag_base, tag_id). */
struct gdl_rci_req {
	const void *dom;
	const uint64_t *space;
	uint64_t tag_base, tag_id;
	uint64_t a, end;
};

/*
 * The answer of a walk of the regions most recently used first, as
 * regcache.c's lookup (rc_lookup_locked) describes it: of the regions of
 * q->dom in q->space overlapping [a, end), those tagged for another
 * allocation are given to kill, and so is one that covers the request
 * without all the flags *attr asks for, its flags added to *attr; the
 * first region, in that order, that covers the request with all of *attr
 * is returned (NULL: none).  kill(r, arg) must take r out of the index
 * (gdl_rci_remove).  Only regions before the returned one in that order
 * are killed, as the walk kills them.
 */
struct gdl_rc_region *gdl_rci_lookup(struct gdl_rci *x,
				     const struct gdl_rci_req *q, int *attr,
				     void (*kill)(struct gdl_rc_region *r,
						  void *arg),
				     void *arg);

/*
 * Give kill every region in the virtual-address space of any domain that
 * overlaps [a, end) (what a reported free concerns), in no particular
 * order.  kill(r, arg) must take r out of the index.  It costs one
 * descent for each domain with regions, plus O(log n) for each region
 * found, instead of a visit of every live region.
 */
void gdl_rci_kill_va(struct gdl_rci *x, uint64_t a, uint64_t end,
		     void (*kill)(struct gdl_rc_region *r, void *arg),
		     void *arg);
#endif
