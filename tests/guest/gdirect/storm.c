// SPDX-License-Identifier: MIT
/*
 * storm.c - unpin, close and exit under another process's
 * pin storm, and a pinner killed while it waits
 *
 * STORMERS processes pin in a loop, mostly addresses nobody allocated
 * (get_pages fails) and now and then their own memory (kept pinned until
 * the storm ends), with the emulator's pin latency making every
 * get_pages take a while.  Meanwhile this process times its unpins, its
 * closes of a file holding a pin, and the exits of children holding pins.
 * The latencies are printed as TAP diagnostics (p50/p99/max, in ms; they
 * go into docs/performance.md) and the largest must stay under BOUND_MS,
 * a bound generous for a loaded emulated machine: a lock that lets pins
 * starve unpins keeps them waiting until the storm ends (STORM_S).
 *
 * Then the kill check: while a free callback holds the provider's lock
 * (callback_delay_ms) and a pin waits for that lock inside gdirect, a
 * third process's pin waits for gdirect's lock; SIGKILL must end it at
 * once, not after the callback, and leave nothing behind.  The third pin
 * is made once through /dev/gdirect and once through gdirect_edu's PIN,
 * a peer driver's gdirect_pin() (as a verbs registration's would be).
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/ioctl.h>
#include <time.h>

#include "gdirect_edu.h"
#include <unistd.h>

#include "gdt.h"
#include "guest_harness.h"

#define STORMERS	6
#define STORM_S		40
#define PIN_LATENCY_US	"5000"
#define UNPINS		60
#define CLOSES		20
#define EXITS		10
#define BOUND_MS	10000.0	/* a quarter of STORM_S; 166 ms measured */
/* A fallback: kill_check ends the callback's delay itself. */
#define CB_DELAY_MS	"60000"
#define KILL_BOUND_MS	2000.0

static volatile int *stop;

