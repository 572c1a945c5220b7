/* SPDX-License-Identifier: MIT */
/*
 * parse.h - the one strict parser of settings, shared by libgdirect (its
 * environment variables) and the gdirect command (its arguments).
 *
 * A value is accepted only when all of it is understood: no leading or
 * trailing spaces, no signs, no fractions, no words in another case, no
 * value outside its bounds.  Each function returns 0, or -EINVAL (or
 * -ERANGE: out of bounds) with a sentence saying what is wrong with the
 * value in why[n] (to be prefixed with the setting's name by the caller).
 */
#ifndef GDL_PARSE_H
#define GDL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A whole decimal number in [min, max]. */
int gdl_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		  char *why, size_t n);

/*
 * A size in bytes in [min, max]: a whole decimal number, optionally with one
 * binary suffix k/K (KiB), m/M (MiB), g/G (GiB) or t/T (TiB).
 */
int gdl_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		  char *why, size_t n);

/* "0" or "1". */
int gdl_parse_bool(const char *s, bool *out, char *why, size_t n);

/*
 * A set of invalidation modes: comma-separated words among "kernel",
 * "hooks", "buffer_id" and "all" (GDIRECT_INV_* bits in *out), or the one
 * explicit opt-out GDL_PARSE_NO_INVALIDATION alone (*out = 0, *optout set).
 * An empty set is an error.
 */
#define GDL_PARSE_NO_INVALIDATION "unsafe_none"
int gdl_parse_modes(const char *s, uint32_t *out, bool *optout, char *why,
		   size_t n);

/* A registration path: "auto", "dmabuf" or "peer" (GDIRECT_MR_PATH_*). */
int gdl_parse_mr_path(const char *s, uint32_t *out, char *why, size_t n);

#endif
