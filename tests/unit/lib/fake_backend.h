/* SPDX-License-Identifier: MIT */
/*
 * fake_backend.h - a pinning backend for unit tests, standing in for
 * gdirect.ko: configurable pin latency, a BAR budget whose exhaustion fails
 * pins with -ENOMEM, revocation (status word + event) injected by the test
 * or by fake CUDA frees, and an oracle of what each pin covered.
 */
#ifndef FAKE_BACKEND_H
#define FAKE_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "pin_backend.h"

struct fake_cfg {
	uint64_t bar_bytes;	/* 0: unlimited */
	unsigned pin_delay_us;
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
};

struct gd_backend *fake_backend_new(const struct fake_cfg *cfg);

/* Revoke every pin overlapping [addr, addr+len); returns how many. */
int fake_backend_revoke(struct gd_backend *b, uint64_t addr, uint64_t len);

struct fake_stats {
	unsigned long pins, unpins, enomem, bad_unpins;
	uint64_t bar_used, bar_peak;
	unsigned long live;
};
void fake_backend_stats(struct gd_backend *b, struct fake_stats *st);

/* The pin behind kernel handle h covered the allocation with buffer id id
 * when it was made (the no-stale-registration oracle). */
bool fake_backend_pin_covers(struct gd_backend *b, uint64_t h, uint64_t id);

/*
 * The pin behind kernel handle h is still good for address a: a lies in
 * it, in live memory, and nothing in the pinned range has been freed since
 * the pin (so every 64 KiB page in it is still backed by what was pinned).
 * This is the no-stale-registration oracle for memory packed several
 * allocations to a page.
 */
bool fake_backend_pin_fresh(struct gd_backend *b, uint64_t h, uint64_t a);

/* Create a context over a fake backend (GDIRECT_PRIVATE entry point). */
struct gdirect_ctx;
struct gdirect_params;
int gd_ctx_create_backend(const struct gdirect_params *p, struct gd_backend *b,
			  struct gdirect_ctx **out);

#endif
