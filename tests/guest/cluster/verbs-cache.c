/* SPDX-License-Identifier: MIT */
/*
 * cluster-verbs-cache: libgdirect's verbs registration cache (gdirect_mr_get)
 * against Soft-RoCE (rxe0) on node 0 of the cluster, in loopback (an RC
 * queue pair connected to itself); node 1 has nothing to do.
 *
 * Host memory (GDIRECT_CTX_CACHE_HOST):
 *  - two interior pointers of one page: one registration, one hit;
 *  - an RDMA WRITE through the lkey, rkey and gdirect_mr_addr() lands at
 *    the right offset, and nowhere else;
 *  - memory freed (gdirect_notify_free, munmap) and mapped again at the
 *    same address is registered afresh, and a WRITE lands in the new pages;
 *  - LRU eviction when the NIC refuses: in a child without CAP_IPC_LOCK and
 *    with RLIMIT_MEMLOCK of 4 pages, the kernel's pinning accounting
 *    (ib_umem_get) refuses a fifth registered page with ENOMEM; the cache
 *    deregisters the least recently used unused region and retries; with
 *    every region in use it returns -ENOMEM and leaks nothing.
 * GPU memory (emulated CUDA, gdirect.ko), per path (dma-buf, peer memory),
 * each skipped loudly when the guest's rxe cannot do it:
 *  - two interior pointers of one cuMemAlloc: one registration of the whole
 *    allocation, one hit;
 *  - an RDMA WRITE lands at the right offset (cuMemcpyDtoH);
 *  - cuMemFree (through the interposer) then cuMemAlloc at the same VA: a
 *    new registration, and a WRITE lands in the new memory;
 *  - LRU eviction when the NIC refuses (peer memory): more 8 MiB
 *    allocations than the emulated GPU's free BAR1 holds, registered in
 *    turn; the pin behind the registration that finds BAR1 full fails with
 *    ENOMEM.  Skipped for dma-buf: the emulator's exporter takes no BAR1.
 * A caller's dma-buf (gdirect_mr_get_dmabuf): an export of a cuMemAlloc
 * and a dup of it are one registration, and a WRITE through it lands.
 * At the end: no memory region left (libgdirect's counts and the kernel's,
 * `rdma resource`), no pins and no BAR1 bytes (the emulator's counters).
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include <gdirect_verbs.h>

#include "emu_knob.h"
#include "rc-qp.h"
#include "tap.h"

#define KiB 1024ULL
#define PG 4096ULL

struct rdma {
	struct ibv_context *dev;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static int gid_v2_index(struct ibv_context *dev, union ibv_gid *gid)
{
	static const unsigned char v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	for (int i = 0; i < 32; i++) {
		char path[96], type[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/sys/class/infiniband/rxe0/ports/"
			 "1/gid_attrs/types/%d", i);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(type, sizeof(type), f))
			type[0] = 0;
		fclose(f);
		if (strncmp(type, "RoCE v2", 7) || ibv_query_gid(dev, 1, i, gid))
			continue;
		if (!memcmp(gid->raw, v4mapped, 12))
			return i;
	}
	return -1;
}

/* rxe0, a domain, and (qp) an RC queue pair connected to itself. */
static int rdma_open(struct rdma *r, int qp)
{
	const char *step;
	struct ibv_device **l;
	int n, gi;
	union ibv_gid gid;

	memset(r, 0, sizeof(*r));
	l = ibv_get_device_list(&n);
	for (int i = 0; l && i < n; i++)
		if (!strcmp(ibv_get_device_name(l[i]), "rxe0"))
			r->dev = ibv_open_device(l[i]);
	if (l)
		ibv_free_device_list(l);
	if (!r->dev || !(r->pd = ibv_alloc_pd(r->dev))) {
		tap_diag("cannot open rxe0 or allocate a domain: %s",
			 strerror(errno));
		return -1;
	}
	if (!qp)
		return 0;
	gi = gid_v2_index(r->dev, &gid);
	r->cq = ibv_create_cq(r->dev, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = r->cq, .recv_cq = r->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	if (gi < 0 || !r->cq || !(r->qp = ibv_create_qp(r->pd, &ia))) {
		tap_diag("no RoCE v2 GID (%d), CQ or QP on rxe0", gi);
		return -1;
	}
	if (rc_qp_connect(r->qp, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			  &gid, gi, r->qp->qp_num, 0, 0, &step))
		goto bad;
	return 0;
bad:
	tap_diag("connecting the queue pair to itself failed: %s",
		 strerror(errno));
	return -1;
}

static void rdma_close(struct rdma *r)
{
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->cq)
		ibv_destroy_cq(r->cq);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	if (r->dev)
		ibv_close_device(r->dev);
}

