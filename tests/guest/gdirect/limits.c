// SPDX-License-Identifier: MIT
/*
 * limits.c - what one user can make gdirect.ko hold
 *
 *  - each open file's status area (256 KiB) is charged to the opener's
 *    memory cgroup: opening FILES files raises the cgroup's
 *    memory.current by at least that much;
 *  - max_pins_per_file (set to FILE_CAP here) and max_pins_per_user
 *    (USER_CAP) end in EDQUOT, an unpin or a close makes room again, and
 *    another user's pins are not counted against this one's;
 *  - PIN and UNPIN need a file opened for writing (EBADF), while INFO and
 *    REGION_INFO work on a read-only one;
 *  - max_pinned_bytes_per_user (BYTE_CAP here) bounds the bytes one user
 *    has pinned over all its files, however few the pins: pinning one
 *    buffer again and again ends in EDQUOT once its bytes would pass the
 *    cap, a smaller pin still fits, and closing the files gives it all
 *    back; the parameter refuses a value it does not understand whole.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdt.h"

#define FILE_CAP	8
#define USER_CAP	12
#define FILES		32
/* Two pins of BIG fit under BYTE_CAP, a third does not, a 64 KiB one does. */
#define BYTE_CAP	(2 * GDT_MB)
#define BIG		(12 * GDT_KB64)
#define BYTE_PARAM	"/sys/module/gdirect/parameters/max_pinned_bytes_per_user"
#define CG		"/sys/fs/cgroup"
#define CG_TEST		CG "/gdt-limits"

struct shared {
	int cg_ok;
	long long before, after;
	int other_ret;
};

static struct shared *sh;

static long long read_ll(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	int ok = fd >= 0 && write(fd, s, strlen(s)) == (ssize_t)strlen(s);

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/* A child in a cgroup of its own opens FILES files of /dev/gdirect. */
static void memcg_child(void)
{
	char pid[32];
	int fds[FILES];

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (write_str(CG_TEST "/cgroup.procs", pid))
		_exit(3);
	sh->before = read_ll(CG_TEST "/memory.current");
	for (int i = 0; i < FILES; i++)
		fds[i] = open("/dev/gdirect", O_RDWR);
	sh->after = read_ll(CG_TEST "/memory.current");
	for (int i = 0; i < FILES; i++)
		if (fds[i] < 0)
			_exit(4);
	sh->cg_ok = 1;
	_exit(0);
}

static void check_memcg(void)
{
	int status;
	pid_t pid;

	/* The guest may not have cgroup2 mounted yet. */
	if (access(CG "/cgroup.controllers", F_OK))
		mount("none", CG, "cgroup2", 0, NULL);
	write_str(CG "/cgroup.subtree_control", "+memory");
	mkdir(CG_TEST, 0755);
	if (access(CG_TEST "/memory.current", R_OK)) {
		tap_skip("status area charged to the memory cgroup",
			 "no cgroup2 memory controller in this kernel");
		return;
	}
	pid = fork();
	if (pid == 0)
		memcg_child();
	waitpid(pid, &status, 0);
	tap_diag("memory.current %lld -> %lld over %d opens", sh->before,
		 sh->after, FILES);
	tap_ok(sh->cg_ok && sh->after - sh->before >=
	       (long long)FILES * GDIRECT_STATUS_BYTES,
	       "%d opens charge at least %d KiB to the opener's memory cgroup (%lld KiB)",
	       FILES, FILES * GDIRECT_STATUS_BYTES / 1024,
	       (sh->after - sh->before) / 1024);
	rmdir(CG_TEST);
}

/* Another user, waiting for this one to reach its cap, then pinning. */
static void other_user(int rfd)
{
	CUdeviceptr buf;
	char c;
	int fd;

	if (read(rfd, &c, 1) != 1 || setgid(65534) || setuid(65534))
		_exit(3);
	fd = open("/dev/gdirect", O_RDWR);
	if (fd < 0) {
		sh->other_ret = -errno;
		_exit(4);
	}
	if (gdt_cuda_init())
		_exit(5);
	buf = gdt_alloc(GDT_KB64);
	sh->other_ret = buf ? gdt_pin(fd, buf, GDT_KB64, 0, NULL) : -1000;
	_exit(0);
}

static void check_caps(void)
{
	uint64_t h1[FILE_CAP], h2[USER_CAP];
	struct gdirect_region_info ri;
	struct gdirect_info info;
	struct gdirect_pin p;
	int fd1, fd2, ro, n1 = 0, n2 = 0, pfd[2], status, ret;
	struct stat root = { .st_mode = 0755 };
	CUdeviceptr buf;
	pid_t pid;

	/* The other user must fork before this process makes a context. */
	/* The initramfs root may be 0700: let the other user reach /dev. */
	if (stat("/", &root) || chmod("/", root.st_mode | 0755) ||
	    chmod("/dev/gdirect", 0666) || chmod("/dev/nvp2p_emu", 0666))
		tap_diag("chmod: %s", strerror(errno));
	if (pipe(pfd))
		return;
	sh->other_ret = 1;
	pid = fork();
	if (pid == 0) {
		close(pfd[1]);
		other_user(pfd[0]);
	}
	close(pfd[0]);

	if (!tap_ok(gdt_cuda_init() == 0, "CUDA context"))
		return;
	buf = gdt_alloc(GDT_KB64);
	fd1 = open("/dev/gdirect", O_RDWR);
	fd2 = open("/dev/gdirect", O_RDWR);
	if (!tap_ok(buf && fd1 >= 0 && fd2 >= 0, "allocate, open twice"))
		return;

	while (n1 < FILE_CAP && !gdt_pin(fd1, buf, GDT_KB64, 0, &p))
		h1[n1++] = p.handle;
	tap_ok(n1 == FILE_CAP, "%d pins in one file (max_pins_per_file=%d)",
	       n1, FILE_CAP);
	tap_errno(gdt_pin(fd1, buf, GDT_KB64, 0, NULL), EDQUOT,
		  "one more pin in that file");
	tap_ok(!gdt_unpin(fd1, h1[--n1]) &&
	       !gdt_pin(fd1, buf, GDT_KB64, 0, &p), "an unpin makes room");
	h1[n1++] = p.handle;

	while (n2 < USER_CAP && !gdt_pin(fd2, buf, GDT_KB64, 0, &p))
		h2[n2++] = p.handle;
	tap_ok(n2 == USER_CAP - FILE_CAP,
	       "%d more in another file reach max_pins_per_user=%d", n2,
	       USER_CAP);
	tap_errno(gdt_pin(fd2, buf, GDT_KB64, 0, NULL), EDQUOT,
		  "one more pin of this user, in a file below its cap");

	/* Meanwhile another user pins as usual. */
	if (write(pfd[1], "x", 1) != 1)
		return;
	close(pfd[1]);
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && !WEXITSTATUS(status) && !sh->other_ret,
	       "another user's pin is not counted against this one (status %#x, pin %d)",
	       status, sh->other_ret);

	close(fd1);
	ret = gdt_pin(fd2, buf, GDT_KB64, 0, &p);
	tap_ok(!ret, "a close gives its pins back to the user (%d)", ret);
	if (!ret)
		h2[n2++] = p.handle;

	ro = open("/dev/gdirect", O_RDONLY);
	tap_ok(ro >= 0 && !ioctl(ro, GDIRECT_IOC_INFO, &info),
	       "INFO on a read-only file");
	tap_errno(gdt_pin(ro, buf, GDT_KB64, 0, NULL), EBADF,
		  "PIN on a read-only file");
	tap_errno(gdt_unpin(ro, 1), EBADF, "UNPIN on a read-only file");
	tap_errno(gdt_region_info(ro, 1, &ri), ENOENT,
		  "REGION_INFO on a read-only file");
	close(ro);
	for (int i = 0; i < n2; i++)
		gdt_unpin(fd2, h2[i]);
	close(fd2);
	gdt_free(buf);
	chmod("/dev/gdirect", 0660);
	chmod("/", root.st_mode & 07777);
}

