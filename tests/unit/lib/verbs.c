/* SPDX-License-Identifier: MIT */
/*
 * lib-verbs: what of the verbs registration cache (gdirect_verbs.h) can be
 * checked without an RDMA device.  The registrations themselves, their
 * hits, evictions and invalidation run against Soft-RoCE in the cluster
 * guest (tests/guest/cluster/verbs-cache.c); nothing here pretends to
 * be a NIC.
 *
 *  - arguments are refused before any verbs call: a NULL context, domain,
 *    pointer or result, length 0, a wrapping range, unknown flags;
 *  - memory that cannot be registered is refused before any verbs call:
 *    managed memory (-EOPNOTSUPP), a range across allocations (-EINVAL);
 *  - the range a request registers (gdl_mr_range): the whole allocation
 *    for every interior pointer up to whole_alloc_max, the request rounded
 *    to 64 KiB and clipped to the allocation above it, never past the
 *    allocation into a neighbour, host pages for host memory;
 *  - gdirect_mr_flush on an empty cache, the statistics at zero;
 *  - gdirect_mr_addr outside a region (NULL) is 0.
 *
 * Over the fake verbs calls of fake_ibv.h (registrations counted, nothing
 * pinned), the cache's rules:
 *  - a free the hooks do not see, then the address handed out again: the
 *    next get registers the new allocation (peer and dma-buf paths);
 *  - two small allocations sharing a host page do not evict each other;
 *  - a dma-buf region killed by a free goes back at
 *    gdirect_process_events, and without hooks one whose memory was
 *    freed does too; max_regions and max_bytes are honoured;
 *  - GPU memory gets SYNC_MEMOPS, VMM memory goes without;
 *  - a put in a fork child does not take the parent's lock;
 *  - a registration freed under it every time gives up after 8 tries;
 *  - per domain: a flush of one domain, eviction on the refusing device
 *    only, the validity flag of gdirect_mr_info;
 *  - gdirect_mr_info of GDIRECT_0.2 writes nothing past that version's
 *    structure.
 */
#define TAP_FORK
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include <infiniband/verbs.h>

#include "cuda_dl.h"
#include "fake_ibv.h"
#include "gdirect_verbs.h"
#include "libgdirect_internal.h"
#include "tutil.h"
#include "verbs_range.h"

/* Never dereferenced: the checks under test come before any use of the
 * domain, and a test that reached a verbs call with it would crash. */
static struct ibv_pd *const no_pd = (struct ibv_pd *)16;

static struct gdirect_ctx *ctx(void)
{
	struct gdirect_params p;
	struct gdirect_ctx *c = NULL;

	params(&p, GDIRECT_INV_HOOKS);
	p.device_path = "/nonexistent/gdirect";
	CHECK_EQ(gdirect_ctx_create(&p, &c), 0);
	return c;
}

