// SPDX-License-Identifier: MIT
/*
 * fork.c - handles and mappings belong to the opening process:
 * threads share them, a forked child gets neither (EPERM, and no mapping
 * at all: VM_DONTCOPY), and an fd passed over a unix socket is refused in
 * the receiver.  The receiver closing the last reference later must not
 * put pages from the wrong process: the registration waits for the
 * owner's free instead (counted as "orphaned").
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdt.h"

static int fd;
static struct gdirect_pin pin;
static volatile uint8_t *map;

/* Bit per check, reported by the child's exit status. */
enum {
	C_INFO = 1, C_PIN = 2, C_UNPIN = 4, C_MMAP = 8, C_READ = 16,
	C_MAPGONE = 32, C_POLL = 64,
};

/* The calls another process makes on file @f, whose pin is @owner's. */
static int foreign_checks(int f, const struct gdirect_pin *owner,
			  volatile uint8_t *parent_map)
{
	struct gdirect_info info;
	struct gdirect_pin p = { .addr = owner->pinned_addr, .size = 4096 };
	struct gdirect_unpin u = { .handle = owner->handle };
	struct gdirect_event ev;
	struct pollfd pfd = { .fd = f, .events = POLLIN };
	int bits = 0;

	if (ioctl(f, GDIRECT_IOC_INFO, &info) && errno == EPERM)
		bits |= C_INFO;
	if (ioctl(f, GDIRECT_IOC_PIN, &p) && errno == EPERM)
		bits |= C_PIN;
	if (ioctl(f, GDIRECT_IOC_UNPIN, &u) && errno == EPERM)
		bits |= C_UNPIN;
	if (mmap(NULL, 4096, PROT_READ, MAP_SHARED, f, owner->mmap_offset) ==
	    MAP_FAILED && errno == EPERM &&
	    mmap(NULL, 4096, PROT_READ, MAP_SHARED, f, 0) == MAP_FAILED &&
	    errno == EPERM)
		bits |= C_MMAP;
	if (read(f, &ev, sizeof(ev)) < 0 && errno == EPERM)
		bits |= C_READ;
	if (!parent_map || gdt_faults(parent_map, 0))
		bits |= C_MAPGONE;
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLERR))
		bits |= C_POLL;
	return bits;
}

static void report(int bits, const char *who)
{
	tap_ok(bits & C_INFO, "%s: INFO refused with EPERM", who);
	tap_ok(bits & C_PIN, "%s: PIN refused with EPERM", who);
	tap_ok(bits & C_UNPIN, "%s: UNPIN refused with EPERM", who);
	tap_ok(bits & C_MMAP, "%s: mmap refused with EPERM", who);
	tap_ok(bits & C_READ, "%s: read refused with EPERM", who);
	tap_ok(bits & C_MAPGONE, "%s: the owner's mapping is not there", who);
	tap_ok(bits & C_POLL, "%s: poll says POLLERR", who);
}

static void *thread_fn(void *arg)
{
	struct gdirect_pin p;
	intptr_t ok;

	(void)arg;
	ok = !gdt_pin(fd, pin.pinned_addr, 4096, 0, &p) && !gdt_faults(map, 0) &&
	     !gdt_unpin(fd, p.handle);
	return (void *)ok;
}

static void test_fork(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(foreign_checks(fd, &pin, map));
	waitpid(pid, &status, 0);
	report(WIFEXITED(status) ? WEXITSTATUS(status) : 0, "forked child");
	tap_ok(!gdt_faults(map, 0), "owner's mapping still works after fork");
}

/*
 * The receiver gets the owner's fd, is refused, keeps it while the owner
 * closes its own, then closes the last reference: release() runs in the
 * wrong process and must leave the pages for the owner's free, whose
 * callback then ends the orphaned registration.
 */
static void test_socket(void)
{
	int sv[2], status, bits;
	char c;
	struct gdirect_pin p;
	int64_t orphaned = gdt_gd_stat("orphaned");
	CUdeviceptr buf = gdt_alloc(GDT_KB64);
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		tap_ok(0, "socketpair: %s", strerror(errno));
		return;
	}
	tap_ok(buf && !gdt_pin(fd, buf, GDT_KB64, 0, &p),
	       "the owner's file, pinned");
	pid = fork();
	if (pid == 0) {
		int f;

		close(sv[0]);
		f = gdt_recv_fd(sv[1]);
		bits = f >= 0 ? foreign_checks(f, &p, NULL) : 0;
		if (write(sv[1], &bits, sizeof(bits)) != sizeof(bits))
			_exit(1);
		if (read(sv[1], &c, 1) != 1)	/* owner closed its fd */
			_exit(1);
		close(f);			/* the last reference */
		_exit(0);
	}
	close(sv[1]);
	gdt_send_fd(sv[0], fd);
	if (read(sv[0], &bits, sizeof(bits)) != sizeof(bits))
		bits = 0;
	report(bits, "receiver of an SCM_RIGHTS fd");
	close(fd);
	c = 'c';
	if (write(sv[0], &c, 1) != 1)
		tap_diag("write to the receiver failed");
	waitpid(pid, &status, 0);
	tap_ok(gdt_gd_stat("orphaned") == orphaned + 1 && gdt_emu("pins") >= 1,
	       "release in the receiver does not put the owner's pages");
	close(sv[0]);
	gdt_free(buf);
	tap_ok(gdt_quiet(), "orphaned registration ended by the callback");
}

/* The owner's pin and mapping, its threads, a forked child: one process. */
static void owner(void)
{
	pthread_t th[4];
	void *ret;
	int all = 1;
	CUdeviceptr buf;

	if (!tap_ok(gdt_cuda_init() == 0, "CUDA context"))
		return;
	buf = gdt_alloc(4 * GDT_KB64);
	fd = open("/dev/gdirect", O_RDWR | O_NONBLOCK);
	if (!tap_ok(buf && fd >= 0 && !gdt_pin(fd, buf, GDT_KB64, 0, &pin),
		    "pin in the owner"))
		return;
	map = mmap(NULL, GDT_KB64, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   pin.mmap_offset);
	tap_ok(map != MAP_FAILED, "owner maps the region");

	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, thread_fn, NULL);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], &ret);
		all &= ret != NULL;
	}
	tap_ok(all, "the owner's threads pin, map and unpin");

	test_fork();

	/* The owner frees: its mapping goes, its handle stays to unpin. */
	tap_ok(gdt_free(buf) == 0, "owner frees the memory");
	tap_ok(gdt_faults(map, 0), "owner's mapping faults after the free");
	munmap((void *)map, GDT_KB64);
	tap_ok(gdt_unpin(fd, pin.handle) == 0, "owner unpins its revoked handle");
	close(fd);
}

/*
 * The fd passing in a process of its own, with its own CUDA context,
 * /dev/gdirect file and buffer: a failure cannot leave a pin or an
 * orphaned registration to the other.  This process makes no CUDA
 * context, so its children can.
 */
static void body(void)
{
	gdt_run_child("owner", owner);
	gdt_run_own("test_socket", test_socket, "/dev/gdirect", &fd, NULL);
}

int main(void)
{
	return gdt_main(NULL, 0, body);
}
