// SPDX-License-Identifier: MIT
/*
 * ucx-xfer - UCP between two cluster nodes: tagged send/receive, put and
 * get, each size checked on the side that received the data, with the
 * bandwidth and latency the client measured.
 *
 * usage: ucx-xfer server PORT
 *        ucx-xfer client SERVER-IP PORT
 *
 * The endpoints connect through UCP's client/server wire-up (a listener
 * on the server's address; RDMA-CM for verbs transports, a socket for
 * tcp), which needs no auxiliary transport: UCX_TLS and UCX_NET_DEVICES
 * choose what carries the data.  Environment: XFER_SIZES (comma list of
 * bytes, default 1,64,4096,65536,1048576,4194304), XFER_MEM (host, the
 * default, or cuda: every buffer on both nodes is GPU memory from
 * cuMemAlloc, filled with cuMemcpyHtoD, and each received one is checked
 * twice, read back with cuMemcpyDtoH and read through the BAR with
 * gdrapi's pin and mapping on gdirect.ko; UCX must also report the
 * registered buffer as CUDA memory, else it treated GPU pointers as host
 * memory).  XFER_BAR (1, the default, or 0): 0 leaves the BAR reads out,
 * one TAP SKIP saying so, for a machine without gdirect or gdrdrv (a real
 * GPU machine); a build with -DXFER_NO_GDRAPI (no gdrapi.h) needs it.
 *
 * For each size, in this order:
 *   tag  the client sends N messages; the server checks every one against
 *        the pattern of its index, then answers; the client times the lot
 *        (bandwidth) and then a ping-pong the server echoes (latency,
 *        half the round trip), checking each echo;
 *   put  the client writes N times into the server's registered buffer
 *        (cleared first), flushes and says so; the server checks it;
 *   get  the server fills its buffer; the client reads it N times into a
 *        cleared buffer and checks it; the latency is one get + flush.
 * Both print TAP (a plan of 3 per size on each side, one more with GPU
 * memory: UCX's memory type of the registered buffer); the client prints
 * "# FIGURE op size MB/s latency-us" lines; both print UCX's configuration
 * of the endpoint once it is wired up (its lanes, "rc_verbs/rxe0:1" say,
 * and the size thresholds that pick eager or rendezvous protocols), and
 * the client again after the run (with UCX_PROTO_ENABLE=y that lists the
 * protocol and transport selected per memory type and size range), as
 * TAP comments.  With GPU memory on the emulated GPU, both also print
 * "# STAGED op size bytes" after each operation and size: the GPU bytes
 * UCX copied through host memory with the CUDA copy calls (cuda_copy) on
 * that node for it (the emulator's copy counters, less ucx-xfer's own
 * fills and checks).
 * Copies through a BAR mapping (gdr_copy) are CPU loads and stores the
 * emulator cannot see: a run that must show no staging leaves gdr_copy
 * out of UCX_TLS, so that any staging goes through the counted calls.
 */
#include <ucp/api/ucp.h>
#ifdef XFER_CUDA
#include <cuda.h>
#ifndef XFER_NO_GDRAPI
#include <gdrapi.h>
#define XFER_GDRAPI
#endif
#endif

#include <arpa/inet.h>
#include <stdarg.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef XFER_CUDA
#include "emu_knob.h"
#endif
#include "tap.h"

enum { T_DATA = 1, T_ACK, T_RKEY, T_PING, T_PONG, T_CTL };

#define WAIT_S		120
#define MAX_SIZES	16

static ucp_context_h ctx;
static ucp_worker_h worker;
static ucp_ep_h ep;
static ucp_conn_request_h pending_conn;
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Byte i of the pattern with seed s: differs between seeds and offsets. */
static unsigned char pat(uint64_t seed, size_t i)
{
	uint64_t x = (seed + 1) * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;

	return (unsigned char)(x >> 56 ^ x >> 29 ^ i);
}

static void fill(unsigned char *b, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(seed, i);
}

/* The offset of the first wrong byte, or -1. */
static long check(const unsigned char *b, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pat(seed, i))
			return (long)i;
	return -1;
}

