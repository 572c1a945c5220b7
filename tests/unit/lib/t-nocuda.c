/* SPDX-License-Identifier: MIT */
/* t-nocuda: with no CUDA driver and no pinning device, the CPU path works. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
	tap_context = gdirect_errmsg;
	TAP_TEST(cpu_path_only);
	return tap_done();
}
