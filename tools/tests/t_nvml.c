// SPDX-License-Identifier: MIT
/*
 * t_nvml.c - NVML loaded at run time: BAR1 from a stand-in library
 * (GDIRECT_LIBNVML), and a clean failure without one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nvml.h"

int main(void)
{
	const char *fake = getenv("FAKE_NVML");
	struct gd_nvml_bar1 b;
	char err[128], ver[32];

	if (!fake) {
		printf("FAKE_NVML not set\n");
		return 1;
	}
	setenv("GDIRECT_LIBNVML", fake, 1);
	CHECK(gd_nvml_bar1("0000:03:00.0", &b, err, sizeof(err)) == 0);
	CHECK(b.total == 256ULL << 20 && b.used == 2ULL << 20 && b.free == 254ULL << 20);
	CHECK(gd_nvml_bar1("0000:04:00.0", &b, err, sizeof(err)) == -EIO);
	CHECK(strstr(err, "Not Found") != NULL);
	CHECK(gd_nvml_driver_version(ver, sizeof(ver)) == 0);
	CHECK_STR(ver, "580.95.05");

	setenv("GDIRECT_LIBNVML", "/nonexistent/libnvidia-ml.so.1", 1);
	CHECK(gd_nvml_bar1("0000:03:00.0", &b, err, sizeof(err)) == -ENOENT);
	CHECK(strstr(err, "not found") != NULL);
	CHECK_DONE();
}