/* ---- memory: host, or GPU memory checked through cuMemcpy and the BAR -- */

static int use_cuda;
static int use_bar = 1;		/* XFER_BAR: GPU buffers read through the BAR too */
static unsigned char *stage;	/* host staging for fills and checks */
#ifdef XFER_CUDA
static uint64_t own_copied;	/* bytes our fills and checks copied */
#endif

#ifdef XFER_CUDA
static int cu_ok(CUresult r, const char *what)
{
	const char *s = NULL;

	if (r == CUDA_SUCCESS)
		return 1;
	cuGetErrorName(r, &s);
	fprintf(stderr, "ucx-xfer: %s: %s\n", what, s ? s : "?");
	return 0;
}
#endif

#ifdef XFER_GDRAPI
static gdr_t gdr;
struct bar_pin {
	void *dev;
	gdr_mh_t mh;
	void *map;
	size_t map_len;
	uint64_t base;
	int pinned, mapped;
};
static struct bar_pin pins[2];

/* Pin and map @dev (@len bytes) through gdirect for the BAR checks. */
static int bar_pin(struct bar_pin *p, void *dev, size_t len)
{
	gdr_info_t info;

	p->dev = dev;
	if (gdr_pin_buffer(gdr, (unsigned long)(uintptr_t)dev, len, 0, 0, &p->mh)) {
		fprintf(stderr, "ucx-xfer: gdr_pin_buffer failed\n");
		return 0;
	}
	p->pinned = 1;
	if (gdr_get_info(gdr, p->mh, &info) ||
	    gdr_map(gdr, p->mh, &p->map, info.mapped_size)) {
		fprintf(stderr, "ucx-xfer: gdr_map failed\n");
		return 0;
	}
	p->mapped = 1;
	p->map_len = info.mapped_size;
	p->base = info.va;
	return 1;
}

static void bar_unpin(struct bar_pin *p)
{
	if (p->mapped)
		gdr_unmap(gdr, p->mh, p->map, p->map_len);
	if (p->pinned)
		gdr_unpin_buffer(gdr, p->mh);
	p->mapped = p->pinned = 0;
}

static struct bar_pin *bar_of(const void *dev)
{
	for (int i = 0; i < 2; i++)
		if (pins[i].pinned && pins[i].dev == dev)
			return &pins[i];
	return NULL;
}
#endif

static void *mem_alloc(size_t n)
{
#ifdef XFER_CUDA
	if (use_cuda) {
		CUdeviceptr d;

		return cu_ok(cuMemAlloc(&d, n), "cuMemAlloc") ? (void *)(uintptr_t)d : NULL;
	}
#endif
	return malloc(n);
}

static void mem_free(void *p)
{
#ifdef XFER_CUDA
	if (use_cuda) {
		if (p)
			cu_ok(cuMemFree((CUdeviceptr)(uintptr_t)p), "cuMemFree");
		return;
	}
#endif
	free(p);
}

static int mem_fill(void *b, size_t n, uint64_t seed)
{
#ifdef XFER_CUDA
	if (use_cuda) {
		fill(stage, n, seed);
		own_copied += n;
		return cu_ok(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)b, stage, n), "cuMemcpyHtoD");
	}
#endif
	fill(b, n, seed);
	return 1;
}

static int mem_clear(void *b, size_t n)
{
#ifdef XFER_CUDA
	if (use_cuda)
		return cu_ok(cuMemsetD8((CUdeviceptr)(uintptr_t)b, 0, n), "cuMemsetD8");
#endif
	memset(b, 0, n);
	return 1;
}

/*
 * GPU bytes UCX staged through host memory with the CUDA copy calls on
 * this node since @mark was taken: the emulated GPU's htod_bytes and
 * dtoh_bytes counters, less what our own fills and checks copied.  Where the counters cannot be read (a
 * real GPU), staged_mark() is UINT64_MAX and nothing is printed.
 */
static uint64_t staged_mark(void)
{
#ifdef XFER_CUDA
	uint64_t h = emu_stat_u64("htod_bytes"), d = emu_stat_u64("dtoh_bytes");

	if (use_cuda && h != UINT64_MAX && d != UINT64_MAX)
		return h + d - own_copied;
#endif
	return UINT64_MAX;
}

