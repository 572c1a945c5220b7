// SPDX-License-Identifier: MIT
/* sysfs.c - roots of the inspected system and small file readers */
#include "sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void gdcli_set_root(char *dst, const char *what, const char *path)
{
	int len = snprintf(dst, GDCLI_PATH_MAX, "%s", path);

	/* A cut path would inspect some other directory: refuse it. */
	if (len < 0 || len >= GDCLI_PATH_MAX) {
		fprintf(stderr, "gdirect: %s is %zu bytes long; at most %d are allowed\n",
			what, strlen(path), GDCLI_PATH_MAX - 1);
		exit(2);
	}
}

static void set_root(char *dst, const char *env, const char *def)
{
	const char *v = getenv(env);

	gdcli_set_root(dst, env, v && *v ? v : def);
}

void gdcli_roots_init(struct gdcli_roots *r)
{
	set_root(r->sysfs, "GDIRECT_SYSFS_ROOT", "/sys");
	set_root(r->proc, "GDIRECT_PROC_ROOT", "/proc");
	set_root(r->dev, "GDIRECT_DEV_ROOT", "/dev");
}

int gdcli_path(char *out, size_t n, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(out, n, fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= n)
		return -ENAMETOOLONG;
	return 0;
}

int gdcli_read_str(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t got = 0;

	if (n == 0)
		return -EINVAL;
	buf[0] = '\0';
	if (fd < 0)
		return -errno;
	/* sysfs files give their contents in one read; debugfs ones may not. */
	while (len + 1 < n && (got = read(fd, buf + len, n - 1 - len)) > 0)
		len += (size_t)got;
	if (got < 0 && len == 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	buf[len] = '\0';
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	return 0;
}

int gdcli_read_u64(const char *path, uint64_t *val)
{
	char buf[64], *end;
	int err = gdcli_read_str(path, buf, sizeof(buf));

	if (err)
		return err;
	errno = 0;
	*val = strtoull(buf, &end, 0);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

int gdcli_read_int(const char *path, int *val)
{
	char buf[64], *end;
	long v;
	int err = gdcli_read_str(path, buf, sizeof(buf));

	if (err)
		return err;
	errno = 0;
	v = strtol(buf, &end, 0);
	if (errno || end == buf || v < -2147483647L - 1 || v > 2147483647L)
		return -EINVAL;
	*val = (int)v;
	return 0;
}

int gdcli_link_name(const char *path, char *buf, size_t n)
{
	char target[GDCLI_PATH_MAX];
	ssize_t len = readlink(path, target, sizeof(target) - 1);
	const char *base;

	buf[0] = '\0';
	if (len < 0)
		return -errno;
	target[len] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= n)
		return -ENAMETOOLONG;
	strcpy(buf, base);
	return 0;
}

int gdcli_read_emu_counter(const struct gdcli_roots *r, const char *name,
			uint64_t *val, const char **where)
{
	char path[GDCLI_PATH_MAX];
	int ret;

	if (gdcli_path(path, sizeof(path), "%s/kernel/debug/nvp2p_emu/%s",
		       r->sysfs, name))
		return -ENAMETOOLONG;
	ret = gdcli_read_u64(path, val);
	if (ret != -ENOENT) {
		if (!ret && where)
			*where = "debugfs";
		return ret;
	}
	if (gdcli_path(path, sizeof(path), "%s/driver/nvp2p_emu/%s", r->proc,
		       name))
		return -ENAMETOOLONG;
	ret = gdcli_read_u64(path, val);
	if (!ret && where)
		*where = "procfs";
	return ret;
}
