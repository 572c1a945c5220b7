// SPDX-License-Identifier: MIT
/*
 * fadvise.c - posix_fadvise() and madvise(MADV_WILLNEED) on
 * /dev/gdirect and /dev/gdrdrv through device nodes on a disk file system.
 *
 * The kernel answers advice on a file without a .fadvise operation with
 * generic_fadvise(), which reads ahead through the file's page cache when
 * the inode's backing device is a real one.  devtmpfs has none, so /dev
 * hides the path; a node made with mknod on ext2 (a loop device, as in a
 * chroot or a container image) has one.  Every valid advice must succeed
 * and do nothing, an unknown one fail with EINVAL, and none may oops.
 * Each fadvise call is made in a child, so that an oops fails its check
 * alone; madvise is made by the test body itself (gdt_main runs it in a
 * child of its own).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdrdrv.h"
#include "gdt.h"

#define MNT	"/tmp/fadvise-mnt"
#define IMG	"/tmp/fadvise.img"

static const struct {
	int advice;
	const char *name;
} advices[] = {
	{ POSIX_FADV_NORMAL, "NORMAL" },
	{ POSIX_FADV_RANDOM, "RANDOM" },
	{ POSIX_FADV_SEQUENTIAL, "SEQUENTIAL" },
	{ POSIX_FADV_WILLNEED, "WILLNEED" },
	{ POSIX_FADV_DONTNEED, "DONTNEED" },
	{ POSIX_FADV_NOREUSE, "NOREUSE" },
};

/* system(), quiet; 0 or -1 having said which command failed. */
static int sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc)
		tap_diag("'%s' failed: %#x", cmd, rc);
	return rc ? -1 : 0;
}

/*
 * An ext2 file system on a loop device at MNT, from the guest kernel's own
 * modules (build-initramfs.sh packs them into /modules/hostfs).  0, or -1
 * with *why set.
 */
static int mount_disk_fs(const char **why)
{
	static const char *const mods[] = { "crc16", "mbcache", "jbd2",
		"crc32c_generic", "ext4", "loop" };
	char cmd[160];
	size_t i;

	for (i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		snprintf(cmd, sizeof(cmd), "/modules/hostfs/%s.ko", mods[i]);
		if (access(cmd, R_OK)) {
			*why = "the guest kernel's ext4 and loop modules are not in the initramfs";
			return -1;
		}
		snprintf(cmd, sizeof(cmd),
			 "grep -q '^%s ' /proc/modules || insmod /modules/hostfs/%s.ko",
			 mods[i], mods[i]);
		if (sh(cmd)) {
			*why = "could not load the ext4 and loop modules";
			return -1;
		}
	}
	if (sh("dd if=/dev/zero of=" IMG " bs=1024 count=2048 2>/dev/null") ||
	    sh("mke2fs -q -F " IMG " >/dev/null") ||
	    sh("mkdir -p " MNT) ||
	    sh("mount -t ext2 -o loop " IMG " " MNT)) {
		*why = "could not mount an ext2 image on a loop device";
		return -1;
	}
	return 0;
}

/* mknod MNT/NAME for the misc device /dev/NAME; 0 or -1. */
static int node(const char *name, char *path, size_t size)
{
	struct stat st;

	snprintf(path, size, "/dev/%s", name);
	if (stat(path, &st))
		return -1;
	snprintf(path, size, MNT "/%s", name);
	unlink(path);
	return mknod(path, S_IFCHR | 0600, st.st_rdev);
}

/* posix_fadvise() in a child: its error number, or -1 if the child died. */
static int advise_in_child(int fd, off_t off, off_t len, int advice)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(posix_fadvise(fd, off, len, advice));
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (!WIFEXITED(status)) {
		tap_diag("the child died of signal %d", WTERMSIG(status));
		return -1;
	}
	return WEXITSTATUS(status);
}

/*
 * madvise(MADV_WILLNEED) here, not in a child: the mappings are not
 * inherited across fork (VM_DONTCOPY).  0 or errno.
 */
