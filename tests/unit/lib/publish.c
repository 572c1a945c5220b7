/* SPDX-License-Identifier: MIT */
/*
 * lib-publish: a context that opts in (GDIRECT_CTX_PUBLISH_STATS) keeps
 * DIR/gdirect-stats.PID.N current with what gdirect_stats() says, replaces
 * it whole, and removes it when destroyed; a fork child's destroy leaves the
 * parent's file alone; an unwritable directory fails the creation with a
 * message; names already taken (by another user, say) are skipped; without
 * the flag nothing is written.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "tutil.h"

static char dir[64];

/* The value of NAME in FILE, or -1. */
static long long field(const char *file, const char *name)
{
	char line[128], key[64];
	long long v, got = -1;
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld", key, &v) == 2 && !strcmp(key, name))
			got = v;
	fclose(f);
	return got;
}

/* Files in dir named gdirect-stats.*; with tmp, the temporaries too. */
static int files_in_dir(int tmp)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	CHECK(d);
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, "gdirect-stats.", 14) ||
		     (tmp && !strncmp(e->d_name, ".gdirect", 8));
	closedir(d);
	return n;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Wait up to 5 s for NAME in FILE to read WANT. */
static int wait_field(const char *file, const char *name, long long want)
{
	for (int i = 0; i < 500; i++) {
		if (field(file, name) == want)
			return 1;
		sleep_ms(10);
	}
	return 0;
}

static void publishes_and_cleans_up(void)
{
	struct gdirect_params p;
	struct gdirect_reg *r;
	char file[128];
	int hits = 25;

	params(&p, GDIRECT_INV_HOOKS);
	p.flags |= GDIRECT_CTX_PUBLISH_STATS;
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);
	uint64_t x = fake_cuda_alloc(64 * KiB);

	CHECK_EQ(files_in_dir(0), 1);
	/* The first context of this process is number 1. */
	snprintf(file, sizeof(file), "%s/gdirect-stats.%ld.1", dir, (long)getpid());
	CHECK_EQ(field(file, "pid"), (long long)getpid());
	CHECK_EQ(field(file, "ctx"), 1);
	CHECK_EQ(field(file, "interval_ms"), 20);
	CHECK(field(file, "updated_ns") > 0);
	CHECK_EQ(field(file, "hits"), 0);

	for (int i = 0; i <= hits; i++) {	/* one miss, then hits */
		CHECK_EQ(gdirect_reg_get(c, P(x + i), 8, 0, &r), 0);
		gdirect_reg_put(r);
	}
	CHECK(wait_field(file, "hits", hits));
	CHECK_EQ(field(file, "misses"), 1);
	CHECK_EQ(field(file, "pins"), 1);
	CHECK_EQ(field(file, "regions"), 1);
	CHECK_EQ(field(file, "bytes_pinned"), 64 * KiB);
	long long t0 = field(file, "updated_ns");
	int rewritten = 0;

	for (int i = 0; i < 500 && !rewritten; i++) {	/* it keeps being rewritten */
		sleep_ms(10);
		rewritten = field(file, "updated_ns") > t0;
	}
	CHECK(rewritten);
	CHECK_EQ(files_in_dir(0), 1);

	/* A fork child's destroy must not take the parent's file. */
	pid_t pid = fork();

	if (pid == 0) {
		gdirect_ctx_destroy(c);
		_exit(0);
	}
	CHECK(pid > 0);
	int st;

	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(files_in_dir(0), 1);

	gdirect_ctx_destroy(c);
	CHECK_EQ(files_in_dir(1), 0);	/* no temporary left either */
	fake_cuda_reset();
	tap_diag("published %d hits, file removed at destroy", hits);
}

