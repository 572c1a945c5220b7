/* SPDX-License-Identifier: MIT */
/*
 * t_fork: what happens across fork (docs/libgdirect.md, "Fork").  The
 * child cannot use an inherited context (gdirect.ko refuses a non-owner and
 * BAR mappings are not inherited): every call fails with -EPERM, destroy
 * frees the child's copy without unpinning the parent's regions, and a new
 * context works.  The parent is unaffected.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "tutil.h"

static int child(struct gdirect_ctx *c, uint64_t x)
{
	struct gdirect_reg *r;
	struct gdirect_ptr_info in;
	struct gdirect_stats st;
	struct gdirect_params p;
	struct gd_backend *b;

	if (gdirect_reg_get(c, P(x), 1, 0, &r) != -EPERM)
		return 2;
	if (!strstr(gdirect_errmsg(), "fork"))
		return 3;
	if (gdirect_classify(c, P(x), &in) != -EPERM)
		return 4;
	if (gdirect_flush(c) != -EPERM || gdirect_process_events(c) != -EPERM)
		return 5;
	gdirect_stats(c, &st);
	if (st.regions != 1)
		return 6;
	gdirect_ctx_destroy(c);
	/* A context of the child's own works. */
	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c2 = mkctx(&p, &(struct fake_cfg){ 0 }, &b);

	if (gdirect_reg_get(c2, P(x), 1, 0, &r))
		return 7;
	gdirect_reg_put(r);
	gdirect_ctx_destroy(c2);
	return 0;
}

int main(void)
{
	struct gdirect_params p;
	struct gd_backend *b;
	struct gdirect_reg *r;
	struct fake_stats fs;
	struct gdirect_stats st;
	int status;

	need_fake_cuda();
	params(&p, GDIRECT_INV_HOOKS | GDIRECT_INV_KERNEL);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	uint64_t x = fake_cuda_alloc(64 * KiB);

	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
	gdirect_reg_put(r);
	fflush(NULL);
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(child(c, x));	/* _exit: the child's copy is not ours to check */
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	/* The parent: still cached, still pinned, nothing unpinned. */
	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
	gdirect_reg_put(r);
	gdirect_stats(c, &st);
	CHECK_EQ(st.hits, 1);
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.unpins, 0);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
	printf("ok\n");
	return 0;
}