/* Prints what @op of @s bytes staged since *@mark, and marks again. */
static void print_staged(const char *op, size_t s, uint64_t *mark)
{
	uint64_t now_mark = staged_mark();

	if (*mark != UINT64_MAX && now_mark != UINT64_MAX)
		printf("# STAGED %s %zu %" PRIu64 "\n", op, s, now_mark - *mark);
	*mark = now_mark;
}

/*
 * Check @b against the pattern: the offset of the first wrong byte, or -1.
 * GPU memory is read back twice, with cuMemcpyDtoH and through the BAR
 * mapping; -2 when a read fails.
 */
static long mem_check(const void *b, size_t n, uint64_t seed)
{
#ifdef XFER_CUDA
	if (use_cuda) {
		long bad;

		memset(stage, 0, n);
		own_copied += n;
		if (!cu_ok(cuMemcpyDtoH(stage, (CUdeviceptr)(uintptr_t)b, n), "cuMemcpyDtoH"))
			return -2;
		bad = check(stage, n, seed);
		if (bad >= 0) {
			printf("# cuMemcpyDtoH read differs at byte %ld\n", bad);
			return bad;
		}
		if (!use_bar)
			return bad;
#ifdef XFER_GDRAPI
		struct bar_pin *p = bar_of(b);

		if (p == NULL)
			return -2;
		memset(stage, 0, n);
		if (gdr_copy_from_mapping(p->mh, stage, (char *)p->map +
					  ((uintptr_t)b - p->base), n))
			return -2;
		bad = check(stage, n, seed);
		if (bad >= 0)
			printf("# BAR read differs at byte %ld\n", bad);
		return bad;
#else
		return -2;
#endif
	}
#endif
	return check(b, n, seed);
}

/* How a received GPU buffer is checked, for the TAP descriptions. */
static const char *checked_by(void)
{
	return !use_cuda ? "" : use_bar ? " (cuMemcpyDtoH and BAR)" : " (cuMemcpyDtoH)";
}

/* Progress until @req completes; its status (UCS_OK for an inline op). */
static ucs_status_t wait_req(void *req, const char *what)
{
	ucs_status_t st;
	double end = now() + WAIT_S;

	if (req == NULL)
		return UCS_OK;
	if (UCS_PTR_IS_ERR(req)) {
		st = UCS_PTR_STATUS(req);
		fprintf(stderr, "ucx-xfer: %s: %s\n", what, ucs_status_string(st));
		return st;
	}
	while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS) {
		ucp_worker_progress(worker);
		if (now() > end) {
			fprintf(stderr, "ucx-xfer: %s: no completion in %d s\n",
				what, WAIT_S);
			ucp_request_cancel(worker, req);
			while (ucp_request_check_status(req) == UCS_INPROGRESS)
				ucp_worker_progress(worker);
			ucp_request_free(req);
			return UCS_ERR_TIMED_OUT;
		}
	}
	ucp_request_free(req);
	if (st != UCS_OK)
		fprintf(stderr, "ucx-xfer: %s: %s\n", what, ucs_status_string(st));
	return st;
}

static ucs_status_t send_tag(const void *buf, size_t n, ucp_tag_t tag)
{
	ucp_request_param_t p = { 0 };

	return wait_req(ucp_tag_send_nbx(ep, buf, n, tag, &p), "tag send");
}

static ucs_status_t recv_tag(void *buf, size_t n, ucp_tag_t tag)
{
	ucp_request_param_t p = { 0 };

	return wait_req(ucp_tag_recv_nbx(worker, buf, n, tag, (ucp_tag_t)-1, &p),
			"tag receive");
}

static ucs_status_t flush_ep(void)
{
	ucp_request_param_t p = { 0 };

	return wait_req(ucp_ep_flush_nbx(ep, &p), "flush");
}

/* A small control message: a 64-bit word each way. */
static ucs_status_t send_word(uint64_t v, ucp_tag_t tag)
{
	return send_tag(&v, sizeof(v), tag);
}

