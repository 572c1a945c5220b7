/* SPDX-License-Identifier: MIT */
/*
 * parse.c - strict parsing of settings (see parse.h).
 */
#include "parse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gdirect.h"

/* Digits [s, *end): 0, or -EINVAL/-ERANGE. */
static int digits(const char *s, const char **end, uint64_t *out, char *why,
		  size_t n)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9') {
		snprintf(why, n, "\"%s\" is not a whole decimal number", s);
		return -EINVAL;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10) {
			snprintf(why, n, "\"%s\" is too large", s);
			return -ERANGE;
		}
		v = v * 10 + d;
	}
	*end = p;
	*out = v;
	return 0;
}

static int bounds(const char *s, uint64_t v, uint64_t min, uint64_t max,
		  char *why, size_t n)
{
	if (v < min || v > max) {
		snprintf(why, n, "\"%s\" is outside [%llu, %llu]", s,
			 (unsigned long long)min, (unsigned long long)max);
		return -ERANGE;
	}
	return 0;
}

int gdl_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		  char *why, size_t n)
{
	const char *end;
	uint64_t v;
	int rc;

	if (!s)
		s = "";
	rc = digits(s, &end, &v, why, n);
	if (rc)
		return rc;
	if (*end) {
		snprintf(why, n, "\"%s\" is not a whole decimal number", s);
		return -EINVAL;
	}
	rc = bounds(s, v, min, max, why, n);
	if (!rc)
		*out = v;
	return rc;
}

int gdl_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		  char *why, size_t n)
{
	const char *end;
	unsigned shift = 0;
	uint64_t v;
	int rc;

	if (!s)
		s = "";
	rc = digits(s, &end, &v, why, n);
	if (rc == -EINVAL)
		snprintf(why, n, "\"%s\" is not a size (a whole number of "
			 "bytes, with an optional k, M, G or T suffix)", s);
	if (rc)
		return rc;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: end = "?"; break;
	}
	if (*end) {
		snprintf(why, n, "\"%s\" is not a size (a whole number of "
			 "bytes, with an optional k, M, G or T suffix)", s);
		return -EINVAL;
	}
	if (shift && v > UINT64_MAX >> shift) {
		snprintf(why, n, "\"%s\" is too large", s);
		return -ERANGE;
	}
	v <<= shift;
	rc = bounds(s, v, min, max, why, n);
	if (!rc)
		*out = v;
	return rc;
}

int gdl_parse_bool(const char *s, bool *out, char *why, size_t n)
{
	if (s && (!strcmp(s, "0") || !strcmp(s, "1"))) {
		*out = s[0] == '1';
		return 0;
	}
	snprintf(why, n, "\"%s\" is neither 0 nor 1", s ? s : "");
	return -EINVAL;
}

int gdl_parse_mr_path(const char *s, uint32_t *out, char *why, size_t n)
{
	static const char *const words[] = {
		[GDIRECT_MR_PATH_AUTO] = "auto",
		[GDIRECT_MR_PATH_DMABUF] = "dmabuf",
		[GDIRECT_MR_PATH_PEER] = "peer",
	};

	for (uint32_t i = 0; s && i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(s, words[i])) {
			*out = i;
			return 0;
		}
	snprintf(why, n, "\"%s\" is not a registration path (auto, dmabuf "
		 "or peer)", s ? s : "");
	return -EINVAL;
}

int gdl_parse_modes(const char *s, uint32_t *out, bool *optout, char *why,
		   size_t n)
{
	static const struct { const char *w; uint32_t m; } words[] = {
		{ "kernel", GDIRECT_INV_KERNEL },
		{ "hooks", GDIRECT_INV_HOOKS },
		{ "buffer_id", GDIRECT_INV_BUFFER_ID },
		{ "all", GDIRECT_INV_ALL },
	};
	const char *p;
	uint32_t m = 0;

	if (!s)
		s = "";
	*optout = false;
	if (!strcmp(s, GDL_PARSE_NO_INVALIDATION)) {
		*out = 0;
		*optout = true;
		return 0;
	}
	for (p = s;; p++) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (strlen(words[i].w) == len && !strncmp(p, words[i].w, len))
				break;
		if (i == sizeof(words) / sizeof(words[0])) {
			snprintf(why, n, "\"%.*s\" in \"%s\" is not an invalidation "
				 "mode (kernel, hooks, buffer_id or all, separated "
				 "by commas without spaces; " GDL_PARSE_NO_INVALIDATION
				 " alone to run without invalidation)",
				 (int)len, p, s);
			return -EINVAL;
		}
		m |= words[i].m;
		p += len;
		if (!*p)
			break;
	}
	*out = m;
	return 0;
}