static void stormer(int idx)
{
	double end = guest_now_ms() + STORM_S * 1e3;
	CUdeviceptr buf;
	int fd;

	if (gdt_cuda_init())
		_exit(3);
	buf = gdt_alloc(GDT_MB);
	fd = open("/dev/gdirect", O_RDWR);
	if (!buf || fd < 0)
		_exit(4);
	for (unsigned int i = 0; !*stop && guest_now_ms() < end; i++) {
		/* 64 KiB-aligned, in no allocation: get_pages says EINVAL. */
		uint64_t bogus = 0x7e0000000000ULL +
				 ((uint64_t)idx << 32) + (i % 256) * GDT_KB64;

		/* Now and then a real pin, kept until the storm ends. */
		if (i % 32 || gdt_pin(fd, buf + (i / 32 % 16) * GDT_KB64,
				      GDT_KB64, 0, NULL) == -ENOSPC)
			gdt_pin(fd, bogus, GDT_KB64, 0, NULL);
	}
	_exit(0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Print p50/p99/max of @n samples; check max against BOUND_MS; p50. */
static double report(const char *what, double *v, int n)
{
	double p50, p99, max;

	if (!tap_ok(n > 0, "%s: samples taken", what))
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	p50 = v[n / 2];
	p99 = v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
	max = v[n - 1];
	tap_diag("%s latency: p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d samples)",
		 what, p50, p99, max, n);
	tap_ok(max < BOUND_MS, "%s: max latency %.1f ms < %.0f ms", what, max,
	       BOUND_MS);
	return p50;
}

/* What the measuring processes hand back to the one that reports. */
struct shared {
	int stop;
	int failed;
	int quiet, nq, nu, nc, ne;
	double qunpins[UNPINS], unpins[UNPINS], closes[CLOSES], exits[EXITS];
	int kill_ready, kill_signaled;
	double kill_ms;
};

static struct shared *sh;

/* In a process of its own (with a CUDA context): unpins and closes. */
static void measure_unpin_close(void)
{
	struct gdirect_pin p;
	CUdeviceptr buf;
	double t;
	int fd;

	fd = open("/dev/gdirect", O_RDWR);
	if (fd < 0 || gdt_cuda_init())
		_exit(3);
	buf = gdt_alloc(GDT_MB);
	if (!buf)
		_exit(4);
	for (int i = 0; i < UNPINS; i++) {
		if (gdt_pin(fd, buf, GDT_MB, 0, &p)) {
			sh->failed++;
			continue;
		}
		t = guest_now_ms();
		if (gdt_unpin(fd, p.handle))
			sh->failed++;
		t = guest_now_ms() - t;
		if (sh->quiet)
			sh->qunpins[sh->nq++] = t;
		else
			sh->unpins[sh->nu++] = t;
	}
	if (sh->quiet)
		_exit(0);
	for (int i = 0; i < CLOSES; i++) {
		int fd2 = open("/dev/gdirect", O_RDWR);

		if (fd2 < 0 || gdt_pin(fd2, buf, GDT_MB, 0, &p)) {
			sh->failed++;
			if (fd2 >= 0)
				close(fd2);
			continue;
		}
		t = guest_now_ms();
		close(fd2);
		sh->closes[sh->nc++] = guest_now_ms() - t;
	}
	_exit(0);
}

/* From a process without a CUDA context: exits of children holding pins. */
static void measure_exits(void)
{
	for (int i = 0; i < EXITS; i++) {
		int pfd[2], status;
		double t;
		char c;
		pid_t pid;

		if (pipe(pfd))
			break;
		pid = fork();
		if (pid == 0) {
			int cfd;
			CUdeviceptr cbuf;

			close(pfd[0]);
			/* Ours opened last, released first: it puts the pages. */
			if (gdt_cuda_init())
				_exit(3);
			cfd = open("/dev/gdirect", O_RDWR);
			if (cfd < 0)
				_exit(3);
			cbuf = gdt_alloc(GDT_MB);
			if (!cbuf || gdt_pin(cfd, cbuf, GDT_MB, 0, NULL))
				_exit(4);
			/* Pinned: the exit starts when the parent reads this. */
			if (write(pfd[1], "x", 1) != 1)
				_exit(5);
			_exit(0);
		}
		close(pfd[1]);
		if (pid < 0 || read(pfd[0], &c, 1) != 1) {
			sh->failed++;
			close(pfd[0]);
			if (pid > 0)
				waitpid(pid, &status, 0);
			continue;
		}
		t = guest_now_ms();
		waitpid(pid, &status, 0);
		sh->exits[sh->ne++] = guest_now_ms() - t;
		close(pfd[0]);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			sh->failed++;
	}
}

struct freer {
	CUdeviceptr buf;
	int fd;
	uint64_t handle;
	pid_t tid;		/* the thread's, once it runs */
};

static void *free_thread(void *arg)
{
	struct freer *f = arg;

	gdt_free(f->buf);	/* the callback sleeps with the lock held */
	return NULL;
}

static void *pin_thread(void *arg)
{
	struct freer *f = arg;

	__atomic_store_n(&f->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	/* Waits for the provider's lock, holding gdirect's for writing. */
	gdt_pin(f->fd, f->buf, GDT_KB64, 0, NULL);
	return NULL;
}

/* The state letter of thread @tid of process @pid ('?' if unknown). */
static char task_state(pid_t pid, pid_t tid)
{
	char path[64], line[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' ? p[2] : '?';
}

/* Poll every ms, at most 30 s, until thread @tid of @pid sleeps in 'D'. */
static int wait_state_d(pid_t pid, pid_t tid)
{
	for (int i = 0; i < 30000; i++) {
		if (tid && task_state(pid, tid) == 'D')
			return 1;
		usleep(1000);
	}
	return 0;
}

/*
 * In a process of its own (with a CUDA context).  Each step starts once
 * the one before is seen in place, not after a clock: the free's callback
 * in its delay (the provider's lock held), a pin asleep waiting for that
 * lock (holding gdirect's for writing), the child's pin asleep
 * waiting for gdirect's lock.  The callback's delay is a fallback of a
 * minute; the check ends it once the child is reaped.
 */
/* The third pin through gdirect_edu (gdirect_pin()), not /dev/gdirect. */
static int kill_via_edu;

static void kill_check(void)
{
	struct freer a = { 0 }, b = { 0 };
	struct gdirect_pin pa, pb;
	pthread_t ta, tb;
	int pfd[2], gfd[2], status;
	pid_t pid;
	double t;
	char c;

	a.fd = b.fd = open("/dev/gdirect", O_RDWR);
	if (a.fd < 0 || gdt_cuda_init())
		_exit(3);
	a.buf = gdt_alloc(GDT_KB64);
	b.buf = gdt_alloc(GDT_KB64);
	if (!a.buf || !b.buf || gdt_pin(a.fd, a.buf, GDT_KB64, 0, &pa) ||
	    gdt_pin(b.fd, b.buf, GDT_KB64, 0, &pb))
		_exit(4);
	b.handle = pb.handle;
	if (pipe(pfd) || pipe(gfd))
		_exit(5);
	pid = fork();
	if (pid == 0) {
		/*
		 * No CUDA context of its own: its exit then needs nothing
		 * the callback holds; only its pin waits.
		 */
		int cfd = open(kill_via_edu ? GDEDU_DEVICE : "/dev/gdirect",
			       O_RDWR);
		struct gdedu_pin ep = {
			.gpu_addr = 0x7e0000000000ULL, .size = GDT_KB64,
		};

		close(pfd[0]);
		close(gfd[1]);
		if (cfd < 0 || write(pfd[1], "x", 1) != 1)
			_exit(4);
		/* Told to go once the free and the unpin wait. */
		if (read(gfd[0], &c, 1) != 1)
			_exit(4);
		if (kill_via_edu)
			ioctl(cfd, GDEDU_IOC_PIN, &ep);
		else
			gdt_pin(cfd, 0x7e0000000000ULL, GDT_KB64, 0, NULL);
		_exit(0);
	}
	close(pfd[1]);
	close(gfd[0]);
	if (pid < 0 || read(pfd[0], &c, 1) != 1)
		_exit(6);
	close(pfd[0]);
	guest_set_param("nvp2p_emu", "callback_delay_ms", CB_DELAY_MS);
	pthread_create(&ta, NULL, free_thread, &a);
	gdt_emu_wait("callbacks_in_flight", 1, 30000);
	pthread_create(&tb, NULL, pin_thread, &b);
	for (int i = 0; i < 30000 && !__atomic_load_n(&b.tid, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	sh->kill_ready = gdt_emu("callbacks_in_flight") == 1 &&
			 wait_state_d(getpid(), b.tid) &&
			 write(gfd[1], "g", 1) == 1 && wait_state_d(pid, pid);
	t = guest_now_ms();
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	sh->kill_ms = guest_now_ms() - t;
	sh->kill_signaled = WIFSIGNALED(status);
	guest_set_param("nvp2p_emu", "callback_delay_ms", "0");
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	close(gfd[1]);
	_exit(0);
}

/*
 * This process never makes a CUDA context: the emulated CUDA library,
 * like the real one, is unusable in a child forked after one exists.
 */
static void body(void)
{
	pid_t pids[STORMERS];
	int status, bad = 0, ok;
	double quiet, storm;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!tap_ok(sh != MAP_FAILED, "shared memory"))
		return;
	stop = &sh->stop;
	guest_set_param("nvp2p_emu", "pin_latency_us", PIN_LATENCY_US);
	/* The same unpins without a storm first: the ratio's reference. */
	sh->quiet = 1;
	ok = guest_child_ok(measure_unpin_close);
	sh->quiet = 0;
	quiet = report("unpin, no storm", sh->qunpins, sh->nq);
	for (int i = 0; i < STORMERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			stormer(i);
	}
	usleep(500 * 1000);	/* let the storm build up */
	ok = guest_child_ok(measure_unpin_close) && ok;
	measure_exits();
	*stop = 1;
	for (int i = 0; i < STORMERS; i++) {
		if (pids[i] < 0 || waitpid(pids[i], &status, 0) != pids[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	guest_set_param("nvp2p_emu", "pin_latency_us", "0");
	tap_ok(!bad, "the pin storm's processes ran and ended (%d did not)",
	       bad);
	tap_ok(ok && !sh->failed,
	       "every pin, unpin and child succeeded (%d failed)", sh->failed);
	storm = report("unpin under the storm", sh->unpins, sh->nu);
	report("close under the storm", sh->closes, sh->nc);
	report("exit under the storm", sh->exits, sh->ne);
	if (quiet > 0)
		tap_diag("unpin p50 under a storm of %d pinning processes / without: %.1f",
			 STORMERS, storm / quiet);

	for (kill_via_edu = 0; kill_via_edu < 2; kill_via_edu++) {
		const char *via = kill_via_edu ? "gdirect_pin() (gdirect_edu)" :
				  "/dev/gdirect";

		sh->kill_ready = 0;
		ok = guest_child_ok(kill_check);
		if (!tap_ok(ok && sh->kill_ready,
			    "kill check through %s ran: the free's callback and both pins each seen waiting",
			    via))
			continue;
		tap_diag("a pin through %s waiting behind another pin ended %.1f ms after SIGKILL",
			 via, sh->kill_ms);
		tap_ok(sh->kill_signaled && sh->kill_ms < KILL_BOUND_MS,
		       "a pin through %s waiting for gdirect's lock dies at SIGKILL (%.0f ms < %.0f ms)",
		       via, sh->kill_ms, KILL_BOUND_MS);
	}
}

int main(void)
{
	return gdt_main(NULL, 1, body);
}
