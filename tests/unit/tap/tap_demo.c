/* SPDX-License-Identifier: MIT */
/*
 * tap_demo MODE - tests/include/tap.h on purpose-made passing, failing and
 * skipping tests; t-tap.sh runs each mode and checks the TAP and the exit
 * status that come out.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

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
		fprintf(stderr, "usage: tap_demo pass|fail|thread|outside|skip|skipall|plan|noend\n");
		return 2;
	}
	return tap_done();
}
