/* SPDX-License-Identifier: MIT */
/*
 * tap_demo MODE - tests/include/tap.h on purpose-made passing, failing and
 * skipping tests; helpers.sh runs each mode and checks the TAP and the exit
 * status that come out.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tap.h"

static int after_failure;

static void passes(void)
{
	CHECK(1 + 1 == 2);
	CHECK_EQ(6 * 7, 42);
	CHECK_STR("abc", "abc");
}

static void fails_eq(void)
{
	CHECK_EQ(6 * 7, 41);
	after_failure = 1;	/* never reached: the failure ends the test */
}

static void fails_str(void)
{
	CHECK_STR("abc", "abd");
}

static void *thread_fails(void *arg)
{
	(void)arg;
	CHECK(0 == 1);
	CHECK(2 == 3);
	return NULL;
}

static void fails_in_thread(void)
{
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, thread_fails, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	after_failure = 1;	/* reached: a thread's failure is counted */
}

static void skips(void)
{
	TAP_SKIP("no %s here", "widget");
	after_failure = 1;
}

/*
 * Fork mode: each test below in a child of its own.  A test that changes
 * the program's state, one that fails halfway, one that crashes, one that
 * leaks and one that hangs; the test after each sees none of it.
 */
static int state;		/* what a test left behind */
static void *volatile held;	/* what a test holds */

static void changes_state(void)
{
	state = 1;
	held = malloc(100);	/* reachable: no leak */
	CHECK(held);
}

static void sees_no_state(void)
{
	CHECK_EQ(state, 0);	/* the test before ran in another process */
	CHECK(held == NULL);
	tap_ok(1, "a line of its own inside a forked test");
}

static void fails_holding(void)
{
	held = malloc(100);
	held = NULL;		/* dropped, then the failure's longjmp */
	CHECK_EQ(6 * 7, 41);
	after_failure = 1;
}

static void crashes(void)
{
	/* A page that cannot be read: a real SIGSEGV, whatever sanitizer. */
	volatile int *p = (volatile int *)mmap(NULL, 4096, PROT_NONE,
					       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	tap_ok(1, "a line before the crash");
	CHECK(p != MAP_FAILED);
	after_failure = *p;
	after_failure = 1;
}

static void leaks(void)
{
	held = malloc(100);
	held = NULL;		/* lost: LeakSanitizer, where there is one */
	CHECK(1);
}

static void hangs(void)
{
	sleep(30);		/* the time limit (1 s) ends it */
}

static void skips_forked(void)
{
	TAP_SKIP("no %s here", "gadget");
}

static void errno_checks(void)
{
	errno = 0;
	CHECK_ERRNO(close(-1), EBADF);
	CHECK_ERRNO(0, 0);
	CHECK_ERRNO(close(-1), ENOENT);
}

/* A stretch of checks in a child (tap_run_child) that dies halfway. */
static void body_dies(void)
{
	volatile int *p = (volatile int *)mmap(NULL, 4096, PROT_NONE,
					       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	tap_ok(1, "in the child");
	tap_ok(0, "a failure in the child");
	tap_fork_mode(1);
	TAP_TEST(passes);	/* a grandchild: its line is counted too */
	after_failure = *p;
}

static const char *context(void)
{
	return "the library said: no such region";
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "pass")) {
		TAP_TEST(passes);
		CHECK(argc == 2);	/* a line of its own */
		tap_skip("a skipped check", "not here");
		tap_ok(1, "a line %d", 4);
		tap_diag("two\nlines");
	} else if (!strcmp(mode, "fail")) {
		TAP_TEST(fails_eq);
		tap_diag("after_failure=%d", after_failure);
		TAP_TEST(passes);
		TAP_TEST(fails_str);
	} else if (!strcmp(mode, "thread")) {
		TAP_TEST(fails_in_thread);
		tap_diag("after_failure=%d", after_failure);
	} else if (!strcmp(mode, "outside")) {
		tap_context = context;
		CHECK_EQ(argc, 7);
		CHECK(argc == 2);
	} else if (!strcmp(mode, "skip")) {
		TAP_TEST(skips);
		tap_diag("after_failure=%d", after_failure);
	} else if (!strcmp(mode, "fork")) {
#if defined(__SANITIZE_ADDRESS__)
		tap_diag("asan");
#endif
		tap_fork_mode(1);
		tap_test_timeout(1);
		TAP_TEST(changes_state);
		TAP_TEST(sees_no_state);
		TAP_TEST(fails_holding);
		tap_diag("after_failure=%d", after_failure);
		TAP_TEST(sees_no_state);
		TAP_TEST(crashes);
		TAP_TEST(sees_no_state);
		TAP_TEST(leaks);
		TAP_TEST(sees_no_state);
		TAP_TEST(hangs);
		TAP_TEST(skips_forked);
		TAP_TEST(passes);
		tap_diag("after_failure=%d", after_failure);
	} else if (!strcmp(mode, "forkstate")) {
		tap_fork_mode(1);	/* TAP_FORK=0 in the environment: off */
		TAP_TEST(changes_state);
		TAP_TEST(sees_no_state);
	} else if (!strcmp(mode, "child")) {
		int status;

		tap_ok(1, "before");
		status = tap_run_child(body_dies);
		tap_ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
		       "the child's status says SIGSEGV");
	} else if (!strcmp(mode, "errno")) {
		errno = 0;
		tap_errno(close(-1), EBADF, "close(%d)", -1);
		tap_errno(0, 0, "nothing");
		tap_errno(close(-1), ENOENT, "close");
		tap_errno(0, EINVAL, "success where a failure was wanted");
		TAP_TEST(errno_checks);
	} else if (!strcmp(mode, "skipall")) {
		tap_skip_all("no widget here");
	} else if (!strcmp(mode, "plan")) {
		tap_plan(3);
		TAP_TEST(passes);
		TAP_TEST(passes);
	} else if (!strcmp(mode, "noend")) {
		CHECK(argc == 7);
		return 0;	/* without tap_done(): the exit status is still 1 */
	} else {
		fprintf(stderr, "usage: tap_demo pass|fail|thread|outside|skip|fork|forkstate|child|errno|skipall|plan|noend\n");
		return 2;
	}
	return tap_done();
}
