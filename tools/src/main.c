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

int gdcli_common_opt(int c, const char *arg, struct gdcli_roots *r)
{
	switch (c) {
	case OPT_SYSFS: gdcli_set_root(r->sysfs, "--sysfs", arg); break;
	case OPT_PROC:  gdcli_set_root(r->proc, "--proc", arg); break;
	case OPT_DEV:   gdcli_set_root(r->dev, "--dev", arg); break;
	default:        return 0;
	}
	return 1;
}

const char *gdcli_fmt_bytes(uint64_t v, char *buf, size_t n)
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
		int (*fn)(int, char **, struct gdcli_roots *);
	} cmds[] = {
		{ "info", gdcli_cmd_info },
		{ "stat", gdcli_cmd_stat },
		{ "bench", gdcli_cmd_bench },
		{ "demo", gdcli_cmd_demo },
	};
	struct gdcli_roots roots;
	int i = 1;
	size_t k;

	gdcli_roots_init(&roots);
	/* Global root options before the command. */
	while (i + 1 < argc) {
		int c = !strcmp(argv[i], "--sysfs") ? OPT_SYSFS :
			!strcmp(argv[i], "--proc") ? OPT_PROC :
			!strcmp(argv[i], "--dev") ? OPT_DEV : 0;

		if (!c)
			break;
		gdcli_common_opt(c, argv[i + 1], &roots);
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