static void arguments(void)
{
	struct gdirect_ctx *c = ctx();
	struct gdirect_mr *m = (struct gdirect_mr *)1;
	uint64_t d = fake_cuda_alloc(1 * MiB);
	char host[64];

	CHECK_EQ(gdirect_mr_get(NULL, no_pd, P(d), 8, 0, 0, &m), -EINVAL);
	CHECK_EQ(gdirect_mr_get(c, NULL, P(d), 8, 0, 0, &m), -EINVAL);
	CHECK_EQ(gdirect_mr_get(c, no_pd, NULL, 8, 0, 0, &m), -EINVAL);
	CHECK_EQ(gdirect_mr_get(c, no_pd, P(d), 0, 0, 0, &m), -EINVAL);
	CHECK_EQ(gdirect_mr_get(c, no_pd, P(d), 8, 0, 0, NULL), -EINVAL);
	CHECK_EQ(gdirect_mr_get(c, no_pd, P(d), SIZE_MAX, 0, 0, &m), -EINVAL);
	CHECK_EQ(gdirect_mr_get(c, no_pd, host, 8, 0, 1, &m), -EINVAL);
	CHECK(strstr(gdirect_errmsg(), "flags"));
	CHECK(m == NULL);
	CHECK_EQ(gdirect_mr_flush(NULL), -EINVAL);
	CHECK_EQ(gdirect_mr_info(NULL, NULL), -EINVAL);
	CHECK_EQ(gdirect_mr_addr(NULL, host), 0);
	gdirect_mr_put(NULL);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

static void refused_memory(void)
{
	struct gdirect_ctx *c = ctx();
	struct gdirect_mr *m = NULL;
	uint64_t a = fake_cuda_alloc(1 * MiB), b = fake_cuda_alloc(1 * MiB);
	uint64_t u = fake_cuda_alloc_managed(1 * MiB);
	struct gdirect_stats st;

	CHECK_EQ(gdirect_mr_get(c, no_pd, P(u + 4096), 64, 0, 0, &m),
		 -EOPNOTSUPP);
	CHECK(strstr(gdirect_errmsg(), "managed"));
	/* The end of one allocation and the start of the next (or a gap). */
	CHECK(b > a);
	CHECK_EQ(gdirect_mr_get(c, no_pd, P(a + 1 * MiB - 8), 16, 0, 0, &m),
		 -EINVAL);
	CHECK(strstr(gdirect_errmsg(), "one allocation"));
	CHECK_EQ(gdirect_mr_flush(c), 0);
	gdirect_stats(c, &st);
	CHECK_EQ(st.mr_hits + st.mr_regs_dmabuf + st.mr_regs_peer +
		 st.mr_regs_host + st.mr_evictions + st.mr_deregs, 0);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

static struct gdirect_ptr_info dev(uint64_t base, uint64_t size)
{
	return (struct gdirect_ptr_info){ .type = GDIRECT_MEM_DEVICE,
		.device = 0, .alloc_base = base, .alloc_size = size,
		.buffer_id = 7 };
}

static void ranges(void)
{
	const uint64_t base = 0x7f0000200000ULL, cap = 32 * MiB;
	struct gdirect_ptr_info i = dev(base, 4 * MiB);
	struct gdirect_ptr_info host = { .type = GDIRECT_MEM_CPU, .device = -1 };
	uint64_t s, e, s2, e2;

	/* Two interior pointers of one allocation: one range, the whole
	 * allocation. */
	CHECK_EQ(gdl_mr_range(&i, base + 100, base + 200, cap, &s, &e), 0);
	CHECK_EQ(s, base);
	CHECK_EQ(e, base + 4 * MiB);
	CHECK_EQ(gdl_mr_range(&i, base + 3 * MiB + 5, base + 4 * MiB, cap,
			      &s2, &e2), 0);
	CHECK_EQ(s2, s);
	CHECK_EQ(e2, e);
	/* Past its end, before its start: not one allocation. */
	CHECK_EQ(gdl_mr_range(&i, base + 4 * MiB - 1, base + 4 * MiB + 1, cap,
			      &s, &e), -EINVAL);
	CHECK_EQ(gdl_mr_range(&i, base - 1, base + 1, cap, &s, &e), -EINVAL);
	CHECK_EQ(gdl_mr_range(&i, base, base, cap, &s, &e), -EINVAL);
	/* Above the cap (or with none): the request in 64 KiB pages,
	 * clipped to the allocation. */
	CHECK_EQ(gdl_mr_range(&i, base + 70 * KiB, base + 130 * KiB, 1 * MiB,
			      &s, &e), 0);
	CHECK_EQ(s, base + 64 * KiB);
	CHECK_EQ(e, base + 192 * KiB);
	CHECK_EQ(gdl_mr_range(&i, base + 70 * KiB, base + 130 * KiB, 0,
			      &s, &e), 0);
	CHECK_EQ(s, base + 64 * KiB);
	i = dev(base + 8 * KiB, 100 * KiB);
	CHECK_EQ(gdl_mr_range(&i, base + 9 * KiB, base + 108 * KiB, 0, &s, &e),
		 0);
	CHECK_EQ(s, base + 8 * KiB);
	CHECK_EQ(e, base + 108 * KiB);
	/* An allocation of a size that is not whole host pages: the region
	 * is the allocation, not the host pages around it (a neighbour may
	 * share them); only a dma-buf export is rounded to host pages. */
	i = dev(base, 5000);
	CHECK_EQ(gdl_mr_range(&i, base + 10, base + 20, cap, &s, &e), 0);
	CHECK_EQ(s, base);
	CHECK_EQ(e, base + 5000);
	/* Host memory: the request's host pages. */
	CHECK_EQ(gdl_mr_range(&host, 0x1000010, 0x1002001, cap, &s, &e), 0);
	CHECK_EQ(s, 0x1000000);
	CHECK_EQ(e, 0x1003000);
}

/* A context over the fake verbs: invalidation by hooks (the default's
 * half that sees frees), the given registration path. */
static struct gdirect_ctx *vctx(uint32_t path, struct gdirect_params *pp)
{
	struct gdirect_params p;
	struct gdirect_ctx *c = NULL;
	CUcontext cu;

	if (!pp) {
		params(&p, GDIRECT_INV_HOOKS);
		pp = &p;
	}
	pp->device_path = "/nonexistent/gdirect";
	pp->mr_path = path;
	fibv_reset();
	CHECK_EQ(cuDevicePrimaryCtxRetain(&cu, 0), CUDA_SUCCESS);
	CHECK_EQ(cuCtxSetCurrent(cu), CUDA_SUCCESS);
	CHECK_EQ(gdirect_ctx_create(pp, &c), 0);
	return c;
}

static void vdone(struct gdirect_ctx *c)
{
	gdirect_mr_flush(c);
	gdirect_ctx_destroy(c);
	CHECK_EQ(fibv_live(), 0);
	fake_cuda_reset();
}

/*
 * get(d), put, a free the hooks do not see, the same address handed out
 * again: the next get must register the new allocation, not hand out the
 * region of the freed one.
 */
static void stale_after_unseen_free(uint32_t path, unsigned long *dmabuf)
{
	struct gdirect_ctx *c = vctx(path, NULL);
	struct gdirect_mr *m = NULL;
	uint64_t d = fake_cuda_alloc(256 * KiB), d2, id;
	unsigned long regs;

	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d + 64), 64, 0, 0, &m), 0);
	gdirect_mr_put(m);
	regs = fibv_regs();
	id = fake_cuda_buffer_id_at(d);
	CHECK_EQ(cuMemFree_v2(d), CUDA_SUCCESS);
	d2 = fake_cuda_alloc(256 * KiB);
	CHECK_EQ(d2, d);
	CHECK(fake_cuda_buffer_id_at(d) != id);
	m = NULL;
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d + 64), 64, 0, 0, &m), 0);
	/* A new registration, of the new allocation. */
	CHECK_EQ(fibv_regs(), regs + 1);
	gdirect_mr_put(m);
	/* The old region was given back. */
	CHECK_EQ(gdirect_mr_flush(c) >= 0, 1);
	CHECK_EQ(fibv_live(), 0);
	*dmabuf = fibv.regs_dmabuf;
	vdone(c);
}

