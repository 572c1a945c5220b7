/* SPDX-License-Identifier: MIT */
/*
 * json.h - a small streaming JSON writer, one member per line
 *
 * One member per line keeps the output easy to pick apart with grep and sed
 * where no JSON parser exists (the test guest has only busybox).
 */
#ifndef GDTOOL_JSON_H
#define GDTOOL_JSON_H

#include <stdint.h>
#include <stdio.h>

#define GD_JSON_DEPTH 16

struct gd_json {
	FILE *f;
	int depth;
	int count[GD_JSON_DEPTH];	/* members written at each level */
};

void gd_json_init(struct gd_json *j, FILE *f);
/* key is NULL inside arrays and for the outermost value. */
void gd_json_obj(struct gd_json *j, const char *key);
void gd_json_arr(struct gd_json *j, const char *key);
void gd_json_end(struct gd_json *j, char close);	/* '}' or ']' */
void gd_json_str(struct gd_json *j, const char *key, const char *v); /* NULL: null */
void gd_json_u64(struct gd_json *j, const char *key, uint64_t v);
void gd_json_int(struct gd_json *j, const char *key, long long v);
void gd_json_dbl(struct gd_json *j, const char *key, double v);
void gd_json_bool(struct gd_json *j, const char *key, int v);
void gd_json_null(struct gd_json *j, const char *key);
/* End the document with a newline. */
void gd_json_done(struct gd_json *j);

#endif
