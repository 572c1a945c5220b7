// SPDX-License-Identifier: MIT
/*
 * gpu-rdma - GPUDirect RDMA between the two cluster nodes: a NIC (rxe0)
 * reads and writes GPU memory on both ends, with no copy through host
 * memory.
 *
 * usage: gpu-rdma server PORT
 *        gpu-rdma client SERVER-IP PORT
 *        gpu-rdma probe
 *
 * probe is the dma-buf capability probe that NCCL, UCX and libfabric
 * make: ibv_reg_dmabuf_mr with fd -1 on rxe0.  It prints the errno and
 * exits 0 for EBADF (dma-buf memory regions supported), 3 for
 * EOPNOTSUPP (not supported, by the provider or the kernel), 1 otherwise.
 *
 * Environment: RDMA_PATH (peer: ibv_reg_mr on the device address, the
 * nv-p2p peer-memory path; dmabuf: cuMemGetHandleForAddressRange and
 * ibv_reg_dmabuf_mr), RDMA_GID_INDEX (rxe0's RoCE v2 GID index for the
 * node's address), RDMA_SIZES (comma list of bytes, each 1 to 4 MiB,
 * default 1,4097,65536,1048576,4194304).  Every setting is parsed
 * strictly: an unknown path or a bad number is an error.
 *
 * Each node allocates two 4 MiB GPU buffers, a source and a target, and
 * registers both with the NIC.  The nodes swap their queue pair numbers,
 * GIDs and memory keys over a TCP socket and connect one RC queue pair.
 * For each size the client (node 1) then
 *   WRITE  writes its source into the server's target; the server checks
 *          it with cuMemcpyDtoH and, for the largest size, in the host's
 *          backing file of its GPU memory (hostcheck);
 *   READ   reads the server's source into its own target and checks it
 *          the same way on its side;
 *   SEND   sends its source into a receive the server posted on its
 *          target; the server checks the length and the data.
 * Around each transfer, and only there, both nodes read the emulator's
 * htod_bytes and dtoh_bytes: a transfer that staged any GPU byte through
 * host memory raises them, so each check also requires both to be
 * unchanged on both nodes.  The buffers are filled and checked with CUDA
 * copies outside those windows.
 *
 * Last, the free case.  With the peer path the server frees its target
 * (cuMemFree) while the client writes into it in a loop: the free
 * callback invalidates the server's memory region, the client's next
 * write completes in error (remote access), and the server's
 * ibv_dereg_mr of the revoked region succeeds.  With the dma-buf path
 * NVIDIA's exporter keeps the memory while the dma-buf lives, so writes
 * after cuMemFree still succeed, and fail only once the server has
 * deregistered the region and closed its dma-buf.
 *
 * The client prints TAP (a control: a CUDA copy inside such a window is
 * counted; 3 checks per size; 2 for the free case);
 * the server prints diagnostics and exits 0 only when every check on its
 * side passed.  The client also prints "# FIGURE op size MB/s latency-us"
 * lines, one transfer each (the emulated link's figures are ratios only).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <infiniband/verbs.h>

#include "emu_knob.h"
#include "gpumem.h"
#include "rc-qp.h"

#define MAX_SIZE	(4u << 20)
#define MAX_SIZES	16

enum path { PATH_PEER, PATH_DMABUF };

struct buf {
	CUdeviceptr d;
	int fd;			/* the dma-buf, or -1 */
	struct ibv_mr *mr;
};

/* What each side tells the other, in host byte order (same machine). */
struct wire {
	uint32_t qpn, psn;
	uint8_t gid[16];
	uint64_t src_addr, dst_addr;
	uint32_t src_rkey, dst_rkey;
};

static enum path path;
static int gid_index = -1;
static size_t sizes[MAX_SIZES];
static int nsizes;
static int sock = -1;
static int server_failed;
static int tap_n;

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct buf src, dst;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stdout, "# gpu-rdma: ");
	vfprintf(stdout, fmt, ap);
	fprintf(stdout, "\n");
	va_end(ap);
	exit(1);
}

