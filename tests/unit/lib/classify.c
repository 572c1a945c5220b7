/* SPDX-License-Identifier: MIT */
/*
 * lib-classify: CPU / device / managed classification through the dlopened
 * driver, answered from the cache on repeat (no CUDA call with hooks), and
 * invalidated when the memory is freed; CPU answers cached only with
 * GDIRECT_CTX_CACHE_HOST, forgotten on a reported free, also while other
 * threads classify (suite tsan).
 */
#include <pthread.h>
#include <sys/mman.h>
#include <stdatomic.h>
#include <time.h>

#include <cuda.h>

#include "tutil.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void kinds(unsigned inv)
{
	struct gdirect_params p;
	struct gdirect_ptr_info in;
	struct gdirect_stats st;
	static char host[64];

	params(&p, inv);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);
	/* managed first, so that d is last and can be re-allocated larger */
	uint64_t m = fake_cuda_alloc_managed(64 * KiB), d = fake_cuda_alloc(300 * KiB);

	CHECK_EQ(gdirect_classify(c, host, &in), 0);
	CHECK_EQ(in.type, GDIRECT_MEM_CPU);
	CHECK_EQ(in.device, -1);
	CHECK_EQ(gdirect_classify(c, P(m + 5), &in), 0);
	CHECK_EQ(in.type, GDIRECT_MEM_MANAGED);
	CHECK_EQ(gdirect_classify(c, P(d + 200 * KiB), &in), 0);
	CHECK_EQ(in.type, GDIRECT_MEM_DEVICE);
	CHECK_EQ(in.device, 0);
	CHECK_EQ(in.alloc_base, d);
	CHECK_EQ(in.alloc_size, 300 * KiB);
	CHECK_EQ(in.buffer_id, fake_cuda_buffer_id_at(d));

	/* Repeat: from the cache.  With hooks, no CUDA call at all; without,
	 * one BUFFER_ID check (frees of unpinned memory are invisible). */
	unsigned long q0 = fake_cuda_queries();

	for (int i = 0; i < 10; i++) {
		CHECK_EQ(gdirect_classify(c, P(d + i * 1000), &in), 0);
		CHECK_EQ(in.type, GDIRECT_MEM_DEVICE);
	}
	CHECK_EQ(fake_cuda_queries() - q0, inv & GDIRECT_INV_HOOKS ? 0 : 10);
	gdirect_stats(c, &st);
	CHECK_EQ(st.classify_hits, 10);

	/* Freed and re-allocated larger at the same VA: the new answer. */
	if (inv & GDIRECT_INV_HOOKS)
		gdirect_notify_free(P(d), 0);
	CHECK_EQ(cuMemFree_v2(d), CUDA_SUCCESS);
	CHECK_EQ(gdirect_classify(c, P(d), &in), 0);
	CHECK_EQ(in.type, GDIRECT_MEM_CPU);	/* nothing there now */
	uint64_t d2 = fake_cuda_alloc(400 * KiB);

	CHECK_EQ(d2, d);
	CHECK_EQ(gdirect_classify(c, P(d + 350 * KiB), &in), 0);
	CHECK_EQ(in.type, GDIRECT_MEM_DEVICE);
	CHECK_EQ(in.alloc_size, 400 * KiB);
	CHECK_EQ(in.buffer_id, fake_cuda_buffer_id_at(d));

	/* The cost of a cached answer. */
	int n = 200000;
	double t0 = now_ns();

	for (int i = 0; i < n; i++)
		gdirect_classify(c, P(d + (i & 1023)), &in);
	tap_diag("classify (cached, %s): %.1f ns",
	       inv & GDIRECT_INV_HOOKS ? "hooks" : "tag-checked",
	       (now_ns() - t0) / n);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* The cache is bounded: thousands of allocations classified, answers
 * still right for old and new ones. */