static ucs_status_t recv_word(uint64_t *v, ucp_tag_t tag)
{
	return recv_tag(v, sizeof(*v), tag);
}

static void conn_handler(ucp_conn_request_h req, void *arg)
{
	(void)arg;
	if (pending_conn == NULL)
		pending_conn = req;
	else
		ucp_listener_reject(*(ucp_listener_h *)arg, req);
}

static int parse_sizes(size_t *sizes)
{
	const char *s = getenv("XFER_SIZES");
	char *end;
	int n = 0;

	if (s == NULL || *s == '\0')
		s = "1,64,4096,65536,1048576,4194304";
	for (;;) {
		unsigned long long v;

		errno = 0;
		v = strtoull(s, &end, 0);
		if (errno || end == s || v == 0 || v > (64ull << 20) || n == MAX_SIZES ||
		    (*end != ',' && *end != '\0')) {
			fprintf(stderr, "ucx-xfer: XFER_SIZES: expected up to %d "
				"sizes 1..64 MiB separated by commas\n", MAX_SIZES);
			return -1;
		}
		sizes[n++] = v;
		if (*end == '\0')
			return n;
		s = end + 1;
	}
}

/*
 * Iterations for bandwidth at @size: about 4 MiB, 2 to 100 messages (the
 * emulated network moves a few MB/s).
 */
static unsigned iters_for(size_t size)
{
	size_t n = (4u << 20) / size;

	return n < 2 ? 2 : n > 100 ? 100 : (unsigned)n;
}

/* Iterations for latency: fewer for large messages. */
static unsigned lat_iters_for(size_t size)
{
	return size <= 65536 ? 20 : 2;
}

static void print_ep_info(void)
{
	char *text = NULL, *line, *save;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return;
	ucp_ep_print_info(ep, f);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		printf("#%s%s\n", line[0] == '#' ? "" : " ", line);
	free(text);
}

/*
 * With GPU memory: UCX must see @p as CUDA memory.  A UCX without a working
 * CUDA module (or one whose memory-type detection fails) reports host, and
 * would then read and write GPU pointers as host memory.
 */
static int check_mem_type(void *p, size_t n)
{
	ucp_mem_map_params_t mp = {
		.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
			      UCP_MEM_MAP_PARAM_FIELD_LENGTH,
		.address = p, .length = n,
	};
	ucp_mem_attr_t attr = { .field_mask = UCP_MEM_ATTR_FIELD_MEM_TYPE };
	ucp_mem_h memh;
	int ok;

	if (!use_cuda)
		return 0;
	if (ucp_mem_map(ctx, &mp, &memh) != UCS_OK) {
		tap_ok(0, "UCX registers this node's GPU buffer");
		return 1;
	}
	ok = ucp_mem_query(memh, &attr) == UCS_OK &&
	     attr.mem_type == UCS_MEMORY_TYPE_CUDA;
	tap_ok(ok, "UCX sees this node's GPU buffer as CUDA memory (memory type %d, want %d)",
	    (int)attr.mem_type, (int)UCS_MEMORY_TYPE_CUDA);
	ucp_mem_unmap(ctx, memh);
	return !ok;
}

/*
 * UCX would move GPU buffers it takes for host memory with host loads and
 * stores, or system calls that fault on them: the transfers are not run,
 * each reported as failed.  The other node sees the same UCX and stops too.
 */
static int stopped;

static int not_run(int nsizes)
{
	stopped = 1;
	for (int i = 0; i < 3 * nsizes; i++)
		tap_ok(0, "not run: UCX cannot register the GPU buffer or takes it for host memory");
	return 1;
}