static void check_bytes(void)
{
	static const char *const bad[] = { "1x", "0x100000", "-1" };
	int fds[2], n = 0, ret = 0, small;
	struct gdirect_pin p;
	CUdeviceptr buf;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		tap_ok(write_str(BYTE_PARAM, bad[i]) && errno == EINVAL &&
		       read_ll(BYTE_PARAM) == (long long)BYTE_CAP,
		       "max_pinned_bytes_per_user refuses \"%s\" and keeps %llu",
		       bad[i], (unsigned long long)BYTE_CAP);
	if (!tap_ok(gdt_cuda_init() == 0, "CUDA context"))
		return;
	buf = gdt_alloc(BIG);
	fds[0] = open("/dev/gdirect", O_RDWR);
	fds[1] = open("/dev/gdirect", O_RDWR);
	if (!tap_ok(buf && fds[0] >= 0 && fds[1] >= 0, "allocate, open twice"))
		return;

	/*
	 * The same buffer again and again, over two files; bounded by the
	 * per-file cap, so a driver that never refuses ends here too.
	 */
	while (n < FILE_CAP) {
		ret = gdt_pin(fds[n % 2], buf, BIG, 0, NULL);
		if (ret)
			break;
		n++;
	}
	tap_ok(n == BYTE_CAP / BIG && ret == -EDQUOT,
	       "%d pins of one %llu KiB buffer under max_pinned_bytes_per_user=%llu KiB, then %s",
	       n, BIG >> 10, BYTE_CAP >> 10, strerror(-ret));
	small = gdt_pin(fds[1], buf, GDT_KB64, 0, &p);
	tap_ok(!small, "a 64 KiB pin still fits (%d)", small);
	tap_ok(gdt_gd_stat("live_bytes") ==
	       (int64_t)(n * BIG + (small ? 0 : GDT_KB64)),
	       "live_bytes %lld", (long long)gdt_gd_stat("live_bytes"));

	/* Closing the files gives every byte back. */
	close(fds[0]);
	close(fds[1]);
	tap_ok(gdt_gd_stat("live_bytes") == 0, "nothing live after close");
	fds[0] = open("/dev/gdirect", O_RDWR);
	for (n = 0; n < (int)(BYTE_CAP / BIG); n++)
		if (gdt_pin(fds[0], buf, BIG, 0, NULL))
			break;
	tap_ok(n == BYTE_CAP / BIG, "the bytes are given back: %d pins again",
	       n);
	close(fds[0]);
	gdt_free(buf);

	tap_ok(!write_str(BYTE_PARAM, "0") && read_ll(BYTE_PARAM) == 0,
	       "max_pinned_bytes_per_user=0 (no limit) accepted");
}

static void body(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!tap_ok(sh != MAP_FAILED, "shared memory"))
		return;
	check_memcg();
	check_caps();
	check_bytes();
}

int main(void)
{
	return gdt_main("max_pins_per_file=8 max_pins_per_user=12 max_pinned_bytes_per_user=2097152",
			0, body);
}
