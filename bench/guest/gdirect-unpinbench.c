// SPDX-License-Identifier: MIT
/*
 * gdirect-unpinbench.c - one user's pin and unpin latency while another
 * user pins and unpins the largest buffer the GPU gives
 *
 * Not a test (no t- prefix): docs/performance.md runs it by name and quotes
 * its figures.  gdirect holds gd_excl for writing across the provider's
 * get_pages, which is linear in the pin's pages, so one user's largest pins
 * set every other user's worst pin latency; an unpin waits only for its
 * own process's pins (one fence per process), and for the provider's lock,
 * which its get_pages holds for part of that time (docs/driver.md,
 * "Limits").  The caps allow a user
 * 1 TiB per pin and 4 TiB in all (max_pinned_bytes_per_user), far more
 * than the emulated GPU has, so the largest pin here is the largest
 * allocation the emulator gives: nvp2p_emu is loaded with BAR1 as large as
 * the GPU's memory, and user A (uid 65534) allocates all the memory and
 * BAR1 that user B's 64 KiB leaves free.
 *
 * User B (root) pins and unpins 64 KiB in a loop for SECONDS (default 10)
 * with A idle, then for SECONDS while A pins and unpins its whole buffer
 * in a loop; printed: one table of B's pin and unpin latency (median, p99,
 * max) in both phases and their ratio, and A's own pin and unpin times.
 * Nothing here passes or fails on time; the checks are that the setup
 * worked and that every pin and unpin succeeded.
 *
 * Usage: gdirect-unpinbench [SECONDS]
 * The GPU's memory is run.py's --gpu-mb (default 256 MiB).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdt.h"
#include "guest_harness.h"
#include "pinlat.h"

#define A_UID		65534
#define MAX_SAMPLES	(1 << 20)
/* Steps of A's allocation size when the emulator refuses one. */
#define A_STEP		(2 * GDT_MB)
#define A_TRIES		16

static unsigned long seconds = 10;

/* What the processes share; written by one side, read by the others. */
struct stats {
	unsigned long n;
	double p50, p99, max;
};

enum { PH_SETUP, PH_IDLE, PH_ACTIVE, PH_DONE };

struct shared {
	_Atomic int phase;
	_Atomic int b_ready, a_ready, a_running, a_stop;
	int b_err, a_err;
	uint64_t a_size;		/* asked of A by the parent */
	uint64_t a_got;			/* what A allocated and pinned */
	struct pinlat a;		/* A's own pairs */
	struct stats b_pin[2], b_unpin[2];
};

static struct shared *sh;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void summarise(double *v, unsigned long n, struct stats *s)
{
	s->n = n;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_double);
	s->p50 = v[n / 2];
	s->p99 = v[n * 99 / 100];
	s->max = v[n - 1];
}

static void wait_phase(int want)
{
	while (atomic_load(&sh->phase) < want)
		usleep(1000);
}

/* User B: 64 KiB pins and unpins, timed, in the idle and active phases. */
static void user_b(void)
{
	double *pin = malloc(MAX_SAMPLES * sizeof(double));
	double *unpin = malloc(MAX_SAMPLES * sizeof(double));
	CUdeviceptr buf;
	int fd;

	fd = open("/dev/gdirect", O_RDWR);
	if (!pin || !unpin || fd < 0 || gdt_cuda_init()) {
		sh->b_err = -1;
		_exit(1);
	}
	buf = gdt_alloc(GDT_KB64);
	if (!buf) {
		sh->b_err = -2;
		_exit(1);
	}
	atomic_store(&sh->b_ready, 1);
	for (int ph = 0; ph < 2; ph++) {
		unsigned long n = 0;
		double end;

		wait_phase(PH_IDLE + ph);
		/* Timed from A's first pin on, not from the phase's start. */
		for (int i = 0; ph && !atomic_load(&sh->a_running); i++) {
			if (i == 60000) {
				sh->b_err = -4;
				_exit(1);
			}
			usleep(1000);
		}
		end = guest_now_ms() + seconds * 1e3;
		while (guest_now_ms() < end && n < MAX_SAMPLES) {
			int ret = pinlat_pair(fd, buf, GDT_KB64, &pin[n],
					      &unpin[n]);

			if (ret) {
				sh->b_err = ret < 0 ? ret : -3;
				_exit(1);
			}
			n++;
		}
		summarise(pin, n, &sh->b_pin[ph]);
		summarise(unpin, n, &sh->b_unpin[ph]);
		atomic_store(&sh->phase, PH_IDLE + ph + 1);
	}
	close(fd);
	gdt_free(buf);
	_exit(0);
}