static int server(size_t *sizes, int nsizes, size_t max, unsigned char *buf,
		  unsigned char *rbuf)
{
	ucp_mem_map_params_t mp = {
		.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
			      UCP_MEM_MAP_PARAM_FIELD_LENGTH,
		.address = rbuf, .length = max,
	};
	ucp_mem_h memh;
	void *rkey_buf = NULL;
	size_t rkey_len;
	uint64_t hdr[2];
	int i, fails = 0;

	if (ucp_mem_map(ctx, &mp, &memh) != UCS_OK ||
	    ucp_rkey_pack(ctx, memh, &rkey_buf, &rkey_len) != UCS_OK) {
		fprintf(stderr, "ucx-xfer: cannot register %zu bytes\n", max);
		return 1;
	}
	if (check_mem_type(rbuf, max)) {
		ucp_mem_unmap(ctx, memh);
		return not_run(nsizes);
	}
	hdr[0] = (uintptr_t)rbuf;
	hdr[1] = rkey_len;
	if (send_tag(hdr, sizeof(hdr), T_RKEY) != UCS_OK ||
	    send_tag(rkey_buf, rkey_len, T_RKEY) != UCS_OK) {
		ucp_rkey_buffer_release(rkey_buf);
		ucp_mem_unmap(ctx, memh);
		return fails + 1;
	}
	ucp_rkey_buffer_release(rkey_buf);
	print_ep_info();

	for (i = 0; i < nsizes; i++) {
		size_t s = sizes[i];
		unsigned n = iters_for(s), ln = lat_iters_for(s), k;
		long bad = -1, bad_k = -1;
		uint64_t w, mark = staged_mark();
		int ok = 1;

		/* tag: every message checked; then echo the ping-pong. */
		for (k = 0; k < n && ok; k++) {
			ok = mem_clear(buf, s) && recv_tag(buf, s, T_DATA) == UCS_OK;
			if (ok && (bad = mem_check(buf, s, k)) != -1) {
				bad_k = k;
				break;
			}
		}
		ok = ok && bad == -1;
		send_word(ok, T_ACK);
		for (k = 0; k < ln && ok; k++)
			ok = recv_tag(buf, s, T_PING) == UCS_OK &&
			     send_tag(buf, s, T_PONG) == UCS_OK;
		tap_ok(ok, "tag %zu B: %u messages received, each verified on this node%s%s",
		    s, n, checked_by(),
		    bad == -1 ? "" : " (MISMATCH)");
		if (bad >= 0)
			printf("# message %ld differs at byte %ld\n", bad_k, bad);
		fails += !ok;
		print_staged("tag", s, &mark);

		/* put: clear, let the client write, check. */
		mem_clear(rbuf, s);
		if (send_word(s, T_CTL) != UCS_OK || recv_word(&w, T_CTL) != UCS_OK) {
			tap_ok(0, "put %zu B: the client did not report", s);
			fails++;
			break;
		}
		bad = mem_check(rbuf, s, 1000 + i);
		tap_ok(w == s && bad == -1, "put %zu B: the written buffer verified on this node%s",
		    s, checked_by());
		if (bad >= 0)
			printf("# differs at byte %ld\n", bad);
		fails += !(w == s && bad == -1);
		send_word(bad == -1, T_ACK);
		print_staged("put", s, &mark);

		/* get: fill, let the client read. */
		mem_fill(rbuf, s, 2000 + i);
		if (send_word(s, T_CTL) != UCS_OK || recv_word(&w, T_CTL) != UCS_OK) {
			tap_ok(0, "get %zu B: the client did not report", s);
			fails++;
			break;
		}
		tap_ok(w == 1, "get %zu B: the client read this node's buffer and verified it", s);
		fails += w != 1;
		print_staged("get", s, &mark);
	}
	ucp_mem_unmap(ctx, memh);
	return fails;
}

