/* SPDX-License-Identifier: MIT */
/*
 * tap.h - the one C test helper: TAP on standard output, every failure
 * counted, the test going on to its next check (header only).
 *
 * Lines:
 *   tap_plan(n);                    "1..n" up front (or none: tap_done()
 *                                   prints it at the end, done_testing)
 *   tap_ok(cond, "what %d", x);     one line, "ok N - ..." or "not ok N - ..."
 *   tap_skip("what", "why");        "ok N - what # SKIP why": never a pass
 *   tap_diag("fmt", ...);           "# ..." (diagnostics)
 *   tap_skip_all("why");            "1..0 # SKIP why", exit: the whole
 *                                   program cannot run here
 *   return tap_done();              the plan if none was given; 0 when
 *                                   every check passed and the plan was
 *                                   kept, 1 otherwise (a program that
 *                                   returns without it gets the same at
 *                                   exit)
 *
 * Checks, for tests of one behaviour each:
 *   static void rounding(void) { CHECK(x); CHECK_EQ(a, b); CHECK_STR(s, t); }
 *   tap_test("rounding", rounding);  one TAP line for the function
 *   TAP_TEST(rounding);              the same, named after the function
 *   TAP_FAIL("fmt", ...);            a failed check the macros cannot say
 *
 * Inside a test function a failed check ends the function (its later
 * checks would only repeat the failure or crash on what failed): its line
 * is "not ok" with the failed check, file:line and both values as
 * diagnostics under it.  A check failing in another thread while a test
 * function runs is counted and that thread goes on; the function's line
 * is then "not ok".  In a child process the test forked, a failed check
 * exits the child with status 1, for the test to see.  A check outside
 * any test function is a TAP line of its own.  TAP_SKIP("why") in a test
 * function ends it as a skip.
 *
 * tap_context, if set, is called on a failure and its text added to the
 * diagnostic (libgdirect's tests set gdirect_errmsg).
 *
 * Meson runs programs using this header with protocol : 'tap': it counts
 * each line, reads "1..0 # SKIP" as a skipped test (exit status 0, as TAP
 * wants), and a non-zero exit status as a failure.  The state is
 * one per program (weak symbols), so several files of one program may
 * include it; calls are serialised by a mutex.  C11 or C++ (the GPU tests).
 */
#ifndef GDIRECT_TAP_H
#define GDIRECT_TAP_H

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tap_state {
	pthread_mutex_t lock;
	int n;			/* lines printed */
	int failed;		/* "not ok" lines */
	int planned;		/* the plan, -1 until printed */
	/* The test function running, if any (read and written atomically). */
	int in_test;
	pid_t pid;		/* the process running it */
	int test_failed;	/* checks failed in it */
	char why[512];		/* the first failure, or the skip's reason */
	int skipped;
	int done;		/* tap_done() or tap_skip_all() ran */
	pid_t main_pid;		/* the process whose exit ends the TAP */
	int skips;		/* "# SKIP" lines */
};

/* Every member, in order: C and C++ alike (no designated initialisers). */
__attribute__((weak)) struct tap_state tap_state = {
	PTHREAD_MUTEX_INITIALIZER, 0, 0, -1, 0, 0, 0, "", 0, 0, 0, 0
};
/* The thread running the test function, where a failure may jump. */
__attribute__((weak)) __thread jmp_buf *tap_jump;
__attribute__((weak)) const char *(*tap_context)(void);

static inline void tap_plan(int n)
{
	pthread_mutex_lock(&tap_state.lock);
	tap_state.planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
	pthread_mutex_unlock(&tap_state.lock);
}

static inline void tap_vline_(int cond, const char *directive,
			      const char *fmt, va_list ap)
{
	char what[512];

	vsnprintf(what, sizeof(what), fmt, ap);
	/* One line, whatever the description holds. */
	for (char *p = what; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	pthread_mutex_lock(&tap_state.lock);
	printf("%s %d - %s", cond ? "ok" : "not ok", ++tap_state.n, what);
	if (directive)
		printf(" # %s", directive);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_state.failed++;
	pthread_mutex_unlock(&tap_state.lock);
}

__attribute__((format(printf, 2, 3)))
static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vline_(cond, NULL, fmt, ap);
	va_end(ap);
	return cond;
}

