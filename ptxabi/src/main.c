/* SPDX-License-Identifier: MIT */
/* ptxabi command line: layouts, PTX prototypes, call sequences, checks. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ptxabi.h"

static void usage(FILE *f)
{
	fputs("usage: ptxabi [COMMAND] [OPTIONS] FILE...\n"
	      "commands:\n"
	      "  layout   type layouts and .func prototypes (default)\n"
	      "  types    type layouts only\n"
	      "  proto    .visible .func prototypes, as nvcc defines them\n"
	      "  extern   .extern .func declarations, as a caller has them\n"
	      "  call     caller-side call sequences\n"
	      "  check HEADER PTX...\n"
	      "           check the PTX .func prototypes against HEADER\n"
	      "options:\n"
	      "  -DNAME[=VALUE]  define a macro   -UNAME  undefine a macro\n"
	      "  -n NAME         only this type or function\n"
	      "FILE '-' reads standard input.  Exit status: 0 ok, 1 error or\n"
	      "mismatch, 2 usage.\n", f);
}

int main(int argc, char **argv)
{
	unsigned what = PTXABI_TYPES | PTXABI_PROTOS;
	bool check = false;
	const char *only = NULL;
	const char **files = calloc((size_t)argc + 1, sizeof(*files));
	size_t nfiles = 0;
	int i = 1;
	ptxabi_ctx *ctx = ptxabi_new();

	if (!files || !ctx) {
		fputs("ptxabi: out of memory\n", stderr);
		return 1;
	}
	if (i < argc && argv[i][0] != '-') {
		static const struct { const char *name; unsigned what; } cmds[] = {
			{ "layout", PTXABI_TYPES | PTXABI_PROTOS },
			{ "types", PTXABI_TYPES }, { "proto", PTXABI_PROTOS },
			{ "extern", PTXABI_EXTERNS }, { "call", PTXABI_CALLS },
			{ "check", 0 },
		};
		size_t c;

		for (c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++)
			if (strcmp(argv[i], cmds[c].name) == 0)
				break;
		if (c < sizeof(cmds) / sizeof(cmds[0])) {
			what = cmds[c].what;
			check = what == 0;
			i++;
		}
	}
	for (; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (strncmp(a, "-D", 2) == 0 && a[2]) {
			char *name = strdup(a + 2);
			char *eq = name ? strchr(name, '=') : NULL;

			if (eq)
				*eq = 0;
			if (!name || ptxabi_define(ctx, name, eq ? eq + 1 : NULL)) {
				fprintf(stderr, "ptxabi: %s\n", ptxabi_error(ctx));
				return 2;
			}
			free(name);
		} else if (strncmp(a, "-U", 2) == 0 && a[2]) {
			ptxabi_undef(ctx, a + 2);
		} else if (strcmp(a, "-n") == 0 && i + 1 < argc) {
			only = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "ptxabi: unknown option %s\n", a);
			usage(stderr);
			return 2;
		} else {
			files[nfiles++] = a;
		}
	}
	if (nfiles == 0 || (check && nfiles < 2)) {
		usage(stderr);
		return 2;
	}
	size_t nparse = check ? 1 : nfiles;

	for (size_t f = 0; f < nparse; f++)
		if (ptxabi_parse_file(ctx, files[f])) {
			fprintf(stderr, "%s\n", ptxabi_error(ctx));
			ptxabi_free(ctx);
			free(files);
			return 1;
		}
	int rc = 0;

	if (check) {
		int n = ptxabi_check_ptx(ctx, files + 1, nfiles - 1, stdout);

		if (n < 0)
			fprintf(stderr, "%s\n", ptxabi_error(ctx));
		rc = n != 0;
	} else if (ptxabi_print(ctx, stdout, what, only)) {
		fprintf(stderr, "ptxabi: %s\n", ptxabi_error(ctx));
		rc = 1;
	}
	ptxabi_free(ctx);
	free(files);
	return rc;
}
