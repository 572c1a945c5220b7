// SPDX-License-Identifier: MIT
/*
 * nvml.c - NVML loaded at run time: BAR1 from the fake library
 * (tests/fakes/fake_nvml.h, through GDIRECT_LIBNVML), and a clean failure
 * without one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_nvml.h"
#include "tap.h"
#include "tool_cuda.h"
#include "tool_nvml.h"

/*
 * The libraries named by GDIRECT_LIBNVML and GDIRECT_LIBCUDA are read with
 * secure_getenv(): in a secure-execution process (set-user-ID) they are
 * ignored.  Defined here, this secure_getenv() answers for the code under
 * test as glibc does there while at_secure is set.
 */
static int at_secure;

char *secure_getenv(const char *name)
{
	return at_secure ? NULL : getenv(name);
}

int main(void)
{
	const char *fake = getenv("FAKE_NVML");
	struct gdcli_nvml_bar1 b;
	char err[128], ver[32];
	int rc;

	if (!fake) {
		tap_diag("FAKE_NVML not set");
		return 1;
	}
	setenv("GDIRECT_LIBNVML", fake, 1);
	CHECK(gdcli_nvml_bar1(FAKE_NVML_BDF, &b, err, sizeof(err)) == 0);
	CHECK(b.total == FAKE_NVML_BAR1_TOTAL && b.used == FAKE_NVML_BAR1_USED &&
	      b.free == FAKE_NVML_BAR1_TOTAL - FAKE_NVML_BAR1_USED);
	CHECK(gdcli_nvml_bar1("0000:04:00.0", &b, err, sizeof(err)) == -EIO);
	CHECK(strstr(err, "Not Found") != NULL);
	CHECK(gdcli_nvml_driver_version(ver, sizeof(ver)) == 0);
	CHECK_STR(ver, FAKE_NVML_DRIVER_VERSION);

	/* Under AT_SECURE the fake is not loaded (whatever the default
	 * library gives, it is not the fake's BAR1). */
	at_secure = 1;
	CHECK(gdcli_nvml_bar1(FAKE_NVML_BDF, &b, err, sizeof(err)) != 0 ||
	      b.total != FAKE_NVML_BAR1_TOTAL);
	/* The fake has no CUDA: named as the CUDA driver it is loaded and
	 * found lacking, unless the name is ignored. */
	setenv("GDIRECT_LIBCUDA", fake, 1);
	rc = gdcli_cuda_open(err, sizeof(err));
	CHECK(rc != -ENOSYS);
	if (!rc)
		gdcli_cuda_close();
	at_secure = 0;
	CHECK(gdcli_cuda_open(err, sizeof(err)) == -ENOSYS);
	unsetenv("GDIRECT_LIBCUDA");

	setenv("GDIRECT_LIBNVML", "/nonexistent/libnvidia-ml.so.1", 1);
	CHECK(gdcli_nvml_bar1(FAKE_NVML_BDF, &b, err, sizeof(err)) == -ENOENT);
	CHECK(strstr(err, "not found") != NULL);
	return tap_done();
}