static void bounded(void)
{
	enum { N = 5000 };
	struct gdirect_params p;
	struct gdirect_ptr_info in;
	static uint64_t a[N];

	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);

	for (int i = 0; i < N; i++) {
		a[i] = fake_cuda_alloc(4 * KiB);
		CHECK(a[i]);
		CHECK_EQ(gdirect_classify(c, P(a[i]), &in), 0);
		CHECK_EQ(in.alloc_base, a[i]);
	}
	for (int i = 0; i < N; i += 97) {
		CHECK_EQ(gdirect_classify(c, P(a[i] + 5), &in), 0);
		CHECK_EQ(in.type, GDIRECT_MEM_DEVICE);
		CHECK_EQ(in.alloc_base, a[i]);
	}
	/* With nothing registered the bound held: the first ones were
	 * forgotten and are asked again, the last one is not. */
	unsigned long q = fake_cuda_queries();

	CHECK_EQ(gdirect_classify(c, P(a[N - 1]), &in), 0);
	CHECK_EQ(fake_cuda_queries(), q);
	CHECK_EQ(gdirect_classify(c, P(a[1]), &in), 0);
	CHECK(fake_cuda_queries() > q);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* The bound grows with the live registrations: every registered
 * allocation stays cached, so classifying them asks CUDA nothing, and each
 * had SYNC_MEMOPS set once. */
static void bound_grows_with_registrations(void)
{
	enum { N = 5000 };
	struct gdirect_params p;
	struct gdirect_ptr_info in;
	struct gdirect_reg *r;
	static uint64_t a[N];
	unsigned long q;

	params(&p, GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS);
	p.max_regions = 0;
	p.max_bytes = 0;
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);

	for (int i = 0; i < N; i++) {
		a[i] = fake_cuda_alloc(64 * KiB);
		CHECK(a[i]);
		CHECK_EQ(gdirect_reg_get(c, P(a[i]), 64 * KiB, 0, &r), 0);
		gdirect_reg_put(r);
	}
	q = fake_cuda_queries();
	for (int i = 0; i < N; i++) {
		CHECK_EQ(gdirect_classify(c, P(a[i] + 5), &in), 0);
		CHECK_EQ(in.alloc_base, a[i]);
	}
	CHECK_EQ(fake_cuda_queries(), q);
	CHECK_EQ(fake_cuda_sync_count(a[0]), 1);
	CHECK_EQ(fake_cuda_sync_count(a[N - 1]), 1);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

static struct gdirect_ctx *host_ctx(unsigned flags)
{
	struct gdirect_params p;

	params(&p, GDIRECT_INV_HOOKS);
	p.flags = flags;
	return mkctx(&p, &(struct fake_cfg){ 0 }, NULL);
}

/* One classification of a, which must be CPU; true if it asked CUDA. */
static bool cpu_asked(struct gdirect_ctx *c, uint64_t a, bool *right)
{
	struct gdirect_ptr_info in;
	unsigned long q0 = fake_cuda_queries();

	*right = gdirect_classify(c, P(a), &in) == 0 &&
		 in.type == GDIRECT_MEM_CPU && in.device == -1 &&
		 in.alloc_base == 0 && in.alloc_size == 0 && in.buffer_id == 0;
	return fake_cuda_queries() != q0;
}

static _Alignas(65536) char hostbuf[4 * 65536];

/* With the flag a repeated CPU answer asks nothing, per 4 KiB page; a
 * reported free forgets exactly the pages it covers.  Without the flag
 * every CPU answer asks. */
