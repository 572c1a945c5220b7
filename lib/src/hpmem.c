/* SPDX-License-Identifier: MIT */
#include "hpmem.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
/* Free and uncarved objects are poisoned: a use after free of a region or
 * node is reported as it would be for malloc'ed memory. */
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define CHUNK GDL_HPMEM_CHUNK

/* The header of a chunk links it into m->chunks. */
struct chunk {
	struct chunk *next;
};

void gdl_hpmem_init(struct gdl_hpmem *m, size_t objsize, size_t coldsize)
{
	memset(m, 0, sizeof(*m));
	m->objsize = (objsize + 63) & ~(size_t)63;
	m->coldsize = (coldsize + 63) & ~(size_t)63;
	atomic_init(&m->freed, NULL);
}

static void *cold(const struct gdl_hpmem *m, void *p)
{
	return gdl_hpmem_cold(p, m->objsize, m->coldsize);
}

/*
 * A 2 MiB-aligned chunk (THP needs the alignment), or NULL.  The first
 * chunk of each allocator is left in 4 KiB pages: a small cache fits in a
 * few dozen TLB entries anyway, and a huge page would be zeroed whole on
 * first touch (measured: milliseconds per chunk in a VM whose memory the
 * host had not backed yet, charged to the first registrations).
 */
static void *chunk_map(int huge)
{
	char *p = mmap(NULL, 2 * CHUNK, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a;

	if (p == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)p + CHUNK - 1) & ~(uintptr_t)(CHUNK - 1);
	if (a > (uintptr_t)p)
		munmap(p, a - (uintptr_t)p);
	munmap((char *)a + CHUNK, (uintptr_t)p + CHUNK - a);
	/* Advice only: without THP this is a plain allocator. */
	if (huge)
		madvise((void *)a, CHUNK, MADV_HUGEPAGE);
	return (void *)a;
}

void *gdl_hpmem_alloc(struct gdl_hpmem *m)
{
	void *p = m->avail;

	if (!p)
		p = m->avail = atomic_exchange_explicit(&m->freed, NULL,
							memory_order_acquire);
	if (p) {
		UNPOISON(p, m->objsize);
		UNPOISON(cold(m, p), m->coldsize);
		m->avail = *(void **)p;
		memset(p, 0, m->objsize);
		memset(cold(m, p), 0, m->coldsize);
		return p;
	}
	if (!m->left) {
		struct chunk *c = chunk_map(m->chunks != NULL || m->huge_first);
		size_t hdr = gdl_hpmem_hdr(m->objsize);

		if (!c)
			return NULL;
		c->next = m->chunks;
		m->chunks = c;
		m->cur = (char *)c + hdr;
		m->left = (CHUNK - hdr) / (m->objsize + m->coldsize);
		POISON(m->cur, CHUNK - hdr);
	}
	p = m->cur;
	m->cur += m->objsize;
	m->left--;
	UNPOISON(p, m->objsize);
	UNPOISON(cold(m, p), m->coldsize);
	return p;	/* fresh anonymous memory is zero */
}

void gdl_hpmem_free(struct gdl_hpmem *m, void *p)
{
	void *head = atomic_load_explicit(&m->freed, memory_order_relaxed);

	/* All but the link word; poisoning after the push could hit an
	 * object the allocator already took back. */
	POISON((char *)p + sizeof(void *), m->objsize - sizeof(void *));
	POISON(cold(m, p), m->coldsize);
	/* Push only (the allocator takes the whole stack at once), so no
	 * ABA: a CAS that succeeds links p in front of a valid head. */
	do
		*(void **)p = head;
	while (!atomic_compare_exchange_weak_explicit(&m->freed, &head, p,
			memory_order_release, memory_order_relaxed));
}

void gdl_hpmem_destroy(struct gdl_hpmem *m)
{
	struct chunk *c = m->chunks, *next;

	for (; c; c = next) {
		next = c->next;
		UNPOISON(c, CHUNK);	/* the next mapping here is clean */
		munmap(c, CHUNK);
	}
	m->chunks = NULL;
	m->cur = NULL;
	m->left = 0;
	m->avail = NULL;
	atomic_store(&m->freed, NULL);
}
