/* SPDX-License-Identifier: MIT */
/*
 * Memory and error plumbing.  Everything a context reads lives until the
 * context is freed, so one arena per context keeps ownership trivial and
 * lets the parser bail out with longjmp without leaking.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptxabi_internal.h"

struct arena_blk {
	struct arena_blk *next;
	size_t used, cap;
	max_align_t data[];
};

void *ar_alloc(ptxabi_ctx *ctx, size_t n)
{
	struct arena_blk *b = ctx->arena;
	size_t need = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);

	if (!b || b->cap - b->used < need) {
		size_t cap = need > 65536 ? need : 65536;

		b = malloc(sizeof(*b) + cap);
		if (!b) {
			struct loc none = { "<memory>", 0, 0 };

			fail(ctx, none, "out of memory");
		}
		b->next = ctx->arena;
		b->used = 0;
		b->cap = cap;
		ctx->arena = b;
	}
	void *p = (char *)b->data + b->used;

	b->used += need;
	memset(p, 0, n);
	return p;
}

char *ar_strndup(ptxabi_ctx *ctx, const char *s, size_t n)
{
	char *p = ar_alloc(ctx, n + 1);

	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *ar_printf(ptxabi_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	char small[256];

	/* Never true for callers; keeps GCC's -fsanitize=undefined builds
	 * from inventing a NULL-format path (-Wformat-truncation). */
	if (!fmt)
		return ar_strndup(ctx, "", 0);
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	char *p = ar_alloc(ctx, (size_t)n + 1);

	if ((size_t)n < sizeof(small)) {
		memcpy(p, small, (size_t)n + 1);
	} else {
		va_start(ap, fmt);
		vsnprintf(p, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	return p;
}

void ar_free_all(ptxabi_ctx *ctx)
{
	struct arena_blk *b = ctx->arena;

	while (b) {
		struct arena_blk *n = b->next;

		free(b);
		b = n;
	}
	ctx->arena = NULL;
}

/* Growable arrays live in the arena too: growing copies, the old block is
 * simply abandoned (inputs are headers, a few hundred KiB at most). */
void *vec_grow(ptxabi_ctx *ctx, void *v, size_t *cap, size_t need, size_t elt)
{
	if (need <= *cap)
		return v;
	size_t nc = *cap ? *cap * 2 : 16;

	while (nc < need)
		nc *= 2;
	void *nv = ar_alloc(ctx, nc * elt);

	if (v)
		memcpy(nv, v, *cap * elt);
	*cap = nc;
	return nv;
}

void fail(ptxabi_ctx *ctx, struct loc loc, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(ctx->err, sizeof(ctx->err), "%s:%u:%u: ",
			 loc.file ? loc.file : "<input>", loc.line, loc.col);

	if (n < 0 || (size_t)n >= sizeof(ctx->err))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(ctx->err + n, sizeof(ctx->err) - (size_t)n, fmt, ap);
	va_end(ap);
	if (ctx->jmp)
		longjmp(*ctx->jmp, 1);
	/* Every entry point installs a landing pad; reaching here is a bug. */
	fprintf(stderr, "ptxabi: %s\n", ctx->err);
	abort();
}