static void tap(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void server_check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("# server: %s: ", ok ? "ok" : "FAILED");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		server_failed = 1;
}

static void cu(CUresult r, const char *what)
{
	const char *s = NULL;

	if (r != CUDA_SUCCESS) {
		cuGetErrorName(r, &s);
		die("%s: %s", what, s ? s : "?");
	}
}

static unsigned long parse_num(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		die("%s='%s': expected a decimal number", what, s);
	return v;
}

static void parse_env(void)
{
	const char *p = getenv("RDMA_PATH"), *g = getenv("RDMA_GID_INDEX");
	const char *s = getenv("RDMA_SIZES");
	char *copy, *tok, *save = NULL;

	if (!p || !strcmp(p, "peer"))
		path = PATH_PEER;
	else if (!strcmp(p, "dmabuf"))
		path = PATH_DMABUF;
	else
		die("RDMA_PATH='%s': expected peer or dmabuf", p);
	if (!g)
		die("RDMA_GID_INDEX is not set (rxe0's RoCE v2 GID index)");
	gid_index = (int)parse_num(g, "RDMA_GID_INDEX");
	copy = strdup(s ? s : "1,4097,65536,1048576,4194304");
	if (!copy)
		die("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long v = parse_num(tok, "RDMA_SIZES");

		if (!v || v > MAX_SIZE || nsizes == MAX_SIZES)
			die("RDMA_SIZES: %s: each size 1 to %u, at most %d sizes", tok, MAX_SIZE, MAX_SIZES);
		sizes[nsizes++] = v;
	}
	free(copy);
	if (!nsizes)
		die("RDMA_SIZES is empty");
}

/* The control socket: fixed-size messages, both ways. */
static void send_all(const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t k = send(sock, c, n, MSG_NOSIGNAL);

		if (k <= 0)
			die("control socket send: %s", k ? strerror(errno) : "closed");
		c += k;
		n -= (size_t)k;
	}
}

static void recv_all(void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t k = recv(sock, c, n, 0);

		if (k <= 0)
			die("control socket recv: %s", k ? strerror(errno) : "closed by the other node");
		c += k;
		n -= (size_t)k;
	}
}

/* A request or reply: an operation, a size, a seed, a result. */
struct msg {
	char op;
	uint32_t size;
	uint64_t seed;
	int64_t staged;		/* reply: the sender's staged bytes in the window */
	int32_t ok;		/* reply: its check passed */
};

static void send_msg(char op, uint32_t size, uint64_t seed, int64_t staged, int ok)
{
	struct msg m = { .op = op, .size = size, .seed = seed, .staged = staged, .ok = ok };

	send_all(&m, sizeof(m));
}

static struct msg recv_msg(void)
{
	struct msg m;

	recv_all(&m, sizeof(m));
	return m;
}

static void fill(unsigned char *b, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)((seed * 131 + i * 7 + (i >> 9)) & 0xff);
}

/* Staged bytes so far on this node: the emulator's two copy counters. */
static int64_t staged_now(void)
{
	uint64_t h = emu_stat_u64("htod_bytes"), d = emu_stat_u64("dtoh_bytes");

	if (h == UINT64_MAX || d == UINT64_MAX)
		die("the emulator's htod_bytes or dtoh_bytes cannot be read");
	return (int64_t)(h + d);
}

static unsigned char *host_scratch(void)
{
	static unsigned char *b;

	if (!b && !(b = malloc(MAX_SIZE)))
		die("out of memory");
	return b;
}

static void gpu_fill(CUdeviceptr d, size_t n, uint64_t seed)
{
	unsigned char *b = host_scratch();

	fill(b, n, seed);
	cu(cuMemcpyHtoD(d, b, n), "cuMemcpyHtoD");
	cu(cuMemsetD8(d + n, 0, MAX_SIZE - n), "cuMemsetD8");
}

/*
 * Is @d[0..n) the pattern of @seed, and the byte after it untouched?
 * Checked with cuMemcpyDtoH, and in the host's backing file when
 * @host_too.
 */
