/* SPDX-License-Identifier: MIT */
/*
 * copy.c - dispatch of the BAR copy routines, and the portable fallback.
 *
 * Write-combined stores are weakly ordered and sit in WC buffers: a copy to
 * a mapping ends with a store fence, so the data is on its way to the GPU
 * before anything the caller does next (a doorbell, a flag).  A copy from a
 * mapping starts with a full fence, so that its (possibly streaming) loads
 * are not satisfied ahead of earlier accesses, e.g. the read of a flag that
 * said the data was ready.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy.h"
#include "libgdirect_internal.h"

extern const struct gdl_copy_impl gdl_copy_movdir64b, gdl_copy_avx512,
	gdl_copy_avx2, gdl_copy_sse;

static void generic_to(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
	atomic_thread_fence(memory_order_seq_cst);
}

static void generic_from(void *dst, const void *src, size_t n)
{
	atomic_thread_fence(memory_order_seq_cst);
	memcpy(dst, src, n);
}

static int always(void)
{
	return 1;
}

static const struct gdl_copy_impl gdl_copy_generic = {
	"generic", always, generic_to, generic_from,
};

/*
 * Preference: MOVDIR64B writes whole 64-byte lines (the best PCIe writes);
 * AVX2 before AVX-512 because gdrcopy measured its AVX-512 path slower
 * (wider vectors do not help a link limited by posted-write size, and
 * AVX-512 can lower the core clock).
 */
GDL_EXPORT const struct gdl_copy_impl *const gdl_copy_impls[] = {
#if defined(__x86_64__)
	&gdl_copy_movdir64b,
	&gdl_copy_avx2,
	&gdl_copy_avx512,
	&gdl_copy_sse,
#endif
	&gdl_copy_generic,
	NULL,
};

static _Atomic(const struct gdl_copy_impl *) cur;
static pthread_once_t once = PTHREAD_ONCE_INIT;

GDL_EXPORT int gdl_copy_select(const char *name)
{
	for (int i = 0; gdl_copy_impls[i]; i++) {
		const struct gdl_copy_impl *im = gdl_copy_impls[i];

		if (name && strcmp(name, im->name))
			continue;
		if (!im->supported()) {
			if (name)
				return -ENOTSUP;
			continue;
		}
		atomic_store(&cur, im);
		return 0;
	}
	return -ENOENT;
}

int gdl_copy_check(const char *name, char *why, size_t n)
{
	for (int i = 0; gdl_copy_impls[i]; i++) {
		if (strcmp(name, gdl_copy_impls[i]->name))
			continue;
		if (gdl_copy_impls[i]->supported())
			return 0;
		snprintf(why, n, "this CPU cannot run \"%s\"", name);
		return -EINVAL;
	}
	snprintf(why, n, "\"%s\" is not a copy implementation (movdir64b, "
		 "avx512, avx2, sse or generic)", name);
	return -EINVAL;
}

static void init(void)
{
	const char *want = getenv("GDIRECT_COPY");
	char why[160];

	if (want && *want && gdl_copy_check(want, why, sizeof(why))) {
		/*
		 * A copy made before any context has no caller to hand an error
		 * to (gdirect_ctx_create() refuses the same value): say so once
		 * rather than pass over the typo in silence.
		 */
		fprintf(stderr, "libgdirect: GDIRECT_COPY: %s; using the default copy\n",
			why);
		want = NULL;
	}
	if (!want || !*want || gdl_copy_select(want))
		gdl_copy_select(NULL);
}

static const struct gdl_copy_impl *impl(void)
{
	const struct gdl_copy_impl *im =
		atomic_load_explicit(&cur, memory_order_acquire);

	if (__builtin_expect(!im, 0)) {
		pthread_once(&once, init);
		im = atomic_load(&cur);
	}
	return im;
}

GDL_EXPORT void gdirect_copy_to_mapping(void *map_dst, const void *src,
					size_t n)
{
	if (n)
		impl()->to_map(map_dst, src, n);
}

GDL_EXPORT void gdirect_copy_from_mapping(void *dst, const void *map_src,
					 size_t n)
{
	if (n)
		impl()->from_map(dst, map_src, n);
}

GDL_EXPORT const char *gdirect_copy_impl(void)
{
	return impl()->name;
}
