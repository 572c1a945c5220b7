// SPDX-License-Identifier: MIT
/* json.c - streaming JSON writer (RFC 8259 string escaping) */
#include "json.h"

#include <math.h>

void gdcli_json_init(struct gdcli_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->count[0] = 0;
}

/* The length of the valid UTF-8 sequence at p (1 to 4), or 0. */
static int utf8_len(const unsigned char *p)
{
	int n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc0 ? 2 : 0;
	unsigned cp;

	if (!n || p[0] > 0xf4)
		return 0;
	cp = p[0] & (0x7f >> n);
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* No overlong forms, surrogates or code points past U+10FFFF. */
	if (cp < (n == 2 ? 0x80u : n == 3 ? 0x800u : 0x10000u) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/*
 * A JSON string: control characters and DEL escaped, bytes that are not
 * valid UTF-8 replaced by U+FFFD, so the output is always valid JSON (and
 * carries no raw ESC or BEL to a terminal).
 */
static void put_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		if (*p >= 0x80) {
			int n = utf8_len(p);

			if (!n) {
				fputs("\\ufffd", f);
				continue;
			}
			fwrite(p, 1, (size_t)n, f);
			p += n - 1;
			continue;
		}
		switch (*p) {
		case '"':  fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* Separator, newline, indentation and key of the next member. */
static void member(struct gdcli_json *j, const char *key)
{
	int i;

	if (j->depth > 0) {
		fputs(j->count[j->depth] ? ",\n" : "\n", j->f);
		for (i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	j->count[j->depth]++;
	if (key) {
		put_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void open_level(struct gdcli_json *j, const char *key, char c)
{
	member(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < GDCLI_JSON_DEPTH)
		j->depth++;
	j->count[j->depth] = 0;
}

void gdcli_json_obj(struct gdcli_json *j, const char *key)
{
	open_level(j, key, '{');
}

void gdcli_json_arr(struct gdcli_json *j, const char *key)
{
	open_level(j, key, '[');
}

void gdcli_json_end(struct gdcli_json *j, char close)
{
	int i, had = j->count[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (had) {
		fputc('\n', j->f);
		for (i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	fputc(close, j->f);
}

void gdcli_json_str(struct gdcli_json *j, const char *key, const char *v)
{
	member(j, key);
	if (v)
		put_string(j->f, v);
	else
		fputs("null", j->f);
}

void gdcli_json_u64(struct gdcli_json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void gdcli_json_int(struct gdcli_json *j, const char *key, long long v)
{
	member(j, key);
	fprintf(j->f, "%lld", v);
}

void gdcli_json_dbl(struct gdcli_json *j, const char *key, double v)
{
	member(j, key);
	/* JSON has no NaN or infinities. */
	if (isfinite(v))
		fprintf(j->f, "%.6g", v);
	else
		fputs("null", j->f);
}

void gdcli_json_bool(struct gdcli_json *j, const char *key, int v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void gdcli_json_null(struct gdcli_json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

void gdcli_json_done(struct gdcli_json *j)
{
	fputc('\n', j->f);
}