static int gpu_has(CUdeviceptr d, size_t n, uint64_t seed, int host_too)
{
	unsigned char *b = host_scratch(), *want = malloc(n + 1);
	uint64_t off;
	int ok;

	if (!want)
		die("out of memory");
	fill(want, n, seed);
	cu(cuMemcpyDtoH(b, d, n + (n < MAX_SIZE)), "cuMemcpyDtoH");
	ok = !memcmp(b, want, n) && (n == MAX_SIZE || b[n] == 0);
	if (ok && host_too)
		ok = guest_mem_offset(d, &off) == 0 && guest_host_has(off, want, n);
	free(want);
	return ok;
}

static void gpu_clear(CUdeviceptr d)
{
	cu(cuMemsetD8(d, 0, MAX_SIZE), "cuMemsetD8");
}

static void reg(struct buf *b)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;

	cu(cuMemAlloc(&b->d, MAX_SIZE), "cuMemAlloc");
	b->fd = -1;
	if (path == PATH_DMABUF) {
		cu(cuMemGetHandleForAddressRange(&b->fd, b->d, MAX_SIZE,
						 CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0),
		   "cuMemGetHandleForAddressRange(DMA_BUF_FD)");
		b->mr = ibv_reg_dmabuf_mr(pd, 0, MAX_SIZE, b->d, b->fd, access);
		if (!b->mr)
			die("ibv_reg_dmabuf_mr of GPU memory: %s", strerror(errno));
	} else {
		b->mr = ibv_reg_mr(pd, (void *)(uintptr_t)b->d, MAX_SIZE, access);
		if (!b->mr)
			die("ibv_reg_mr of GPU memory (peer memory): %s", strerror(errno));
	}
}

static void unreg(struct buf *b)
{
	if (b->mr && ibv_dereg_mr(b->mr))
		die("ibv_dereg_mr: %s", strerror(errno));
	b->mr = NULL;
	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
	if (b->d)
		cu(cuMemFree(b->d), "cuMemFree");
	b->d = 0;
}

static void setup_verbs(struct wire *me)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	union ibv_gid gid;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "rxe0"))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx)
		die("no RDMA device rxe0");
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 32, NULL, NULL, 0) : NULL;
	if (!cq)
		die("ibv_alloc_pd or ibv_create_cq: %s", strerror(errno));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qp = ibv_create_qp(pd, &qa);
	if (!qp)
		die("ibv_create_qp: %s", strerror(errno));
	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		die("ibv_query_gid(%d): %s", gid_index, strerror(errno));
	reg(&src);
	reg(&dst);
	memset(me, 0, sizeof(*me));
	me->qpn = qp->qp_num;
	me->psn = (uint32_t)getpid() & 0xffffff;
	memcpy(me->gid, gid.raw, 16);
	me->src_addr = src.d;
	me->dst_addr = dst.d;
	me->src_rkey = src.mr->rkey;
	me->dst_rkey = dst.mr->rkey;
}

static void connect_qp(const struct wire *me, const struct wire *peer)
{
	const char *step;
	union ibv_gid dgid;

	memcpy(dgid.raw, peer->gid, 16);
	if (rc_qp_connect(qp, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			  &dgid, gid_index, peer->qpn, peer->psn, me->psn,
			  &step))
		die("QP to %s: %s", step, strerror(errno));
}

/* One completion, within 60 s; its status (or -1 on a timeout). */
static int wait_wc(struct ibv_wc *wc)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			die("ibv_poll_cq failed");
		if (n)
			return wc->status;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 60)
			return -1;
	}
}