static void host_cached(void)
{
	struct gdirect_ctx *c = host_ctx(GDIRECT_CTX_CACHE_HOST);
	uint64_t b = (uintptr_t)hostbuf;
	struct gdirect_stats st;
	bool ok;

	for (int i = 0; i < 16; i++) {
		CHECK(cpu_asked(c, b + i * 4 * KiB + 17, &ok));
		CHECK(ok);
	}
	for (int i = 0; i < 16; i++) {
		CHECK(!cpu_asked(c, b + i * 4 * KiB + 4 * KiB - 1, &ok));
		CHECK(ok);
	}
	gdirect_stats(c, &st);
	CHECK_EQ(st.classify_hits, 16);
	CHECK(cpu_asked(c, b + 64 * KiB, &ok));		/* the next 64 KiB */
	CHECK(ok);
	/* Pages 1 and 2 freed (as the hooks report a host free). */
	gdirect_notify_free(P(b + 4 * KiB + 5), 4 * KiB);
	CHECK(!cpu_asked(c, b, &ok));
	CHECK(cpu_asked(c, b + 4 * KiB, &ok));
	CHECK(cpu_asked(c, b + 8 * KiB, &ok));
	CHECK(!cpu_asked(c, b + 12 * KiB, &ok));
	CHECK(!cpu_asked(c, b + 64 * KiB, &ok));
	CHECK(ok);
	/* The last page of the address space, and "everything freed" (what
	 * the hooks report for a context teardown). */
	CHECK(cpu_asked(c, UINT64_MAX - 4 * KiB + 1, &ok));
	CHECK(!cpu_asked(c, UINT64_MAX - 100, &ok));
	gdirect_notify_free(P(1), SIZE_MAX);
	CHECK(cpu_asked(c, UINT64_MAX - 100, &ok));
	CHECK(cpu_asked(c, b, &ok));
	CHECK(ok);
	gdirect_ctx_destroy(c);

	c = host_ctx(0);
	for (int i = 0; i < 3; i++) {
		CHECK(cpu_asked(c, b, &ok));
		CHECK(ok);
	}
	gdirect_stats(c, &st);
	CHECK_EQ(st.classify_misses, 3);
	gdirect_ctx_destroy(c);
}

/* A cached CPU answer, its range freed (reported) and re-allocated as
 * device memory at the same VA: the device answer; and back. */