/* An RDMA WRITE of len bytes from src to dst, through their regions and
 * the addresses gdirect_mr_addr() gives; 0 when it completed. */
static int rdma_write(struct rdma *r, struct gdirect_mr *sm, const void *src,
		      struct gdirect_mr *dm, const void *dst, uint32_t len)
{
	struct gdirect_mr_info si, di;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	int n = 0;

	gdirect_mr_info(sm, &si);
	gdirect_mr_info(dm, &di);
	sge = (struct ibv_sge){ .addr = gdirect_mr_addr(sm, src),
				.length = len, .lkey = si.lkey };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = gdirect_mr_addr(dm, dst);
	wr.wr.rdma.rkey = di.rkey;
	if (!sge.addr || !wr.wr.rdma.remote_addr || ibv_post_send(r->qp, &wr, &bad)) {
		tap_diag("posting the RDMA WRITE failed");
		return -1;
	}
	for (int i = 0; i < 10000 && !(n = ibv_poll_cq(r->cq, 1, &wc)); i++)
		usleep(1000);
	if (n != 1 || wc.status != IBV_WC_SUCCESS) {
		tap_diag("RDMA WRITE: %d completions, status %s", n,
			 n == 1 ? ibv_wc_status_str(wc.status) : "none");
		return -1;
	}
	return 0;
}

static struct gdirect_ctx *mkctx(uint32_t path, uint32_t flags)
{
	struct gdirect_params p;
	struct gdirect_ctx *c = NULL;

	gdirect_params_init(&p);
	p.mr_path = path;
	p.flags |= flags;
	if (gdirect_ctx_create(&p, &c))
		tap_diag("gdirect_ctx_create: %s", gdirect_errmsg());
	return c;
}

static uint64_t live_mrs(struct gdirect_ctx *c)
{
	struct gdirect_stats st;

	gdirect_stats(c, &st);
	return st.mr_regs_dmabuf + st.mr_regs_peer + st.mr_regs_host -
	       st.mr_deregs;
}

/* The kernel's count of memory regions on rxe0 (`rdma resource`, whose
 * line reads "0: rxe0: pd 1 cq 1 qp 1 cm_id 0 mr 0 ctx 1 srq 0"); -1
 * when it cannot be read, which fails the checks that use it. */
static long kernel_mrs(void)
{
	FILE *f = popen("/usr/bin/rdma resource show 2>&1", "r");
	char line[256], *p;
	long n = -1;

	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "rxe0") && (p = strstr(line, " mr ")))
			n = strtol(p + 4, NULL, 10);
		else
			tap_diag("rdma resource: %s", line);
	}
	if (f)
		pclose(f);
	return n;
}

static const int ACC = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ;