static int willneed(void *p, size_t len)
{
	return madvise(p, len, MADV_WILLNEED) ? errno : 0;
}

static void advise_all(int fd, const char *dev)
{
	size_t i;

	for (i = 0; i < sizeof(advices) / sizeof(advices[0]); i++)
		tap_ok(advise_in_child(fd, 0, 0, advices[i].advice) == 0,
		       "%s on ext2: posix_fadvise(%s) succeeds", dev,
		       advices[i].name);
	tap_ok(advise_in_child(fd, 1 << 20, 1 << 16, POSIX_FADV_WILLNEED) == 0,
	       "%s on ext2: WILLNEED of a range succeeds", dev);
	tap_ok(advise_in_child(fd, 0, 0, 99) == EINVAL,
	       "%s on ext2: an unknown advice is EINVAL", dev);
	tap_ok(advise_in_child(fd, 0, -1, POSIX_FADV_NORMAL) == EINVAL,
	       "%s on ext2: a negative length is EINVAL", dev);
}

static void test_gdirect(void)
{
	char path[64];
	void *status;
	int fd;

	if (!tap_ok(node("gdirect", path, sizeof(path)) == 0,
		    "mknod " MNT "/gdirect"))
		return;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (!tap_ok(fd >= 0, "open " MNT "/gdirect"))
		return;
	advise_all(fd, "/dev/gdirect");
	status = mmap(NULL, GDIRECT_STATUS_BYTES, PROT_READ, MAP_SHARED, fd,
		      GDIRECT_STATUS_OFFSET);
	if (tap_ok(status != MAP_FAILED, "mmap its status area")) {
		tap_ok(willneed(status, GDIRECT_STATUS_BYTES) == 0,
		       "/dev/gdirect on ext2: madvise(WILLNEED) of the status area succeeds");
		munmap(status, GDIRECT_STATUS_BYTES);
	}
	close(fd);
}

static void test_gdrdrv(void)
{
	struct GDRDRV_IOC_PIN_BUFFER_PARAMS pin = { 0 };
	struct GDRDRV_IOC_UNPIN_BUFFER_PARAMS unpin = { 0 };
	CUdeviceptr buf;
	char path[64];
	void *p;
	int fd;

	if (!tap_ok(node("gdrdrv", path, sizeof(path)) == 0,
		    "mknod " MNT "/gdrdrv"))
		return;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (!tap_ok(fd >= 0, "open " MNT "/gdrdrv"))
		return;
	advise_all(fd, "/dev/gdrdrv");

	buf = gdt_alloc(GDT_KB64);
	pin.addr = buf;
	pin.size = GDT_KB64;
	if (!tap_ok(buf && !ioctl(fd, GDRDRV_IOC_PIN_BUFFER, &pin),
		    "pin 64 KiB through " MNT "/gdrdrv"))
		goto out;
	p = mmap(NULL, GDT_KB64, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 pin.handle * 4096);
	if (tap_ok(p != MAP_FAILED, "mmap the pinned buffer")) {
		tap_ok(willneed(p, GDT_KB64) == 0,
		       "/dev/gdrdrv on ext2: madvise(WILLNEED) of a mapping succeeds");
		munmap(p, GDT_KB64);
	}
	unpin.handle = pin.handle;
	tap_ok(!ioctl(fd, GDRDRV_IOC_UNPIN_BUFFER, &unpin), "unpin");
out:
	gdt_free(buf);
	close(fd);
}

static void body(void)
{
	const char *why = NULL;

	if (mount_disk_fs(&why)) {
		tap_skip("advice on gdirect's device nodes on a disk file system",
			 why);
		return;
	}
	if (!tap_ok(gdt_cuda_init() == 0, "CUDA context on the emulated GPU"))
		goto out;
	test_gdirect();
	test_gdrdrv();
out:
	unlink(MNT "/gdirect");
	unlink(MNT "/gdrdrv");
	sh("umount -d " MNT);
	unlink(IMG);
}

int main(void)
{
	return gdt_main(NULL, 0, body);
}