static int client(size_t *sizes, int nsizes, size_t max, unsigned char *buf)
{
	uint64_t hdr[2], w;
	void *rkey_buf;
	ucp_rkey_h rkey;
	ucp_request_param_t p = { 0 };
	int i, fails = 0;

	if (check_mem_type(buf, max))
		return not_run(nsizes);
	if (recv_tag(hdr, sizeof(hdr), T_RKEY) != UCS_OK || hdr[1] > 65536)
		return 1;
	rkey_buf = malloc(hdr[1]);
	if (rkey_buf == NULL || recv_tag(rkey_buf, hdr[1], T_RKEY) != UCS_OK ||
	    ucp_ep_rkey_unpack(ep, rkey_buf, &rkey) != UCS_OK) {
		fprintf(stderr, "ucx-xfer: no remote key from the server\n");
		free(rkey_buf);
		return 1;
	}
	free(rkey_buf);
	print_ep_info();

	for (i = 0; i < nsizes; i++) {
		size_t s = sizes[i];
		unsigned n = iters_for(s), ln = lat_iters_for(s), k;
		double t, bw[3] = { 0 }, lat[3] = { 0 };
		uint64_t mark = staged_mark();
		int ok = 1;
		long bad;

		/* tag */
		t = now();
		for (k = 0; k < n && ok; k++)
			ok = mem_fill(buf, s, k) && send_tag(buf, s, T_DATA) == UCS_OK;
		ok = ok && recv_word(&w, T_ACK) == UCS_OK && w == 1;
		bw[0] = (double)s * n / (now() - t) / 1e6;
		ok = ok && mem_fill(buf, s, 77);
		t = now();
		for (k = 0; k < ln && ok; k++) {
			ok = send_tag(buf, s, T_PING) == UCS_OK &&
			     recv_tag(buf, s, T_PONG) == UCS_OK;
		}
		lat[0] = (now() - t) / ln / 2 * 1e6;
		ok = ok && mem_check(buf, s, 77) == -1;
		tap_ok(ok, "tag %zu B: %u sends acknowledged by the server, %u echoes verified%s",
		    s, n, ln, checked_by());
		fails += !ok;
		print_staged("tag", s, &mark);

		/* put */
		ok = recv_word(&w, T_CTL) == UCS_OK && w == s && mem_fill(buf, s, 1000 + i);
		t = now();
		for (k = 0; k < n && ok; k++)
			ok = wait_req(ucp_put_nbx(ep, buf, s, hdr[0], rkey, &p), "put") == UCS_OK;
		ok = ok && flush_ep() == UCS_OK;
		bw[1] = (double)s * n / (now() - t) / 1e6;
		t = now();
		for (k = 0; k < ln && ok; k++)
			ok = wait_req(ucp_put_nbx(ep, buf, s, hdr[0], rkey, &p), "put") == UCS_OK &&
			     flush_ep() == UCS_OK;
		lat[1] = (now() - t) / ln * 1e6;
		send_word(ok ? s : 0, T_CTL);
		ok = recv_word(&w, T_ACK) == UCS_OK && w == 1 && ok;
		tap_ok(ok, "put %zu B: %u puts, the server verified its buffer", s, n);
		fails += !ok;
		print_staged("put", s, &mark);

		/* get */
		ok = recv_word(&w, T_CTL) == UCS_OK && w == s && mem_clear(buf, s);
		t = now();
		for (k = 0; k < n && ok; k++)
			ok = wait_req(ucp_get_nbx(ep, buf, s, hdr[0], rkey, &p), "get") == UCS_OK;
		ok = ok && flush_ep() == UCS_OK;
		bw[2] = (double)s * n / (now() - t) / 1e6;
		bad = ok ? mem_check(buf, s, 2000 + i) : -2;
		ok = ok && mem_clear(buf, s);
		t = now();
		for (k = 0; k < ln && ok; k++)
			ok = wait_req(ucp_get_nbx(ep, buf, s, hdr[0], rkey, &p), "get") == UCS_OK &&
			     flush_ep() == UCS_OK;
		lat[2] = (now() - t) / ln * 1e6;
		ok = ok && bad == -1 && mem_check(buf, s, 2000 + i) == -1;
		send_word(ok, T_CTL);
		tap_ok(ok, "get %zu B: %u gets into a cleared buffer, verified on this node%s",
		    s, n, checked_by());
		if (bad >= 0)
			printf("# differs at byte %ld\n", bad);
		fails += !ok;
		print_staged("get", s, &mark);

		printf("# FIGURE tag %zu %.3f %.1f\n", s, bw[0], lat[0]);
		printf("# FIGURE put %zu %.3f %.1f\n", s, bw[1], lat[1]);
		printf("# FIGURE get %zu %.3f %.1f\n", s, bw[2], lat[2]);
		fflush(stdout);
	}
	/* Now with every protocol UCX selected for this run's sizes. */
	printf("# the endpoint after the run:\n");
	print_ep_info();
	ucp_rkey_destroy(rkey);
	return fails;
}

