/* SPDX-License-Identifier: MIT */
/*
 * hpmem.h - fixed-size objects carved from 2 MiB chunks advised as
 * transparent huge pages: the memory the hit path walks (page-table nodes,
 * regions).  With tens of thousands of regions spread over 4 KiB pages,
 * most hits of a random working set missed the TLB (a two-dimensional page
 * walk in a virtual machine); in huge pages the same data needs a few TLB
 * entries.
 *
 * The first chunk stays in 4 KiB pages (hpmem.c says why).
 *
 * gdl_hpmem_alloc() is for one writer at a time (the caller's lock);
 * gdl_hpmem_free() may run in any thread at any time without a lock (it
 * pushes on a lock-free stack, which the allocator takes whole), since
 * objects are freed from epoch reclamation.  Memory goes back to the
 * system only at gdl_hpmem_destroy().
 */
#ifndef GDL_HPMEM_H
#define GDL_HPMEM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * An object may have a cold companion (coldsize bytes) kept apart from it,
 * so that the hot parts of many objects pack densely: a chunk holds a
 * header (the larger of 64 bytes and objsize), n hot objects, then their n
 * companions in the same order.  gdl_hpmem_cold() finds one from the other
 * by address arithmetic alone.
 */
#define GDL_HPMEM_CHUNK (2UL << 20)

static inline size_t gdl_hpmem_hdr(size_t objsize)
{
	return objsize > 64 ? objsize : 64;
}

static inline void *gdl_hpmem_cold(const void *p, size_t objsize,
				  size_t coldsize)
{
	uintptr_t chunk = (uintptr_t)p & ~(uintptr_t)(GDL_HPMEM_CHUNK - 1);
	size_t hdr = gdl_hpmem_hdr(objsize);
	size_t n = (GDL_HPMEM_CHUNK - hdr) / (objsize + coldsize);
	size_t i = ((uintptr_t)p - chunk - hdr) / objsize;

	return (char *)chunk + hdr + n * objsize + i * coldsize;
}

/* The object whose cold companion is q: gdl_hpmem_cold() undone. */
static inline void *gdl_hpmem_hot(const void *q, size_t objsize,
				 size_t coldsize)
{
	uintptr_t chunk = (uintptr_t)q & ~(uintptr_t)(GDL_HPMEM_CHUNK - 1);
	size_t hdr = gdl_hpmem_hdr(objsize);
	size_t n = (GDL_HPMEM_CHUNK - hdr) / (objsize + coldsize);
	size_t i = ((uintptr_t)q - chunk - hdr - n * objsize) / coldsize;

	return (char *)chunk + hdr + i * objsize;
}

struct gdl_hpmem {
	size_t objsize;		/* multiple of 64 */
	size_t coldsize;	/* multiple of 64, may be 0 */
	void *chunks;		/* list of mapped chunks */
	bool huge_first;	/* the first chunk in huge pages too */
	char *cur;		/* uncarved rest of the newest chunk */
	size_t left;
	void *avail;		/* freed objects, the allocator's own */
	_Atomic(void *) freed;	/* freed objects, pushed by any thread */
};

/* objsize and coldsize are rounded up to multiples of 64. */
void gdl_hpmem_init(struct gdl_hpmem *m, size_t objsize, size_t coldsize);
/* A zeroed object (and companion), or NULL. */
void *gdl_hpmem_alloc(struct gdl_hpmem *m);
void gdl_hpmem_free(struct gdl_hpmem *m, void *p);
/* Unmap everything (no object may be used afterwards). */
void gdl_hpmem_destroy(struct gdl_hpmem *m);

#endif