static void stale_peer(void)
{
	unsigned long dmabuf;

	stale_after_unseen_free(GDIRECT_MR_PATH_PEER, &dmabuf);
	CHECK_EQ(dmabuf, 0);
}

static void stale_dmabuf(void)
{
	unsigned long dmabuf;

	stale_after_unseen_free(GDIRECT_MR_PATH_DMABUF, &dmabuf);
	CHECK_EQ(dmabuf, 2);
}

/*
 * Two 512-byte allocations in one host page (as a GPU's allocator packs
 * small ones): alternate gets register each once.  The fake driver packs
 * at 4 KiB, so the test tells the classification cache of two such
 * allocations inside one of the fake's, as a driver would answer.
 */
static void neighbours(void)
{
	struct gdirect_ctx *c = vctx(GDIRECT_MR_PATH_PEER, NULL);
	struct gdirect_mr *m = NULL;
	uint64_t d = fake_cuda_alloc(4 * KiB), id = fake_cuda_buffer_id_at(d);
	struct gdl_cuquery q = { .type = GDIRECT_MEM_DEVICE, .device = 0,
				 .size = 512, .buffer_id = id };
	struct gdirect_mr_info mi;

	pthread_mutex_lock(&c->lock);
	q.base = d;
	CHECK(gdl_alloc_update(c, &q));
	q.base = d + 512;
	CHECK(gdl_alloc_update(c, &q));
	pthread_mutex_unlock(&c->lock);
	for (int i = 0; i < 6; i++) {
		uint64_t a = d + (i & 1) * 512;

		CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(a + 8), 8, 0, 0,
					&m), 0);
		CHECK_EQ(gdirect_mr_info(m, &mi), 0);
		/* The region is its allocation, not its neighbour. */
		CHECK_EQ(mi.base, a);
		CHECK_EQ(mi.length, 512);
		gdirect_mr_put(m);
	}
	CHECK_EQ(fibv_regs(), 2);
	vdone(c);
}

