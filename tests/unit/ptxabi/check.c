/* SPDX-License-Identifier: MIT */
/*
 * `ptxabi check` on a fixture header and two PTX files: one with nvcc's
 * prototypes (must pass; typed scalars only warn), one with a mistake per
 * function (each must be named).  When ptxas is at hand the fixtures are
 * assembled too, so they stay valid PTX.
 * usage: ptxabi-test-check FIXTURE_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptxabi.h"
#include "tap.h"

static char *run_check(const char *dir, const char *ptx, int *errors)
{
	char hdr[4096], path[4096];
	const char *paths[1] = { path };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ptxabi_ctx *ctx = ptxabi_new();

	snprintf(hdr, sizeof(hdr), "%s/dev.h", dir);
	snprintf(path, sizeof(path), "%s/%s", dir, ptx);
	if (!f || !ctx || ptxabi_parse_file(ctx, hdr)) {
		tap_ok(0, "read %s: %s", hdr, ctx ? ptxabi_error(ctx) : "");
		exit(tap_done());
	}
	*errors = ptxabi_check_ptx(ctx, paths, 1, f);
	if (*errors < 0)
		fprintf(f, "check failed: %s\n", ptxabi_error(ctx));
	fclose(f);
	ptxabi_free(ctx);
	return buf;
}

static void expect(const char *report, const char *what)
{
	tap_ok(strstr(report, what) != NULL, "the report says '%s'", what);
}

static void assemble(const char *dir, const char *ptx)
{
	/* The toolkit meson found (scripts/find-cuda.sh), or none. */
	const char *root = CHECK_CUDA_ROOT;
	char ptxas[4096], cmd[9000];

	snprintf(ptxas, sizeof(ptxas), "%s/bin/ptxas", root);
	if (!*root || access(ptxas, X_OK)) {
		tap_skip(ptx, "no ptxas to assemble it");
		return;
	}
	snprintf(cmd, sizeof(cmd), "'%s' -arch=sm_80 -c -o /dev/null '%s/%s'",
		 ptxas, dir, ptx);
	tap_ok(system(cmd) == 0, "ptxas assembles fixture %s", ptx);
}

int main(int argc, char **argv)
{
	int errors;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
		return 2;
	}
	char *good = run_check(argv[1], "good.ptx", &errors);

	tap_diag("--- good.ptx\n%s", good);
	tap_ok(errors == 0, "good.ptx: %d error(s), expected none", errors);
	expect(good, "ok dev_wait ");
	expect(good, "ok dev_consume ");
	expect(good, "ok dev_center ");
	expect(good, "ok dev_h2 ");
	expect(good, "ok dev_fence ");
	expect(good, "warning: dev_signal: typed where nvcc writes");
	expect(good, "6 function(s) checked against 1 PTX file(s): 0 error(s), "
	       "1 warning(s)");
	free(good);

	char *bad = run_check(argv[1], "bad.ptx", &errors);

	tap_diag("--- bad.ptx\n%s", bad);
	tap_ok(errors == 8, "bad.ptx: %d error(s), expected 8", errors);
	expect(bad, "bad.ptx:7: error: dev_wait: parameter 2 '.param .b32 "
	       "dev_wait_param_2' has 32 bits, expected 64");
	expect(bad, "error: dev_signal: 1 parameter(s) in PTX, 2 expected");
	expect(bad, "error: dev_consume: parameter 0 '.param .align 4 .b8 "
	       "dev_consume_param_0[16]' is aligned to 4, expected 8");
	expect(bad, "error: dev_center: return value '.param .b64 "
	       "func_retval0' is a scalar");
	expect(bad, "error: dev_center: parameter 2 '.param .b8 "
	       "dev_center_param_2' has 8 bits, expected 32");
	expect(bad, "error: dev_h2: returns '.param .align 4 .b8 "
	       "func_retval0[4]' but nvcc declares no return value");
	expect(bad, "dev.h:28: error: dev_fence is not defined");
	expect(bad, "warning: .visible .func dev_extra has no C declaration");
	free(bad);

	/* A file cut inside a declaration is an error, not a crash. */
	char *cut = run_check(argv[1], "truncated.ptx", &errors);

	if (!tap_ok(errors == -1 && strstr(cut, "truncated.ptx:2:1: cannot read the "
					  "parameters of .func dev_wait"),
		    "truncated.ptx: an error, not a crash"))
		tap_diag("%d, '%s'", errors, cut);
	free(cut);

	assemble(argv[1], "good.ptx");
	assemble(argv[1], "bad.ptx");
	return tap_done();
}
