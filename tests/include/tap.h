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
 * An errno check, as one line: tap_errno(ret, want, "what %d", x) passes
 * when RET is 0 and WANT is 0, or RET is non-zero and errno is WANT (the
 * line says "what: <strerror(want)>", or what came instead); in a test
 * function CHECK_ERRNO(ret, want) is the same as a check.
 *
 * tap_context, if set, is called on a failure and its text added to the
 * diagnostic (libgdirect's tests set gdirect_errmsg).
 *
 * Fork mode: each test function in a child process of its own, so that a
 * failed check, a crash, a leak or a hang ends that test only and leaves
 * nothing (memory, pins, open files, locks) to the next:
 *   tap_fork_mode(1);               at run time, before the tests, or
 *   #define TAP_FORK                before including tap.h (in any one
 *                                   file of the program);
 *   tap_test_timeout(s);            a time limit per test (alarm(): the
 *                                   child gets SIGALRM), 0 for none (the
 *                                   default)
 *   TAP_FORK=0 / TAP_FORK=1 in the environment overrides the program's
 *   choice (TAP_FORK=0 to follow a test in a debugger).
 * The child runs the function and the lines it prints (tap_ok, tap_skip)
 * take the parent's numbers; it tells the parent through a pipe of each
 * line and, last, of its outcome, and the parent prints the test's line:
 * "not ok" when a check failed, when the child was killed by a signal
 * (named: "killed by SIGSEGV") or exited before it finished, and when it
 * finished but then failed (LeakSanitizer found a leak: the child of a
 * passing test asks it before exiting, and a leak is the test's failure,
 * its report on standard error; it sees what the parent lost before the
 * fork too).  Under ASan or TSan their SEGV handler reports a crash and the
 * child exits (or aborts) instead: handle_segv=0 in ASAN_OPTIONS leaves the
 * signal to name.  The child ends with _exit(): the program's atexit
 * handlers do not run in it.
 *   status = tap_run_child(fn);     FN, a stretch of checks (lines, not one
 *                                   test), in a child the same way, with no
 *                                   line of its own: its wait status back
 *                                   (guest_harness.h's guest_run_body)
 * Call the tests from the program's one thread; the time limit uses the
 * child's SIGALRM.
 *
 * Meson runs programs using this header with protocol : 'tap': it counts
 * each line, reads "1..0 # SKIP" as a skipped test (exit status 0, as TAP
 * wants), and a non-zero exit status as a failure.  The state is
 * one per program (weak symbols), so several files of one program may
 * include it; calls are serialised by a mutex.  C11 or C++ (the GPU tests).
 */
#ifndef GDIRECT_TAP_H
#define GDIRECT_TAP_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
	int fork;		/* fork mode (tap_fork_mode(), TAP_FORK) */
	unsigned int timeout;	/* fork mode: seconds a test may take, 0: any */
	int report;		/* in a test's child: the pipe to the parent */
};

