// SPDX-License-Identifier: MIT
/*
 * cmd_stat.c - gdirect stat: what is pinned now, and the drivers' counters
 *
 * gdirect.ko publishes /proc/driver/gdirect/stats ("name value" lines)
 * and .../regions (per process a "process TGID regions N bytes B callbacks
 * C" line, then "  handle H addr A size S pages P state ST mode M mapped L
 * phys X" per registration); both are root-only.  The emulator's counters
 * are in /sys/kernel/debug/nvp2p_emu/, or /proc/driver/nvp2p_emu/ when it
 * is built as the proprietary driver (docs/emulator.md).  A libgdirect context that opts in
 * (GDIRECT_PUBLISH_STATS=1) keeps DIR/gdirect-stats.PID.N current with its
 * gdirect_stats(), in the same "name value" lines; DIR is its user's own
 * directory (lib/internal/statsdir.h: $GDIRECT_STATS_DIR, else
 * /dev/shm/gdirect-UID[.XXXXXX]).  Only files owned by the user running
 * the command are read (root: anyone's, labelled with the owner), and each
 * is validated whole before anything of it is shown.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "parse.h"
#include "statsdir.h"
#include "tool.h"

#define MAX_STATS 64
#define MAX_PROCS 256
#define MAX_REGS 4096
#define MAX_LIBS 256
#define MAX_LIBS_PER_DIR 64	/* one user's files cannot push others' out */
#define MAX_LIB_FILE (64 * 1024)

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

/* One libgdirect context's published statistics. */
struct lib_ctx {
	long pid;
	unsigned ctx;
	unsigned long uid;	/* owner of the file */
	int alive;		/* the process still exists */
	int stale;		/* gone, or not updated for 10 periods (5 s at least) */
	double age_s;		/* since the file was last written */
	struct stat_kv kv[MAX_STATS];
	int nkv;
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
	const char *libdir;
	struct lib_ctx libs[MAX_LIBS];
	int nlibs, libs_live, libs_omitted, libs_bad;
	int show_owner;		/* root: files of every user */
};

/* "name value" lines, at most max, from the first 256 lines of f. */
static int read_kv_stream(FILE *f, struct stat_kv *kv, int max)
{
	char line[256];
	int n = 0, lines = 0;

	while (n < max && lines++ < 256 && fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "%39s %llu", kv[n].name, &v) == 2) {
			kv[n].value = v;
			n++;
		}
	}
	return n;
}

static int read_kv_file(const char *path, struct stat_kv *kv, int max)
{
	FILE *f = fopen(path, "re");
	int n;

	if (!f)
		return -errno;
	n = read_kv_stream(f, kv, max);
	fclose(f);
	return n;
}

static const char *const emu_counters[] = {
	"allocations", "pins", "dma_maps", "callbacks", "bar1_total",
	"bar1_reserved", "bar1_used", "mem_total", "mem_used",
};

static void read_emu(const struct gdcli_roots *r, struct stat_report *s)
{
	size_t i;

	for (i = 0; i < sizeof(emu_counters) / sizeof(emu_counters[0]); i++) {
		uint64_t v;

		if (gdcli_read_emu_counter(r, emu_counters[i], &v, NULL))
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

static uint64_t kv_get(const struct stat_kv *kv, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(kv[i].name, name))
			return kv[i].value;
	return 0;
}

/* The header lines of a published file, not counters. */
static int kv_is_header(const char *name)
{
	return !strcmp(name, "pid") || !strcmp(name, "ctx") ||
	       !strcmp(name, "updated_ns") || !strcmp(name, "interval_ms");
}

static int by_pid_ctx(const void *a, const void *b)
{
	const struct lib_ctx *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->ctx > y->ctx) - (x->ctx < y->ctx);
}

/* A counter name as libgdirect writes it: [a-z0-9_], 1 to 39 bytes. */
static int lib_name_ok(const char *n, size_t len)
{
	if (!len || len >= sizeof(((struct stat_kv *)0)->name))
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= '0' && n[i] <= '9') ||
		      n[i] == '_'))
			return 0;
	return 1;
}

/*
 * A published file, read with care and believed only whole: a regular file
 * (not a FIFO or a link) owned by uid (-1: anyone; *owner says whom), at
 * most MAX_LIB_FILE bytes, every line "name value" with a name as
 * libgdirect writes them and a whole decimal value, no name twice.  The
 * number of lines, or -EINVAL.
 */
