// SPDX-License-Identifier: MIT
/*
 * race.c - race stress with a fixed number of rounds
 *
 * Each round forks a worker process whose threads pin, map, touch, query
 * and unpin GPU memory through /dev/gdirect, DMA into it through the edu
 * example driver (in-kernel API), and read revocation events, while
 * another thread frees and reallocates the very same memory.  The
 * emulator's callback delay widens the windows between revocation and
 * unpin.  Odd rounds SIGKILL the worker mid-operation; even rounds let it
 * finish and exit without cleaning up; the order of its two files
 * alternates, so process exit runs both teardown orders.  After every
 * round nothing may be left pinned, no BAR1 byte used, no allocation
 * alive, and every call must have failed, if at all, with a documented
 * errno.  (Kernel warnings fail the whole run through the harness.)
 *
 * A free that completes while an edu transfer's first pin is inside
 * dma_map_pages would leave NVIDIA's driver on a freed table if the
 * mapped pin had a free callback; gdirect maps a persistent pin instead
 * (docs/driver.md, "Peer pins"; gdirect-edu holds that window open
 * on purpose).  Here it happens by chance, so each round counts the
 * emulator's misuse reports (announced, so none is a WARN) and fails on
 * any.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdirect_edu.h"
#include "gdt.h"

#define ROUNDS		12
#define SLOTS		4
#define SLOT_SIZE	(1 * GDT_MB)
#define PIN_ITERS	150
#define FREE_ITERS	60
#define EDU_ITERS	6
/* More misuse reports than a round can make: counted after it, none may be. */
#define MISUSE_ALLOWED	"100000"

static int gfd, efd = -1;
static _Atomic CUdeviceptr slots[SLOTS];
static atomic_int undocumented, pins_ok, revoked_seen, stop;

static void bad(const char *what, int err)
{
	atomic_fetch_add(&undocumented, 1);
	tap_diag("%s: undocumented errno %d (%s)", what, err, strerror(err));
}

static void *pinner(void *arg)
{
	uint64_t seed = (uintptr_t)arg;
	struct gdirect_region_info ri;
	struct gdirect_pin p;
	volatile uint8_t *map;
	int ret;

	gdt_srand(seed);
	for (int i = 0; i < PIN_ITERS && !atomic_load(&stop); i++) {
		CUdeviceptr base = atomic_load(&slots[gdt_rand() % SLOTS]);
		uint64_t off = gdt_rand() % SLOT_SIZE;
		uint64_t len = 1 + gdt_rand() % (SLOT_SIZE - off);

		ret = gdt_pin(gfd, base + off, len, 0, &p);
		if (ret) {
			if (ret != -EINVAL && ret != -ENOMEM)
				bad("PIN", -ret);
			continue;
		}
		atomic_fetch_add(&pins_ok, 1);
		if (gdt_rand() & 1) {
			map = mmap(NULL, GDT_KB64, PROT_READ | PROT_WRITE,
				   MAP_SHARED, gfd, p.mmap_offset);
			if (map == MAP_FAILED) {
				if (errno != ESTALE)
					bad("mmap", errno);
			} else {
				/* A revoked mapping faults; a live one does not. */
				gdt_faults(map, gdt_rand() & 1);
				munmap((void *)map, GDT_KB64);
			}
		}
		ret = gdt_region_info(gfd, p.handle, &ri);
		if (ret)
			bad("REGION_INFO", -ret);
		else if (ri.status == GDIRECT_STATUS_REVOKED)
			atomic_fetch_add(&revoked_seen, 1);
		ret = gdt_unpin(gfd, p.handle);
		if (ret)
			bad("UNPIN", -ret);
	}
	return NULL;
}

static void *freer(void *arg)
{
	(void)arg;
	gdt_srand(77);
	for (int i = 0; i < FREE_ITERS && !atomic_load(&stop); i++) {
		int s = gdt_rand() % SLOTS;
		CUdeviceptr old = atomic_load(&slots[s]);

		gdt_free(old);
		usleep(gdt_rand() % 3000);
		atomic_store(&slots[s], gdt_alloc(SLOT_SIZE));
	}
	return NULL;
}

