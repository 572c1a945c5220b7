// SPDX-License-Identifier: MIT
/*
 * jitlink.c - the device library's PTX links with a CUDA C caller
 * through nvJitLink, and what must not link does not (nvJitLink is a host
 * library: no GPU needed).
 *
 *   device-jitlink PTXDIR CALLER.ptx [MISMATCH.ptx=FUNCTION ...]
 *
 * PTXDIR holds the library's flag.ptx, seq_cst.ptx and ring.ptx; CALLER.ptx
 * is nvcc's PTX of tests/device/callers/all_calls.cu; each MISMATCH.ptx is a caller
 * that declares FUNCTION wrongly on purpose.
 */
#include "gdirect_jitlink.h"

#include <nvJitLink.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

static const char *const lib_files[] = { "flag.ptx", "seq_cst.ptx", "ring.ptx" };
#define NLIB (sizeof(lib_files) / sizeof(lib_files[0]))

static void check(int ok, const char *what, const char *arg)
{
	tap_ok(ok, "%s%s%s", what, arg ? " " : "", arg ? arg : "");
}

static void show_log(const char *log)
{
	if (log && *log)
		tap_diag("%s", log);
}

struct inputs {
	struct gdirect_jit_input in[NLIB + 1];
	char *bufs[NLIB + 1];
	char names[NLIB][512];
	size_t n;
};

static int load(struct inputs *s, const char *dir, const char *caller)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i <= NLIB; i++) {
		const char *path = caller;
		size_t size = 0;

		if (i < NLIB) {
			snprintf(s->names[i], sizeof(s->names[i]), "%s/%s",
				 dir, lib_files[i]);
			path = s->names[i];
		}
		if (!path)
			break;
		s->bufs[i] = gdirect_jit_slurp(path, &size);
		if (!s->bufs[i]) {
			tap_diag("cannot read %s", path);
			return -1;
		}
		s->in[i].name = path;
		s->in[i].type = NVJITLINK_INPUT_PTX;
		s->in[i].data = s->bufs[i];
		s->in[i].size = size;
		s->n++;
	}
	return 0;
}

static void unload(struct inputs *s)
{
	size_t i;

	for (i = 0; i <= NLIB; i++)
		free(s->bufs[i]);
}

static int link_inputs(const char *arch, const struct gdirect_jit_input *in,
		       size_t n, char **log, size_t *cubin_size, int *is_elf)
{
	void *cubin = NULL;
	int rc;

	rc = gdirect_jitlink(arch, in, n, &cubin, cubin_size, log);
	*is_elf = cubin && *cubin_size > 4 && !memcmp(cubin, "\177ELF", 4);
	free(cubin);
	return rc;
}

/* A PTX module whose .target (sm_90) is above the link's arch (sm_80). */
static const char too_new[] =
	".version 7.0\n.target sm_90\n.address_size 64\n"
	".visible .func gdirect_too_new()\n{\n\tret;\n}\n";

int main(int argc, char **argv)
{
	static const char *const arches[] = { "sm_80", "sm_90" };
	struct inputs s;
	char *log = NULL;
	size_t size, a;
	int rc, elf, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		tap_skip_all("needs the caller's PTX, built with nvcc, which "
			     "was not found at configure time");
	}
	if (load(&s, argv[1], argv[2]) < 0)
		return 1;

	for (a = 0; a < 2; a++) {
		rc = link_inputs(arches[a], s.in, s.n, &log, &size, &elf);
		if (rc)
			show_log(log);
		check(rc == 0 && elf, "caller + library link to a cubin for",
		      arches[a]);
		free(log);
	}

	/* The library alone leaves nothing unresolved. */
	rc = link_inputs("sm_90", s.in, NLIB, &log, &size, &elf);
	check(rc == 0 && elf, "library alone links", NULL);
	free(log);

	/* The caller without the library must not link. */
	rc = link_inputs("sm_90", &s.in[NLIB], 1, &log, &size, &elf);
	show_log(log);
	check(rc != 0, "caller without the library is refused", NULL);
	free(log);

	/* A refused input is reported even if the rest links. */
	{
		struct gdirect_jit_input in[NLIB + 1];

		memcpy(in, s.in, sizeof(in[0]) * NLIB);
		in[NLIB].name = "too_new.ptx";
		in[NLIB].type = NVJITLINK_INPUT_PTX;
		in[NLIB].data = too_new;
		in[NLIB].size = sizeof(too_new) - 1;
		rc = link_inputs("sm_80", in, NLIB + 1, &log, &size, &elf);
		show_log(log);
		check(rc != 0 && strstr(log, "too_new.ptx"),
		      "a failed nvJitLinkAddData fails the link", NULL);
		free(log);
	}

	/* Each deliberately wrong prototype is caught, by name. */
	for (i = 3; i < argc; i++) {
		char path[1024], want[512];
		char *eq, *buf;

		snprintf(path, sizeof(path), "%s", argv[i]);
		eq = strchr(path, '=');
		if (!eq) {
			check(0, "argument is not FILE=FUNCTION:", argv[i]);
			continue;
		}
		*eq = '\0';
		snprintf(want, sizeof(want), "Prototype doesn't match for '%s'",
			 eq + 1);
		buf = gdirect_jit_slurp(path, &size);
		if (!buf) {
			check(0, "cannot read", path);
			continue;
		}
		free(s.bufs[NLIB]);
		s.bufs[NLIB] = buf;
		s.in[NLIB].name = argv[i];
		s.in[NLIB].data = buf;
		s.in[NLIB].size = size;
		rc = link_inputs("sm_90", s.in, s.n, &log, &size, &elf);
		show_log(log);
		check(rc != 0 && strstr(log, want),
		      "mismatched prototype is refused:", eq + 1);
		free(log);
	}

	unload(&s);
	return tap_done();
}
