// SPDX-License-Identifier: MIT
/*
 * cmd_stat.c - gdirect stat: what is pinned now, and the drivers' counters
 *
 * gdirect.ko publishes /sys/kernel/debug/gdirect/stats ("name value" lines)
 * and .../regions (per process a "process TGID regions N bytes B callbacks
 * C" line, then "  handle H addr A size S pages P state ST mode M mapped L
 * phys X" per registration); both are root-only.  The emulator's counters
 * are in /sys/kernel/debug/nvp2p_emu/.  libgdirect keeps its cache
 * statistics inside each process (gdirect_stats()) and publishes none.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "tool.h"

#define MAX_STATS 64
#define MAX_PROCS 256
#define MAX_REGS 4096

struct stat_kv {
	char name[40];
	uint64_t value;
};

struct region {
	uint64_t handle, addr, size, pages, phys;
	long long mapped;
	char state[16], mode[16];
};

struct proc {
	int tgid;
	uint64_t regions, bytes, callbacks;
	int first, count;	/* its regions in the region array */
};

struct stat_report {
	int have_gdirect, have_regions, have_emu;
	int gdirect_err;
	struct stat_kv gd[MAX_STATS], emu[MAX_STATS];
	int ngd, nemu;
	struct proc procs[MAX_PROCS];
	int nprocs;
	struct region *regs;
	int nregs;
};

/* "name value" lines. */
static int read_kv_file(const char *path, struct stat_kv *kv, int max)
{
	char line[256];
	int n = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "%39s %llu", kv[n].name, &v) == 2) {
			kv[n].value = v;
			n++;
		}
	}
	fclose(f);
	return n;
}

static const char *const emu_counters[] = {
	"allocations", "pins", "dma_maps", "callbacks", "bar1_total",
	"bar1_reserved", "bar1_used", "mem_total", "mem_used",
};

static void read_emu(const struct gd_roots *r, struct stat_report *s)
{
	char p[GD_PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(emu_counters) / sizeof(emu_counters[0]); i++) {
		uint64_t v;

		if (gd_path(p, sizeof(p), "%s/kernel/debug/nvp2p_emu/%s", r->sysfs,
			    emu_counters[i]) || gd_read_u64(p, &v))
			continue;
		snprintf(s->emu[s->nemu].name, sizeof(s->emu[0].name), "%s", emu_counters[i]);
		s->emu[s->nemu++].value = v;
	}
	s->have_emu = s->nemu > 0;
}

static int read_regions(const char *path, struct stat_report *s)
{
	char line[512];
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct proc *pr = s->nprocs ? &s->procs[s->nprocs - 1] : NULL;
		unsigned long long a, b, c;
		struct region rg;
		int tgid;

		if (sscanf(line, "process %d regions %llu bytes %llu callbacks %llu",
			   &tgid, &a, &b, &c) == 4 && s->nprocs < MAX_PROCS) {
			pr = &s->procs[s->nprocs++];
			pr->tgid = tgid;
			pr->regions = a;
			pr->bytes = b;
			pr->callbacks = c;
			pr->first = s->nregs;
			pr->count = 0;
			continue;
		}
		memset(&rg, 0, sizeof(rg));
		if (pr && s->nregs < MAX_REGS &&
		    sscanf(line, " handle %" SCNu64 " addr %" SCNx64 " size %" SCNx64
			   " pages %" SCNu64 " state %15s mode %15s mapped %lld phys %" SCNx64,
			   &rg.handle, &rg.addr, &rg.size, &rg.pages, rg.state, rg.mode,
			   &rg.mapped, &rg.phys) == 8) {
			s->regs[s->nregs++] = rg;
			pr->count++;
		}
	}
	fclose(f);
	return 0;
}

