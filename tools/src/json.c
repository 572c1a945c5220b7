// SPDX-License-Identifier: MIT
/* json.c - streaming JSON writer (RFC 8259 string escaping) */
#include "json.h"

#include <math.h>

void gd_json_init(struct gd_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->count[0] = 0;
}

static void put_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		switch (*p) {
		case '"':  fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* Separator, newline, indentation and key of the next member. */
static void member(struct gd_json *j, const char *key)
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

static void open_level(struct gd_json *j, const char *key, char c)
{
	member(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < GD_JSON_DEPTH)
		j->depth++;
	j->count[j->depth] = 0;
}

void gd_json_obj(struct gd_json *j, const char *key) { open_level(j, key, '{'); }
void gd_json_arr(struct gd_json *j, const char *key) { open_level(j, key, '['); }

void gd_json_end(struct gd_json *j, char close)
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

void gd_json_str(struct gd_json *j, const char *key, const char *v)
{
	member(j, key);
	if (v)
		put_string(j->f, v);
	else
		fputs("null", j->f);
}

void gd_json_u64(struct gd_json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void gd_json_int(struct gd_json *j, const char *key, long long v)
{
	member(j, key);
	fprintf(j->f, "%lld", v);
}

void gd_json_dbl(struct gd_json *j, const char *key, double v)
{
	member(j, key);
	/* JSON has no NaN or infinities. */
	if (isfinite(v))
		fprintf(j->f, "%.6g", v);
	else
		fputs("null", j->f);
}

void gd_json_bool(struct gd_json *j, const char *key, int v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void gd_json_null(struct gd_json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

void gd_json_done(struct gd_json *j)
{
	fputc('\n', j->f);
}