static int read_lib_file(const char *path, long uid, unsigned long *owner,
			 struct stat_kv *kv, int max)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC), n = 0;
	char buf[MAX_LIB_FILE + 1], why[128], *line, *next;
	struct stat st;
	ssize_t got;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > MAX_LIB_FILE ||
	    (uid >= 0 && st.st_uid != (uid_t)uid)) {
		close(fd);
		return -EINVAL;
	}
	*owner = st.st_uid;
	got = read(fd, buf, MAX_LIB_FILE + 1);
	close(fd);
	if (got <= 0 || got > MAX_LIB_FILE || buf[got - 1] != '\n' ||
	    memchr(buf, '\0', (size_t)got))
		return -EINVAL;
	buf[got] = '\0';
	for (line = buf; *line; line = next) {
		char *nl = strchr(line, '\n'), *sp = strchr(line, ' ');

		*nl = '\0';
		next = nl + 1;
		if (n == max || !sp || sp > nl || !lib_name_ok(line, (size_t)(sp - line)))
			return -EINVAL;
		*sp = '\0';
		if (gdl_parse_uint(sp + 1, 0, UINT64_MAX, &kv[n].value, why,
				   sizeof(why)))
			return -EINVAL;
		for (int k = 0; k < n; k++)
			if (!strcmp(kv[k].name, line))
				return -EINVAL;
		memcpy(kv[n].name, line, (size_t)(sp - line) + 1);	/* < 40, checked */
		n++;
	}
	return n;
}

/* "gdirect-stats.PID.N": 0 with pid and ctx, or -1. */
static int lib_file_name(const char *name, long *pid, unsigned *ctx)
{
	char num[24], why[64];
	const char *p = name + 14, *dot;
	uint64_t a, b;

	if (strncmp(name, "gdirect-stats.", 14) || !(dot = strchr(p, '.')) ||
	    (size_t)(dot - p) >= sizeof(num))
		return -1;
	memcpy(num, p, (size_t)(dot - p));
	num[dot - p] = '\0';
	if (gdl_parse_uint(num, 1, INT_MAX, &a, why, sizeof(why)) ||
	    gdl_parse_uint(dot + 1, 1, UINT_MAX, &b, why, sizeof(why)))
		return -1;
	*pid = (long)a;
	*ctx = (unsigned)b;
	return 0;
}

/* The files of one directory, owned by uid (-1: anyone). */
static void read_lib_dir(struct stat_report *s, const char *dir, long uid,
			 const struct timespec *now)
{
	char path[GDCLI_PATH_MAX];
	struct dirent *e;
	int taken = 0;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct lib_ctx *l = &s->libs[s->nlibs];
		uint64_t interval_ms, updated;
		double now_ns = (double)now->tv_sec * 1e9 + (double)now->tv_nsec;
		int n;

		if (strncmp(e->d_name, "gdirect-stats.", 14))
			continue;
		if (s->nlibs == MAX_LIBS || taken == MAX_LIBS_PER_DIR) {
			s->libs_omitted++;
			continue;
		}
		if (lib_file_name(e->d_name, &l->pid, &l->ctx) ||
		    gdcli_path(path, sizeof(path), "%s/%s", dir, e->d_name))
			continue;
		n = read_lib_file(path, uid, &l->uid, l->kv, MAX_STATS);
		if (n == -ENOENT)
			continue;	/* went away meanwhile */
		/* Believed only whole: its own pid and context, a time not
		 * ahead of ours, a period libgdirect can have. */
		interval_ms = n > 0 ? kv_get(l->kv, n, "interval_ms") : 0;
		updated = n > 0 ? kv_get(l->kv, n, "updated_ns") : 0;
		if (n <= 0 || kv_get(l->kv, n, "pid") != (uint64_t)l->pid ||
		    kv_get(l->kv, n, "ctx") != l->ctx || !updated ||
		    (double)updated > now_ns + 5e9 ||
		    interval_ms < GDL_PUBLISH_MIN_MS ||
		    interval_ms > GDL_PUBLISH_MAX_MS) {
			s->libs_bad++;
			continue;
		}
		l->nkv = n;
		l->alive = kill((pid_t)l->pid, 0) == 0 || errno == EPERM;
		l->age_s = (now_ns - (double)updated) / 1e9;
		if (l->age_s < 0)
			l->age_s = 0;
		/* A live pid whose file stopped moving: reused, or stopped. */
		l->stale = !l->alive ||
			   l->age_s > (interval_ms * 10 / 1e3 > 5.0 ?
				       interval_ms * 10 / 1e3 : 5.0);
		s->libs_live += !l->stale;
		s->nlibs++;
		taken++;
	}
	closedir(d);
}

/*
 * The user's files: in $GDIRECT_STATS_DIR, else in BASE/gdirect-UID and
 * BASE/gdirect-UID.XXXXXX, directories owned by that user that nobody else
 * can write.  Root reads every user's.
 */