/* User A: the largest allocation it can have, pinned and unpinned. */
static void user_a(void)
{
	CUdeviceptr buf = 0;
	struct gdirect_pin p;
	uint64_t size;
	int fd, ret;

	if (setgid(A_UID) || setuid(A_UID)) {
		sh->a_err = -errno;
		_exit(1);
	}
	fd = open("/dev/gdirect", O_RDWR);
	if (fd < 0 || gdt_cuda_init()) {
		sh->a_err = fd < 0 ? -errno : -1;
		_exit(1);
	}
	size = sh->a_size;
	for (int i = 0; i < A_TRIES && size >= A_STEP; i++, size -= A_STEP)
		if (cuMemAlloc(&buf, size) == CUDA_SUCCESS)
			break;
	if (!buf) {
		sh->a_err = -ENOMEM;
		_exit(1);
	}
	/* The whole buffer must pin: BAR1 may be the tighter limit. */
	while ((ret = gdt_pin(fd, buf, size, 0, &p)) == -ENOMEM &&
	       size > A_STEP)
		size -= A_STEP;
	if (ret || gdt_unpin(fd, p.handle)) {
		sh->a_err = ret ? ret : -2;
		_exit(1);
	}
	sh->a_got = size;
	atomic_store(&sh->a_ready, 1);
	wait_phase(PH_ACTIVE);
	atomic_store(&sh->a_running, 1);
	while (!atomic_load(&sh->a_stop)) {
		double pin, unpin;

		ret = pinlat_pair(fd, buf, size, &pin, &unpin);
		if (ret) {
			sh->a_err = ret < 0 ? ret : -3;
			_exit(1);
		}
		pinlat_add(&sh->a, pin, unpin);
	}
	close(fd);
	gdt_free(buf);
	_exit(0);
}

/* Wait for @flag while *@pid lives; a child found dead is reaped (-1). */
static int wait_flag(_Atomic int *flag, pid_t *pid, unsigned int ms)
{
	for (unsigned int i = 0; i < ms; i++) {
		if (atomic_load(flag))
			return 0;
		if (waitpid(*pid, NULL, WNOHANG) == *pid) {
			*pid = -1;
			return -1;
		}
		usleep(1000);
	}
	return -1;
}

static int reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static void row(const char *what, const struct stats *idle,
		const struct stats *busy)
{
	tap_diag("| B's %-5s | %8.3f | %8.3f | %8.3f | %8.3f | %8.3f | %8.3f | %6.1fx | %6.1fx |",
		 what, idle->p50, idle->p99, idle->max, busy->p50, busy->p99,
		 busy->max, ratio(busy->p99, idle->p99),
		 ratio(busy->max, idle->max));
}

