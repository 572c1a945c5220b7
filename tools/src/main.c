// SPDX-License-Identifier: MIT
/*
 * main.c - gdirect: inspect and measure a GPUDirect RDMA setup
 *
 *   gdirect info  [--json] [--peer BDF]   GPUs, versions, BAR1, IOMMU, PCIe path
 *   gdirect stat  [--json]                pinned regions and counters
 *   gdirect bench [options]               pin/unpin latency, BAR copy speed
 *   gdirect demo                          the guide's walk-through
 */
#include <stdio.h>
#include <string.h>

#include "tool.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gdirect [--sysfs DIR] [--proc DIR] [--dev DIR] COMMAND [ARGS]\n"
		"\n"
		"  info [--json] [--peer BDF]  GPUs, driver and page-table versions, BAR1,\n"
		"                              IOMMU mode, PCIe path to a peer (guide 11.4)\n"
		"  stat [--json]               live pinned regions and counters\n"
		"  bench [--help]              pin/unpin latency, copy bandwidth and latency\n"
		"  demo                        the guide's walk-through\n"
		"  version                     print the version\n"
		"\n"
		"See gdirect(1).\n");
}

int gd_common_opt(int c, const char *arg, struct gd_roots *r)
{
	switch (c) {
	case OPT_SYSFS: gd_set_root(r->sysfs, "--sysfs", arg); break;
	case OPT_PROC:  gd_set_root(r->proc, "--proc", arg); break;
	case OPT_DEV:   gd_set_root(r->dev, "--dev", arg); break;
	default:        return 0;
	}
	return 1;
}

const char *gd_fmt_bytes(uint64_t v, char *buf, size_t n)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	int i = 0;

	while (d >= 1024 && i < 4) {
		d /= 1024;
		i++;
	}
	if (i == 0 || d == (double)(uint64_t)d)
		snprintf(buf, n, "%.0f %s", d, unit[i]);
	else
		snprintf(buf, n, "%.1f %s", d, unit[i]);
	return buf;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **, struct gd_roots *);
	} cmds[] = {
		{ "info", gd_cmd_info },
		{ "stat", gd_cmd_stat },
		{ "bench", gd_cmd_bench },
		{ "demo", gd_cmd_demo },
	};
	struct gd_roots roots;
	int i = 1;
	size_t k;

	gd_roots_init(&roots);
	/* Global root options before the command. */
	while (i + 1 < argc) {
		int c = !strcmp(argv[i], "--sysfs") ? OPT_SYSFS :
			!strcmp(argv[i], "--proc") ? OPT_PROC :
			!strcmp(argv[i], "--dev") ? OPT_DEV : 0;

		if (!c)
			break;
		gd_common_opt(c, argv[i + 1], &roots);
		i += 2;
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") || !strcmp(argv[i], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[i], "version") || !strcmp(argv[i], "--version")) {
		printf("gdirect %s\n", GDIRECT_VERSION);
		return 0;
	}
	for (k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++)
		if (!strcmp(argv[i], cmds[k].name))
			return cmds[k].fn(argc - i, argv + i, &roots);
	fprintf(stderr, "gdirect: unknown command '%s'\n", argv[i]);
	usage(stderr);
	return 2;
}