static void bad_directory_fails(void)
{
	struct gdirect_params p;
	struct gdirect_ctx *c = NULL;
	struct gdl_backend *b = fake_backend_over_cuda(&(struct fake_cfg){ 0 });

	params(&p, GDIRECT_INV_HOOKS);
	p.flags |= GDIRECT_CTX_PUBLISH_STATS;
	setenv("GDIRECT_STATS_DIR", "/nonexistent/gdirect-stats-dir", 1);
	CHECK_EQ(gdl_ctx_create_backend(&p, b, &c), -2);	/* -ENOENT */
	CHECK(c == NULL);
	CHECK(strstr(gdirect_errmsg(), "cannot publish statistics: /nonexistent"));
	tap_diag("unwritable directory: %s", gdirect_errmsg());
	/* A directory others can write is not used. */
	CHECK_EQ(chmod(dir, 0777), 0);
	setenv("GDIRECT_STATS_DIR", dir, 1);
	CHECK_EQ(gdl_ctx_create_backend(&p, b, &c), -EPERM);
	CHECK(strstr(gdirect_errmsg(), "writable by others"));
	tap_diag("shared directory: %s", gdirect_errmsg());
	CHECK_EQ(chmod(dir, 0700), 0);
	b->ops->destroy(b);
	setenv("GDIRECT_STATS_DIR", dir, 1);
}

/* Names someone else took are skipped, not written through. */
static void taken_names_skipped(void)
{
	struct gdirect_params p;
	char file[384], mine[256] = "";
	int ours = 0;
	DIR *d;
	struct dirent *e;

	for (int n = 1; n <= 10; n++) {
		snprintf(file, sizeof(file), "%s/gdirect-stats.%ld.%d", dir,
			 (long)getpid(), n);
		FILE *f = fopen(file, "w");

		CHECK(f);
		fclose(f);
	}
	params(&p, GDIRECT_INV_HOOKS);
	p.flags |= GDIRECT_CTX_PUBLISH_STATS;
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);

	d = opendir(dir);
	CHECK(d);
	while ((e = readdir(d))) {
		snprintf(file, sizeof(file), "%s/%s", dir, e->d_name);
		if (!strncmp(e->d_name, "gdirect-stats.", 14) &&
		    field(file, "pid") == (long long)getpid()) {
			ours++;
			snprintf(mine, sizeof(mine), "%s", e->d_name);
		}
	}
	closedir(d);
	CHECK_EQ(ours, 1);
	CHECK_EQ(files_in_dir(0), 11);	/* the 10 planted ones untouched */
	gdirect_ctx_destroy(c);
	CHECK_EQ(files_in_dir(0), 10);
	for (int n = 1; n <= 10; n++) {
		snprintf(file, sizeof(file), "%s/gdirect-stats.%ld.%d", dir,
			 (long)getpid(), n);
		CHECK_EQ(field(file, "pid"), -1);	/* still empty */
		unlink(file);
	}
	tap_diag("10 taken names skipped: published as %s", mine);
}

static void off_by_default(void)
{
	struct gdirect_params p;

	unsetenv("GDIRECT_PUBLISH_STATS");
	params(&p, GDIRECT_INV_HOOKS);
	CHECK_EQ(p.flags & GDIRECT_CTX_PUBLISH_STATS, 0);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);

	CHECK_EQ(files_in_dir(0), 0);
	gdirect_ctx_destroy(c);
	setenv("GDIRECT_PUBLISH_STATS", "1", 1);
	params(&p, GDIRECT_INV_HOOKS);
	CHECK(p.flags & GDIRECT_CTX_PUBLISH_STATS);
	setenv("GDIRECT_PUBLISH_STATS", "0", 1);
	params(&p, GDIRECT_INV_HOOKS);
	CHECK_EQ(p.flags & GDIRECT_CTX_PUBLISH_STATS, 0);
	unsetenv("GDIRECT_PUBLISH_STATS");
}

/* The context's file, found in d: 1 if it is there, as PID.N, mode 0600. */
static int published_in(const char *d)
{
	char file[512];
	struct dirent *e;
	struct stat st;
	int n = 0;
	DIR *dd = opendir(d);

	if (!dd)
		return 0;
	while ((e = readdir(dd))) {
		if (strncmp(e->d_name, "gdirect-stats.", 14))
			continue;
		snprintf(file, sizeof(file), "%s/%s", d, e->d_name);
		CHECK_EQ(lstat(file, &st), 0);
		CHECK_EQ(st.st_mode & 0777, 0600);
		CHECK_EQ(st.st_uid, geteuid());
		n += field(file, "pid") == (long long)getpid();
	}
	closedir(dd);
	return n;
}

