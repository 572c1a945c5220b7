/* SPDX-License-Identifier: MIT */
/*
 * lib-nocuda: with no CUDA driver (GDIRECT_LIBCUDA=none) and no pinning
 * device, the CPU path works; a driver GDIRECT_LIBCUDA names that does not
 * load is an error, not a machine without CUDA.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gdirect.h>
#include "tap.h"


static void cpu_path_only(void)
{
	struct gdirect_ctx *c;
	struct gdirect_ptr_info in;
	struct gdirect_reg *r;
	char buf[100], dst[100];

	CHECK(gdirect_ctx_create(NULL, &c) == 0);
	CHECK(gdirect_event_fd(c) == -1);
	CHECK(gdirect_classify(c, buf, &in) == 0);
	CHECK(in.type == GDIRECT_MEM_CPU);
	CHECK(gdirect_reg_get(c, buf, sizeof(buf), 0, &r) == -EINVAL);
	CHECK(strstr(gdirect_errmsg(), "not GPU memory"));
	memset(buf, 7, sizeof(buf));
	gdirect_copy_to_mapping(dst, buf, sizeof(buf));
	CHECK(!memcmp(dst, buf, sizeof(buf)));
	CHECK(gdirect_process_events(c) == 0);
	CHECK(gdirect_flush(c) == 0);
	gdirect_ctx_destroy(c);
}

/*
 * The driver loads once per process, so a child tries the missing one: exit
 * 0 when gdirect_ctx_create() refused it with -EINVAL and said which file,
 * 1 when it was refused without saying, 2 when it was taken for no driver.
 */
static void named_driver_missing_is_an_error(void)
{
	const char *bad = "/nonexistent/libcuda.so.1";
	int status;
	pid_t pid;

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct gdirect_ctx *c;
		int rc;

		setenv("GDIRECT_LIBCUDA", bad, 1);
		rc = gdirect_ctx_create(NULL, &c);
		if (rc == 0) {
			gdirect_ctx_destroy(c);
			_exit(2);
		}
		fprintf(stderr, "# refused: %s\n", gdirect_errmsg());
		_exit(rc == -EINVAL && strstr(gdirect_errmsg(), bad) &&
		      strstr(gdirect_errmsg(), "GDIRECT_LIBCUDA") ? 0 : 1);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
}

int main(void)
{
	tap_context = gdirect_errmsg;
	TAP_TEST(named_driver_missing_is_an_error);
	TAP_TEST(cpu_path_only);
	return tap_done();
}