static void host_cases(struct rdma *r)
{
	struct gdirect_ctx *c = mkctx(GDIRECT_MR_PATH_AUTO,
				      GDIRECT_CTX_CACHE_HOST);
	struct gdirect_mr *a = NULL, *b = NULL, *s = NULL;
	struct gdirect_stats st;
	unsigned char *src = aligned_alloc(PG, PG), *buf, *buf2;
	int ok;

	buf = mmap(NULL, 16 * KiB, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!c || !src || buf == MAP_FAILED) {
		tap_ok(0, "host memory: set up");
		return;
	}
	memset(buf, 0, 16 * KiB);
	for (unsigned i = 0; i < PG; i++)
		src[i] = (unsigned char)(i * 7 + 3);
	ok = !gdirect_mr_get(c, r->pd, buf + 100, 64, ACC, 0, &a) &&
	     !gdirect_mr_get(c, r->pd, buf + 3000, 64, ACC, 0, &b);
	gdirect_stats(c, &st);
	tap_ok(ok && a == b && st.mr_regs_host == 1 && st.mr_hits == 1,
	       "host: two interior pointers of one page, one registration "
	       "(%llu), one hit (%llu)", (unsigned long long)st.mr_regs_host,
	       (unsigned long long)st.mr_hits);
	ok = ok && !gdirect_mr_get(c, r->pd, src, PG, ACC, 0, &s) &&
	     !rdma_write(r, s, src + 5, b, buf + 3000, 77);
	for (unsigned i = 0; ok && i < 4 * PG; i++)
		if (buf[i] != (i >= 3000 && i < 3077 ? src[5 + i - 3000] : 0)) {
			tap_diag("byte %u: %u", i, buf[i]);
			ok = 0;
		}
	tap_ok(ok, "host: RDMA WRITE of 77 B through lkey/rkey/mr_addr lands "
	       "at offset 3000 and nowhere else");
	gdirect_mr_put(a);
	gdirect_mr_put(b);

	/* Free and map again at the same address. */
	gdirect_notify_free(buf, 16 * KiB);
	munmap(buf, 16 * KiB);
	buf2 = mmap(buf, 16 * KiB, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	a = NULL;
	ok = buf2 == buf && !gdirect_mr_get(c, r->pd, buf + 100, 64, ACC, 0, &a);
	gdirect_stats(c, &st);
	ok = ok && st.mr_regs_host == 3 && st.mr_hits == 1 &&
	     !rdma_write(r, s, src, a, buf + 200, 16) &&
	     !memcmp(buf + 200, src, 16);
	tap_ok(ok, "host: freed, mapped again at %p: registered afresh (%llu "
	       "registrations), a WRITE lands in the new pages", (void *)buf,
	       (unsigned long long)st.mr_regs_host);
	if (a)
		gdirect_mr_put(a);
	gdirect_mr_put(s);
	gdirect_mr_flush(c);
	tap_ok(live_mrs(c) == 0, "host: flushed, no region left (%llu)",
	       (unsigned long long)live_mrs(c));
	gdirect_ctx_destroy(c);
	munmap(buf, 16 * KiB);
	free(src);

	/* Without GDIRECT_CTX_CACHE_HOST nothing of host memory is kept:
	 * each get registers, each last put deregisters. */
	c = mkctx(GDIRECT_MR_PATH_AUTO, 0);
	buf = aligned_alloc(PG, PG);
	ok = c && buf && !gdirect_mr_get(c, r->pd, buf, 64, ACC, 0, &a);
	if (ok)
		gdirect_mr_put(a);
	ok = ok && !gdirect_mr_get(c, r->pd, buf, 64, ACC, 0, &a);
	if (ok)
		gdirect_mr_put(a);
	if (c)
		gdirect_stats(c, &st);
	tap_ok(ok && st.mr_regs_host == 2 && st.mr_hits == 0 &&
	       st.mr_deregs == 2, "host, not cached: two gets, two "
	       "registrations, two deregistrations at the puts");
	gdirect_ctx_destroy(c);
	free(buf);
}

/* CAP_IPC_LOCK out of the effective set: RLIMIT_MEMLOCK then applies. */
static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_IPC_LOCK / 32].effective &= ~(1U << (CAP_IPC_LOCK % 32));
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

