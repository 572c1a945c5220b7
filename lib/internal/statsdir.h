/* SPDX-License-Identifier: MIT */
/*
 * statsdir.h - where libgdirect publishes statistics for `gdirect stat`,
 * shared by the publisher (lib/src/publish.c) and the reader
 * (tools/src/cmd_stat.c).
 *
 * Each user has a directory of its own that nobody else can write:
 * $GDIRECT_STATS_DIR when set, else BASE/gdirect-UID (BASE:
 * $GDIRECT_STATS_BASE, else /dev/shm), made mode 0700.  When another user
 * took that name first, a fresh BASE/gdirect-UID.XXXXXX is made instead,
 * so nobody can stop a process from publishing (or starting).  A directory
 * is used only if it is a real directory (not a link) owned by its user
 * and not writable by group or others.
 */
#ifndef GDL_STATSDIR_H
#define GDL_STATSDIR_H

#include <stddef.h>
#include <sys/types.h>

#define GDL_STATS_BASE_DEFAULT "/dev/shm"

/* Bounds of a publishing period (GDIRECT_PUBLISH_INTERVAL_MS, and the
 * interval_ms line a reader believes). */
#define GDL_PUBLISH_MIN_MS 10
#define GDL_PUBLISH_MAX_MS 60000

/* $GDIRECT_STATS_BASE or /dev/shm. */
const char *gdl_stats_base(void);

/* dir is a directory (not a link) owned by uid, not group/other-writable:
 * 0, or -errno with why[n]. */
int gdl_stats_dir_check(const char *dir, uid_t uid, char *why, size_t n);

/* The publisher's directory, made if needed, into buf: 0 or -errno with
 * why[n]. *made_fresh: a BASE/gdirect-UID.XXXXXX made for this process. */
int gdl_stats_dir_make(char *buf, size_t len, int *made_fresh, char *why,
		      size_t n);

/* The uid of a per-user directory's name in BASE ("gdirect-UID" or
 * "gdirect-UID.XXXXXX"), or -1. */
long gdl_stats_dir_uid(const char *name);

#endif
