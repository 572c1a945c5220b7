/* SPDX-License-Identifier: MIT */
/*
 * gdl_list.h - the library's one doubly linked list: a circular list
 * through a node embedded in each element, with a head node of the same
 * type, in the style of the Linux kernel's and rdma-core's lists.
 *
 * An empty list is a head that points to itself, so adding and removing
 * need no special case.  Nothing here locks: the owner of a list says
 * which lock guards it.
 */
#ifndef GDL_LIST_H
#define GDL_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct gdl_list {
	struct gdl_list *next, *prev;
};

#define gdl_container_of(p, type, member) \
	((type *)(void *)((char *)(p) - offsetof(type, member)))

static inline void gdl_list_init(struct gdl_list *h)
{
	h->next = h->prev = h;
}

static inline bool gdl_list_empty(const struct gdl_list *h)
{
	return h->next == h;
}

static inline void gdl_list_insert(struct gdl_list *n, struct gdl_list *prev,
				   struct gdl_list *next)
{
	n->next = next;
	n->prev = prev;
	prev->next = n;
	next->prev = n;
}

/* n becomes the first element of h. */
static inline void gdl_list_add(struct gdl_list *h, struct gdl_list *n)
{
	gdl_list_insert(n, h, h->next);
}

/* n becomes the last element of h. */
static inline void gdl_list_add_tail(struct gdl_list *h, struct gdl_list *n)
{
	gdl_list_insert(n, h->prev, h);
}

/* Take n off its list; n's own pointers are left as they were. */
static inline void gdl_list_del(struct gdl_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
}

/* Move n to the front of h (most recently used first). */
static inline void gdl_list_move(struct gdl_list *h, struct gdl_list *n)
{
	gdl_list_del(n);
	gdl_list_add(h, n);
}

/* Each element e of h, first to last, e's node being member; e may be
 * taken off the list in the body (n holds the next one). */
#define gdl_list_for_each_safe(h, e, n, member)                             \
	for (e = gdl_container_of((h)->next, __typeof__(*e), member),       \
	    n = gdl_container_of(e->member.next, __typeof__(*e), member);  \
	     &e->member != (h);                                             \
	     e = n, n = gdl_container_of(n->member.next, __typeof__(*e),    \
					 member))

/* Each element of h, last to first. */
#define gdl_list_for_each_rev(h, e, member)                                 \
	for (e = gdl_container_of((h)->prev, __typeof__(*e), member);       \
	     &e->member != (h);                                             \
	     e = gdl_container_of(e->member.prev, __typeof__(*e), member))

#endif
