/* SPDX-License-Identifier: MIT */
/*
 * tool.h - the gdirect command's subcommands and shared helpers
 */
#ifndef GDTOOL_TOOL_H
#define GDTOOL_TOOL_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include "sysfs.h"

#ifndef GDIRECT_VERSION
#define GDIRECT_VERSION "unknown"
#endif

/* Options every subcommand takes (getopt_long values). */
enum { OPT_SYSFS = 0x100, OPT_PROC, OPT_DEV, OPT_JSON, OPT_HELP };
#define GDCLI_COMMON_LONGOPTS \
	{ "sysfs", required_argument, NULL, OPT_SYSFS }, \
	{ "proc", required_argument, NULL, OPT_PROC }, \
	{ "dev", required_argument, NULL, OPT_DEV }, \
	{ "json", no_argument, NULL, OPT_JSON }, \
	{ "help", no_argument, NULL, OPT_HELP }

/* Apply a common option: 1 if it was one. */
int gdcli_common_opt(int c, const char *arg, struct gdcli_roots *r);

/* "64 MiB", "1.5 GiB", "512 B" into buf. */
const char *gdcli_fmt_bytes(uint64_t v, char *buf, size_t n);

int gdcli_cmd_info(int argc, char **argv, struct gdcli_roots *r);
int gdcli_cmd_stat(int argc, char **argv, struct gdcli_roots *r);
int gdcli_cmd_bench(int argc, char **argv, struct gdcli_roots *r);
int gdcli_cmd_demo(int argc, char **argv, struct gdcli_roots *r);

#endif
