/* SPDX-License-Identifier: MIT */
/*
 * publish.c - a context's statistics, published for `gdirect stat`.
 *
 * Opt-in (GDIRECT_CTX_PUBLISH_STATS, or GDIRECT_PUBLISH_STATS=1 in the
 * environment).  A thread of the context writes what gdirect_stats() returns
 * as "name value" lines, the format of gdirect.ko's debugfs stats, to
 *
 *	DIR/gdirect-stats.PID.N
 *
 * every $GDIRECT_PUBLISH_INTERVAL_MS (default 500), replacing the file
 * whole (a temporary file of a random name renamed over it), so a reader
 * never sees half an update.  DIR is the user's own directory, which
 * nobody else can write (statsdir.h: $GDIRECT_STATS_DIR, else
 * /dev/shm/gdirect-UID, else a fresh /dev/shm/gdirect-UID.XXXXXX when
 * another user took that name); files are mode 0600.  The first lines say
 * whose it is and when it was written: "pid", "ctx", "updated_ns"
 * (CLOCK_REALTIME) and "interval_ms".  The file goes away with
 * gdirect_ctx_destroy(); one left by a process that died is recognised by
 * its pid.
 *
 * The hit path is untouched: the thread reads the same sharded counters
 * gdirect_stats() sums, and nothing else of the context.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libgdirect_internal.h"
#include "parse.h"
#include "statsdir.h"

#define GDL_PUBLISH_DEFAULT_MS 500

struct gdl_publisher {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	unsigned interval_ms;
	unsigned ctx_no;
	int fresh_dir;		/* dir was made for this process: remove it */
	char dir[400], path[512];
};

static _Atomic unsigned gdl_ctx_seq;

static void publisher_free(struct gdirect_ctx *c)
{
	struct gdl_publisher *pub = c->pub;

	pthread_cond_destroy(&pub->wake);
	pthread_mutex_destroy(&pub->lock);
	free(pub);
	c->pub = NULL;
}

/* A directory made for this process goes when empty (other contexts of
 * the process may still publish there: then it stays for the last). */
static void publisher_rmdir(struct gdl_publisher *pub)
{
	if (pub->fresh_dir)
		rmdir(pub->dir);
}

static int write_stats(struct gdirect_ctx *c, struct gdl_publisher *pub)
{
	char tmp[sizeof(pub->path) + 16];
	struct gdirect_stats st;
	struct timespec now;
	FILE *f;
	int fd, rc = 0;

	gdirect_stats(c, &st);
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(tmp, sizeof(tmp), "%s/.gdirect-stats.XXXXXX", pub->dir);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		rc = -errno;
		close(fd);
		unlink(tmp);
		return rc;
	}
	fprintf(f, "pid %ld\nctx %u\nupdated_ns %" PRIu64 "\ninterval_ms %u\n",
		(long)getpid(), pub->ctx_no,
		(uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec,
		pub->interval_ms);
#define P(f_) fprintf(f, #f_ " %" PRIu64 "\n", st.f_);
	GDL_STATS_FIELDS(P)
#undef P
	if (ferror(f))
		rc = -EIO;
	if (fclose(f) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, pub->path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

/* Claim DIR/gdirect-stats.PID.N for a free N: 0 or -errno. */
static int claim_name(struct gdl_publisher *pub)
{
	for (int tries = 0; tries < 64; tries++) {
		int fd;

		pub->ctx_no = atomic_fetch_add(&gdl_ctx_seq, 1) + 1;
		if ((size_t)snprintf(pub->path, sizeof(pub->path),
				     "%s/gdirect-stats.%ld.%u", pub->dir,
				     (long)getpid(), pub->ctx_no) >= sizeof(pub->path))
			return -ENAMETOOLONG;
		fd = open(pub->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			  O_CLOEXEC, 0600);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static void *publisher(void *arg)
{
	struct gdirect_ctx *c = arg;
	struct gdl_publisher *pub = c->pub;
	struct timespec until;

	pthread_mutex_lock(&pub->lock);
	while (!pub->stop) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += pub->interval_ms / 1000;
		until.tv_nsec += (long)(pub->interval_ms % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		while (!pub->stop &&
		       pthread_cond_timedwait(&pub->wake, &pub->lock, &until) != ETIMEDOUT)
			;
		if (pub->stop)
			break;
		pthread_mutex_unlock(&pub->lock);
		/* A failed update (disk full, directory gone) keeps the last
		 * good file; the next period tries again. */
		write_stats(c, pub);
		pthread_mutex_lock(&pub->lock);
	}
	pthread_mutex_unlock(&pub->lock);
	return NULL;
}

int gdl_publish_start(struct gdirect_ctx *c)
{
	const char *ms = getenv("GDIRECT_PUBLISH_INTERVAL_MS");
	const char *dir;
	char why[400];
	struct gdl_publisher *pub;
	pthread_condattr_t ca;
	sigset_t all, old;
	int rc;

	if (!(c->p.flags & GDIRECT_CTX_PUBLISH_STATS))
		return 0;
	pub = calloc(1, sizeof(*pub));
	if (!pub)
		return gdl_err(-ENOMEM, "out of memory");
	pub->interval_ms = GDL_PUBLISH_DEFAULT_MS;
	if (ms && *ms) {
		uint64_t x;

		rc = gdl_parse_uint(ms, GDL_PUBLISH_MIN_MS, GDL_PUBLISH_MAX_MS, &x,
				   why, sizeof(why));
		if (rc) {
			free(pub);
			return gdl_err(-EINVAL, "GDIRECT_PUBLISH_INTERVAL_MS: %s", why);
		}
		pub->interval_ms = (unsigned)x;
	}
	rc = gdl_stats_dir_make(pub->dir, sizeof(pub->dir), &pub->fresh_dir,
			       why, sizeof(why));
	if (rc) {
		free(pub);
		return gdl_err(rc, "cannot publish statistics: %s", why);
	}
	dir = pub->dir;
	rc = claim_name(pub);
	if (rc) {
		publisher_rmdir(pub);
		free(pub);
		return gdl_err(rc, "cannot publish statistics in %s: %s", dir,
			      strerror(-rc));
	}
	pthread_mutex_init(&pub->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&pub->wake, &ca);
	pthread_condattr_destroy(&ca);
	c->pub = pub;

	/* The first figures now, so that the file is never empty for long. */
	rc = write_stats(c, pub);
	if (rc) {
		unlink(pub->path);
		publisher_rmdir(pub);
		publisher_free(c);
		return gdl_err(rc, "cannot publish statistics in %s: %s", dir,
			      strerror(-rc));
	}
	/* The application's signals are not ours to take. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = -pthread_create(&pub->thread, NULL, publisher, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		unlink(pub->path);
		publisher_rmdir(pub);
		publisher_free(c);
		return gdl_err(rc, "cannot start the statistics thread: %s",
			      strerror(-rc));
	}
	return 0;
}

void gdl_publish_stop(struct gdirect_ctx *c)
{
	struct gdl_publisher *pub = c->pub;

	if (!pub)
		return;
	pthread_mutex_lock(&pub->lock);
	pub->stop = true;
	pthread_cond_signal(&pub->wake);
	pthread_mutex_unlock(&pub->lock);
	pthread_join(pub->thread, NULL);
	unlink(pub->path);
	publisher_rmdir(pub);
	publisher_free(c);
}

/*
 * In a fork child: the thread was not copied, the file is the parent's, and
 * the lock may have been held at the fork; only the memory is ours.
 */
void gdl_publish_drop_in_child(struct gdirect_ctx *c)
{
	free(c->pub);
	c->pub = NULL;
}
