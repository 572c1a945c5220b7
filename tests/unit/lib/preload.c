/* SPDX-License-Identifier: MIT */
/*
 * lib-preload: the interposer as users run it, LD_PRELOADed into a program
 * that knows nothing of it.  A cuMemFree of a registered buffer must
 * invalidate the registration.
 */
#include <cuda.h>

#include "tutil.h"

static void free_invalidates(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_reg *r;
	struct gdirect_stats st;

	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	uint64_t x = fake_cuda_alloc(64 * KiB);

	CHECK_EQ(gdirect_reg_get(c, P(x), 64, 0, &r), 0);
	gdirect_reg_put(r);
	CHECK_EQ(cuMemFree_v2(x), CUDA_SUCCESS);	/* no notify of our own */
	gdirect_stats(c, &st);
	CHECK_EQ(st.inv_hooks, 1);
	gdirect_ctx_destroy(c);
}

int main(void)
{
	const char *pre = getenv("LD_PRELOAD");

	need_fake_cuda();
	if (!pre || !strstr(pre, "gdirect_interpose"))
		tap_skip_all("libgdirect_interpose.so is not preloaded");
	TAP_TEST(free_invalidates);
	return tap_done();
}
