/* SPDX-License-Identifier: MIT */
/*
 * The nvcc driver: writes the generated header and probes into a folder
 * and compiles them to PTX in one run, with the nvcc the build found
 * (meson, through scripts/find-cuda.sh, compiles it in as CONF_NVCC).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "tap.h"

const char *find_nvcc(void)
{
#ifdef CONF_NVCC
	return CONF_NVCC;
#else
	return NULL;
#endif
}

char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct str b = { 0 };
	char chunk[65536];
	size_t n;

	if (!f)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		sadd(&b, "%.*s", (int)n, chunk);
	fclose(f);
	if (len)
		*len = b.n;
	return b.s ? b.s : calloc(1, 1);
}

static int write_file(const char *path, const struct str *s)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fwrite(s->s, 1, s->n, f);
	return fclose(f);
}

int nvcc_compile(const char *nvcc, const char *keep, const struct str *hdr,
		 const struct str *cu, struct probe *pr)
{
	char cmd[20000];

	if (keep) {
		snprintf(pr->dir, sizeof(pr->dir), "%s", keep);
		mkdir(pr->dir, 0755);
	} else {
		const char *tmp = getenv("TMPDIR");

		snprintf(pr->dir, sizeof(pr->dir), "%s/ptxabi-conf-XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(pr->dir)) {
			perror("mkdtemp");
			return -1;
		}
	}
	snprintf(pr->hpath, sizeof(pr->hpath), "%s/decls.h", pr->dir);
	snprintf(pr->cpath, sizeof(pr->cpath), "%s/probe.cu", pr->dir);
	snprintf(pr->ppath, sizeof(pr->ppath), "%s/probe.ptx", pr->dir);
	snprintf(pr->epath, sizeof(pr->epath), "%s/nvcc.log", pr->dir);
	if (write_file(pr->hpath, hdr) || write_file(pr->cpath, cu)) {
		perror(pr->dir);
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "'%s' -ptx -rdc=true -arch=sm_80 "
		 "-std=c++20 --diag-suppress=108,1160 -o '%s' '%s' > '%s' 2>&1", nvcc, pr->ppath, pr->cpath,
		 pr->epath);
	tap_diag("running: %s", cmd);
	if (system(cmd) != 0) {
		char *log = read_all(pr->epath, NULL);

		tap_ok(0, "nvcc compiles the generated probes");
		tap_diag("kept in %s:\n%.4000s", pr->dir, log ? log : "");
		free(log);
		return -1;
	}
	return 0;
}

void probe_remove(const struct probe *pr)
{
	unlink(pr->hpath);
	unlink(pr->cpath);
	unlink(pr->ppath);
	unlink(pr->epath);
	rmdir(pr->dir);
}