/* The range of a small allocation stays inside it. */
static void small_range(void)
{
	const uint64_t base = 0x7f0000200000ULL;
	struct gdirect_ptr_info i = dev(base + 512, 512);
	uint64_t s, e;

	CHECK_EQ(gdl_mr_range(&i, base + 600, base + 700, 32 * MiB, &s, &e),
		 0);
	CHECK_EQ(s, base + 512);
	CHECK_EQ(e, base + 1024);
}

/* A dma-buf region killed by a free goes back at gdirect_process_events,
 * with no further gdirect_mr_* call. */
static void process_events_drains(void)
{
	struct gdirect_ctx *c = vctx(GDIRECT_MR_PATH_DMABUF, NULL);
	struct gdirect_mr *m = NULL;
	uint64_t d = fake_cuda_alloc(1 * MiB);

	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d), 64, 0, 0, &m), 0);
	gdirect_mr_put(m);
	CHECK_EQ(fibv_live(), 1);
	gdirect_notify_free(P(d), 1 * MiB);
	CHECK_EQ(gdirect_process_events(c) >= 0, 1);
	CHECK_EQ(fibv_live(), 0);
	vdone(c);
}

/* Without hooks, a dma-buf region whose memory was freed goes back at
 * gdirect_process_events too: its BUFFER_ID tells. */
static void process_events_sweeps(void)
{
	struct gdirect_params p;
	struct gdirect_ctx *c;
	struct gdirect_mr *m = NULL, *k = NULL;
	uint64_t d = fake_cuda_alloc(1 * MiB), e = fake_cuda_alloc(1 * MiB);

	params(&p, GDIRECT_INV_BUFFER_ID);
	c = vctx(GDIRECT_MR_PATH_DMABUF, &p);
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d), 64, 0, 0, &m), 0);
	gdirect_mr_put(m);
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(e), 64, 0, 0, &k), 0);
	CHECK_EQ(fibv_live(), 2);
	CHECK_EQ(cuMemFree_v2(d), CUDA_SUCCESS);
	CHECK_EQ(gdirect_process_events(c) >= 0, 1);
	CHECK_EQ(fibv_live(), 1);
	/* A held region stays until its put, as with hooks. */
	CHECK_EQ(cuMemFree_v2(e), CUDA_SUCCESS);
	CHECK_EQ(gdirect_process_events(c) >= 0, 1);
	CHECK_EQ(fibv_live(), 1);
	gdirect_mr_put(k);
	vdone(c);
}

/* Unused regions above max_regions or max_bytes are deregistered, least
 * recently used first. */
static void limits(void)
{
	struct gdirect_params p;
	struct gdirect_ctx *c;
	struct gdirect_mr *m = NULL;
	uint64_t d[4];

	params(&p, GDIRECT_INV_HOOKS);
	p.max_regions = 2;
	c = vctx(GDIRECT_MR_PATH_PEER, &p);
	for (int i = 0; i < 4; i++) {
		d[i] = fake_cuda_alloc(64 * KiB);
		CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d[i]), 8, 0, 0, &m),
			 0);
		gdirect_mr_put(m);
		CHECK(fibv_live() <= 2);
	}
	/* The two most recent stayed. */
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d[3]), 8, 0, 0, &m), 0);
	gdirect_mr_put(m);
	CHECK_EQ(fibv_regs(), 4);
	vdone(c);

	params(&p, GDIRECT_INV_HOOKS);
	p.max_bytes = 200 * KiB;
	c = vctx(GDIRECT_MR_PATH_PEER, &p);
	for (int i = 0; i < 4; i++) {
		d[i] = fake_cuda_alloc(64 * KiB);
		CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d[i]), 8, 0, 0, &m),
			 0);
		gdirect_mr_put(m);
		CHECK(fibv_live() <= 3);
	}
	vdone(c);
}

/* GPU memory registered with the NIC gets SYNC_MEMOPS, as a BAR pin's
 * does; VMM memory, which the driver refuses it, is registered without. */