static void read_libs(struct stat_report *s)
{
	static char where[GDCLI_PATH_MAX];
	const char *dir = getenv("GDIRECT_STATS_DIR"), *base = gdl_stats_base();
	uid_t me = getuid();
	char path[GDCLI_PATH_MAX], why[GDCLI_PATH_MAX + 64];
	struct timespec now;
	struct dirent *e;
	DIR *d;

	clock_gettime(CLOCK_REALTIME, &now);
	s->show_owner = me == 0;
	if (dir && *dir) {
		s->libdir = dir;
		read_lib_dir(s, dir, me == 0 ? -1 : (long)me, &now);
	} else {
		if (me == 0)
			snprintf(where, sizeof(where), "%s/gdirect-*", base);
		else
			snprintf(where, sizeof(where), "%s/gdirect-%lu", base,
				 (unsigned long)me);
		s->libdir = where;
		d = opendir(base);
		while (d && (e = readdir(d))) {
			long uid = gdl_stats_dir_uid(e->d_name);

			if (uid < 0 || (me != 0 && uid != (long)me) ||
			    gdcli_path(path, sizeof(path), "%s/%s", base,
				       e->d_name) ||
			    gdl_stats_dir_check(path, (uid_t)uid, why,
						sizeof(why)))
				continue;
			read_lib_dir(s, path, uid, &now);
		}
		if (d)
			closedir(d);
	}
	qsort(s->libs, (size_t)s->nlibs, sizeof(s->libs[0]), by_pid_ctx);
}

static void print_libs_text(const struct stat_report *s)
{
	int i, k;

	if (!s->nlibs) {
		printf("\nlibrary: no libgdirect context publishes its statistics in %s\n"
		       "  (set GDIRECT_PUBLISH_STATS=1 in a process to see its cache here)\n",
		       s->libdir);
		if (s->libs_bad)
			printf("  (%d malformed or foreign files ignored)\n", s->libs_bad);
		return;
	}
	printf("\nlibgdirect contexts (statistics published in %s)\n", s->libdir);
	for (i = 0; i < s->nlibs; i++) {
		const struct lib_ctx *l = &s->libs[i];

		if (!l->alive) {
			printf("  process %ld context %u: exited; its file gdirect-stats.%ld.%u is stale\n",
			       l->pid, l->ctx, l->pid, l->ctx);
			continue;
		}
		if (l->stale) {
			printf("  process %ld context %u: not updated for %.0f s (the pid was reused, or the process is stopped)\n",
			       l->pid, l->ctx, l->age_s);
			continue;
		}
		printf("  process %ld context %u (updated %.1f s ago)", l->pid, l->ctx,
		       l->age_s < 0 ? 0 : l->age_s);
		if (s->show_owner)
			printf(" of uid %lu", l->uid);
		printf("\n");
		for (k = 0; k < l->nkv; k++)
			if (!kv_is_header(l->kv[k].name))
				printf("    %-18s %llu\n", l->kv[k].name,
				       (unsigned long long)l->kv[k].value);
	}
	if (s->libs_omitted)
		printf("  ... and %d more files not read\n", s->libs_omitted);
	if (s->libs_bad)
		printf("  (%d malformed or foreign files ignored)\n", s->libs_bad);
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
		       "/proc/driver/gdirect files are root-only" :
		       "module not loaded");
	}
	if (s->have_regions) {
		printf("\npinned regions: %d process%s\n", s->nprocs, s->nprocs == 1 ? "" : "es");
		for (i = 0; i < s->nprocs; i++) {
			const struct proc *p = &s->procs[i];

			printf("  process %d: %llu region%s, %s, %llu revoked by callback\n",
			       p->tgid, (unsigned long long)p->regions, p->regions == 1 ? "" : "s",
			       gdcli_fmt_bytes(p->bytes, b, sizeof(b)),
			       (unsigned long long)p->callbacks);
			if (p->count)
				printf("    %8s  %-18s %10s %6s  %-9s %-10s %10s\n", "handle",
				       "address", "size", "pages", "state", "mode", "mapped");
			for (k = p->first; k < p->first + p->count; k++) {
				const struct region *rg = &s->regs[k];

				printf("    %8llu  0x%016llx %10s %6llu  %-9s %-10s %10lld\n",
				       (unsigned long long)rg->handle, (unsigned long long)rg->addr,
				       gdcli_fmt_bytes(rg->size, b, sizeof(b)),
				       (unsigned long long)rg->pages, rg->state, rg->mode, rg->mapped);
			}
		}
	}
	if (s->have_emu) {
		printf("\nemulator (nvp2p_emu) counters\n");
		for (i = 0; i < s->nemu; i++)
			printf("  %-18s %llu\n", s->emu[i].name, (unsigned long long)s->emu[i].value);
	}
	print_libs_text(s);
}