static void evict_child(void)
{
	struct rlimit rl = { 4 * PG, 4 * PG };
	struct gdirect_mr *m[8] = { 0 }, *x = NULL;
	struct gdirect_stats st;
	struct gdirect_ctx *c;
	struct rdma r;
	unsigned char *buf;
	int ok = 1, rc;

	if (drop_ipc_lock() || setrlimit(RLIMIT_MEMLOCK, &rl)) {
		tap_ok(0, "eviction: drop CAP_IPC_LOCK, RLIMIT_MEMLOCK 16 KiB");
		return;
	}
	c = mkctx(GDIRECT_MR_PATH_AUTO, GDIRECT_CTX_CACHE_HOST);
	buf = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (!c || buf == MAP_FAILED || rdma_open(&r, 0)) {
		tap_ok(0, "eviction: set up");
		return;
	}
	/* Eight pages two apart, one at a time, each put at once: the
	 * fifth and later are refused until the oldest is deregistered. */
	for (int i = 0; i < 8; i++) {
		rc = gdirect_mr_get(c, r.pd, buf + 2 * i * PG, 64, ACC, 0, &x);
		if (rc) {
			tap_diag("page %d: %s", i, gdirect_errmsg());
			ok = 0;
			break;
		}
		gdirect_mr_put(x);
	}
	gdirect_stats(c, &st);
	tap_ok(ok && st.mr_regs_host == 8 && st.mr_evictions == 4 &&
	       live_mrs(c) == 4, "eviction: 8 pages under a 4-page "
	       "RLIMIT_MEMLOCK: %llu registrations, %llu evictions, %llu live",
	       (unsigned long long)st.mr_regs_host,
	       (unsigned long long)st.mr_evictions,
	       (unsigned long long)live_mrs(c));
	/* Least recently used went first: page 7 hits, page 0 does not. */
	ok = !gdirect_mr_get(c, r.pd, buf + 14 * PG, 8, ACC, 0, &x);
	gdirect_mr_put(x);
	gdirect_stats(c, &st);
	ok = ok && st.mr_hits == 1 && st.mr_regs_host == 8;
	ok = ok && !gdirect_mr_get(c, r.pd, buf, 8, ACC, 0, &x);
	gdirect_mr_put(x);
	gdirect_stats(c, &st);
	tap_ok(ok && st.mr_regs_host == 9 && st.mr_evictions == 5,
	       "eviction: LRU order (the newest page hit, the oldest "
	       "registered again)");
	/* Every region in use: nothing to evict, a clean -ENOMEM. */
	for (int i = 0; i < 4; i++)
		ok = ok && !gdirect_mr_get(c, r.pd, buf + 2 * (i + 4) * PG, 8,
					   ACC, 0, &m[i]);
	gdirect_stats(c, &st);
	rc = gdirect_mr_get(c, r.pd, buf + 15 * PG, 8, ACC, 0, &x);
	tap_diag("all in use: %d, %s", rc, gdirect_errmsg());
	tap_ok(ok && rc == -ENOMEM && x == NULL && live_mrs(c) == 4,
	       "eviction: with every region in use, -ENOMEM and nothing "
	       "leaked (%llu live)", (unsigned long long)live_mrs(c));
	for (int i = 0; i < 4; i++)
		gdirect_mr_put(m[i]);
	gdirect_mr_flush(c);
	gdirect_stats(c, &st);
	tap_ok(live_mrs(c) == 0 && kernel_mrs() == 0,
	       "eviction: flushed, %llu registrations, %llu deregistrations, "
	       "rxe0 has %ld MRs", (unsigned long long)(st.mr_regs_host),
	       (unsigned long long)st.mr_deregs, kernel_mrs());
	gdirect_ctx_destroy(c);
	rdma_close(&r);
}