static int post_send(enum ibv_wr_opcode op, struct buf *local, size_t n,
		     uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = local->d, .length = (uint32_t)n, .lkey = local->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	if (op != IBV_WR_SEND) {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (ibv_post_send(qp, &wr, &bad))
		return -2;
	return wait_wc(&wc);
}

static int post_recv(struct buf *local, size_t n)
{
	struct ibv_sge sge = {
		.addr = local->d, .length = (uint32_t)n, .lkey = local->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const char *status_str(int st)
{
	return st == -1 ? "no completion in 60 s" :
	       st == -2 ? "ibv_post_send failed" :
	       ibv_wc_status_str((enum ibv_wc_status)st);
}

/* --- the server (node 0): answers the client's requests --- */
static void serve(void)
{
	for (;;) {
		struct msg m = recv_msg();
		int64_t s0;
		int ok = 1, st;
		struct ibv_wc wc;

		switch (m.op) {
		case 'W':	/* a WRITE into our target is coming */
			gpu_clear(dst.d);
			s0 = staged_now();
			send_msg('r', 0, 0, 0, 1);
			recv_msg();				/* written */
			s0 = staged_now() - s0;
			ok = gpu_has(dst.d, m.size, m.seed, m.size == sizes[nsizes - 1]);
			server_check(ok && !s0, "WRITE %u: data in GPU memory, %lld bytes staged", m.size, (long long)s0);
			send_msg('d', 0, 0, s0, ok);
			break;
		case 'R':	/* the client will READ our source */
			gpu_fill(src.d, m.size, m.seed);
			s0 = staged_now();
			send_msg('r', 0, 0, 0, 1);
			recv_msg();				/* read */
			s0 = staged_now() - s0;
			server_check(!s0, "READ %u: %lld bytes staged", m.size, (long long)s0);
			send_msg('d', 0, 0, s0, 1);
			break;
		case 'S':	/* a SEND into a receive on our target */
			gpu_clear(dst.d);
			ok = post_recv(&dst, m.size) == 0;
			s0 = staged_now();
			send_msg('r', 0, 0, 0, ok);
			st = ok ? wait_wc(&wc) : -1;
			s0 = staged_now() - s0;
			ok = ok && st == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			     wc.byte_len == m.size &&
			     gpu_has(dst.d, m.size, m.seed, m.size == sizes[nsizes - 1]);
			server_check(ok && !s0, "SEND %u: received (%s), data in GPU memory, %lld bytes staged",
				     m.size, st < 0 ? "none" : status_str(st), (long long)s0);
			recv_msg();				/* sent */
			send_msg('d', 0, 0, s0, ok);
			break;
		case 'F':	/* free our target while the client writes */
			send_msg('r', 0, 0, 0, 1);
			usleep(300 * 1000);
			cu(cuMemFree(dst.d), "cuMemFree of the registered target");
			dst.d = 0;
			printf("# server: freed the registered target (cuMemFree)\n");
			send_msg('f', 0, 0, 0, 1);
			recv_msg();			/* the client's verdict */
			if (path == PATH_DMABUF) {
				/* The region keeps the memory; drop it now. */
				ok = ibv_dereg_mr(dst.mr) == 0;
				dst.mr = NULL;
				close(dst.fd);
				dst.fd = -1;
				server_check(ok, "dereg and close of the freed buffer's dma-buf region");
				send_msg('g', 0, 0, 0, ok);
				recv_msg();		/* the client's last write */
			} else {
				ok = ibv_dereg_mr(dst.mr) == 0;
				dst.mr = NULL;
				server_check(ok, "ibv_dereg_mr of the revoked region");
				send_msg('g', 0, 0, 0, ok);
			}
			break;
		case 'Q':
			return;
		default:
			die("unknown request '%c'", m.op);
		}
	}
}

/* --- the client (node 1): runs the transfers and prints TAP --- */

/*
 * The three transfers of one size, in this order: the server's request
 * letter and the one that ends the transfer, the opcode, and the words of
 * its TAP line and figure.  A READ fills our target from the server's
 * source and is checked here; a WRITE or SEND goes from our source to the
 * server, which checks it.
 */
static const struct xfer {
	char req, done;
	enum ibv_wr_opcode op;
	const char *name, *dir, *data, *last, *fig;
} xfers[] = {
	{ 'W', 'w', IBV_WR_RDMA_WRITE, "RDMA WRITE", "GPU to remote GPU",
	  "data on the remote GPU", " (and in its backing file)", "write" },
	{ 'R', 'w', IBV_WR_RDMA_READ, "RDMA READ", "remote GPU to GPU",
	  "data here", " (and in the backing file)", "read" },
	{ 'S', 's', IBV_WR_SEND, "SEND", "GPU to a receive in remote GPU memory",
	  "received and checked there", "", "send" },
};

static void run_size(const struct wire *peer, size_t n, uint64_t seed)
{
	const char *pname = path == PATH_DMABUF ? "dma-buf" : "peer memory";
	int last = n == sizes[nsizes - 1];

	for (size_t i = 0; i < sizeof(xfers) / sizeof(xfers[0]); i++) {
		const struct xfer *x = &xfers[i];
		int read = x->op == IBV_WR_RDMA_READ;
		uint64_t sd = seed + i;
		struct msg r;
		int64_t s0;
		double t;
		int st, ok;

		if (read)
			gpu_clear(dst.d);
		else
			gpu_fill(src.d, n, sd);
		send_msg(x->req, (uint32_t)n, sd, 0, 1);
		r = recv_msg();
		s0 = staged_now();
		t = now_s();
		if (x->op == IBV_WR_SEND)
			st = r.ok ? post_send(IBV_WR_SEND, &src, n, 0, 0) : -2;
		else if (read)
			st = post_send(x->op, &dst, n, peer->src_addr, peer->src_rkey);
		else
			st = post_send(x->op, &src, n, peer->dst_addr, peer->dst_rkey);
		t = now_s() - t;
		s0 = staged_now() - s0;
		send_msg(x->done, 0, 0, 0, 1);
		r = recv_msg();
		ok = st == IBV_WC_SUCCESS &&
		     (read ? gpu_has(dst.d, n, sd, last) : r.ok);
		tap(ok && !s0 && !r.staged,
		    "%s: %s %zu B %s: %s, %s%s, staged bytes %lld here, %lld there",
		    pname, x->name, n, x->dir, status_str(st), x->data,
		    last ? x->last : "", (long long)s0, (long long)r.staged);
		printf("# FIGURE %s %zu %.3f %.1f\n", x->fig, n, n / t / 1e6, t * 1e6);
	}
}

/*
 * The control: a window like the transfers' sees a CUDA copy to the GPU,
 * so an unchanged count around a transfer means something.
 */
static void control_window(void)
{
	int64_t s0 = staged_now();

	gpu_fill(src.d, 4096, 7);
	s0 = staged_now() - s0;
	tap(s0 == 4096,
	    "control: a 4096 B cuMemcpyHtoD inside a staging window counts %lld bytes (4096)",
	    (long long)s0);
}

static void run_free(const struct wire *peer)
{
	int st = IBV_WC_SUCCESS, writes = 0, after = 0, freed = 0;
	struct msg r;

	send_msg('F', 0, 0, 0, 1);
	recv_msg();
	/*
	 * Write until the server says it freed its target, then once more
	 * (dma-buf) or until a write fails (peer memory: the free callback
	 * revokes the region; a write in flight may still finish first).
	 */
	gpu_fill(src.d, 65536, 99);
	while (st == IBV_WC_SUCCESS && writes < 100000) {
		st = post_send(IBV_WR_RDMA_WRITE, &src, 65536, peer->dst_addr, peer->dst_rkey);
		writes++;
		if (freed)
			after++;
		if (!freed) {
			struct timeval tv = { 0, 0 };
			fd_set fds;

			FD_ZERO(&fds);
			FD_SET(sock, &fds);
			if (select(sock + 1, &fds, NULL, NULL, &tv) > 0) {
				recv_msg();		/* 'f': freed */
				freed = 1;
			}
		}
		if (path == PATH_DMABUF && after >= 3)
			break;
		if (freed && after > 1000)
			break;
	}
	if (!freed) {
		recv_msg();
		freed = 1;
	}
	send_msg('v', 0, 0, 0, 1);
	if (path == PATH_DMABUF) {
		tap(st == IBV_WC_SUCCESS && after >= 3,
		    "dma-buf: writes into the buffer after its cuMemFree still complete (%d of them: %s): the dma-buf keeps the memory, as NVIDIA's exporter does",
		    after, status_str(st));
		r = recv_msg();			/* 'g': deregistered */
		st = post_send(IBV_WR_RDMA_WRITE, &src, 65536, peer->dst_addr, peer->dst_rkey);
		send_msg('l', 0, 0, 0, 1);
		tap(r.ok && st != IBV_WC_SUCCESS,
		    "dma-buf: after the server's ibv_dereg_mr and close, a write fails (%s)", status_str(st));
	} else {
		tap(st == IBV_WC_REM_ACCESS_ERR || st == IBV_WC_REM_INV_REQ_ERR,
		    "peer memory: a write into the buffer after its cuMemFree completes in error (%s, after %d writes, %d of them after the free)",
		    status_str(st), writes, after);
		r = recv_msg();			/* 'g' */
		tap(r.ok, "peer memory: the server's ibv_dereg_mr of the revoked region succeeds");
	}
}

static int probe(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_mr *mr;
	int err;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "rxe0"))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx || !(pd = ibv_alloc_pd(ctx)))
		die("no RDMA device rxe0, or no protection domain on it");
	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, 0, 4096, 0, -1, IBV_ACCESS_LOCAL_WRITE);
	err = errno;
	if (mr) {
		printf("# probe: ibv_reg_dmabuf_mr(fd -1) succeeded\n");
		ibv_dereg_mr(mr);
		return 1;
	}
	printf("# probe: ibv_reg_dmabuf_mr(fd -1): %s (%s)\n", strerrorname_np(err), strerror(err));
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return err == EBADF ? 0 : err == EOPNOTSUPP ? 3 : 1;
}

