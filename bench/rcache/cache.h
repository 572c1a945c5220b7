/* SPDX-License-Identifier: MIT */
/*
 * cache.h - the registration caches under test behind one interface, so
 * every scenario drives them with the same code, trace and backend.
 * The indirect call costs both the same couple of ns.
 */
#ifndef BENCH_CACHE_H
#define BENCH_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct gdl_backend;

struct cache_cfg {
	struct gdl_backend *backend;
	uint64_t max_regions;	/* unused regions evicted above; 0: no limit */
	uint64_t max_bytes;	/* likewise for pinned bytes */
};

struct cache_ops {
	const char *name;
	void *(*create)(const struct cache_cfg *cfg);
	/* 0 and a reference covering [addr, addr+len), or a negative errno. */
	int (*get)(void *cache, uint64_t addr, size_t len, void **ref);
	void (*put)(void *cache, void *ref);
	/* Unpin whatever is left; every reference must have been put. */
	void (*destroy)(void *cache);
};

extern const struct cache_ops cache_gdirect;
extern const struct cache_ops cache_ucx;

#ifdef BENCH_HAVE_VERBS
/* libgdirect's NIC-registration cache, over the fake libibverbs
 * (cache_verbs.c); built only where libgdirect has its verbs API. */
extern const struct cache_ops cache_verbs;
/* The registrations the fake NIC made so far, every cache_verbs instance
 * together. */
unsigned long cache_verbs_nic_regs(void);
#endif

#endif