/*
 * GPU memory the NIC refuses: more 8 MiB allocations than the emulated
 * GPU's free BAR1 space holds, each registered and put in turn.  The pin
 * behind a registration that finds BAR1 full fails with ENOMEM (the
 * emulator's budget, bar1_total less bar1_reserved), and the cache
 * evicts the least recently used region and retries.
 */
static void gpu_evict(struct gdirect_ctx *c, struct rdma *r, const char *name,
		      uint32_t path)
{
	const size_t sz = 8 * 1024 * KiB;
	uint64_t total = emu_stat_u64("bar1_total"),
		 rsv = emu_stat_u64("bar1_reserved"),
		 used = emu_stat_u64("bar1_used");
	CUdeviceptr d[16] = { 0 };
	struct gdirect_stats st0, st;
	struct gdirect_mr *m;
	unsigned n, i;
	int ok = 1;

	if (path == GDIRECT_MR_PATH_DMABUF) {
		/* NVIDIA's exporter maps an import through BAR1 too, but
		 * the emulator's takes nothing from the BAR1 budget, and no
		 * other limit of rxe (a million MRs) can be reached here. */
		tap_skip("GPU eviction", "the emulated GPU's dma-buf exporter "
			 "has no BAR1 budget to run out of: no refusal to "
			 "provoke (eviction is shown on host memory and peer "
			 "memory)");
		return;
	}
	if (total == UINT64_MAX || rsv == UINT64_MAX || used == UINT64_MAX ||
	    total < rsv + used) {
		tap_skip("GPU eviction", "the emulator's BAR1 counters cannot "
			 "be read");
		return;
	}
	n = (unsigned)((total - rsv - used) / sz) + 2;
	if (n > 16) {
		tap_skip("GPU eviction", "BAR1 larger than 16 allocations of "
			 "8 MiB");
		return;
	}
	gdirect_stats(c, &st0);
	for (i = 0; ok && i < n; i++) {
		ok = !cuMemAlloc(&d[i], sz) &&
		     !gdirect_mr_get(c, r->pd, (void *)(d[i] + 4096), 64, ACC,
				     0, &m);
		if (!ok)
			tap_diag("%s: allocation %u of %u: %s", name, i, n,
				 gdirect_errmsg());
		else
			gdirect_mr_put(m);
	}
	gdirect_stats(c, &st);
	tap_ok(ok && st.mr_evictions - st0.mr_evictions >= 2,
	       "%s: %u allocations of 8 MiB, BAR1 free %llu MiB: every one "
	       "registered, %llu evicted when the pin found BAR1 full", name,
	       n, (unsigned long long)((total - rsv - used) >> 20),
	       (unsigned long long)(st.mr_evictions - st0.mr_evictions));
	for (i = 0; i < n; i++)
		if (d[i])
			cuMemFree(d[i]);
}