static void sync_memops(void)
{
	struct gdirect_ctx *c = vctx(GDIRECT_MR_PATH_PEER, NULL);
	struct gdirect_mr *m = NULL;
	uint64_t d = fake_cuda_alloc(1 * MiB);
	uint64_t v = fake_cuda_alloc_vmm(1 * MiB, true);
	struct gdirect_stats st;

	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d), 64, 0, 0, &m), 0);
	gdirect_mr_put(m);
	CHECK_EQ(fake_cuda_sync_count(d), 1);
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(v), 64, 0, 0, &m), 0);
	gdirect_mr_put(m);
	gdirect_stats(c, &st);
	CHECK_EQ(st.sync_memops_vmm, 1);
	CHECK_EQ(st.mr_regs_peer, 2);
	vdone(c);
}

/* The NIC cache's lock: the first member of its state (verbs.c). */
static pthread_mutex_t *cache_lock(struct gdirect_ctx *c)
{
	return (pthread_mutex_t *)(void *)c->mr;
}

static void on_alarm(int sig)
{
	(void)sig;
	_exit(3);
}

/* A put in a fork child only counts: it must not take a lock another
 * parent thread held at the fork.  The cache's lock is held here across
 * the fork, as that thread would. */
static void fork_child_put(void)
{
	struct gdirect_ctx *c = vctx(GDIRECT_MR_PATH_PEER, NULL);
	struct gdirect_mr *m = NULL;
	uint64_t d = fake_cuda_alloc(1 * MiB);
	int st = -1;
	pid_t pid;

	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d), 64, 0, 0, &m), 0);
	pthread_mutex_lock(cache_lock(c));
	pid = fork();
	if (pid == 0) {
		signal(SIGALRM, on_alarm);
		alarm(5);
		gdirect_mr_put(m);
		_exit(fibv_live() == 1 ? 0 : 4);
	}
	pthread_mutex_unlock(cache_lock(c));
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	/* 3: the child's put hung on the lock. */
	CHECK_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), 0);
	gdirect_mr_put(m);
	vdone(c);
}

static unsigned long retry_regs;

static void free_while_registering(uint64_t addr, uint64_t len)
{
	/* Stop after 50, so that a cache that retries without end ends. */
	if (retry_regs++ < 50)
		gdirect_notify_free(P(addr), len);
}

/* A registration whose memory is reported freed every time it registers
 * gives up after a bounded number of tries. */
static void bounded_retry(void)
{
	struct gdirect_ctx *c = vctx(GDIRECT_MR_PATH_PEER, NULL);
	struct gdirect_mr *m = NULL;
	uint64_t d = fake_cuda_alloc(1 * MiB);

	retry_regs = 0;
	fibv.on_reg = free_while_registering;
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d), 64, 0, 0, &m), -EAGAIN);
	fibv.on_reg = NULL;
	CHECK(m == NULL);
	CHECK(retry_regs <= 9);
	CHECK_EQ(fibv_live(), 0);
	vdone(c);
}

/* gdirect_mr_flush_pd deregisters one domain's regions, the others'
 * stay; a domain with a region held answers -EBUSY. */
static void flush_pd(void)
{
	struct gdirect_ctx *c = vctx(GDIRECT_MR_PATH_PEER, NULL);
	struct gdirect_mr *m = NULL, *k = NULL;
	uint64_t d = fake_cuda_alloc(1 * MiB);

	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d), 64, 0, 0, &m), 0);
	gdirect_mr_put(m);
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[2], P(d), 64, 0, 0, &m), 0);
	gdirect_mr_put(m);
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[1], P(d), 64, 0, 0, &k), 0);
	CHECK_EQ(gdirect_mr_flush_pd(c, &fibv_pd[0]), 1);
	CHECK_EQ(fibv.live_pd[0], 0);
	CHECK_EQ(fibv.live_pd[2], 1);
	CHECK_EQ(gdirect_mr_flush_pd(c, &fibv_pd[1]), -EBUSY);
	CHECK_EQ(fibv.live_pd[1], 1);
	gdirect_mr_put(k);
	CHECK_EQ(gdirect_mr_flush_pd(c, &fibv_pd[1]), 1);
	CHECK_EQ(fibv.live_pd[1], 0);
	CHECK_EQ(gdirect_mr_flush_pd(c, NULL), -EINVAL);
	vdone(c);
}

/* A device that refuses for lack of resources evicts its own unused
 * regions, not another device's. */