/* Every member, in order: C and C++ alike (no designated initialisers). */
__attribute__((weak)) struct tap_state tap_state = {
	PTHREAD_MUTEX_INITIALIZER, 0, 0, -1, 0, 0, 0, "", 0, 0, 0, 0, 0, 0, -1
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

/* In a test's child (fork mode): tell the parent of a line printed. */
static inline void tap_report_(char kind)
{
	if (tap_state.report >= 0 && write(tap_state.report, &kind, 1) != 1)
		tap_state.report = -1;	/* the parent is gone */
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
	tap_report_(cond ? 'o' : 'f');
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

/*
 * An errno check as one line: RET is 0 (success) or non-zero with errno
 * set; WANT is 0 or the errno wanted.
 */
__attribute__((format(printf, 3, 4)))
static inline int tap_errno(int ret, int want, const char *fmt, ...)
{
	int got = ret ? errno : 0;
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (got == want)
		return tap_ok(1, "%s: %s", what, want ? strerror(want) : "ok");
	return tap_ok(0, "%s: got %s (%d), want %s (%d)", what,
		      got ? strerror(got) : "success", got,
		      want ? strerror(want) : "success", want);
}

static inline void tap_skip(const char *what, const char *why)
{
	pthread_mutex_lock(&tap_state.lock);
	printf("ok %d - %s # SKIP %s\n", ++tap_state.n, what, why);
	tap_state.skips++;
	fflush(stdout);
	tap_report_('s');
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
#ifdef TAP_FORK
	tap_state.fork = 1;
#endif
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

/* RET is 0, or non-zero with errno WANT (0: success wanted). */
#define CHECK_ERRNO(ret, want) do {					\
	int r_ = (ret) ? -1 : 0, e_ = r_ ? errno : 0, w_ = (want);	\
	if (e_ == w_)							\
		tap_pass_(__FILE__, __LINE__, "%s: %s", #ret,		\
			  w_ ? strerror(w_) : "ok");			\
	else								\
		tap_fail_(__FILE__, __LINE__,				\
			  "%s: got %s (%d), want %s (%d)", #ret,	\
			  e_ ? strerror(e_) : "success", e_,		\
			  w_ ? strerror(w_) : "success", w_);		\
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

/* Run FN here: its failures, or its skip, in tap_state. */
static inline void tap_run_(void (*fn)(void))
{
	jmp_buf jb, *volatile outer = tap_jump;

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
}

/* The test's line from what tap_run_() left (or a child reported). */
static inline int tap_result_(const char *what, int failed, int skipped,
			      const char *why)
{
	if (skipped && !failed) {
		tap_skip(what, why);
		return 1;
	}
	tap_ok(!failed, "%s", what);
	if (failed)
		tap_diag("%s", why);
	if (failed > 1)
		tap_diag("and %d more failed checks (on standard error)",
			 failed - 1);
	return !failed;
}

/* Fork mode (see the header's comment). */
static inline void tap_fork_mode(int on)
{
	tap_state.fork = on;
}

static inline void tap_test_timeout(unsigned int seconds)
{
	tap_state.timeout = seconds;
}

static inline int tap_forking_(void)
{
	const char *env = getenv("TAP_FORK");

	if (env && *env)
		return strcmp(env, "0") != 0;
	return tap_state.fork;
}

/* The name of signal SIG, "SIGSEGV"; NULL if not one of these. */
static inline const char *tap_signame_(int sig)
{
	static const struct { int sig; const char *name; } names[] = {
		{ SIGSEGV, "SIGSEGV" }, { SIGBUS, "SIGBUS" },
		{ SIGABRT, "SIGABRT" }, { SIGFPE, "SIGFPE" },
		{ SIGILL, "SIGILL" }, { SIGKILL, "SIGKILL" },
		{ SIGALRM, "SIGALRM" }, { SIGTERM, "SIGTERM" },
		{ SIGPIPE, "SIGPIPE" }, { SIGTRAP, "SIGTRAP" },
		{ SIGINT, "SIGINT" }, { SIGQUIT, "SIGQUIT" },
		{ SIGSYS, "SIGSYS" }, { SIGXCPU, "SIGXCPU" },
		{ SIGUSR1, "SIGUSR1" }, { SIGUSR2, "SIGUSR2" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].sig == sig)
			return names[i].name;
	return NULL;
}

/* How a child ended: "was killed by SIGSEGV (...)", "exited with status 3". */
static inline void tap_status_(char *buf, size_t size, int status)
{
	if (WIFSIGNALED(status)) {
		const char *name = tap_signame_(WTERMSIG(status));

		if (name)
			snprintf(buf, size, "was killed by %s (%s)", name,
				 strsignal(WTERMSIG(status)));
		else
			snprintf(buf, size, "was killed by signal %d (%s)",
				 WTERMSIG(status), strsignal(WTERMSIG(status)));
	} else if (WIFEXITED(status)) {
		snprintf(buf, size, "exited with status %d", WEXITSTATUS(status));
	} else {
		snprintf(buf, size, "wait status %#x", status);
	}
}

/*
 * LeakSanitizer's check where the program has one (ASan's runtime): a
 * weak reference, null elsewhere.  Non-zero if it reported a leak.
 */
#ifdef __cplusplus
extern "C"
#endif
__attribute__((weak)) int __lsan_do_recoverable_leak_check(void);

/* What a test's child tells its parent last, after its lines. */
struct tap_outcome_ {
	char kind;		/* 'R' */
	int failed;		/* checks failed */
	int skipped;
	int leaked;		/* LeakSanitizer reported a leak */
	char why[sizeof(tap_state.why)];
};

__attribute__((noreturn))
static inline void tap_child_(void (*fn)(void))
{
	struct tap_outcome_ out;

	if (tap_state.timeout)
		alarm(tap_state.timeout);
	tap_run_(fn);
	alarm(0);
	memset(&out, 0, sizeof(out));
	out.kind = 'R';
	out.failed = __atomic_load_n(&tap_state.test_failed, __ATOMIC_SEQ_CST);
	out.skipped = tap_state.skipped;
	memcpy(out.why, tap_state.why, sizeof(out.why));
	/* A test that failed or skipped left what it held by longjmp. */
	fflush(NULL);
	if (!out.failed && !out.skipped && __lsan_do_recoverable_leak_check)
		out.leaked = __lsan_do_recoverable_leak_check() != 0;
	if (write(tap_state.report, &out, sizeof(out)) != (ssize_t)sizeof(out))
		_exit(3);
	fflush(NULL);
	_exit(out.failed || out.leaked ? 1 : 0);
}

/*
 * Fork, the child's end of a pipe to it as tap_state.report: the child's
 * pid (0 in the child), or -1 having said why; *RFD the parent's end.
 */
static inline pid_t tap_fork_(int *rfd)
{
	int pfd[2];
	pid_t pid;

	if (pipe(pfd)) {
		tap_diag("fork mode: pipe: %s", strerror(errno));
		return -1;
	}
	fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
	fcntl(pfd[1], F_SETFD, FD_CLOEXEC);
	fflush(NULL);		/* nothing buffered to print twice */
	pid = fork();
	if (pid < 0) {
		tap_diag("fork mode: fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		tap_state.report = pfd[1];
		return 0;
	}
	close(pfd[1]);
	*rfd = pfd[0];
	return pid;
}

/*
 * The parent's side: count the child's lines as they come (passing them
 * on, where this process is itself a child that reports), and its outcome
 * into OUT (*GOT bytes of it; OUT may be NULL), until the pipe's end or,
 * if something the child started holds the pipe, the child's end.  Closes
 * RFD; returns the child's wait status, -1 if it could not be had.
 */
static inline int tap_collect_(int rfd, pid_t pid, struct tap_outcome_ *out,
			       size_t *got)
{
	int status = 0, reaped = 0;
	char buf[4096];

	*got = 0;
	for (;;) {
		struct pollfd p = { rfd, POLLIN, 0 };
		int r = poll(&p, 1, reaped ? 0 : 100);
		ssize_t k;

		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			if (reaped)
				break;
			if (waitpid(pid, &status, WNOHANG) == pid)
				reaped = 1;
			continue;
		}
		if (r < 0)
			break;
		k = read(rfd, buf, sizeof(buf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		pthread_mutex_lock(&tap_state.lock);
		for (ssize_t i = 0; i < k; i++) {
			if (*got && *got < sizeof(struct tap_outcome_)) {
				if (out)	/* inside the outcome */
					((char *)out)[*got] = buf[i];
				++*got;
				continue;
			}
			switch (buf[i]) {
			case 'f':
				tap_state.failed++;
				tap_state.n++;
				break;
			case 's':
				tap_state.skips++;
				tap_state.n++;
				break;
			case 'o':
				tap_state.n++;
				break;
			case 'R':
				if (*got)
					continue;	/* had one */
				if (out)
					((char *)out)[0] = buf[i];
				*got = 1;
				continue;
			default:
				continue;
			}
			tap_report_(buf[i]);
		}
		pthread_mutex_unlock(&tap_state.lock);
	}
	close(rfd);
	while (!reaped && waitpid(pid, &status, 0) != pid)
		if (errno != EINTR) {
			status = -1;
			break;
		}
	return status;
}

/* FN in a child; the parent counts its lines and prints the test's. */
static inline int tap_test_forked_(const char *what, void (*fn)(void))
{
	struct tap_outcome_ out;
	size_t got;
	int rfd = -1, status;
	char how[128], why[sizeof(tap_state.why) + 256];
	pid_t pid = tap_fork_(&rfd);

	if (pid < 0)
		return tap_ok(0, "%s", what);
	if (pid == 0)
		tap_child_(fn);
	status = tap_collect_(rfd, pid, &out, &got);
	tap_status_(how, sizeof(how), status);
	if (got != sizeof(out)) {
		snprintf(why, sizeof(why),
			 "the test's process %s before the test finished%s",
			 how, WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM &&
			 tap_state.timeout ? ": over its time limit" : "");
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM &&
		    tap_state.timeout)
			snprintf(why + strlen(why), sizeof(why) - strlen(why),
				 " of %u s", tap_state.timeout);
		return tap_result_(what, 1, 0, why);
	}
	out.why[sizeof(out.why) - 1] = 0;
	if (out.leaked)
		return tap_result_(what, 1, 0,
				   "LeakSanitizer found a leak (its report is on standard error)");
	if (status == -1 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != (out.failed ? 1 : 0)) {
		snprintf(why, sizeof(why), "%s%sthe test's process then %s",
			 out.why, *out.why ? "\n" : "", how);
		return tap_result_(what, out.failed ? out.failed : 1, 0, why);
	}
	return tap_result_(what, out.failed, out.skipped, out.why);
}

/*
 * Run FN, a stretch of a program's checks (its lines, not one test's), in
 * a child process: its lines take this process's numbers and are counted
 * here as they come, so a child that dies halfway leaves the count right.
 * No line of its own: returns the child's wait status (the child exits 0
 * when FN returns), -1 if it could not run (said why).
 */
static inline int tap_run_child(void (*fn)(void))
{
	size_t got;
	int rfd = -1;
	pid_t pid = tap_fork_(&rfd);

	if (pid < 0)
		return -1;
	if (pid == 0) {
		fn();
		fflush(NULL);
		_exit(0);
	}
	return tap_collect_(rfd, pid, NULL, &got);
}

/*
 * Run FN as one test: one TAP line named WHAT, "not ok" if a check in it
 * (or in a thread it started) failed.  Returns 1 when it passed or was
 * skipped.  In fork mode FN runs in a child process.
 */
static inline int tap_test(const char *what, void (*fn)(void))
{
	if (tap_forking_())
		return tap_test_forked_(what, fn);
	tap_run_(fn);
	return tap_result_(what,
			   __atomic_load_n(&tap_state.test_failed, __ATOMIC_SEQ_CST),
			   tap_state.skipped, tap_state.why);
}

/* tap_test(#fn, fn): the function's name is the line's. */
#define TAP_TEST(fn) tap_test(#fn, fn)

#endif /* GDIRECT_TAP_H */