/* The GPU cases of one path; skipped, saying why, when rxe cannot. */
static void gpu_cases(struct rdma *r, uint32_t path, const char *name,
		      const char *missing)
{
	const size_t sz = 1024 * KiB;
	struct gdirect_ctx *c;
	struct gdirect_mr *a = NULL, *b = NULL, *s = NULL;
	struct gdirect_mr_info ai;
	struct gdirect_stats st;
	unsigned char *src = aligned_alloc(PG, PG), *back = calloc(1, sz);
	CUdeviceptr d = 0, d2 = 0;
	uint64_t *regs;
	int ok, rc;

	if (missing) {
		for (int i = 0; i < 4; i++)
			tap_skip(name, missing);
		free(src);
		free(back);
		return;
	}
	c = mkctx(path, GDIRECT_CTX_CACHE_HOST);
	gdirect_stats(c, &st);
	regs = path == GDIRECT_MR_PATH_DMABUF ? &st.mr_regs_dmabuf
					       : &st.mr_regs_peer;
	for (unsigned i = 0; i < PG; i++)
		src[i] = (unsigned char)(i * 13 + 1);
	ok = c && !cuMemAlloc(&d, sz) && !cuMemsetD8(d, 0, sz);
	rc = ok ? gdirect_mr_get(c, r->pd, (void *)(d + 4096), 256, ACC, 0, &a)
		: -1;
	if (rc)
		tap_diag("%s: %s", name, gdirect_errmsg());
	ok = ok && !rc &&
	     !gdirect_mr_get(c, r->pd, (void *)(d + 512 * KiB), 256, ACC, 0, &b);
	gdirect_stats(c, &st);
	gdirect_mr_info(a, &ai);
	tap_ok(ok && a == b && *regs == 1 && st.mr_hits == 1 && ai.base == d &&
	       ai.length == sz, "%s: two interior pointers of one cuMemAlloc: "
	       "one registration of the whole allocation (%llu), one hit (%llu)",
	       name, (unsigned long long)*regs,
	       (unsigned long long)st.mr_hits);
	ok = ok && !gdirect_mr_get(c, r->pd, src, PG, ACC, 0, &s) &&
	     !rdma_write(r, s, src + 9, b, (void *)(d + 512 * KiB + 40), 333) &&
	     !cuMemcpyDtoH(back, d, sz);
	for (size_t i = 0; ok && i < sz; i++) {
		size_t o = 512 * KiB + 40;

		if (back[i] != (i >= o && i < o + 333 ? src[9 + i - o] : 0)) {
			tap_diag("byte %zu: %u", i, back[i]);
			ok = 0;
		}
	}
	tap_ok(ok, "%s: RDMA WRITE of 333 B lands at offset 512 KiB + 40 of "
	       "the allocation (cuMemcpyDtoH) and nowhere else", name);
	if (a)
		gdirect_mr_put(a);
	if (b)
		gdirect_mr_put(b);
	a = NULL;
	/* cuMemFree through the interposer, then the same VA again. */
	ok = ok && !cuMemFree(d) && !cuMemAlloc(&d2, sz);
	if (ok && d2 != d)
		tap_diag("%s: the new allocation is at %#llx, not %#llx", name,
			 (unsigned long long)d2, (unsigned long long)d);
	ok = ok && d2 == d && !cuMemsetD8(d2, 0, sz) &&
	     !gdirect_mr_get(c, r->pd, (void *)(d2 + 4096), 256, ACC, 0, &a);
	gdirect_stats(c, &st);
	ok = ok && *regs == 2 && !rdma_write(r, s, src, a, (void *)(d2 + 8), 64) &&
	     !cuMemcpyDtoH(back, d2, 128) && !memcmp(back + 8, src, 64);
	tap_ok(ok, "%s: cuMemFree, cuMemAlloc at the same VA: a new "
	       "registration (%llu), a WRITE lands in the new memory", name,
	       (unsigned long long)*regs);
	if (a)
		gdirect_mr_put(a);
	if (s)
		gdirect_mr_put(s);
	if (d2)
		cuMemFree(d2);
	gpu_evict(c, r, name, path);
	gdirect_mr_flush(c);
	gdirect_ctx_destroy(c);
	free(src);
	free(back);
}

/*
 * A caller's dma-buf (gdirect_mr_get_dmabuf): the allocation exported as a
 * dma-buf, registered through its descriptor and through a dup of it at
 * other offsets: one registration, keyed by the buffer; an RDMA WRITE
 * through the region's addresses (offsets in the buffer) lands where
 * cuMemcpyDtoH reads it.
 */