int main(int argc, char **argv)
{
	ucp_params_t cp = {
		.field_mask = UCP_PARAM_FIELD_FEATURES,
		.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA,
	};
	ucp_worker_params_t wp = {
		.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
		.thread_mode = UCS_THREAD_MODE_SINGLE,
	};
	struct sockaddr_in sa = { .sin_family = AF_INET };
	ucp_listener_h listener = NULL;
	ucp_ep_params_t ep_p = { 0 };
	ucp_request_param_t cl = { 0 };
	size_t sizes[MAX_SIZES], max = 0;
	unsigned char *buf = NULL, *rbuf = NULL;
	int is_server, nsizes, i, fails = 1;
	char *end;
	const char *mem;
	unsigned long port;
#ifdef XFER_CUDA
	CUdevice cu_dev = 0;
	CUcontext cu_ctx = NULL;
#endif
	double deadline;

	if (argc < 3 || (strcmp(argv[1], "server") == 0 ? argc != 3 :
			 strcmp(argv[1], "client") != 0 || argc != 4)) {
		fprintf(stderr, "usage: ucx-xfer server PORT | client SERVER-IP PORT\n");
		return 2;
	}
	is_server = strcmp(argv[1], "server") == 0;
	port = strtoul(argv[argc - 1], &end, 10);
	if (*end || port == 0 || port > 65535 ||
	    (!is_server && inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1)) {
		fprintf(stderr, "ucx-xfer: bad address or port\n");
		return 2;
	}
	sa.sin_port = htons((uint16_t)port);
	nsizes = parse_sizes(sizes);
	if (nsizes < 0)
		return 2;
	mem = getenv("XFER_BAR");
	if (mem == NULL || *mem == '\0' || strcmp(mem, "1") == 0) {
		use_bar = 1;
	} else if (strcmp(mem, "0") == 0) {
		use_bar = 0;
	} else {
		fprintf(stderr, "ucx-xfer: XFER_BAR='%s': expected 1 or 0\n", mem);
		return 2;
	}
	mem = getenv("XFER_MEM");
	if (mem == NULL || *mem == '\0' || strcmp(mem, "host") == 0) {
		use_cuda = 0;
	} else if (strcmp(mem, "cuda") == 0) {
#ifdef XFER_CUDA
		use_cuda = 1;
#else
		fprintf(stderr, "ucx-xfer: XFER_MEM=cuda: built without CUDA\n");
		return 2;
#endif
	} else {
		fprintf(stderr, "ucx-xfer: XFER_MEM='%s': expected host or cuda\n", mem);
		return 2;
	}
#ifndef XFER_GDRAPI
	if (use_cuda && use_bar) {
		fprintf(stderr, "ucx-xfer: XFER_MEM=cuda: built without gdrapi.h, "
			"the BAR reads need XFER_BAR=0\n");
		return 2;
	}
#endif
	for (i = 0; i < nsizes; i++)
		max = sizes[i] > max ? sizes[i] : max;
	tap_plan(3 * nsizes + use_cuda + (use_cuda && !use_bar));
	if (use_cuda && !use_bar)
		tap_skip("received GPU buffers read through the BAR",
			 "XFER_BAR=0: no gdirect or gdrdrv BAR mappings on this machine; checked with cuMemcpyDtoH only");
	fflush(stdout);
	stage = malloc(max);
#ifdef XFER_CUDA
	if (use_cuda && !(cu_ok(cuInit(0), "cuInit") &&
			  cu_ok(cuDeviceGet(&cu_dev, 0), "cuDeviceGet") &&
			  cu_ok(cuDevicePrimaryCtxRetain(&cu_ctx, cu_dev), "cuDevicePrimaryCtxRetain") &&
			  cu_ok(cuCtxSetCurrent(cu_ctx), "cuCtxSetCurrent")))
		goto out_free;
#endif
#ifdef XFER_GDRAPI
	if (use_cuda && use_bar && (gdr = gdr_open()) == NULL) {
		fprintf(stderr, "ucx-xfer: gdr_open failed (gdirect.ko loaded?)\n");
		goto out_free;
	}
#endif
	buf = mem_alloc(max);
	rbuf = mem_alloc(max);
	if (buf == NULL || rbuf == NULL || stage == NULL) {
		fprintf(stderr, "ucx-xfer: cannot allocate %zu bytes\n", max);
		goto out_free;
	}
#ifdef XFER_GDRAPI
	if (use_cuda && use_bar &&
	    !(bar_pin(&pins[0], buf, max) && bar_pin(&pins[1], rbuf, max)))
		goto out_free;
#endif

	if (ucp_init(&cp, NULL, &ctx) != UCS_OK) {
		fprintf(stderr, "ucx-xfer: ucp_init failed\n");
		goto out_free;
	}
	if (ucp_worker_create(ctx, &wp, &worker) != UCS_OK) {
		fprintf(stderr, "ucx-xfer: ucp_worker_create failed\n");
		goto out_ctx;
	}
	if (is_server) {
		ucp_listener_params_t lp = {
			.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR |
				      UCP_LISTENER_PARAM_FIELD_CONN_HANDLER,
			.sockaddr = { .addr = (struct sockaddr *)&sa,
				      .addrlen = sizeof(sa) },
			.conn_handler = { .cb = conn_handler, .arg = &listener },
		};
		ucs_status_t st = ucp_listener_create(worker, &lp, &listener);

		if (st != UCS_OK) {
			fprintf(stderr, "ucx-xfer: listen on port %lu: %s\n",
				port, ucs_status_string(st));
			goto out_worker;
		}
		printf("# listening on port %lu\n", port);
		fflush(stdout);
		deadline = now() + WAIT_S;
		while (pending_conn == NULL && now() < deadline)
			ucp_worker_progress(worker);
		if (pending_conn == NULL) {
			fprintf(stderr, "ucx-xfer: no client in %d s\n", WAIT_S);
			goto out_listener;
		}
		ep_p.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST;
		ep_p.conn_request = pending_conn;
	} else {
		ep_p.field_mask = UCP_EP_PARAM_FIELD_FLAGS |
				  UCP_EP_PARAM_FIELD_SOCK_ADDR;
		ep_p.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
		ep_p.sockaddr.addr = (struct sockaddr *)&sa;
		ep_p.sockaddr.addrlen = sizeof(sa);
	}
	if (ucp_ep_create(worker, &ep_p, &ep) != UCS_OK) {
		fprintf(stderr, "ucx-xfer: ucp_ep_create failed\n");
		goto out_listener;
	}
	fails = is_server ? server(sizes, nsizes, max, buf, rbuf) :
			    client(sizes, nsizes, max, buf);
	/* The last word: both sides done before either closes. */
	if (!stopped && is_server)
		send_word(0, T_CTL + 1);
	else if (!stopped)
		recv_word(&(uint64_t){ 0 }, T_CTL + 1);
	wait_req(ucp_ep_close_nbx(ep, &cl), "close");
out_listener:
	if (listener)
		ucp_listener_destroy(listener);
out_worker:
	ucp_worker_destroy(worker);
out_ctx:
	ucp_cleanup(ctx);
out_free:
#ifdef XFER_GDRAPI
	if (use_cuda) {
		bar_unpin(&pins[0]);
		bar_unpin(&pins[1]);
		if (gdr)
			gdr_close(gdr);
	}
#endif
	mem_free(buf);
	mem_free(rbuf);
	/*
	 * The primary context stays retained until the process exits: UCX's
	 * cuda_ipc cache closes the peer's buffers it opened from a library
	 * destructor, after main returns, and a context released before that
	 * is destroyed while still current, so every close fails
	 * (CUDA_ERROR_CONTEXT_IS_DESTROYED, on NVIDIA's driver too).
	 */
	free(stage);
	return tap_done() || fails ? 1 : 0;
}