static void evict_own_device(void)
{
	struct gdirect_ctx *c = vctx(GDIRECT_MR_PATH_PEER, NULL);
	struct gdirect_mr *m = NULL, *k = NULL;
	uint64_t d[3];
	struct gdirect_stats st;

	for (int i = 0; i < 3; i++)
		d[i] = fake_cuda_alloc(64 * KiB);
	/* Device 1's region is the least recently used. */
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[1], P(d[0]), 8, 0, 0, &m), 0);
	gdirect_mr_put(m);
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d[1]), 8, 0, 0, &m), 0);
	gdirect_mr_put(m);
	fibv.limit[0] = 1;
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d[2]), 8, 0, 0, &m), 0);
	gdirect_mr_put(m);
	CHECK_EQ(fibv.live[1], 1);
	CHECK_EQ(fibv.live[0], 1);
	gdirect_stats(c, &st);
	CHECK_EQ(st.mr_evictions, 1);
	/* Held, it cannot be evicted: the refusal is the answer. */
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d[2]), 8, 0, 0, &k), 0);
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d[1]), 8, 0, 0, &m),
		 -ENOMEM);
	CHECK(strstr(gdirect_errmsg(), "fake0"));
	fibv.limit[0] = 0;
	gdirect_mr_put(k);
	vdone(c);
}

/* gdirect_mr_info's valid: 1 for a live region, 0 once its memory was
 * freed (seen by the hooks or not). */
static void valid_flag(void)
{
	struct gdirect_ctx *c = vctx(GDIRECT_MR_PATH_PEER, NULL);
	struct gdirect_mr *m = NULL, *k = NULL;
	uint64_t d = fake_cuda_alloc(1 * MiB), e = fake_cuda_alloc(1 * MiB);
	struct gdirect_mr_info mi;

	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d), 64, 0, 0, &m), 0);
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(e), 64, 0, 0, &k), 0);
	CHECK_EQ(gdirect_mr_info(m, &mi), 0);
	CHECK_EQ(mi.valid, 1);
	/* Seen: the hooks kill the region. */
	gdirect_notify_free(P(d), 1 * MiB);
	CHECK_EQ(gdirect_mr_info(m, &mi), 0);
	CHECK_EQ(mi.valid, 0);
	/* Unseen: the BUFFER_ID tells. */
	CHECK_EQ(cuMemFree_v2(e), CUDA_SUCCESS);
	CHECK_EQ(gdirect_mr_info(k, &mi), 0);
	CHECK_EQ(mi.valid, 0);
	gdirect_mr_put(m);
	gdirect_mr_put(k);
	vdone(c);
}

/* struct gdirect_mr_info as GDIRECT_0.2 shipped it, before valid. */
struct mr_info_0_2 {
	struct ibv_mr *mr;
	uint32_t lkey, rkey;
	uint64_t base;
	uint64_t length;
	uint64_t iova;
	enum gdirect_mr_via via;
	int access;
};

/* gdirect_mr_info@GDIRECT_0.2 (gdl_mr_info_v02 in the library) writes
 * the structure of GDIRECT_0.2 and not one byte past it: a program built
 * then passes that much; @@GDIRECT_0.3 writes the whole one. */
static void info_versions(void)
{
	struct gdirect_ctx *c = vctx(GDIRECT_MR_PATH_PEER, NULL);
	struct gdirect_mr *m = NULL;
	uint64_t d = fake_cuda_alloc(1 * MiB);
	unsigned char buf[sizeof(struct gdirect_mr_info) + 16];
	struct gdirect_mr_info mi;
	size_t i, past = 0;

	CHECK_EQ(sizeof(struct mr_info_0_2), GDL_MR_INFO_V02_SIZE);
	CHECK(sizeof(struct gdirect_mr_info) > GDL_MR_INFO_V02_SIZE);
	CHECK_EQ(gdl_mr_info_v02(NULL, buf), -EINVAL);
	CHECK_EQ(gdl_mr_info_v02(m, NULL), -EINVAL);
	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d), 64, 0, 0, &m), 0);
	memset(buf, 0xa5, sizeof(buf));
	CHECK_EQ(gdl_mr_info_v02(m, buf), 0);
	for (i = GDL_MR_INFO_V02_SIZE; i < sizeof(buf); i++)
		past += buf[i] != 0xa5;
	CHECK_EQ(past, 0);
	/* The same fields as the new version's, which writes valid too. */
	memset(&mi, 0xa5, sizeof(mi));
	CHECK_EQ(gdirect_mr_info(m, &mi), 0);
	CHECK_EQ(memcmp(buf, &mi, GDL_MR_INFO_V02_SIZE), 0);
	CHECK_EQ(((struct mr_info_0_2 *)buf)->base, d);
	CHECK_EQ(mi.valid, 1);
	gdirect_mr_put(m);
	vdone(c);
}