static void dmabuf_identity(struct rdma *r, const char *missing)
{
	const char *name = "GPU, a caller's dma-buf";
	const size_t sz = 256 * KiB;
	const uint64_t iova = 0x100000000ULL;
	struct gdirect_ctx *c;
	struct gdirect_mr *a = NULL, *b = NULL, *s = NULL;
	struct gdirect_stats st;
	unsigned char *src = aligned_alloc(PG, PG), *back = calloc(1, sz);
	CUdeviceptr d = 0;
	int fd = -1, fd2 = -1, ok;

	if (missing) {
		tap_skip(name, missing);
		tap_skip(name, missing);
		free(src);
		free(back);
		return;
	}
	c = mkctx(GDIRECT_MR_PATH_DMABUF, GDIRECT_CTX_CACHE_HOST);
	for (unsigned i = 0; i < PG; i++)
		src[i] = (unsigned char)(i * 7 + 3);
	ok = c && !cuMemAlloc(&d, sz) && !cuMemsetD8(d, 0, sz) &&
	     !cuMemGetHandleForAddressRange(&fd, d, sz,
					    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
					    0) && (fd2 = dup(fd)) >= 0;
	ok = ok && !gdirect_mr_get_dmabuf(c, r->pd, fd, 8192, 100, iova + 8192,
					  ACC, 0, &a);
	if (!ok)
		tap_diag("%s: %s", name, gdirect_errmsg());
	ok = ok && !gdirect_mr_get_dmabuf(c, r->pd, fd2, 9000, 64, iova + 9000,
					  ACC, 0, &b);
	gdirect_stats(c, &st);
	tap_ok(ok && a == b && st.mr_regs_dmabuf == 1 && st.mr_hits == 1,
	       "%s: its descriptor and a dup of it, at two offsets: one "
	       "registration (%llu), one hit (%llu)", name,
	       (unsigned long long)st.mr_regs_dmabuf,
	       (unsigned long long)st.mr_hits);
	ok = ok && !gdirect_mr_get(c, r->pd, src, PG, ACC, 0, &s) &&
	     !rdma_write(r, s, src, b, (void *)(uintptr_t)9000, 77) &&
	     !cuMemcpyDtoH(back, d, sz);
	for (size_t i = 0; ok && i < sz; i++)
		if (back[i] != (i >= 9000 && i < 9077 ? src[i - 9000] : 0)) {
			tap_diag("byte %zu: %u", i, back[i]);
			ok = 0;
		}
	tap_ok(ok, "%s: RDMA WRITE of 77 B to offset 9000 lands there in the "
	       "allocation (cuMemcpyDtoH) and nowhere else", name);
	if (a)
		gdirect_mr_put(a);
	if (b)
		gdirect_mr_put(b);
	if (s)
		gdirect_mr_put(s);
	if (fd2 >= 0)
		close(fd2);
	if (fd >= 0)
		close(fd);
	if (c) {
		gdirect_mr_flush(c);
		gdirect_ctx_destroy(c);
	}
	if (d)
		cuMemFree(d);
	free(src);
	free(back);
}

/* Why rxe0 cannot register GPU memory by peer memory, or NULL. */
static const char *peer_missing(struct rdma *r)
{
	static char why[256];
	CUdeviceptr d;
	struct ibv_mr *m;
	uint64_t pins = emu_stat_u64("pins");

	if (cuMemAlloc(&d, 64 * KiB))
		return "cuMemAlloc failed";
	m = ibv_reg_mr(r->pd, (void *)d, 64 * KiB, ACC);
	if (!m) {
		snprintf(why, sizeof(why), "rxe0 cannot register GPU memory "
			 "(ibv_reg_mr of cuMemAlloc memory: %s): needs the "
			 "rdma_rxe that pins through gdirect (emu/rxe, branch "
			 "rxe-kernel)", strerror(errno));
		cuMemFree(d);
		return why;
	}
	if (emu_stat_u64("pins") <= pins) {
		snprintf(why, sizeof(why), "rxe0 registered GPU memory "
			 "without pinning it through gdirect (the emulator's "
			 "pins stayed %llu): not the patched rdma_rxe",
			 (unsigned long long)pins);
		ibv_dereg_mr(m);
		cuMemFree(d);
		return why;
	}
	ibv_dereg_mr(m);
	cuMemFree(d);
	return NULL;
}

