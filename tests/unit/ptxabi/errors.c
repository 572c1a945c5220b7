/* SPDX-License-Identifier: MIT */
/*
 * Unsupported or invalid input must fail with FILE:LINE:COL and a message
 * that names the problem -- never a guessed layout.
 */
#include <stdio.h>
#include <string.h>

#include "ptxabi.h"
#include "tap.h"

struct bad {
	const char *src;
	const char *where;	/* "LINE:COL" expected in the message */
	const char *what;	/* a substring of the message */
};

static const struct bad cases[] = {
	{ "struct S { int x : 40; };", "1:20", "exceeds its type 'int'" },
	{ "struct S { float f : 3; };", "1:18", "non-integer type" },
	{ "struct S { int x : 0; };", "1:16", "zero width" },
	{ "\nstruct S {\n  long double d;\n};", "3:3", "long double" },
	{ "int f(int a, ...);", "1:14", "variadic" },
	{ "struct S { int a[]; };", "1:17", "flexible array" },
	{ "struct S { int a[0]; };", "1:17", "must be positive" },
	{ "foo_t x;", "1:1", "unknown type name" },
	{ "struct S { int x; } __attribute__((packed));", "1:36",
	  "unsupported attribute 'packed'" },
	{ "struct S { int x; };\nstruct S { int y; };", "2:8",
	  "redefinition" },
	{ "struct F;\nstruct T { struct F f; };", "2:21", "incomplete type" },
	{ "__global__ void k(int *p);", "1:1", "__global__ kernels" },
	{ "union U { __half2 h; };\nvoid f(union U u);", "2:6",
	  "no copy constructor" },
	{ "struct S { char c; }", "1:21", "expected a name" },
	{ "#if 1\nstruct S { int x; };\n", "1:1", "unterminated #if" },
	{ "#else\n", "1:1", "#else without #if" },
	{ "#include_next <x>\n", "1:2", "unsupported directive" },
	{ "#define CAT(a, b) a ## b\n", "1:21", "## macro operators" },
	{ "static_assert(sizeof(int) == 8, \"int is 8\");", "1:1",
	  "static assertion failed" },
	{ "/* open\nstruct S { int x; };", "1:1", "unterminated comment" },
	{ "struct S { int x; }; int g(struct S s) {", "1:40",
	  "unbalanced brackets" },
	{ "struct S { char a[4 / 0]; };", "1:21", "division by zero" },
	{ "struct S { int x : 3; } __attribute__((aligned(3)));", "1:40",
	  "not a power of two" },
	{ "namespace n { }", "1:1", "C++ 'namespace'" },
	{ "struct S { int f(void); };", "1:16", "member functions" },
	{ "typedef struct __align__(256) { char c; } big_t;\n"
	  "void f(big_t b);", "2:6", "at most 128" },
	{ "struct S { char c; @ };", "1:20", "unexpected character '@'" },
	{ "int f(void) [3];", "1:13", "function returning" },
	{ "struct S { _Bool b : 2; };", "1:22", "_Bool bit-field" },
};

int main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);

	for (size_t i = 0; i < n; i++) {
		ptxabi_ctx *ctx = ptxabi_new();
		char where[64];

		if (!ctx) {
			tap_ok(0, "ptxabi_new");
			return tap_done();
		}
		snprintf(where, sizeof(where), "bad.h:%s: ", cases[i].where);
		int rc = ptxabi_parse(ctx, cases[i].src, strlen(cases[i].src),
				      "bad.h");
		const char *err = ptxabi_error(ctx);

		if (!tap_ok(rc == -1 && !strncmp(err, where, strlen(where)) &&
			    strstr(err, cases[i].what), "case %zu: %s: %s...%s",
			    i, cases[i].src, where, cases[i].what))
			tap_diag("rc %d, error '%s'", rc, err);
		ptxabi_free(ctx);
	}

	/* API-level errors carry a location too, and leave the context
	 * usable. */
	ptxabi_ctx *ctx = ptxabi_new();
	struct ptxabi_member m;
	struct ptxabi_layout l;
	const char *ok = "struct S { int a[2]; int b : 3; };";

	if (!tap_ok(!ptxabi_parse(ctx, ok, strlen(ok), "ok.h"), "a good declaration parses"))
		tap_diag("%s", ptxabi_error(ctx));
	if (!tap_ok(ptxabi_member(ctx, "struct S", "a[2]", &m) == -1 &&
		    strstr(ptxabi_error(ctx), "<path>:1:2: index 2 out of range"),
		    "out-of-range index"))
		tap_diag("'%s'", ptxabi_error(ctx));
	if (!tap_ok(ptxabi_member(ctx, "struct S", "c", &m) == -1 &&
		    strstr(ptxabi_error(ctx), "no member 'c'"), "missing member"))
		tap_diag("'%s'", ptxabi_error(ctx));
	if (!tap_ok(ptxabi_type_layout(ctx, "struct Nope", &l) == -1 &&
		    strstr(ptxabi_error(ctx), "incomplete"), "unknown type"))
		tap_diag("'%s'", ptxabi_error(ctx));
	if (!tap_ok(!ptxabi_type_layout(ctx, "struct S", &l) && l.size == 12,
		    "the context is usable after errors"))
		tap_diag("%s", ptxabi_error(ctx));
	ptxabi_free(ctx);
	return tap_done();
}
