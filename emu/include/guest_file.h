/* SPDX-License-Identifier: MIT */
/*
 * guest_file.h - read and write the small text files of sysfs, procfs and
 * debugfs, in one call each (header only, no TAP output):
 *
 *   guest_read(path, buf, len)   the file's first LEN - 1 bytes, NUL-ended
 *   guest_write(path, s)         S, in one write()
 *
 * Both return 0, or -1 with errno (ENOENT: no such file).
 */
#ifndef GUEST_FILE_H
#define GUEST_FILE_H

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static inline int guest_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	err = errno;
	close(fd);
	if (n < 0) {
		errno = err;
		return -1;
	}
	buf[n] = '\0';
	return 0;
}

static inline int guest_write(const char *path, const char *s)
{
	size_t len = strlen(s);
	int fd = open(path, O_WRONLY | O_CLOEXEC), err;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, len);
	err = errno;
	close(fd);
	if (n == (ssize_t)len)
		return 0;
	errno = n < 0 ? err : EIO;
	return -1;
}

#endif /* GUEST_FILE_H */
