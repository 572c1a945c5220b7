// SPDX-License-Identifier: MIT
/*
 * cmd_bench.c - gdirect bench: what pinning and BAR copies cost here
 *
 *   pin/unpin   GDIRECT_IOC_PIN + GDIRECT_IOC_UNPIN on /dev/gdirect, N times
 *               per size: min / median / p99 / max (gdrcopy's apiperf)
 *   cache       libgdirect's registration cache on a skewed trace: hits,
 *               misses, evictions, and what each costs (bench_cache.c)
 *   copy        one pinned region mmapped through the BAR; for sizes 1 B up
 *               to --max-size, the latency of libgdirect's copy to and from
 *               the mapping (copylat) and the bandwidth it implies (copybw)
 *
 * GPU memory comes from libcuda.so.1.  Pinning from user space needs
 * gdirect.ko: the nv-p2p API is kernel-only, so without /dev/gdirect there
 * is nothing to measure and the command says so (exit status 77).
 * Progress goes to stderr, results to stdout.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gdirect.h>
#include <uapi/gdirect_ioctl.h>

#include "bench_cache.h"
#include "tool_cuda.h"
#include "json.h"
#include "parse.h"
#include "stats.h"
#include "tool.h"

#define EXIT_SKIP 77
#define MAX_SIZES 40
#define BENCH_MAX_BYTES (64ULL << 30)	/* the largest size argument */

struct bench_opts {
	int iters;		/* pin/unpin repetitions per size */
	size_t pin_sizes[MAX_SIZES];
	int npin;
	size_t max_size;	/* copy sweep: 1 B .. max_size, powers of two */
	double time_ms;		/* time budget per copy size and direction */
	int json, do_pin, do_copy, do_cache;
	int cache_buffers, cache_accesses, cache_max_regions;
};

struct copy_row {
	size_t size;
	struct gdcli_summary wr, rd;	/* latency, ns */
	double wr_bw, rd_bw;		/* MB/s (10^6 bytes/s) at the median */
};

