/* SPDX-License-Identifier: MIT */
/*
 * tutil.h - what libgdirect's unit tests share: contexts over the fake
 * backend, and tap.h's checks with gdirect_errmsg() in their diagnostics.
 */
#ifndef TUTIL_H
#define TUTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gdirect.h>

#include "fake_backend.h"
#include "fake_cuda.h"
#include "tap.h"

/* A failed check also says what the library said last. */
__attribute__((constructor)) static void tutil_context(void)
{
	tap_context = gdirect_errmsg;
}

#define KiB (1024ULL)
#define MiB (1024ULL * 1024)

static inline void *P(uint64_t a)
{
	return (void *)(uintptr_t)a;
}

/* A fake backend over the fake CUDA driver's memory: pins must cover its
 * live allocations, and its frees taint (and may revoke) them. */
static inline struct gdl_backend *
fake_backend_over_cuda(const struct fake_cfg *cfg)
{
	struct fake_cfg c = *cfg;

	c.buffer_id_at = fake_cuda_buffer_id_at;
	c.set_free_listener = fake_cuda_set_free_listener;
	return fake_backend_new(&c);
}

/* A context over a fresh fake backend. */
static inline struct gdirect_ctx *mkctx(struct gdirect_params *p,
					const struct fake_cfg *cfg,
					struct gdl_backend **bout)
{
	struct gdl_backend *b = fake_backend_over_cuda(cfg);
	struct gdirect_ctx *c = NULL;

	CHECK(b);
	CHECK_EQ(gdl_ctx_create_backend(p, b, &c), 0);
	if (bout)
		*bout = b;
	return c;
}

/*
 * The end of a test with nothing held: flush c, check that every pin went
 * through a right unpin, destroy c and forget the fake driver's memory.
 */
static inline void flush_destroy_clean(struct gdirect_ctx *c,
				       struct gdl_backend *b)
{
	struct fake_stats fs;

	CHECK_EQ(gdirect_flush(c) >= 0, 1);
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.live, 0);
	CHECK_EQ(fs.bad_unpins, 0);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

static inline void params(struct gdirect_params *p, unsigned inv)
{
	gdirect_params_init(p);
	p->invalidation = inv;
}

static inline void need_fake_cuda(void)
{
	const char *v = getenv("GDIRECT_LIBCUDA");

	if (!v || !*v)
		tap_skip_all("GDIRECT_LIBCUDA is not set (run through meson test)");
}

#endif