static void host_then_device(void)
{
	struct gdirect_ctx *c = host_ctx(GDIRECT_CTX_CACHE_HOST);
	struct gdirect_ptr_info in;
	uint64_t d = fake_cuda_alloc(64 * KiB), d2;
	bool ok;

	CHECK(d);
	CHECK_EQ(cuMemFree_v2(d), CUDA_SUCCESS);
	CHECK(cpu_asked(c, d, &ok));
	CHECK(cpu_asked(c, d + 4 * KiB, &ok));
	CHECK(!cpu_asked(c, d + 100, &ok));
	CHECK(ok);
	gdirect_notify_free(P(d), 64 * KiB);
	d2 = fake_cuda_alloc(64 * KiB);
	CHECK_EQ(d2, d);
	for (uint64_t off = 0; off < 64 * KiB; off += 4 * KiB) {
		CHECK_EQ(gdirect_classify(c, P(d + off), &in), 0);
		CHECK_EQ(in.type, GDIRECT_MEM_DEVICE);
		CHECK_EQ(in.alloc_base, d);
		CHECK_EQ(in.alloc_size, 64 * KiB);
		CHECK_EQ(in.buffer_id, fake_cuda_buffer_id_at(d));
	}
	gdirect_notify_free(P(d), 0);
	CHECK_EQ(cuMemFree_v2(d), CUDA_SUCCESS);
	CHECK(cpu_asked(c, d + 4 * KiB, &ok));
	CHECK(ok);
	CHECK(!cpu_asked(c, d + 4 * KiB, &ok));
	CHECK(ok);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* Host answers and a device allocation in one 64 KiB page: indexing the
 * allocation forgets the page's host bits (a miss, not a wrong answer);
 * host answers asked then are kept beside it; its free leaves them. */
static void host_shares_page(void)
{
	struct gdirect_ctx *c = host_ctx(GDIRECT_CTX_CACHE_HOST);
	struct gdirect_ptr_info in;
	uint64_t a = fake_cuda_alloc(4 * KiB);
	bool ok;

	CHECK(a);
	CHECK_EQ(a & 0xffff, 0);
	CHECK(cpu_asked(c, a + 32 * KiB, &ok));
	CHECK(cpu_asked(c, a + 48 * KiB, &ok));
	CHECK(!cpu_asked(c, a + 32 * KiB, &ok));
	CHECK_EQ(gdirect_classify(c, P(a + 8), &in), 0);
	CHECK_EQ(in.type, GDIRECT_MEM_DEVICE);
	CHECK_EQ(in.alloc_base, a);
	CHECK(cpu_asked(c, a + 32 * KiB, &ok));		/* forgotten */
	CHECK(ok);
	CHECK(!cpu_asked(c, a + 32 * KiB, &ok));	/* kept beside a */
	CHECK(ok);
	unsigned long q0 = fake_cuda_queries();

	CHECK_EQ(gdirect_classify(c, P(a + 100), &in), 0);
	CHECK_EQ(in.type, GDIRECT_MEM_DEVICE);
	CHECK_EQ(fake_cuda_queries(), q0);
	gdirect_notify_free(P(a), 0);
	CHECK_EQ(cuMemFree_v2(a), CUDA_SUCCESS);
	CHECK(!cpu_asked(c, a + 32 * KiB, &ok));
	CHECK(ok);
	CHECK(cpu_asked(c, a, &ok));
	CHECK(ok);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* Readers classify host and device pointers while a writer forgets and
 * re-learns host pages and allocates and frees device memory beside
 * them: every answer right, no race (suite tsan). */
struct host_race {
	struct gdirect_ctx *c;
	uint64_t dev;
	_Atomic bool stop;
	_Atomic long wrong;
};

static void *host_reader(void *arg)
{
	struct host_race *r = arg;
	uint64_t b = (uintptr_t)hostbuf;
	struct gdirect_ptr_info in;

	for (unsigned i = 0; !atomic_load(&r->stop); i++) {
		uint64_t h = b + (i * 4 * KiB) % sizeof(hostbuf);

		if (gdirect_classify(r->c, P(h), &in) ||
		    in.type != GDIRECT_MEM_CPU)
			atomic_fetch_add(&r->wrong, 1);
		if (gdirect_classify(r->c, P(r->dev + i % (64 * KiB)), &in) ||
		    in.type != GDIRECT_MEM_DEVICE || in.alloc_base != r->dev)
			atomic_fetch_add(&r->wrong, 1);
	}
	return NULL;
}

static void host_concurrent(void)
{
	struct host_race r = { host_ctx(GDIRECT_CTX_CACHE_HOST), 0, false, 0 };
	uint64_t b = (uintptr_t)hostbuf;
	pthread_t t[2];

	r.dev = fake_cuda_alloc(64 * KiB);
	CHECK(r.dev);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, host_reader, &r), 0);
	for (int i = 0; i < 2000; i++) {
		uint64_t x = fake_cuda_alloc(4 * KiB);

		gdirect_notify_free(P(b + (i * 12 * KiB) % sizeof(hostbuf)),
				    8 * KiB);
		if (x) {
			gdirect_classify(r.c, P(x), &(struct gdirect_ptr_info){ 0 });
			gdirect_notify_free(P(x), 0);
			cuMemFree_v2(x);
		}
	}
	atomic_store(&r.stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(atomic_load(&r.wrong), 0);
	gdirect_ctx_destroy(r.c);
	fake_cuda_reset();
}

/*
 * A thread whose first classification was a miss has its read-section
 * slot but no statistics shard yet: its next answer, a cache hit, must
 * still be counted once (the hit path leaves that case to the full one).
 */
struct first_hit {
	struct gdirect_ctx *c;
	uint64_t d;
	int rc_miss, rc_hit, type;
};

static void *first_hit_thread(void *arg)
{
	struct first_hit *f = arg;
	static char host[64];
	struct gdirect_ptr_info in;

	f->rc_miss = gdirect_classify(f->c, host, &in);	/* CPU: not cached */
	f->rc_hit = gdirect_classify(f->c, P(f->d + 100), &in);
	f->type = in.type;
	return NULL;
}

static void first_hit_on_new_thread(void)
{
	struct gdirect_params p;
	struct gdirect_ptr_info in;
	struct gdirect_stats st0, st1;
	pthread_t t;

	params(&p, GDIRECT_INV_HOOKS);
	struct first_hit f = { mkctx(&p, &(struct fake_cfg){ 0 }, NULL),
			       fake_cuda_alloc(64 * KiB), -1, -1, -1 };

	CHECK_EQ(gdirect_classify(f.c, P(f.d), &in), 0);	/* cached now */
	gdirect_stats(f.c, &st0);
	CHECK_EQ(pthread_create(&t, NULL, first_hit_thread, &f), 0);
	pthread_join(t, NULL);
	gdirect_stats(f.c, &st1);
	CHECK_EQ(f.rc_miss, 0);
	CHECK_EQ(f.rc_hit, 0);
	CHECK_EQ(f.type, GDIRECT_MEM_DEVICE);
	CHECK_EQ(st1.classify_hits - st0.classify_hits, 1);
	CHECK_EQ(st1.classify_misses - st0.classify_misses, 1);
	/* Bad arguments are still refused on the hit path's way in. */
	CHECK_EQ(gdirect_classify(NULL, P(f.d), &in), -EINVAL);
	CHECK_EQ(gdirect_classify(f.c, P(f.d), NULL), -EINVAL);
	gdirect_ctx_destroy(f.c);
	fake_cuda_reset();
}

/*
 * Two 256 MiB ranges 2 GiB apart share a hint slot of the hit path: host
 * memory mapped there (cached as CPU, GDIRECT_CTX_CACHE_HOST) and device
 * memory d, classified in turn, must each be found through a hint of
 * their own range every time (a hit, not a query), never through the
 * other's, which has the CPU answer in the slot where d's range has d.
 */
static void hint_collision(void)
{
	struct gdirect_params p;
	struct gdirect_ptr_info in;
	void *h = MAP_FAILED;

	fake_cuda_reset();
	uint64_t d = fake_cuda_alloc(512 * KiB);

	CHECK(d != 0);
	/* Above or below (the fake's arena may lie near the top of the
	 * address space), at d's offset in its range: the same slot of the
	 * leaf. */
	for (int64_t k = -16; k <= 16 && h == MAP_FAILED; k++) {
		uint64_t at = ((d >> 28) + 8 * (uint64_t)k) << 28 |
			      (d & ((1u << 28) - 1));

		if (!k || (k < 0 && (d >> 28) < 8 * (uint64_t)-k))
			continue;

		h = mmap(P(at), 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (h != MAP_FAILED && (uintptr_t)h != at) {
			munmap(h, 4096);
			h = MAP_FAILED;
		}
	}
	CHECK(h != MAP_FAILED);
	if (h == MAP_FAILED)
		return;
	CHECK_EQ(((uintptr_t)h >> 28 & 7), (d >> 28 & 7));
	params(&p, GDIRECT_INV_HOOKS);
	p.flags = GDIRECT_CTX_CACHE_HOST;
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);

	CHECK_EQ(gdirect_classify(c, h, &in), 0);
	CHECK_EQ(in.type, GDIRECT_MEM_CPU);
	CHECK_EQ(gdirect_classify(c, P(d), &in), 0);
	CHECK_EQ(in.type, GDIRECT_MEM_DEVICE);
	unsigned long q0 = fake_cuda_queries();
	int wrong = 0;

	for (int n = 0; n < 100; n++) {
		if (gdirect_classify(c, (char *)h + n, &in) ||
		    in.type != GDIRECT_MEM_CPU)
			wrong++;
		if (gdirect_classify(c, P(d + (uint64_t)n * 4096), &in) ||
		    in.type != GDIRECT_MEM_DEVICE || in.alloc_base != d)
			wrong++;
	}
	CHECK_EQ(wrong, 0);
	CHECK_EQ(fake_cuda_queries() - q0, 0);
	gdirect_ctx_destroy(c);
	munmap(h, 4096);
	fake_cuda_reset();
}

/*
 * Device memory over several 256 MiB ranges (the hit path keeps a hint
 * per range), looked up in two contexts in turn (a hint is a context's
 * only while its table's serial matches): every answer right, and every
 * one after the first per allocation and context from the cache.
 */
static void hints_across_ranges(void)
{
	struct gdirect_params p;
	struct gdirect_ptr_info in;
	struct gdirect_stats st0, st1;
	uint64_t d[5];
	int wrong = 0;

	fake_cuda_reset();	/* 950 MiB of the fake's 1 GiB arena */
	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c[2] = { mkctx(&p, &(struct fake_cfg){ 0 }, NULL),
				     mkctx(&p, &(struct fake_cfg){ 0 }, NULL) };

	unsigned long per_miss = fake_cuda_queries();

	for (int i = 0; i < 5; i++) {
		d[i] = fake_cuda_alloc(190 * MiB);
		CHECK(d[i] != 0);
		for (int k = 0; k < 2 - (i == 2); k++)	/* d[2]: c[0] only */
			CHECK_EQ(gdirect_classify(c[k], P(d[i] + 5), &in), 0);
	}
	per_miss = (fake_cuda_queries() - per_miss) / 9;	/* 9 misses */
	CHECK(per_miss > 0);
	/* 950 MiB of allocations side by side: four ranges or more */
	CHECK(((d[4] + 190 * MiB - 1) >> 28) - (d[0] >> 28) >= 3);
	gdirect_stats(c[0], &st0);
	unsigned long q0 = fake_cuda_queries();
	uint64_t x = 88172645463325252ull;

	for (int n = 0; n < 4000; n++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int i = (int)(x % 5), k = (int)(x >> 20 & 1) && i != 2;
		uint64_t a = d[i] + (x >> 24) % (190 * MiB);

		if (gdirect_classify(c[k], P(a), &in) ||
		    in.type != GDIRECT_MEM_DEVICE || in.alloc_base != d[i] ||
		    in.alloc_size != 190 * MiB)
			wrong++;
	}
	CHECK_EQ(wrong, 0);
	CHECK_EQ(fake_cuda_queries() - q0, 0);
	gdirect_stats(c[0], &st1);
	CHECK(st1.classify_hits - st0.classify_hits >= 1000);
	CHECK_EQ(st1.classify_misses, st0.classify_misses);
	/* The same range's hint, just made by the other context, is not
	 * this one's: d[2] is not in c[1]'s cache, so CUDA is asked. */
	CHECK_EQ(gdirect_classify(c[0], P(d[2] + 7), &in), 0);
	CHECK_EQ(gdirect_classify(c[1], P(d[2] + 7), &in), 0);
	CHECK_EQ(in.alloc_base, d[2]);
	CHECK_EQ(fake_cuda_queries() - q0, per_miss);
	/* A range the cache has no leaf for: the driver's answer. */
	CHECK_EQ(gdirect_classify(c[0], &in, &in), 0);
	CHECK_EQ(in.type, GDIRECT_MEM_CPU);
	for (int k = 0; k < 2; k++)
		gdirect_ctx_destroy(c[k]);
	fake_cuda_reset();
}

static void kinds_hooks(void)
{
	kinds(GDIRECT_INV_HOOKS);
}

static void kinds_kernel(void)
{
	kinds(GDIRECT_INV_KERNEL);
}

int main(void)
{
	need_fake_cuda();
	TAP_TEST(bounded);
	TAP_TEST(bound_grows_with_registrations);
	TAP_TEST(kinds_hooks);
	TAP_TEST(kinds_kernel);
	TAP_TEST(host_cached);
	TAP_TEST(host_then_device);
	TAP_TEST(host_shares_page);
	TAP_TEST(host_concurrent);
	TAP_TEST(first_hit_on_new_thread);
	TAP_TEST(hints_across_ranges);
	TAP_TEST(hint_collision);
	return tap_done();
}