/*
 * Without GDIRECT_STATS_DIR: BASE/gdirect-UID, mode 0700, made on first
 * use.  When that name is taken (by another user, or by something that is
 * not a directory), a fresh BASE/gdirect-UID.XXXXXX of ours is used: the
 * context is created all the same.  other_uid: the taker is a directory
 * owned by another user (needs root to make).
 */
static void per_user_directory(bool other_uid)
{
	char base[64], own[128], fresh[400] = "";
	struct gdirect_params p;
	struct dirent *e;
	struct stat st;
	DIR *d;

	snprintf(base, sizeof(base), "/tmp/gdirect-base.XXXXXX");
	CHECK(mkdtemp(base));
	CHECK_EQ(chmod(base, 01777), 0);	/* as /dev/shm */
	unsetenv("GDIRECT_STATS_DIR");
	setenv("GDIRECT_STATS_BASE", base, 1);
	snprintf(own, sizeof(own), "%s/gdirect-%lu", base, (unsigned long)geteuid());
	params(&p, GDIRECT_INV_HOOKS);
	p.flags |= GDIRECT_CTX_PUBLISH_STATS;

	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);

	CHECK_EQ(lstat(own, &st), 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0700);
	CHECK_EQ(published_in(own), 1);
	gdirect_ctx_destroy(c);
	CHECK_EQ(published_in(own), 0);
	CHECK_EQ(rmdir(own), 0);

	/* Taken first. */
	if (other_uid) {
		CHECK_EQ(mkdir(own, 0777), 0);
		CHECK_EQ(chown(own, 65534, 65534), 0);
		CHECK_EQ(chmod(own, 0777), 0);
	} else {
		CHECK_EQ(symlink("/tmp", own), 0);
	}
	c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);
	d = opendir(base);
	CHECK(d);
	while ((e = readdir(d)))
		if (strlen(e->d_name) > strlen(own) - strlen(base) - 1 &&
		    !strncmp(e->d_name, own + strlen(base) + 1,
			     strlen(own) - strlen(base) - 1) &&
		    e->d_name[strlen(own) - strlen(base) - 1] == '.')
			snprintf(fresh, sizeof(fresh), "%s/%s", base, e->d_name);
	closedir(d);
	CHECK(fresh[0]);
	CHECK_EQ(lstat(fresh, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0700);
	CHECK_EQ(st.st_uid, geteuid());
	CHECK_EQ(published_in(fresh), 1);
	CHECK_EQ(published_in(own), 0);		/* nothing written through */
	gdirect_ctx_destroy(c);
	CHECK(lstat(fresh, &st) && errno == ENOENT);	/* removed with it */
	tap_diag("name taken by %s: published in %s instead",
	       other_uid ? "another uid's directory" : "a link", fresh);
	if (other_uid)
		CHECK_EQ(rmdir(own), 0);
	else
		CHECK_EQ(unlink(own), 0);
	CHECK_EQ(rmdir(base), 0);
	unsetenv("GDIRECT_STATS_BASE");
	setenv("GDIRECT_STATS_DIR", dir, 1);
}

static void links_directory(void)
{
	per_user_directory(false);
}

static void other_uids_directory(void)
{
	per_user_directory(true);
}

int main(int argc, char **argv)
{
	need_fake_cuda();
	if (argc > 1 && !strcmp(argv[1], "--other-uid")) {
		/* A directory of another user's: root makes it. */
		if (geteuid() != 0)
			tap_skip_all("making another user's directory needs root");
		setenv("GDIRECT_PUBLISH_INTERVAL_MS", "20", 1);
		TAP_TEST(other_uids_directory);
		return tap_done();
	}
	snprintf(dir, sizeof(dir), "/tmp/gdirect-publish.XXXXXX");
	CHECK(mkdtemp(dir));
	setenv("GDIRECT_STATS_DIR", dir, 1);
	setenv("GDIRECT_PUBLISH_INTERVAL_MS", "20", 1);
	TAP_TEST(publishes_and_cleans_up);
	TAP_TEST(bad_directory_fails);
	TAP_TEST(taken_names_skipped);
	TAP_TEST(off_by_default);
	TAP_TEST(links_directory);
	rmdir(dir);
	return tap_done();
}
