/* SPDX-License-Identifier: MIT */
/*
 * copy.h - CPU copies to and from BAR mappings.
 *
 * One implementation per instruction set; the best one the CPU has is
 * picked once (GDIRECT_COPY=<name> overrides, for tests and measurements).
 * Every implementation copies any size at any alignment: it aligns the
 * mapping side, moves whole vectors, and finishes the tail with scalars.
 */
#ifndef GDL_COPY_H
#define GDL_COPY_H

#include <stddef.h>

struct gdl_copy_impl {
	const char *name;
	int (*supported)(void);
	void (*to_map)(void *dst, const void *src, size_t n);
	void (*from_map)(void *dst, const void *src, size_t n);
};

/* All implementations compiled in, best first, NULL-terminated. */
extern const struct gdl_copy_impl *const gdl_copy_impls[];

/* Select by name (NULL: best supported).  0, or -ENOENT / -ENOTSUP. */
int gdl_copy_select(const char *name);

/* name is an implementation this CPU runs: 0, or -EINVAL with why[n]. */
int gdl_copy_check(const char *name, char *why, size_t n);

#endif