static inline void tap_skip(const char *what, const char *why)
{
	pthread_mutex_lock(&tap_state.lock);
	printf("ok %d - %s # SKIP %s\n", ++tap_state.n, what, why);
	tap_state.skips++;
	fflush(stdout);
	pthread_mutex_unlock(&tap_state.lock);
}

/* Diagnostics: each line of the text prefixed with "# ". */
__attribute__((format(printf, 1, 2)))
static inline void tap_diag(const char *fmt, ...)
{
	char small[1024], *buf = small;
	va_list ap, aq;
	const char *p, *e;
	int len;

	va_start(ap, fmt);
	va_copy(aq, ap);
	len = vsnprintf(small, sizeof(small), fmt, ap);
	if (len >= (int)sizeof(small) && (buf = (char *)malloc((size_t)len + 1)))
		vsnprintf(buf, (size_t)len + 1, fmt, aq);
	else
		buf = small;
	va_end(aq);
	va_end(ap);
	pthread_mutex_lock(&tap_state.lock);
	for (p = buf; ; p = e + 1) {
		e = strchr(p, '\n');
		printf("# %.*s\n", e ? (int)(e - p) : (int)strlen(p), p);
		if (!e || !e[1])
			break;
	}
	fflush(stdout);
	pthread_mutex_unlock(&tap_state.lock);
	if (buf != small)
		free(buf);
}

__attribute__((noreturn))
static inline void tap_skip_all(const char *why)
{
	tap_state.done = 1;
	printf("1..0 # SKIP %s\n", why);
	fflush(stdout);
	exit(0);
}

static inline int tap_done(void)
{
	int bad;

	pthread_mutex_lock(&tap_state.lock);
	tap_state.done = 1;
	if (tap_state.planned < 0) {
		printf("1..%d\n", tap_state.n);
		tap_state.planned = tap_state.n;
	} else if (tap_state.planned != tap_state.n) {
		printf("# planned %d checks, ran %d\n", tap_state.planned,
		       tap_state.n);
	}
	fflush(stdout);
	bad = tap_state.failed || tap_state.planned != tap_state.n;
	pthread_mutex_unlock(&tap_state.lock);
	return bad ? 1 : 0;
}

/*
 * A program that returns from main without tap_done() still ends its TAP
 * with the plan, and fails on a failed check: the exit status is changed
 * to 1 then.
 */
static inline void tap_atexit_(void)
{
	if (tap_state.done || getpid() != tap_state.main_pid || !tap_state.n)
		return;
	if (tap_done()) {
		fflush(NULL);
		_exit(1);
	}
}

__attribute__((constructor)) static void tap_init_(void)
{
	if (tap_state.main_pid)
		return;		/* another file of the program did it */
	tap_state.main_pid = getpid();
	atexit(tap_atexit_);
}

/* A check failed (checks below call this): see the header's comment. */
__attribute__((format(printf, 3, 4)))
static inline void tap_fail_(const char *file, int line, const char *fmt, ...)
{
	char msg[sizeof(tap_state.why) - 64];
	const char *ctx = tap_context ? tap_context() : NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!__atomic_load_n(&tap_state.in_test, __ATOMIC_SEQ_CST)) {
		tap_ok(0, "%s:%d: %s", file, line, msg);
		if (ctx && *ctx)
			tap_diag("%s", ctx);
		return;
	}
	/* Every failure goes to stderr; the first also under the line. */
	if (getpid() != tap_state.pid) {
		/* A child the test forked: its exit status tells the test. */
		fprintf(stderr, "%s:%d: %s (in child %d)\n", file, line, msg,
			(int)getpid());
		_exit(1);
	}
	fprintf(stderr, "%s:%d: %s%s%s\n", file, line, msg,
		ctx && *ctx ? " -- " : "", ctx && *ctx ? ctx : "");
	pthread_mutex_lock(&tap_state.lock);
	if (__atomic_fetch_add(&tap_state.test_failed, 1, __ATOMIC_SEQ_CST) == 0)
		snprintf(tap_state.why, sizeof(tap_state.why), "%s:%d: %s%s%s",
			 file, line, msg, ctx && *ctx ? "\n" : "",
			 ctx && *ctx ? ctx : "");
	pthread_mutex_unlock(&tap_state.lock);
	if (tap_jump)
		longjmp(*tap_jump, 1);
}

