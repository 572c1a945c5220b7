/* SPDX-License-Identifier: MIT */
/*
 * statsdir.c - the per-user statistics directory (see statsdir.h).
 */
#include "statsdir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse.h"

const char *gdl_stats_base(void)
{
	const char *b = getenv("GDIRECT_STATS_BASE");

	return b && *b ? b : GDL_STATS_BASE_DEFAULT;
}

int gdl_stats_dir_check(const char *dir, uid_t uid, char *why, size_t n)
{
	struct stat st;

	if (lstat(dir, &st)) {
		int err = errno;

		snprintf(why, n, "%s: %s", dir, strerror(err));
		return -err;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, n, "%s is not a directory", dir);
		return -ENOTDIR;
	}
	if (st.st_uid != uid) {
		snprintf(why, n, "%s belongs to uid %lu, not %lu", dir,
			 (unsigned long)st.st_uid, (unsigned long)uid);
		return -EPERM;
	}
	if (st.st_mode & 022) {
		snprintf(why, n, "%s is writable by others (mode %04o)", dir,
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

int gdl_stats_dir_make(char *buf, size_t len, int *made_fresh, char *why,
		      size_t n)
{
	const char *dir = getenv("GDIRECT_STATS_DIR");
	uid_t uid = geteuid();
	char w[300];

	*made_fresh = 0;
	if (dir && *dir) {
		if ((size_t)snprintf(buf, len, "%s", dir) >= len) {
			snprintf(why, n, "GDIRECT_STATS_DIR is too long");
			return -ENAMETOOLONG;
		}
		return gdl_stats_dir_check(buf, uid, why, n);
	}
	if ((size_t)snprintf(buf, len, "%s/gdirect-%lu", gdl_stats_base(),
			     (unsigned long)uid) >= len) {
		snprintf(why, n, "GDIRECT_STATS_BASE is too long");
		return -ENAMETOOLONG;
	}
	if (mkdir(buf, 0700) && errno != EEXIST) {
		int err = errno;

		snprintf(why, n, "cannot make %s: %s", buf, strerror(err));
		return -err;
	}
	if (!gdl_stats_dir_check(buf, uid, w, sizeof(w)))
		return 0;
	/* Someone else holds the name: a fresh directory of ours. */
	if ((size_t)snprintf(buf, len, "%s/gdirect-%lu.XXXXXX", gdl_stats_base(),
			     (unsigned long)uid) >= len || !mkdtemp(buf)) {
		int err = errno ? errno : ENAMETOOLONG;

		snprintf(why, n, "%s, and no directory of our own could be "
			 "made: %s", w, strerror(err));
		return -err;
	}
	*made_fresh = 1;
	return 0;
}

long gdl_stats_dir_uid(const char *name)
{
	char num[24], w[100];
	size_t k;
	uint64_t uid;

	if (strncmp(name, "gdirect-", 8))
		return -1;
	name += 8;
	k = strcspn(name, ".");
	if (k == 0 || k >= sizeof(num))
		return -1;
	memcpy(num, name, k);
	num[k] = '\0';
	if (gdl_parse_uint(num, 0, 0x7fffffff, &uid, w, sizeof(w)))
		return -1;
	if (name[k] && strlen(name + k) != 7)	/* ".XXXXXX" */
		return -1;
	return (long)uid;
}
