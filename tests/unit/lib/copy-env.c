/* SPDX-License-Identifier: MIT */
/*
 * lib-copy-env: a GDIRECT_COPY typo seen by a copy made before any context
 * (so no gdirect_ctx_create() can refuse it) is said on stderr, once, and
 * the copy still happens with the default implementation; a valid value
 * says nothing.  Each case runs in a child whose stderr is a pipe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gdirect.h>

#include "tap.h"

static int count(const char *s, const char *what)
{
	int c = 0;

	while ((s = strstr(s, what)) != NULL) {
		c++;
		s += strlen(what);
	}
	return c;
}

/* Run one copy under GDIRECT_COPY=VALUE; its stderr into ERR. */
static int run(const char *value, char *err, size_t len)
{
	int fd[2], st;
	ssize_t got, off = 0;
	pid_t pid;

	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid == 0) {
		char src[256], dst[256];

		dup2(fd[1], 2);
		close(fd[0]);
		setenv("GDIRECT_COPY", value, 1);
		for (int i = 0; i < 256; i++)
			src[i] = (char)i;
		gdirect_copy_to_mapping(dst, src, sizeof(src));
		gdirect_copy_from_mapping(src, dst, sizeof(src));
		_exit(memcmp(src, dst, sizeof(src)) ? 3 : 0);
	}
	close(fd[1]);
	while (off < (ssize_t)len - 1 &&
	       (got = read(fd[0], err + off, len - 1 - off)) > 0)
		off += got;
	err[off] = 0;
	close(fd[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void)
{
	char err[1024];
	int rc;

	tap_plan(5);
	rc = run("avx9000", err, sizeof(err));
	tap_ok(rc == 0, "a misspelt GDIRECT_COPY: the copy still happens");
	tap_ok(strstr(err, "libgdirect: GDIRECT_COPY: ") != NULL &&
	       strstr(err, "avx9000") != NULL, "and stderr names the variable and the value");
	tap_ok(count(err, "libgdirect:") == 1, "said once, for two copies");
	if (tap_state.failed)
		tap_diag("stderr: %s", err);
	rc = run("generic", err, sizeof(err));
	tap_ok(rc == 0, "GDIRECT_COPY=generic: the copy happens");
	tap_ok(err[0] == 0, "and nothing is said");
	return tap_done();
}