/* A passing check outside a test function is a line of its own. */
__attribute__((format(printf, 3, 4)))
static inline void tap_pass_(const char *file, int line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (__atomic_load_n(&tap_state.in_test, __ATOMIC_SEQ_CST))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tap_ok(1, "%s:%d: %s", file, line, msg);
}

#define CHECK(cond) do {						\
	if (cond)							\
		tap_pass_(__FILE__, __LINE__, "%s", #cond);		\
	else								\
		tap_fail_(__FILE__, __LINE__, "check failed: %s", #cond); \
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long a_ = (long long)(a), b_ = (long long)(b);		\
	if (a_ == b_)							\
		tap_pass_(__FILE__, __LINE__, "%s == %s", #a, #b);	\
	else								\
		tap_fail_(__FILE__, __LINE__,				\
			  "%s == %lld (%#llx), expected %s == %lld (%#llx)", \
			  #a, a_, (unsigned long long)a_, #b, b_,	\
			  (unsigned long long)b_);			\
} while (0)

#define CHECK_STR(a, b) do {						\
	const char *a_ = (a), *b_ = (b);				\
	if (a_ && b_ && !strcmp(a_, b_))				\
		tap_pass_(__FILE__, __LINE__, "%s == %s", #a, #b);	\
	else								\
		tap_fail_(__FILE__, __LINE__, "%s is \"%s\", expected \"%s\"", \
			  #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");	\
} while (0)

/* A failure the checks above cannot express: printf-style, a check's fate. */
#define TAP_FAIL(...) tap_fail_(__FILE__, __LINE__, __VA_ARGS__)

/* In a test function: end it as a skip, saying why. */
#define TAP_SKIP(...) do {						\
	snprintf(tap_state.why, sizeof(tap_state.why), __VA_ARGS__);	\
	tap_state.skipped = 1;						\
	if (!tap_jump)							\
		tap_skip_all(tap_state.why);				\
	longjmp(*tap_jump, 1);						\
} while (0)

/*
 * Run FN as one test: one TAP line named WHAT, "not ok" if a check in it
 * (or in a thread it started) failed.  Returns 1 when it passed or was
 * skipped.
 */
static inline int tap_test(const char *what, void (*fn)(void))
{
	jmp_buf jb, *volatile outer = tap_jump;
	int ok;

	tap_state.why[0] = 0;
	tap_state.skipped = 0;
	__atomic_store_n(&tap_state.test_failed, 0, __ATOMIC_SEQ_CST);
	tap_state.pid = getpid();
	__atomic_store_n(&tap_state.in_test, 1, __ATOMIC_SEQ_CST);
	if (!setjmp(jb)) {
		tap_jump = &jb;
		fn();
	}
	tap_jump = outer;
	__atomic_store_n(&tap_state.in_test, 0, __ATOMIC_SEQ_CST);
	if (tap_state.skipped && !__atomic_load_n(&tap_state.test_failed, __ATOMIC_SEQ_CST)) {
		tap_skip(what, tap_state.why);
		return 1;
	}
	ok = __atomic_load_n(&tap_state.test_failed, __ATOMIC_SEQ_CST) == 0;
	tap_ok(ok, "%s", what);
	if (!ok)
		tap_diag("%s", tap_state.why);
	if (__atomic_load_n(&tap_state.test_failed, __ATOMIC_SEQ_CST) > 1)
		tap_diag("and %d more failed checks (on standard error)",
			 __atomic_load_n(&tap_state.test_failed, __ATOMIC_SEQ_CST) - 1);
	return ok;
}

/* tap_test(#fn, fn): the function's name is the line's. */
#define TAP_TEST(fn) tap_test(#fn, fn)

#endif /* GDIRECT_TAP_H */
