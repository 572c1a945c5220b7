/* SPDX-License-Identifier: MIT */
/* tutil.h - tiny helpers shared by libgdirect's unit tests. */
#ifndef TUTIL_H
#define TUTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gdirect.h>

#include "fake_backend.h"
#include "fakecuda.h"

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s (%s)\n", \
				__FILE__, __LINE__, #cond, gdirect_errmsg()); \
			exit(1);					\
		}							\
	} while (0)

#define CHECK_EQ(a, b)							\
	do {								\
		long long _a = (long long)(a), _b = (long long)(b);	\
		if (_a != _b) {						\
			fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld (%s)\n", \
				__FILE__, __LINE__, #a, _a, #b, _b,	\
				gdirect_errmsg());			\
			exit(1);					\
		}							\
	} while (0)

#define SKIP(why)							\
	do {								\
		printf("SKIP: %s\n", why);				\
		exit(77);						\
	} while (0)

#define KiB (1024ULL)
#define MiB (1024ULL * 1024)

static inline void *P(uint64_t a)
{
	return (void *)(uintptr_t)a;
}

/* A context over a fresh fake backend. */
static inline struct gdirect_ctx *mkctx(struct gdirect_params *p,
					const struct fake_cfg *cfg,
					struct gd_backend **bout)
{
	struct gd_backend *b = fake_backend_new(cfg);
	struct gdirect_ctx *c = NULL;

	CHECK(b);
	CHECK_EQ(gd_ctx_create_backend(p, b, &c), 0);
	if (bout)
		*bout = b;
	return c;
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
		SKIP("GDIRECT_LIBCUDA is not set (run through meson test)");
}

#endif