static const char *dmabuf_missing(struct rdma *r)
{
	static char why[256];
	struct ibv_mr *m;

	errno = 0;
	m = ibv_reg_dmabuf_mr(r->pd, 0, 0, 0, -1, 0);
	if (m)
		ibv_dereg_mr(m);
	if (!m && errno == EBADF)
		return NULL;
	snprintf(why, sizeof(why), "rxe0 cannot import a dma-buf (probe "
		 "ibv_reg_dmabuf_mr(fd -1): %s, not EBADF): needs rdma-core "
		 "56.1's rxe provider (branch rdma-user) and the rdma_rxe with "
		 "reg_user_mr_dmabuf (branch rxe-kernel)",
		 m ? "success" : strerror(errno));
	return why;
}

/* The GPU cases, in a child: the emulator's module unloads only once the
 * CUDA context's file is closed. */
static void gpu_body(void)
{
	const char *none = "no emulated GPU (gdirect.ko, nvp2p_emu.ko, CUDA)";
	struct rdma r;
	int gpu = 0;

	if (!access("/dev/gdirect", F_OK)) {
		CUdevice dev;
		CUcontext cc;

		gpu = !cuInit(0) && !cuDeviceGet(&dev, 0) &&
		      !cuDevicePrimaryCtxRetain(&cc, dev) &&
		      !cuCtxSetCurrent(cc);
	}
	if (rdma_open(&r, 1))
		gpu = 0;
	gpu_cases(&r, GDIRECT_MR_PATH_DMABUF, "GPU, dma-buf",
		  gpu ? dmabuf_missing(&r) : none);
	gpu_cases(&r, GDIRECT_MR_PATH_PEER, "GPU, peer memory",
		  gpu ? peer_missing(&r) : none);
	dmabuf_identity(&r, gpu ? dmabuf_missing(&r) : none);
	rdma_close(&r);
}

int main(void)
{
	struct rdma r;
	int loaded_emu = 0, loaded_gd = 0, gpu;

	if (system(". /tests/lib.sh && . /tests/cluster-lib.sh && in_cluster"
		   " && [ \"$node\" = 0 ]")) {
		/* One SKIP line, which the harness counts, not a silent 1..0. */
		tap_plan(1);
		tap_skip("libgdirect's verbs registration cache on rxe0",
			 "it runs on node 0 of tests/harness/cluster.py only");
		return tap_done();
	}
	if (system(". /tests/lib.sh && . /tests/cluster-lib.sh && cluster_up"))
		tap_skip_all("rxe0 did not come up (cluster_up)");
	tap_plan(22);
	if (!tap_ok(!rdma_open(&r, 1), "rxe0: a domain and an RC queue pair "
		    "connected to itself"))
		return tap_done();
	host_cases(&r);
	rdma_close(&r);
	if (tap_run_child(evict_child))
		tap_diag("the eviction child did not end normally");

	if (access("/dev/gdirect", F_OK)) {
		loaded_emu = system("insmod /modules/nvp2p_emu.ko") == 0;
		loaded_gd = system("insmod /modules/gdirect.ko") == 0;
	}
	gpu = !access("/dev/gdirect", F_OK);
	if (tap_run_child(gpu_body))
		tap_diag("the GPU child did not end normally");
	tap_ok(kernel_mrs() == 0, "rxe0 has no memory region left (rdma "
	       "resource: %ld)", kernel_mrs());
	if (gpu)
		tap_ok(emu_wait_quiet(10000, NULL), "no pins and no BAR1 bytes "
		       "left (the emulator's counters)");
	else
		tap_skip("no pins and no BAR1 bytes left", "no emulated GPU");
	if (loaded_gd && system("rmmod gdirect"))
		tap_diag("rmmod gdirect failed");
	if (loaded_emu && system("rmmod nvp2p_emu"))
		tap_diag("rmmod nvp2p_emu failed");
	return tap_done();
}