static void body(void)
{
	struct stat root = { .st_mode = 0755 };
	uint64_t mem_free, bar1_free;
	pid_t a = -1, b = -1;
	int ok;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!tap_ok(sh != MAP_FAILED, "shared page"))
		return;
	/* The initramfs root may be 0700: let user A reach /dev. */
	if (stat("/", &root) || chmod("/", root.st_mode | 0755) ||
	    chmod("/dev/gdirect", 0666) || chmod("/dev/nvp2p_emu", 0666))
		tap_diag("chmod: %s", strerror(errno));

	/* Neither child may inherit a CUDA context: this process makes none. */
	fflush(stdout);
	b = fork();
	if (b == 0)
		user_b();
	ok = b > 0 && !wait_flag(&sh->b_ready, &b, 60000);
	if (!tap_ok(ok,
		    "user B (root) has 64 KiB of GPU memory and a file (%d)",
		    sh->b_err))
		goto out;

	mem_free = gdt_emu("mem_total") - gdt_emu("mem_used");
	bar1_free = gdt_emu("bar1_total") - gdt_emu("bar1_reserved") -
		    gdt_emu("bar1_used") - GDT_KB64;
	sh->a_size = (mem_free < bar1_free ? mem_free : bar1_free) &
		     ~(A_STEP - 1);
	fflush(stdout);
	a = fork();
	if (a == 0)
		user_a();
	/* Waited for first: the line below reads what A wrote. */
	ok = a > 0 && !wait_flag(&sh->a_ready, &a, 120000);
	if (!tap_ok(ok,
		    "user A (uid %d) allocated and pinned %llu MiB (%llu MiB asked, GPU memory %llu MiB, BAR1 %llu MiB) (%d)",
		    A_UID, (unsigned long long)(sh->a_got / GDT_MB),
		    (unsigned long long)(sh->a_size / GDT_MB),
		    (unsigned long long)(gdt_emu("mem_total") / GDT_MB),
		    (unsigned long long)(gdt_emu("bar1_total") / GDT_MB),
		    sh->a_err))
		goto out;

	/* B moves the phase on at the end of each of its own. */
	atomic_store(&sh->phase, PH_IDLE);
	ok = !reap(b);
	atomic_store(&sh->a_stop, 1);
	b = -1;
	tap_ok(ok && !sh->b_err && sh->b_pin[0].n && sh->b_pin[1].n,
	       "user B: %lu pairs with A idle, %lu with A active (%d)",
	       sh->b_pin[0].n, sh->b_pin[1].n, sh->b_err);
	ok = !reap(a);
	a = -1;
	tap_ok(ok && !sh->a_err && sh->a.pairs,
	       "user A: %lu pins and unpins of %llu MiB (%d)", sh->a.pairs,
	       (unsigned long long)(sh->a_got / GDT_MB), sh->a_err);

	tap_diag("B pins and unpins 64 KiB for %lu s per phase; A (uid %d) pins and unpins %llu MiB (%llu pages) in a loop when active; ms:",
		 seconds, A_UID, (unsigned long long)(sh->a_got / GDT_MB),
		 (unsigned long long)(sh->a_got / GDT_KB64));
	tap_diag("|           | A idle                         | A active                       | active / idle     |");
	tap_diag("|           |   median |      p99 |      max |   median |      p99 |      max |    p99  |    max  |");
	row("pin", &sh->b_pin[0], &sh->b_pin[1]);
	row("unpin", &sh->b_unpin[0], &sh->b_unpin[1]);
	if (sh->a.pairs)
		tap_diag("A's own %llu MiB: pin mean %.2f ms max %.2f ms, unpin mean %.2f ms max %.2f ms (%lu pairs)",
			 (unsigned long long)(sh->a_got / GDT_MB),
			 sh->a.pin_sum / sh->a.pairs, sh->a.pin_max,
			 sh->a.unpin_sum / sh->a.pairs, sh->a.unpin_max,
			 sh->a.pairs);
out:
	atomic_store(&sh->a_stop, 1);
	atomic_store(&sh->phase, PH_DONE);
	if (b > 0) {
		kill(b, SIGKILL);
		waitpid(b, NULL, 0);
	}
	if (a > 0) {
		kill(a, SIGKILL);
		waitpid(a, NULL, 0);
	}
	chmod("/dev/gdirect", 0660);
	chmod("/dev/nvp2p_emu", 0660);
	chmod("/", root.st_mode & 07777);
}

int main(int argc, char **argv)
{
	char *end;
	int ret, ours = 0;

	if (argc > 1) {
		errno = 0;
		seconds = strtoul(argv[1], &end, 10);
		if (errno || end == argv[1] || *end || !seconds ||
		    seconds > 3600)
			argc = 3;
	}
	if (argc > 2) {
		fprintf(stderr, "usage: %s [SECONDS] (1 to 3600 per phase)\n",
			argv[0]);
		return 2;
	}
	/*
	 * BAR1 as large as the GPU's memory, so that the largest allocation
	 * is also the largest pin; gdt_main() then finds the emulator loaded
	 * and leaves it to us.
	 */
	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = guest_module_load("nvp2p_emu", "bar1_size_mb=0 bar1_reserve_mb=8");
	if (ret < 0) {
		tap_skip("unpin latency benchmark", "nvp2p_emu did not load");
		return tap_done();
	}
	ours = ret > 0;
	ret = gdt_main(NULL, 0, body);
	if (ours && guest_sh("rmmod nvp2p_emu"))
		ret = ret ? ret : 1;
	return ret;
}
