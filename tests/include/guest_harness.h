/* SPDX-License-Identifier: MIT */
/*
 * guest_harness.h - what guest TAP programs do around their checks
 * (header only; includes tap.h, and says why a step failed with tap_diag):
 *
 *   guest_module_loaded(name)          1 if /sys/module/NAME exists
 *   guest_module_load(name, params)    insmod /modules/NAME.ko PARAMS unless
 *                                      loaded: 1 loaded now, 0 loaded
 *                                      already, -1 could not
 *   guest_sh(cmd)                      system(), 0 or its status
 *   guest_write(path, s)               (guest_file.h) write S to a file
 *   guest_set_param(mod, name, value)  /sys/module/MOD/parameters/NAME
 *   guest_now_ms()                     CLOCK_MONOTONIC in milliseconds
 *   guest_child_ok(fn)                 FN in a child: 1 if it exited 0
 *   guest_run_body(body)               BODY's checks in a child (so that the
 *                                      parent can look once its files are
 *                                      gone): each line the child prints
 *                                      is counted here as it comes, so the
 *                                      count holds if the child dies;
 *                                      returns its wait status, -1 if it
 *                                      could not run
 */
#ifndef GUEST_HARNESS_H
#define GUEST_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest_file.h"
#include "tap.h"

static inline int guest_module_loaded(const char *name)
{
	char path[96];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return stat(path, &st) == 0;
}

static inline int guest_sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc)
		tap_diag("'%s' failed: %d", cmd, rc);
	return rc;
}

static inline int guest_module_load(const char *name, const char *params)
{
	char path[96], cmd[384];

	if (guest_module_loaded(name))
		return 0;
	snprintf(path, sizeof(path), "/modules/%s.ko", name);
	if (access(path, R_OK)) {
		tap_diag("no %s", path);
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "insmod %s %s", path, params ? params : "");
	return guest_sh(cmd) ? -1 : 1;
}

/* 0, or -1 having said why. */
static inline int guest_set_param(const char *module, const char *name,
				  const char *value)
{
	char path[160];

	snprintf(path, sizeof(path), "/sys/module/%s/parameters/%s", module,
		 name);
	if (!guest_write(path, value))
		return 0;
	tap_diag("cannot set %s to %s: %s", path, value, strerror(errno));
	return -1;
}

static inline double guest_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* @fn runs in a child and ends it with _exit(); returning is exit 0. */
static inline int guest_child_ok(void (*fn)(void))
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		fn();
		_exit(0);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid &&
	       WIFEXITED(status) && !WEXITSTATUS(status);
}

/* tap.h's tap_run_child(): BODY's lines counted as they come. */
static inline int guest_run_body(void (*body)(void))
{
	return tap_run_child(body);
}

#endif /* GUEST_HARNESS_H */