static void *dma(void *arg)
{
	uint8_t buf[64] = { 1, 2, 3 };

	(void)arg;
	gdt_srand(99);
	for (int i = 0; i < EDU_ITERS && !atomic_load(&stop); i++) {
		struct gdedu_xfer x = {
			.gpu_addr = atomic_load(&slots[gdt_rand() % SLOTS]) +
				    gdt_rand() % (SLOT_SIZE - sizeof(buf)),
			.buf = (uintptr_t)buf, .size = sizeof(buf),
			.dir = (gdt_rand() & 1) ? GDEDU_TO_GPU : GDEDU_FROM_GPU,
		};

		if (ioctl(efd, GDEDU_IOC_XFER, &x) && errno != EINVAL &&
		    errno != ENOMEM && errno != ESTALE)
			bad("edu XFER", errno);
	}
	return NULL;
}

static void *reader(void *arg)
{
	struct gdirect_event ev[8];
	struct pollfd pfd = { .fd = gfd, .events = POLLIN };
	ssize_t n;

	(void)arg;
	while (!atomic_load(&stop)) {
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		n = read(gfd, ev, sizeof(ev));
		if (n < 0 && errno != EAGAIN)
			bad("read", errno);
		if (n > 0 && n % sizeof(ev[0]))
			bad("read size", 0);
	}
	return NULL;
}

/* The worker process of one round. */
static void worker(int round)
{
	pthread_t th[5], rd;
	int n = 0;

	if (round & 2)
		gfd = open("/dev/gdirect", O_RDWR | O_NONBLOCK);
	if (gdt_cuda_init())
		_exit(100);
	if (!(round & 2))
		gfd = open("/dev/gdirect", O_RDWR | O_NONBLOCK);
	efd = open(GDEDU_DEVICE, O_RDWR);
	if (gfd < 0)
		_exit(101);
	for (int s = 0; s < SLOTS; s++)
		atomic_store(&slots[s], gdt_alloc(SLOT_SIZE));
	pthread_create(&rd, NULL, reader, NULL);
	for (int t = 0; t < 3; t++)
		pthread_create(&th[n++], NULL, pinner,
			       (void *)(uintptr_t)(round * 16 + t + 1));
	pthread_create(&th[n++], NULL, freer, NULL);
	if (efd >= 0)
		pthread_create(&th[n++], NULL, dma, NULL);
	for (int t = 0; t < n; t++)
		pthread_join(th[t], NULL);
	atomic_store(&stop, 1);
	pthread_join(rd, NULL);
	tap_diag("round %d: %d pins, %d seen revoked", round,
		 atomic_load(&pins_ok), atomic_load(&revoked_seen));
	_exit(atomic_load(&undocumented) ? 1 : 0);	/* no cleanup */
}

static void body(void)
{
	int status;
	pid_t pid;

	gdt_srand(12345);
	for (int round = 0; round < ROUNDS; round++) {
		uint64_t misuse = gdt_emu("misuse");
		uint64_t map_misuse = gdt_emu("map_misuse");
		char delay[8];
		int killed = round & 1;

		snprintf(delay, sizeof(delay), "%d", (round / 2) % 3 * 2);
		gdt_emu_knob("callback_delay_ms", delay);
		gdt_emu_knob("pin_latency_us", round % 4 == 3 ? "300" : "0");
		gdt_emu_knob("expect_misuse", MISUSE_ALLOWED);
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			worker(round);
		if (killed) {
			usleep(200000 + gdt_rand() % 800000);
			kill(pid, SIGKILL);
		}
		waitpid(pid, &status, 0);
		gdt_emu_knob("expect_misuse", "0");
		misuse = gdt_emu("misuse") - misuse;
		map_misuse = gdt_emu("map_misuse") - map_misuse;
		tap_ok(misuse == 0,
		       "round %d: no call on a freed table (%llu misuse, %llu by maps)",
		       round, (unsigned long long)misuse,
		       (unsigned long long)map_misuse);
		if (!killed || WIFEXITED(status))
			tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			       "round %d: worker saw only documented errnos (status %#x)",
			       round, status);
		else
			tap_ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
			       "round %d: worker killed mid-operation", round);
		tap_ok(gdt_quiet() && gdt_emu("allocations") == 0,
		       "round %d (callback delay %s ms): 0 pins, 0 BAR1 bytes, 0 allocations",
		       round, delay);
	}
	gdt_emu_knob("callback_delay_ms", "0");
	gdt_emu_knob("pin_latency_us", "0");
	tap_ok(gdt_gd_stat("callbacks") > 0 && gdt_gd_stat("put_errors") == 0,
	       "callbacks fired (%lld), no put_pages errors",
	       (long long)gdt_gd_stat("callbacks"));
}

int main(void)
{
	return gdt_main(NULL, 1, body);
}