/* A region still held when its context is destroyed goes back at its
 * last put, which must not touch the destroyed context. */
static void put_after_destroy(void)
{
	struct gdirect_ctx *c = vctx(GDIRECT_MR_PATH_PEER, NULL);
	struct gdirect_mr *m = NULL;
	uint64_t d = fake_cuda_alloc(1 * MiB);

	CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0], P(d), 64, 0, 0, &m), 0);
	gdirect_ctx_destroy(c);
	CHECK_EQ(fibv_live(), 1);
	gdirect_mr_put(m);
	CHECK_EQ(fibv_live(), 0);
	fake_cuda_reset();
}

static void *put_one(void *m)
{
	gdirect_mr_put(m);
	return NULL;
}

/* Two regions held across gdirect_ctx_destroy(), put by two threads
 * while the first put still deregisters: neither may touch the engine
 * after the other freed it (ASan), and both are deregistered. */
static void puts_after_destroy_race(void)
{
	struct gdirect_ctx *c = vctx(GDIRECT_MR_PATH_PEER, NULL);
	struct gdirect_mr *m[2] = { NULL, NULL };
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		CHECK_EQ(gdirect_mr_get(c, &fibv_pd[0],
					P(fake_cuda_alloc(1 * MiB)), 64, 0, 0,
					&m[i]), 0);
	gdirect_ctx_destroy(c);
	CHECK_EQ(fibv_live(), 2);
	/* The first put's deregistration is slow, the second's is not:
	 * the second is over while the first still deregisters. */
	__atomic_store_n(&fibv.dereg_delay_us, 200000, __ATOMIC_RELAXED);
	CHECK_EQ(pthread_create(&t[0], NULL, put_one, m[0]), 0);
	usleep(50000);
	__atomic_store_n(&fibv.dereg_delay_us, 0, __ATOMIC_RELAXED);
	CHECK_EQ(pthread_create(&t[1], NULL, put_one, m[1]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&fibv.dereg_delay_us, 0, __ATOMIC_RELAXED);
	CHECK_EQ(fibv_live(), 0);
	fake_cuda_reset();
}

/* A stand-in for a caller's dma-buf: a memfd of size bytes (an inode of
 * its own, shared by its dups, with its size in st_size, as a dma-buf's
 * descriptor has). */
static int fake_dmabuf(off_t size)
{
	int fd = memfd_create("fake-dmabuf", MFD_CLOEXEC);

	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, size), 0);
	return fd;
}

/*
 * gdirect_mr_get_dmabuf: regions keyed by the buffer, not the descriptor
 * (a dup hits), nor its offsets alone (another buffer, or the same buffer
 * at another iova, registers); ranges widened to 4 KiB pages inside the
 * buffer; a reported free of the same numbers as addresses leaves the
 * region alone; bad descriptors and ranges refused before any
 * registration; flushed per domain like any region.
 */
