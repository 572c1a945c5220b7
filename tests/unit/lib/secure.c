/* SPDX-License-Identifier: MIT */
/*
 * lib-secure: the CUDA driver named by GDIRECT_LIBCUDA is not loaded in a
 * secure-execution process (set-user-ID, capabilities: AT_SECURE), where
 * the environment belongs to a less privileged user.  libgdirect reads it
 * with secure_getenv(), which glibc answers with NULL there.  This program
 * defines secure_getenv() itself (interposing on glibc's for libgdirect) to
 * answer as glibc does under AT_SECURE, in one child, and as in a normal
 * process in another (the control: the file is loaded then).
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gdirect.h>

#include "tap.h"

static bool at_secure;

char *secure_getenv(const char *name)
{
	return at_secure ? NULL : getenv(name);
}

/* In a child: whether the context's creation loaded GDIRECT_LIBCUDA. */
static int child(bool secure)
{
	const char *lib = getenv("GDIRECT_LIBCUDA");
	struct gdirect_ctx *c = NULL;

	at_secure = secure;
	if (gdirect_ctx_create(NULL, &c)) {
		fprintf(stderr, "gdirect_ctx_create: %s\n", gdirect_errmsg());
		return 2;
	}
	void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);

	gdirect_ctx_destroy(c);
	if (h)
		dlclose(h);
	return h != NULL;
}

static int in_child(bool secure)
{
	int st;
	pid_t pid = fork();

	if (pid == 0)
		_exit(child(secure));
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 2;
	return WEXITSTATUS(st);
}

int main(void)
{
	const char *lib = getenv("GDIRECT_LIBCUDA");
	int loaded;

	if (!lib || !*lib)
		tap_skip_all("GDIRECT_LIBCUDA is not set (run through meson test)");
	setenv("GDIRECT_DEVICE", "/nonexistent/gdirect", 1);
	setenv("GDIRECT_INVALIDATION", "hooks", 1);
	loaded = in_child(false);
	if (!tap_ok(loaded == 1, "control: GDIRECT_LIBCUDA loaded normally"))
		tap_diag("GDIRECT_LIBCUDA=%s not loaded (%d)", lib, loaded);
	loaded = in_child(true);
	if (!tap_ok(loaded == 0, "secure execution: GDIRECT_LIBCUDA ignored"))
		tap_diag("GDIRECT_LIBCUDA=%s loaded (%d)", lib, loaded);
	return tap_done();
}
