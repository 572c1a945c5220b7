/* SPDX-License-Identifier: MIT */
/*
 * lib-fork: what happens across fork (docs/libgdirect.md, "Fork").  The
 * child cannot use an inherited context (gdirect.ko refuses a non-owner and
 * BAR mappings are not inherited): every call fails with -EPERM, destroy
 * frees the child's copy without unpinning the parent's regions, and a new
 * context works.  The parent is unaffected.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tutil.h"
#include "libgdirect_internal.h"

static int child(struct gdirect_ctx *c, uint64_t x)
{
	struct gdirect_reg *r;
	struct gdirect_ptr_info in;
	struct gdirect_stats st;
	struct gdirect_params p;
	struct gdl_backend *b;

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

/*
 * Registrations inherited across fork touch nothing of the child: the last
 * put of a dead, mapped region does not munmap (the address is the child's
 * own memory now: gdirect.ko's BAR mappings are not inherited) nor unpin,
 * and mapping one fails with -EPERM instead of taking a lock another parent
 * thread held at the fork.  Run under ASan; a hang is caught by alarm().
 */
static pthread_barrier_t held, release;

static void *hold_lock(void *arg)
{
	pthread_mutex_t *m = arg;

	pthread_mutex_lock(m);
	pthread_barrier_wait(&held);
	pthread_barrier_wait(&release);
	pthread_mutex_unlock(m);
	return NULL;
}

static int inherited_child(struct gdirect_reg *dead, void *map,
			   struct gdirect_reg *locked, uint64_t y)
{
	volatile unsigned char *mine;

	alarm(10);
	/* The parent's mapping is gone here: the child's memory takes its
	 * place. */
	mine = mmap(map, 64 * KiB, PROT_READ | PROT_WRITE, MAP_PRIVATE |
		    MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if ((void *)mine != map)
		return 20;
	memset((void *)mine, 0x5a, 64 * KiB);
	gdirect_reg_put(dead);		/* the last reference */
	if (mine[100] != 0x5a)
		return 21;
	mine[100] = 1;			/* still mapped (else SIGSEGV) */
	if (gdirect_reg_map(locked, P(y)) != NULL)
		return 22;
	if (!strstr(gdirect_errmsg(), "fork"))
		return 23;
	gdirect_reg_put(locked);
	return 0;
}

static void inherited_regions(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_reg *r, *r2;
	struct fake_stats fs;
	pthread_t th;
	int status;

	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ .real_maps = true }, &b);
	uint64_t x = fake_cuda_alloc(64 * KiB), y = fake_cuda_alloc(64 * KiB);

	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
	unsigned char *m = gdirect_reg_map(r, P(x));

	CHECK(m);
	m[0] = 1;
	gdirect_notify_free(P(x), 0);	/* dead; released at the last put */
	CHECK(atomic_load(&r->refs) & GDL_DEAD);
	CHECK_EQ(gdirect_reg_get(c, P(y), 1, 0, &r2), 0);
	pthread_barrier_init(&held, NULL, 2);
	pthread_barrier_init(&release, NULL, 2);
	CHECK_EQ(pthread_create(&th, NULL, hold_lock, &GDL_RC(r2)->map_lock), 0);
	pthread_barrier_wait(&held);
	fflush(NULL);
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(inherited_child(r, m, r2, y));
	pthread_barrier_wait(&release);
	pthread_join(th, NULL);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		TAP_FAIL("inherited regions: child %s %d",
			 WIFEXITED(status) ? "exited" : "killed by signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	}
	/* The parent's mapping and pins are untouched by the child. */
	CHECK_EQ(m[0], 1);
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.unpins, 0);
	gdirect_reg_put(r);		/* the parent's last put releases it */
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.unpins, 1);
	CHECK(gdirect_reg_map(r2, P(y)));
	gdirect_reg_put(r2);
	gdirect_ctx_destroy(c);
	pthread_barrier_destroy(&held);
	pthread_barrier_destroy(&release);
	tap_diag("inherited registrations: the child's put and map touch nothing");
}

static void child_context_refused(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_reg *r;
	struct fake_stats fs;
	struct gdirect_stats st;
	int status;

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
}

int main(void)
{
	need_fake_cuda();
	TAP_TEST(child_context_refused);
	TAP_TEST(inherited_regions);
	fake_cuda_reset();
	return tap_done();
}