static void print_text(const struct stat_report *s)
{
	char b[32];
	int i, k;

	if (s->have_gdirect) {
		printf("gdirect.ko counters\n");
		for (i = 0; i < s->ngd; i++)
			printf("  %-18s %llu\n", s->gd[i].name, (unsigned long long)s->gd[i].value);
	} else {
		printf("gdirect.ko: no counters (%s)\n", s->gdirect_err == -EACCES ?
		       "debugfs files are root-only" :
		       "module not loaded or debugfs not mounted");
	}
	if (s->have_regions) {
		printf("\npinned regions: %d process%s\n", s->nprocs, s->nprocs == 1 ? "" : "es");
		for (i = 0; i < s->nprocs; i++) {
			const struct proc *p = &s->procs[i];

			printf("  process %d: %llu region%s, %s, %llu revoked by callback\n",
			       p->tgid, (unsigned long long)p->regions, p->regions == 1 ? "" : "s",
			       gd_fmt_bytes(p->bytes, b, sizeof(b)),
			       (unsigned long long)p->callbacks);
			if (p->count)
				printf("    %8s  %-18s %10s %6s  %-9s %-10s %10s\n", "handle",
				       "address", "size", "pages", "state", "mode", "mapped");
			for (k = p->first; k < p->first + p->count; k++) {
				const struct region *rg = &s->regs[k];

				printf("    %8llu  0x%016llx %10s %6llu  %-9s %-10s %10lld\n",
				       (unsigned long long)rg->handle, (unsigned long long)rg->addr,
				       gd_fmt_bytes(rg->size, b, sizeof(b)),
				       (unsigned long long)rg->pages, rg->state, rg->mode, rg->mapped);
			}
		}
	}
	if (s->have_emu) {
		printf("\nemulator (nvp2p_emu) counters\n");
		for (i = 0; i < s->nemu; i++)
			printf("  %-18s %llu\n", s->emu[i].name, (unsigned long long)s->emu[i].value);
	}
	printf("\nlibrary: libgdirect keeps its cache counters per process (gdirect_stats()); none published\n");
}

static void json_kv(struct gd_json *j, const char *key, const struct stat_kv *kv, int n)
{
	int i;

	gd_json_obj(j, key);
	for (i = 0; i < n; i++)
		gd_json_u64(j, kv[i].name, kv[i].value);
	gd_json_end(j, '}');
}

static void print_json(const struct stat_report *s)
{
	struct gd_json j;
	char hex[24];
	int i, k;

	gd_json_init(&j, stdout);
	gd_json_obj(&j, NULL);
	if (s->have_gdirect)
		json_kv(&j, "gdirect", s->gd, s->ngd);
	else
		gd_json_null(&j, "gdirect");
	if (s->have_regions) {
		gd_json_arr(&j, "processes");
		for (i = 0; i < s->nprocs; i++) {
			const struct proc *p = &s->procs[i];

			gd_json_obj(&j, NULL);
			gd_json_int(&j, "pid", p->tgid);
			gd_json_u64(&j, "regions", p->regions);
			gd_json_u64(&j, "bytes", p->bytes);
			gd_json_u64(&j, "callbacks", p->callbacks);
			gd_json_arr(&j, "pinned");
			for (k = p->first; k < p->first + p->count; k++) {
				const struct region *rg = &s->regs[k];

				gd_json_obj(&j, NULL);
				gd_json_u64(&j, "handle", rg->handle);
				snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)rg->addr);
				gd_json_str(&j, "addr", hex);
				gd_json_u64(&j, "size", rg->size);
				gd_json_u64(&j, "pages", rg->pages);
				gd_json_str(&j, "state", rg->state);
				gd_json_str(&j, "mode", rg->mode);
				gd_json_int(&j, "mapped", rg->mapped);
				gd_json_end(&j, '}');
			}
			gd_json_end(&j, ']');
			gd_json_end(&j, '}');
		}
		gd_json_end(&j, ']');
	} else {
		gd_json_null(&j, "processes");
	}
	if (s->have_emu)
		json_kv(&j, "emulator", s->emu, s->nemu);
	else
		gd_json_null(&j, "emulator");
	gd_json_null(&j, "library");
	gd_json_end(&j, '}');
	gd_json_done(&j);
}

int gd_cmd_stat(int argc, char **argv, struct gd_roots *r)
{
	static const struct option opts[] = {
		GD_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct stat_report *s = calloc(1, sizeof(*s));
	char p[GD_PATH_MAX];
	int c, json = 0, n;

	if (!s || !(s->regs = calloc(MAX_REGS, sizeof(*s->regs)))) {
		free(s);
		return 1;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (gd_common_opt(c, optarg, r))
			continue;
		if (c == OPT_JSON) {
			json = 1;
			continue;
		}
		if (c == OPT_HELP)
			printf("usage: gdirect stat [--json] [--sysfs DIR]\n");
		free(s->regs);
		free(s);
		return c == OPT_HELP ? 0 : 2;
	}
	if (!gd_path(p, sizeof(p), "%s/kernel/debug/gdirect/stats", r->sysfs)) {
		n = read_kv_file(p, s->gd, MAX_STATS);
		s->ngd = n > 0 ? n : 0;
		s->have_gdirect = n > 0;
		s->gdirect_err = n < 0 ? n : 0;
	}
	if (!gd_path(p, sizeof(p), "%s/kernel/debug/gdirect/regions", r->sysfs))
		s->have_regions = read_regions(p, s) == 0;
	read_emu(r, s);
	if (json)
		print_json(s);
	else
		print_text(s);
	n = s->have_gdirect || s->have_emu ? 0 : 1;
	free(s->regs);
	free(s);
	return n;
}
