/* SPDX-License-Identifier: MIT */
#include "harness.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_cuda.h"

struct gdl_backend *bench_device_new(const struct fake_cfg *cfg)
{
	struct fake_cfg c = *cfg;

	c.nslots = 1u << 18;
	c.no_maps = true;
	c.shared = true;
	return fake_backend_new(&c);
}

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void bench_sleep_until(uint64_t t_ns)
{
	struct timespec ts = { (time_t)(t_ns / 1000000000ull),
			       (long)(t_ns % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

bool inst_open(struct inst *in, const struct cache_ops *ops, const char *label,
	       const struct fake_cfg *dev, uint64_t max_regions, uint64_t max_bytes)
{
	memset(in, 0, sizeof(*in));
	in->ops = ops;
	in->label = label;
	in->dev = bench_device_new(dev);
	if (!in->dev)
		return false;
	in->c = ops->create(&(struct cache_cfg){ in->dev, max_regions, max_bytes });
	if (!in->c) {
		fake_backend_free(in->dev);
		return false;
	}
	return true;
}

void inst_close(struct inst *in)
{
	/* Unpinning what is left should not take the benchmark's minutes. */
	fake_backend_set_costs(in->dev, 0, 0);
	in->ops->destroy(in->c);
	fake_backend_free(in->dev);
}

uint64_t *alloc_buffers(size_t n)
{
	uint64_t *b = malloc(n * sizeof(*b));

	if (!b) {
		perror("malloc");
		exit(1);
	}
	for (size_t i = 0; i < n; i++) {
		b[i] = fake_cuda_alloc_spaced(GPU_PAGE, GPU_PAGE);
		if (!b[i]) {
			fprintf(stderr, "out of emulated device address space\n");
			exit(1);
		}
	}
	return b;
}

/* Register every buffer once; returns ns per registration (a miss with a
 * free pin: the cache's own insertion cost). */
double register_each(struct inst *in, const uint64_t *bufs, size_t n)
{
	uint64_t t0 = bench_now_ns();

	for (size_t i = 0; i < n; i++) {
		void *ref;

		if (in->ops->get(in->c, bufs[i], GPU_PAGE, &ref)) {
			fprintf(stderr, "%s: registering buffer %zu failed\n",
				in->label, i);
			exit(1);
		}
		in->ops->put(in->c, ref);
	}
	return (double)(bench_now_ns() - t0) / (double)n;
}

struct start {
	pthread_barrier_t *bar;
	void *(*fn)(void *);
	void *arg;
};

static void *trampoline(void *p)
{
	struct start *s = p;

	pthread_barrier_wait(s->bar);
	return s->fn(s->arg);
}

void run_threads(int nthreads, void *(*fn)(void *), void *args, size_t argsz)
{
	pthread_t t[16];
	struct start s[16];
	pthread_barrier_t bar;

	if (nthreads > 16)
		nthreads = 16;
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
	for (int i = 0; i < nthreads; i++) {
		s[i] = (struct start){ &bar, fn, (char *)args + (size_t)i * argsz };
		if (pthread_create(&t[i], NULL, trampoline, &s[i])) {
			perror("pthread_create");
			exit(1);
		}
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&bar);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void progress(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("[bench] ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

FILE *data_file(const struct opts *o, const char *name)
{
	char path[4096];
	FILE *f;

	if (!o->data)
		return NULL;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", o->data, name) >=
	    sizeof(path)) {
		fprintf(stderr, "--data: %s/%s: path too long\n", o->data, name);
		exit(1);
	}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	return f;
}
