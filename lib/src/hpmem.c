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

#define CHUNK (2UL << 20)

/* The first 64 bytes of a chunk link it into m->chunks. */
struct chunk {
	struct chunk *next;
};
#define CHUNK_HDR 64

void gd_hpmem_init(struct gd_hpmem *m, size_t objsize)
{
	memset(m, 0, sizeof(*m));
	m->objsize = (objsize + 63) & ~(size_t)63;
	atomic_init(&m->freed, NULL);
}

/* A 2 MiB-aligned chunk (THP needs the alignment), or NULL. */
static void *chunk_map(void)
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
	madvise((void *)a, CHUNK, MADV_HUGEPAGE);
	return (void *)a;
}

void *gd_hpmem_alloc(struct gd_hpmem *m)
{
	void *p = m->avail;

	if (!p)
		p = m->avail = atomic_exchange_explicit(&m->freed, NULL,
							memory_order_acquire);
	if (p) {
		UNPOISON(p, m->objsize);
		m->avail = *(void **)p;
		memset(p, 0, m->objsize);
		return p;
	}
	if (m->left < m->objsize) {
		struct chunk *c = chunk_map();

		if (!c)
			return NULL;
		c->next = m->chunks;
		m->chunks = c;
		m->cur = (char *)c + (m->objsize >= CHUNK_HDR ? m->objsize :
				      CHUNK_HDR);
		m->left = CHUNK - (size_t)(m->cur - (char *)c);
		POISON(m->cur, m->left);
	}
	p = m->cur;
	m->cur += m->objsize;
	m->left -= m->objsize;
	UNPOISON(p, m->objsize);
	return p;	/* fresh anonymous memory is zero */
}

void gd_hpmem_free(struct gd_hpmem *m, void *p)
{
	void *head = atomic_load_explicit(&m->freed, memory_order_relaxed);

	/* All but the link word; poisoning after the push could hit an
	 * object the allocator already took back. */
	POISON((char *)p + sizeof(void *), m->objsize - sizeof(void *));
	/* Push only (the allocator takes the whole stack at once), so no
	 * ABA: a CAS that succeeds links p in front of a valid head. */
	do
		*(void **)p = head;
	while (!atomic_compare_exchange_weak_explicit(&m->freed, &head, p,
			memory_order_release, memory_order_relaxed));
}

void gd_hpmem_destroy(struct gd_hpmem *m)
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