static void json_kv(struct gdcli_json *j, const char *key,
		    const struct stat_kv *kv, int n)
{
	int i;

	gdcli_json_obj(j, key);
	for (i = 0; i < n; i++)
		gdcli_json_u64(j, kv[i].name, kv[i].value);
	gdcli_json_end(j, '}');
}

static void print_json(const struct stat_report *s)
{
	struct gdcli_json j;
	char hex[24];
	int i, k;

	gdcli_json_init(&j, stdout);
	gdcli_json_obj(&j, NULL);
	if (s->have_gdirect)
		json_kv(&j, "gdirect", s->gd, s->ngd);
	else
		gdcli_json_null(&j, "gdirect");
	if (s->have_regions) {
		gdcli_json_arr(&j, "processes");
		for (i = 0; i < s->nprocs; i++) {
			const struct proc *p = &s->procs[i];

			gdcli_json_obj(&j, NULL);
			gdcli_json_int(&j, "pid", p->tgid);
			gdcli_json_u64(&j, "regions", p->regions);
			gdcli_json_u64(&j, "bytes", p->bytes);
			gdcli_json_u64(&j, "callbacks", p->callbacks);
			gdcli_json_arr(&j, "pinned");
			for (k = p->first; k < p->first + p->count; k++) {
				const struct region *rg = &s->regs[k];

				gdcli_json_obj(&j, NULL);
				gdcli_json_u64(&j, "handle", rg->handle);
				snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)rg->addr);
				gdcli_json_str(&j, "addr", hex);
				gdcli_json_u64(&j, "size", rg->size);
				gdcli_json_u64(&j, "pages", rg->pages);
				gdcli_json_str(&j, "state", rg->state);
				gdcli_json_str(&j, "mode", rg->mode);
				gdcli_json_int(&j, "mapped", rg->mapped);
				gdcli_json_end(&j, '}');
			}
			gdcli_json_end(&j, ']');
			gdcli_json_end(&j, '}');
		}
		gdcli_json_end(&j, ']');
	} else {
		gdcli_json_null(&j, "processes");
	}
	if (s->have_emu)
		json_kv(&j, "emulator", s->emu, s->nemu);
	else
		gdcli_json_null(&j, "emulator");
	gdcli_json_arr(&j, "library");
	for (i = 0; i < s->nlibs; i++) {
		const struct lib_ctx *l = &s->libs[i];

		gdcli_json_obj(&j, NULL);
		gdcli_json_int(&j, "pid", l->pid);
		gdcli_json_u64(&j, "ctx", l->ctx);
		gdcli_json_u64(&j, "uid", l->uid);
		gdcli_json_bool(&j, "alive", l->alive);
		gdcli_json_bool(&j, "stale", l->stale);
		gdcli_json_int(&j, "age_ms", (long long)(l->age_s * 1e3));
		gdcli_json_obj(&j, "counters");
		for (k = 0; k < l->nkv; k++)
			if (!kv_is_header(l->kv[k].name))
				gdcli_json_u64(&j, l->kv[k].name,
					       l->kv[k].value);
		gdcli_json_end(&j, '}');
		gdcli_json_end(&j, '}');
	}
	gdcli_json_end(&j, ']');
	gdcli_json_end(&j, '}');
	gdcli_json_done(&j);
}

int gdcli_cmd_stat(int argc, char **argv, struct gdcli_roots *r)
{
	static const struct option opts[] = {
		GDCLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct stat_report *s = calloc(1, sizeof(*s));
	char p[GDCLI_PATH_MAX];
	int c, json = 0, n;

	if (!s || !(s->regs = calloc(MAX_REGS, sizeof(*s->regs)))) {
		free(s);
		return 1;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (gdcli_common_opt(c, optarg, r))
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
	if (!gdcli_path(p, sizeof(p), "%s/driver/gdirect/stats", r->proc)) {
		n = read_kv_file(p, s->gd, MAX_STATS);
		s->ngd = n > 0 ? n : 0;
		s->have_gdirect = n > 0;
		s->gdirect_err = n < 0 ? n : 0;
	}
	if (!gdcli_path(p, sizeof(p), "%s/driver/gdirect/regions", r->proc))
		s->have_regions = read_regions(p, s) == 0;
	read_emu(r, s);
	read_libs(s);
	if (json)
		print_json(s);
	else
		print_text(s);
	n = s->have_gdirect || s->have_emu || s->libs_live ? 0 : 1;
	free(s->regs);
	free(s);
	return n;
}
