/* SPDX-License-Identifier: MIT */
/*
 * sysfs.h - where the tool reads the system from, and small file readers.
 *
 * Every path the tool reads is under one of three roots, so the unit tests
 * can point it at fixture trees: sysfs (GDIRECT_SYSFS_ROOT or --sysfs,
 * default /sys; debugfs is read at SYSFS/kernel/debug), procfs
 * (GDIRECT_PROC_ROOT or --proc, default /proc) and devices (GDIRECT_DEV_ROOT
 * or --dev, default /dev).
 */
#ifndef GDTOOL_SYSFS_H
#define GDTOOL_SYSFS_H

#include <stddef.h>
#include <stdint.h>

#define GDCLI_PATH_MAX 4096

struct gdcli_roots {
	char sysfs[GDCLI_PATH_MAX];
	char proc[GDCLI_PATH_MAX];
	char dev[GDCLI_PATH_MAX];
};

/* Defaults, then the environment. */
void gdcli_roots_init(struct gdcli_roots *r);

/* Set one root to PATH; a path too long for it exits 2 with a sentence naming WHAT. */
void gdcli_set_root(char *dst, const char *what, const char *path);

/* snprintf into out; -ENAMETOOLONG when it does not fit. */
int gdcli_path(char *out, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Read a whole small file, trailing newlines removed: 0 or -errno. */
int gdcli_read_str(const char *path, char *buf, size_t n);

/* Read a number (decimal, or 0x-prefixed hex) from a file: 0 or -errno. */
int gdcli_read_u64(const char *path, uint64_t *val);
int gdcli_read_int(const char *path, int *val);

/*
 * The emulator's counter NAME: in debugfs (SYSFS/kernel/debug/nvp2p_emu/,
 * the open licence flavour) or in procfs (PROC/driver/nvp2p_emu/, the
 * proprietary flavour, which may not use debugfs).  0 or -errno; *where is
 * set to "debugfs" or "procfs" on success.
 */
int gdcli_read_emu_counter(const struct gdcli_roots *r, const char *name,
			uint64_t *val, const char **where);

/* Last component of the target of symlink path ("" and -errno if none). */
int gdcli_link_name(const char *path, char *buf, size_t n);

#endif