struct bench {
	struct bench_opts o;
	int fd;
	uint64_t dptr;
	size_t alloc;
	struct gdcli_summary pin[MAX_SIZES], unpin[MAX_SIZES];
	struct copy_row copy[MAX_SIZES];
	int ncopy;
	int verified;		/* read back what was written: 1 ok, -1 mismatch */
	struct cache_result cache;
};

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...)
{
	va_list ap;

	fputs("bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int pin(int fd, uint64_t addr, size_t size, struct gdirect_pin *p)
{
	memset(p, 0, sizeof(*p));
	p->addr = addr;
	p->size = size;
	return ioctl(fd, GDIRECT_IOC_PIN, p) ? -errno : 0;
}

static int unpin(int fd, uint64_t handle)
{
	struct gdirect_unpin u = { .handle = handle };

	return ioctl(fd, GDIRECT_IOC_UNPIN, &u) ? -errno : 0;
}

static int bench_pin(struct bench *b)
{
	double *tp = calloc((size_t)b->o.iters, sizeof(double));
	double *tu = calloc((size_t)b->o.iters, sizeof(double));
	int s, i, err = 0;
	char sz[32];

	if (!tp || !tu) {
		free(tp);
		free(tu);
		return -ENOMEM;
	}
	for (s = 0; s < b->o.npin && !err; s++) {
		size_t size = b->o.pin_sizes[s];

		progress("pin/unpin %s x %d (%d/%d)",
			 gdcli_fmt_bytes(size, sz, sizeof(sz)), b->o.iters,
			 s + 1, b->o.npin);
		for (i = 0; i < b->o.iters; i++) {
			struct gdirect_pin p;
			double t0 = gdcli_now_ns(), t1, t2;

			err = pin(b->fd, b->dptr, size, &p);
			t1 = gdcli_now_ns();
			if (err) {
				fprintf(stderr, "gdirect bench: pin of %zu bytes failed: %s\n",
					size, strerror(-err));
				break;
			}
			err = unpin(b->fd, p.handle);
			t2 = gdcli_now_ns();
			if (err) {
				fprintf(stderr, "gdirect bench: unpin failed: %s\n", strerror(-err));
				break;
			}
			tp[i] = t1 - t0;
			tu[i] = t2 - t1;
		}
		if (!err) {
			gdcli_summarise(tp, (size_t)b->o.iters, &b->pin[s]);
			gdcli_summarise(tu, (size_t)b->o.iters, &b->unpin[s]);
		}
	}
	free(tp);
	free(tu);
	return err;
}

/* Time one direction at one size until the budget or 100000 samples. */
static void time_copy(void *map, void *host, size_t size, int to_gpu, double budget_ns,
		      struct gdcli_summary *sum, double *bw)
{
	size_t cap = 100000, n = 0;
	double *t = malloc(cap * sizeof(double)), start;

	if (!t) {
		memset(sum, 0, sizeof(*sum));
		*bw = 0;
		return;
	}
	/* One untimed copy first: page faults of a fresh mapping are not copy cost. */
	if (to_gpu)
		gdirect_copy_to_mapping(map, host, size);
	else
		gdirect_copy_from_mapping(host, map, size);
	start = gdcli_now_ns();
	do {
		double t0 = gdcli_now_ns();

		if (to_gpu)
			gdirect_copy_to_mapping(map, host, size);
		else
			gdirect_copy_from_mapping(host, map, size);
		t[n] = gdcli_now_ns() - t0;
		n++;
	} while (n < cap && (n < 3 || gdcli_now_ns() - start < budget_ns));
	gdcli_summarise(t, n, sum);
	/* From the median, not the mean: one preemption in a short run would
	 * otherwise halve the figure. */
	*bw = sum->median > 0 ? (double)size / sum->median * 1e3 : 0;	/* MB/s */
	free(t);
}

static int bench_copy(struct bench *b)
{
	struct gdirect_pin p;
	unsigned char *host, *check, *map;
	size_t size, i;
	int err;
	char sz[32];

	err = pin(b->fd, b->dptr, b->o.max_size, &p);
	if (err) {
		fprintf(stderr, "gdirect bench: pin of %zu bytes failed: %s\n", b->o.max_size,
			strerror(-err));
		return err;
	}
	map = mmap(NULL, p.pinned_size, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd,
		   (off_t)p.mmap_offset);
	if (map == MAP_FAILED) {
		err = -errno;
		fprintf(stderr, "gdirect bench: mmap of the pinned region failed: %s\n",
			strerror(errno));
		unpin(b->fd, p.handle);
		return err;
	}
	host = aligned_alloc(64, (b->o.max_size + 63) & ~(size_t)63);
	check = aligned_alloc(64, (b->o.max_size + 63) & ~(size_t)63);
	if (!host || !check) {
		err = -ENOMEM;
		goto out;
	}
	map += b->dptr - p.pinned_addr;
	for (i = 0; i < b->o.max_size; i++)
		host[i] = (unsigned char)(i * 7 + 3);
	/* The numbers mean nothing if the bytes do not arrive. */
	gdirect_copy_to_mapping(map, host, b->o.max_size);
	gdirect_copy_from_mapping(check, map, b->o.max_size);
	b->verified = memcmp(host, check, b->o.max_size) ? -1 : 1;
	for (size = 1, b->ncopy = 0; size <= b->o.max_size && b->ncopy < MAX_SIZES; size <<= 1) {
		struct copy_row *row = &b->copy[b->ncopy++];

		progress("copy %s to and from the BAR mapping",
			 gdcli_fmt_bytes(size, sz, sizeof(sz)));
		row->size = size;
		time_copy(map, host, size, 1, b->o.time_ms * 1e6, &row->wr, &row->wr_bw);
		time_copy(map, host, size, 0, b->o.time_ms * 1e6, &row->rd, &row->rd_bw);
	}
	map -= b->dptr - p.pinned_addr;
out:
	free(host);
	free(check);
	munmap(map, p.pinned_size);
	unpin(b->fd, p.handle);
	return err;
}

static void print_text(const struct bench *b)
{
	char sz[32];
	int i;

	if (b->o.do_pin) {
		printf("pin / unpin latency through /dev/gdirect, %d iterations, microseconds\n",
		       b->o.iters);
		printf("%10s  %-5s %10s %10s %10s %10s\n", "size", "", "min", "median", "p99", "max");
		for (i = 0; i < b->o.npin; i++) {
			gdcli_fmt_bytes(b->o.pin_sizes[i], sz, sizeof(sz));
			printf("%10s  %-5s %10.2f %10.2f %10.2f %10.2f\n", sz, "pin",
			       b->pin[i].min / 1e3, b->pin[i].median / 1e3,
			       b->pin[i].p99 / 1e3, b->pin[i].max / 1e3);
			printf("%10s  %-5s %10.2f %10.2f %10.2f %10.2f\n", "", "unpin",
			       b->unpin[i].min / 1e3, b->unpin[i].median / 1e3,
			       b->unpin[i].p99 / 1e3, b->unpin[i].max / 1e3);
		}
	}
	if (b->o.do_cache) {
		if (b->o.do_pin)
			printf("\n");
		gdcli_bench_cache_print(&b->cache);
	}
	if (b->o.do_copy) {
		if (b->o.do_pin || b->o.do_cache)
			printf("\n");
		printf("copies through the BAR mapping (libgdirect, %s), latency in microseconds,\n"
		       "bandwidth at the median latency\n",
		       gdirect_copy_impl());
		printf("data check: %s\n", b->verified > 0 ? "read back what was written" :
		       "MISMATCH: read back differs from what was written");
		printf("%10s  %10s %10s %10s  %10s %10s %10s\n", "size", "write med", "write min",
		       "write MB/s", "read med", "read min", "read MB/s");
		for (i = 0; i < b->ncopy; i++) {
			const struct copy_row *r = &b->copy[i];

			gdcli_fmt_bytes(r->size, sz, sizeof(sz));
			printf("%10s  %10.3f %10.3f %10.1f  %10.3f %10.3f %10.1f\n", sz,
			       r->wr.median / 1e3, r->wr.min / 1e3, r->wr_bw,
			       r->rd.median / 1e3, r->rd.min / 1e3, r->rd_bw);
		}
	}
}

static void print_json(const struct bench *b)
{
	struct gdcli_json j;
	int i;

	gdcli_json_init(&j, stdout);
	gdcli_json_obj(&j, NULL);
	if (b->o.do_pin) {
		gdcli_json_arr(&j, "pin");
		for (i = 0; i < b->o.npin; i++) {
			gdcli_json_obj(&j, NULL);
			gdcli_json_u64(&j, "size", b->o.pin_sizes[i]);
			gdcli_json_summary(&j, "pin", &b->pin[i]);
			gdcli_json_summary(&j, "unpin", &b->unpin[i]);
			gdcli_json_end(&j, '}');
		}
		gdcli_json_end(&j, ']');
	}
	if (b->o.do_cache)
		gdcli_bench_cache_json(&j, &b->cache);
	if (b->o.do_copy) {
		gdcli_json_str(&j, "copy_impl", gdirect_copy_impl());
		gdcli_json_bool(&j, "data_verified", b->verified > 0);
		gdcli_json_arr(&j, "copy");
		for (i = 0; i < b->ncopy; i++) {
			const struct copy_row *r = &b->copy[i];

			gdcli_json_obj(&j, NULL);
			gdcli_json_u64(&j, "size", r->size);
			gdcli_json_summary(&j, "write", &r->wr);
			gdcli_json_dbl(&j, "write_mb_s", r->wr_bw);
			gdcli_json_summary(&j, "read", &r->rd);
			gdcli_json_dbl(&j, "read_mb_s", r->rd_bw);
			gdcli_json_end(&j, '}');
		}
		gdcli_json_end(&j, ']');
	}
	gdcli_json_end(&j, '}');
	gdcli_json_done(&j);
}

/* --name VALUE, strictly (lib/src/parse.c): 0, or -EINVAL with a message. */
static int arg_size(const char *name, const char *s, uint64_t min, size_t *out)
{
	char why[200];
	uint64_t v;

	if (gdl_parse_size(s, min, BENCH_MAX_BYTES, &v, why, sizeof(why))) {
		fprintf(stderr, "gdirect bench: %s: %s\n", name, why);
		return -EINVAL;
	}
	*out = (size_t)v;
	return 0;
}

static int arg_int(const char *name, const char *s, uint64_t min, uint64_t max,
		   int *out)
{
	char why[200];
	uint64_t v;

	if (gdl_parse_uint(s, min, max, &v, why, sizeof(why))) {
		fprintf(stderr, "gdirect bench: %s: %s\n", name, why);
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

/* S1,S2,...: every item a size (an empty one is an error). */
static int parse_sizes(char *list, struct bench_opts *o)
{
	char *tok = list, *comma;

	o->npin = 0;
	for (;;) {
		comma = strchr(tok, ',');
		if (comma)
			*comma = '\0';
		if (o->npin == MAX_SIZES) {
			fprintf(stderr, "gdirect bench: --pin-sizes: at most %d sizes\n",
				MAX_SIZES);
			return -EINVAL;
		}
		if (arg_size("--pin-sizes", tok, 1, &o->pin_sizes[o->npin]))
			return -EINVAL;
		o->npin++;
		if (!comma)
			return 0;
		tok = comma + 1;
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gdirect bench [--json] [--only pin|cache|copy] [--iters N]\n"
		"                     [--pin-sizes S1,S2,...] [--max-size S] [--time-ms MS]\n"
		"                     [--cache-buffers N] [--cache-accesses N] [--cache-max-regions N]\n"
		"  --iters N        pin/unpin repetitions per size (default 100)\n"
		"  --pin-sizes L    sizes to pin, with k/M/G suffixes (default 64k,1M,8M)\n"
		"  --max-size S     largest copy, sizes from 1 B in powers of two (default 4M)\n"
		"  --time-ms MS     time per copy size and direction (default 20)\n"
		"  --cache-buffers N, --cache-accesses N, --cache-max-regions N\n"
		"                   the cache trace: N buffers of 64 KiB (default 64), N\n"
		"                   accesses (default 2000), cache limit (default 32)\n");
}

int gdcli_cmd_bench(int argc, char **argv, struct gdcli_roots *r)
{
	static const struct option opts[] = {
		GDCLI_COMMON_LONGOPTS,
		{ "iters", required_argument, NULL, 'n' },
		{ "pin-sizes", required_argument, NULL, 's' },
		{ "max-size", required_argument, NULL, 'm' },
		{ "time-ms", required_argument, NULL, 't' },
		{ "only", required_argument, NULL, 'o' },
		{ "cache-buffers", required_argument, NULL, 'B' },
		{ "cache-accesses", required_argument, NULL, 'A' },
		{ "cache-max-regions", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	static struct bench b;
	char path[GDCLI_PATH_MAX], err[256], defsizes[] = "64k,1M,8M";
	size_t need;
	int c, i, ret, ms;

	memset(&b, 0, sizeof(b));
	b.o.iters = 100;
	b.o.max_size = 4 << 20;
	b.o.time_ms = 20;
	b.o.do_pin = b.o.do_copy = b.o.do_cache = 1;
	b.o.cache_buffers = 64;
	b.o.cache_accesses = 2000;
	b.o.cache_max_regions = 32;
	parse_sizes(defsizes, &b.o);
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (gdcli_common_opt(c, optarg, r))
			continue;
		switch (c) {
		case OPT_JSON: b.o.json = 1; break;
		case 'n':
			if (arg_int("--iters", optarg, 1, 1000000, &b.o.iters))
				goto bad;
			break;
		case 's':
			if (parse_sizes(optarg, &b.o))
				goto bad;
			break;
		case 'm':
			if (arg_size("--max-size", optarg, 1, &b.o.max_size))
				goto bad;
			break;
		case 't':
			if (arg_int("--time-ms", optarg, 1, 3600000, &ms))
				goto bad;
			b.o.time_ms = ms;
			break;
		case 'o':
			b.o.do_pin = !strcmp(optarg, "pin");
			b.o.do_copy = !strcmp(optarg, "copy");
			b.o.do_cache = !strcmp(optarg, "cache");
			if (!b.o.do_pin && !b.o.do_copy && !b.o.do_cache)
				goto bad;
			break;
		case 'B':
			if (arg_int("--cache-buffers", optarg, 1, 65536, &b.o.cache_buffers))
				goto bad;
			break;
		case 'A':
			if (arg_int("--cache-accesses", optarg, 1, 10000000,
				    &b.o.cache_accesses))
				goto bad;
			break;
		case 'R':
			if (arg_int("--cache-max-regions", optarg, 0, 1000000,
				    &b.o.cache_max_regions))
				goto bad;
			break;
		case OPT_HELP:
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (gdcli_path(path, sizeof(path), "%s/gdirect", r->dev))
		return 1;
	b.fd = open(path, O_RDWR | O_CLOEXEC);
	if (b.fd < 0) {
		printf("gdirect bench: %s: %s: pinning from user space needs gdirect.ko "
		       "(nv-p2p is a kernel API; the emulator alone cannot pin for a process); "
		       "nothing measured\n", path, strerror(errno));
		return EXIT_SKIP;
	}
	ret = gdcli_cuda_open(err, sizeof(err));
	if (ret) {
		printf("gdirect bench: %s; no GPU memory to pin, nothing measured\n", err);
		close(b.fd);
		return EXIT_SKIP;
	}
	need = b.o.do_copy ? b.o.max_size : 0;
	for (i = 0; b.o.do_pin && i < b.o.npin; i++)
		if (b.o.pin_sizes[i] > need)
			need = b.o.pin_sizes[i];
	if (need == 0)
		need = GDIRECT_GPU_PAGE_SIZE;
	b.alloc = (need + GDIRECT_GPU_PAGE_SIZE - 1) & ~(size_t)(GDIRECT_GPU_PAGE_SIZE - 1);
	ret = gdcli_cuda_alloc(b.alloc, &b.dptr);
	if (ret) {
		fprintf(stderr, "gdirect bench: cannot allocate %zu bytes of GPU memory\n", b.alloc);
		gdcli_cuda_close();
		close(b.fd);
		return 1;
	}
	ret = 0;
	if (b.o.do_pin)
		ret = bench_pin(&b);
	if (!ret && b.o.do_cache) {
		progress("registration cache: %d accesses to %d buffers", b.o.cache_accesses,
			 b.o.cache_buffers);
		ret = gdcli_bench_cache(b.o.cache_buffers,
					GDIRECT_GPU_PAGE_SIZE,
					b.o.cache_accesses,
					b.o.cache_max_regions, &b.cache);
	}
	if (!ret && b.o.do_copy)
		ret = bench_copy(&b);
	gdcli_cuda_free(b.dptr);
	gdcli_cuda_close();
	close(b.fd);
	if (ret)
		return 1;
	if (b.o.json)
		print_json(&b);
	else
		print_text(&b);
	return b.o.do_copy && b.verified < 0 ? 1 : 0;
bad:
	usage(stderr);
	return 2;
}