static void dmabuf_by_identity(void)
{
	struct gdirect_ctx *c = vctx(GDIRECT_MR_PATH_AUTO, NULL);
	struct gdirect_mr *m, *k, *o;
	struct gdirect_mr_info mi, ki;
	int fd = fake_dmabuf(64 * KiB), fd2 = dup(fd);
	int other = fake_dmabuf(64 * KiB);
	uint64_t iova = 0x7f0000000000ULL;

	CHECK(fd2 >= 0);
	CHECK_EQ(gdirect_mr_get_dmabuf(c, &fibv_pd[0], fd, 5000, 100,
				       iova + 5000, 0, 0, &m), 0);
	CHECK_EQ(fibv.regs_dmabuf, 1);
	CHECK_EQ(gdirect_mr_info(m, &mi), 0);
	CHECK_EQ(mi.via, GDIRECT_MR_VIA_DMABUF);
	CHECK_EQ(mi.base, 4096);
	CHECK_EQ(mi.length, 4096);
	CHECK_EQ(mi.iova, iova + 4096);
	CHECK_EQ(mi.valid, 1);
	CHECK_EQ(gdirect_mr_addr(m, P(6000)), iova + 6000);
	CHECK_EQ(gdirect_mr_addr(m, P(9000)), 0);
	/* The same buffer through a dup, at the same iova: a hit. */
	CHECK_EQ(gdirect_mr_get_dmabuf(c, &fibv_pd[0], fd2, 4100, 20,
				       iova + 4100, 0, 0, &k), 0);
	CHECK(k == m);
	CHECK_EQ(fibv.regs_dmabuf, 1);
	gdirect_mr_put(k);
	/* Another buffer with the same offsets, the same buffer at
	 * another iova, another domain: a registration each. */
	CHECK_EQ(gdirect_mr_get_dmabuf(c, &fibv_pd[0], other, 5000, 100,
				       iova + 5000, 0, 0, &o), 0);
	CHECK(o != m);
	gdirect_mr_put(o);
	CHECK_EQ(gdirect_mr_get_dmabuf(c, &fibv_pd[0], fd, 5000, 100,
				       5000, 0, 0, &o), 0);
	CHECK(o != m);
	CHECK_EQ(gdirect_mr_info(o, &ki), 0);
	CHECK_EQ(ki.iova, 4096);
	gdirect_mr_put(o);
	CHECK_EQ(gdirect_mr_get_dmabuf(c, &fibv_pd[2], fd, 5000, 100,
				       iova + 5000, 0, 0, &o), 0);
	CHECK(o != m);
	gdirect_mr_put(o);
	CHECK_EQ(fibv.regs_dmabuf, 4);
	/* A free reported over the same numbers as addresses is not this
	 * buffer's. */
	gdirect_notify_free(P(1), 1 * MiB);
	CHECK_EQ(gdirect_mr_info(m, &mi), 0);
	CHECK_EQ(mi.valid, 1);
	gdirect_mr_put(m);
	CHECK_EQ(gdirect_mr_get_dmabuf(c, &fibv_pd[0], fd, 4096, 4096,
				       iova + 4096, 0, 0, &k), 0);
	CHECK(k == m);
	gdirect_mr_put(k);
	/* The last page, clipped to the buffer; then past its end. */
	CHECK_EQ(gdirect_mr_get_dmabuf(c, &fibv_pd[0], fd, 64 * KiB - 10, 10,
				       iova + 64 * KiB - 10, 0, 0, &o), 0);
	CHECK_EQ(gdirect_mr_info(o, &ki), 0);
	CHECK_EQ(ki.base + ki.length, 64 * KiB);
	gdirect_mr_put(o);
	CHECK_EQ(fibv.regs_dmabuf, 5);
	CHECK_EQ(gdirect_mr_get_dmabuf(c, &fibv_pd[0], fd, 64 * KiB - 10, 11,
				       iova, 0, 0, &o), -EINVAL);
	CHECK_EQ(gdirect_mr_get_dmabuf(c, &fibv_pd[0], -1, 0, 10, iova, 0, 0,
				       &o), -EBADF);
	CHECK_EQ(gdirect_mr_get_dmabuf(c, &fibv_pd[0], fd, 0, 0, iova, 0, 0,
				       &o), -EINVAL);
	CHECK_EQ(gdirect_mr_get_dmabuf(c, &fibv_pd[0], fd, 0, 10, iova, 0, 1,
				       &o), -EINVAL);
	CHECK_EQ(fibv.regs_dmabuf, 5);
	/* Flushed per domain like any region. */
	CHECK_EQ(gdirect_mr_flush_pd(c, &fibv_pd[2]), 1);
	CHECK_EQ(fibv.live_pd[2], 0);
	close(fd);
	close(fd2);
	close(other);
	vdone(c);
}

int main(void)
{
	need_fake_cuda();
	TAP_TEST(arguments);
	TAP_TEST(refused_memory);
	TAP_TEST(ranges);
	TAP_TEST(stale_peer);
	TAP_TEST(stale_dmabuf);
	TAP_TEST(neighbours);
	TAP_TEST(small_range);
	TAP_TEST(process_events_drains);
	TAP_TEST(process_events_sweeps);
	TAP_TEST(limits);
	TAP_TEST(sync_memops);
	TAP_TEST(fork_child_put);
	TAP_TEST(bounded_retry);
	TAP_TEST(flush_pd);
	TAP_TEST(evict_own_device);
	TAP_TEST(valid_flag);
	TAP_TEST(info_versions);
	TAP_TEST(put_after_destroy);
	TAP_TEST(puts_after_destroy_race);
	TAP_TEST(dmabuf_by_identity);
	return tap_done();
}