static int listen_on(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0), s;

	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
		die("listen on port %d: %s", port, strerror(errno));
	printf("# listening on %d\n", port);
	fflush(stdout);
	s = accept(l, NULL, NULL);
	if (s < 0)
		die("accept: %s", strerror(errno));
	close(l);
	return s;
}

static int connect_to(const char *ip, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int s;

	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1)
		die("'%s': not an IPv4 address", ip);
	for (int i = 0; i < 100; i++) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (s >= 0 && !connect(s, (struct sockaddr *)&a, sizeof(a)))
			return s;
		if (s >= 0)
			close(s);
		usleep(200 * 1000);
	}
	die("connect to %s:%d: %s", ip, port, strerror(errno));
	return -1;
}

int main(int argc, char **argv)
{
	int is_server = argc == 3 && !strcmp(argv[1], "server");
	struct wire me, peer;
	CUdevice dev;
	CUcontext cctx;
	int one = 1;

	if (argc == 2 && !strcmp(argv[1], "probe"))
		return probe();
	if (!is_server && !(argc == 4 && !strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: gpu-rdma server PORT | gpu-rdma client SERVER-IP PORT | gpu-rdma probe\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_env();
	cu(cuInit(0), "cuInit");
	cu(cuDeviceGet(&dev, 0), "cuDeviceGet");
	cu(cuCtxCreate(&cctx, NULL, 0, dev), "cuCtxCreate");
	setup_verbs(&me);
	sock = is_server ? listen_on((int)parse_num(argv[2], "PORT")) :
			   connect_to(argv[2], (int)parse_num(argv[3], "PORT"));
	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	send_all(&me, sizeof(me));
	recv_all(&peer, sizeof(peer));
	connect_qp(&me, &peer);
	if (is_server) {
		serve();
	} else {
		printf("1..%d\n", 3 * nsizes + 3);
		control_window();
		for (int i = 0; i < nsizes; i++)
			run_size(&peer, sizes[i], 10 + 3 * (uint64_t)i);
		run_free(&peer);
		send_msg('Q', 0, 0, 0, 1);
	}
	ibv_destroy_qp(qp);
	unreg(&src);
	unreg(&dst);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	cu(cuCtxDestroy(cctx), "cuCtxDestroy");
	close(sock);
	return is_server ? server_failed : 0;
}
