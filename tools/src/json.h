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

#define GDCLI_JSON_DEPTH 16

struct gdcli_json {
	FILE *f;
	int depth;
	int count[GDCLI_JSON_DEPTH];	/* members written at each level */
};

void gdcli_json_init(struct gdcli_json *j, FILE *f);
/* key is NULL inside arrays and for the outermost value. */
void gdcli_json_obj(struct gdcli_json *j, const char *key);
void gdcli_json_arr(struct gdcli_json *j, const char *key);
void gdcli_json_end(struct gdcli_json *j, char close);	/* '}' or ']' */
/* A NULL v writes null. */
void gdcli_json_str(struct gdcli_json *j, const char *key, const char *v);
void gdcli_json_u64(struct gdcli_json *j, const char *key, uint64_t v);
void gdcli_json_int(struct gdcli_json *j, const char *key, long long v);
void gdcli_json_dbl(struct gdcli_json *j, const char *key, double v);
void gdcli_json_bool(struct gdcli_json *j, const char *key, int v);
void gdcli_json_null(struct gdcli_json *j, const char *key);
/* End the document with a newline. */
void gdcli_json_done(struct gdcli_json *j);

#endif
