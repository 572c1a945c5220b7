/* SPDX-License-Identifier: MIT */
/*
 * fake_backend.h - the fake pinning backend of the unit tests and the
 * benchmarks, standing in for gdirect.ko behind libgdirect's backend
 * interface (lib/src/pin_backend.h).
 *
 * It fakes pinning: a slot and a status word per pin, as gdirect.ko's
 * status page, pin and unpin costs (slept, not spun), a BAR budget whose
 * exhaustion fails pins with -ENOMEM, revocations (status word and event)
 * injected by the test or by the fake CUDA driver's frees, and hooks at
 * chosen points of pin and unpin.  Given the memory's buffer ids (cfg's
 * buffer_id_at: the fake CUDA driver's), a pin must cover live memory and
 * records what it covered, the no-stale-registration oracle.
 *
 * It records pins, unpins, refusals, BAR use and the time spent pinning
 * (fake_backend_stats).  A test configures it with struct fake_cfg; a
 * benchmark may change costs and budget while it runs.  Destroyed by its
 * context, it aborts if pins are left or an unknown handle was unpinned:
 * every test checks that a context unpins what it pinned.
 *
 * It never maps a BAR: a mapping is the memory itself (it is host memory),
 * fresh memory (real_maps) or refused (no_maps).  It never links the fake
 * CUDA driver, so a program on a real GPU can pin through it.
 */
#ifndef FAKE_BACKEND_H
#define FAKE_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "pin_backend.h"

struct fake_cfg {
	uint64_t bar_bytes;	/* 0: unlimited */
	uint64_t pin_ns, unpin_ns;	/* the cost of each, slept */
	bool refuse_free;	/* a pin refused for BAR space costs nothing */
	uint32_t nslots;	/* 0: 8192 */
	bool revoke_on_free;	/* fake CUDA frees revoke pins (like nvidia.ko) */
	bool persistent;	/* reports persistent pins (use_persistent=Y) */
	/* Called by a successful pin just before it returns (the pages are
	 * pinned; the caller has not seen the pin yet). */
	void (*after_pin)(void *arg);
	void *after_pin_arg;
	/* Called by every unpin first, before it gives the BAR space back
	 * (it may block: the region's release is then under way). */
	void (*before_unpin)(void *arg);
	void *before_unpin_arg;
	bool real_maps;		/* map: fresh memory not inherited across fork
				 * (as gdirect.ko's BAR mappings), unmap: munmap */
	bool no_maps;		/* map fails with ENOTSUP */
	bool shared;		/* the context's destroy leaves it to
				 * fake_backend_free (two caches share it) */
	/* The memory's buffer ids and frees (fake_cuda_buffer_id_at and
	 * fake_cuda_set_free_listener), or NULL: any range pins unchecked. */
	uint64_t (*buffer_id_at)(uint64_t addr);
	void (*set_free_listener)(void (*fn)(uint64_t base, uint64_t size,
					     void *arg), void *arg);
};

/* A new backend; NULL if out of memory. */
struct gdl_backend *fake_backend_new(const struct fake_cfg *cfg);
/* Frees a shared backend, with no check of what is left pinned. */
void fake_backend_free(struct gdl_backend *b);

/* Revoke every pin overlapping [addr, addr+len); returns how many. */
int fake_backend_revoke(struct gdl_backend *b, uint64_t addr, uint64_t len);

struct fake_stats {
	unsigned long pins, unpins, enomem, bad_unpins;
	uint64_t pin_ns_total;	/* time spent in successful pins */
	uint64_t bar_used, bar_peak;
	unsigned long live;
};
/* A copy of the counters. */
void fake_backend_stats(struct gdl_backend *b, struct fake_stats *st);
/* Zeroes pins, unpins, enomem and pin time; the peak restarts from now. */
void fake_backend_reset_stats(struct gdl_backend *b);
/* Sets the costs of later pins and unpins. */
void fake_backend_set_costs(struct gdl_backend *b, uint64_t pin_ns,
			    uint64_t unpin_ns);
/* Sets the BAR budget of later pins (0: unlimited). */
void fake_backend_set_budget(struct gdl_backend *b, uint64_t bar_bytes);
/* Pins paying their cost right now. */
unsigned fake_backend_pins_in_flight(struct gdl_backend *b);

/* The pin behind kernel handle h covered the allocation with buffer id id
 * when it was made (the no-stale-registration oracle; needs buffer_id_at). */
bool fake_backend_pin_covers(struct gdl_backend *b, uint64_t h, uint64_t id);

/*
 * The pin behind kernel handle h is still good for address a: a lies in
 * it, in live memory, and nothing in the pinned range has been freed since
 * the pin (so every 64 KiB page in it is still backed by what was pinned).
 * This is the no-stale-registration oracle for memory packed several
 * allocations to a page; it needs buffer_id_at.
 */
bool fake_backend_pin_fresh(struct gdl_backend *b, uint64_t h, uint64_t a);

/* Create a context over a fake backend (GDIRECT_PRIVATE entry point). */
struct gdirect_ctx;
struct gdirect_params;
int gdl_ctx_create_backend(const struct gdirect_params *p,
			   struct gdl_backend *b, struct gdirect_ctx **out);

#endif
