// SPDX-License-Identifier: MIT
/*
 * rxe-gpu-test.c - Soft-RoCE memory regions of GPU memory (emu/rxe), on one
 * node: an RC queue pair on rxe0 connected to itself.
 *
 * The patched rdma_rxe is loaded (its version string); ibv_reg_mr() of
 * cuMemAlloc memory pins it through gdirect (the emulator's pins rise);
 * RDMA WRITE, RDMA READ and SEND/RECV between two GPU regions and between
 * GPU and host regions at 1 B, 4 KiB + 1 and 1 MiB, at unaligned offsets,
 * each destination read back (cuMemcpyDtoH for GPU memory) with the bytes
 * around it untouched; a region of an interior pointer of a GPU buffer; a
 * fetch-and-add on GPU memory; cuMemFree of a
 * registered buffer makes the next work request on it, as the remote and
 * as the local side, complete in error, and ibv_dereg_mr() then succeeds;
 * cuMemFree during a WRITE into the buffer ends the WRITE (done or
 * failed, nothing crashes);
 * the dma-buf path: ibv_reg_dmabuf_mr(fd -1) answers EBADF where the rxe
 * provider has the op (else a SKIP naming it), the kernel's op itself
 * answers EBADF and imports a cuMemGetHandleForAddressRange() dma-buf
 * (through libibverbs' ibv_cmd_reg_dmabuf_mr() where the provider lacks
 * the op, as a provider with it calls it), data moved both ways through
 * it, also from a region of an interior, unaligned range of the dma-buf;
 * a process that exits with a GPU region registered leaves nothing;
 * cuMemFree while ibv_reg_mr is inside the provider's dma_map_pages (the
 * emulator's map_entry_delay_ms) maps no freed table (map_misuse), and the
 * region, if made, is stale; a 2 MiB GPU region adds at most two entries
 * to the kernel's PAT memory-type list (one mapping per contiguous run,
 * not one per 64 KiB page); a dma-buf of system memory (vgem) registers
 * and carries data both ways; a dma-buf with a pending kernel fence (the
 * emulator's dmabuf_fence_ms: a clear FENCE_MS ms after the export)
 * registers only after the fence signalled, and an RDMA READ and WRITE
 * through it see the cleared bytes and keep the written ones, and one
 * closed before its clear goes at once with the clear cancelled;
 * at the end 0 pins and 0 BAR1 bytes.
 *
 * Usage: rxe-gpu-test GID_INDEX (rxe0's RoCE v2 GID of our address);
 * cluster-rxe-gpu.sh runs it after cluster_up.  "--exit-with-mr" is the
 * child that exits without deregistering.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <infiniband/verbs.h>

#include "emu_knob.h"
#include "guest_cuda.h"
#include "guest_file.h"
#include "rc-qp.h"
#include "tap.h"

#define BUF_SIZE	(2u << 20)
#define SOFF		3	/* source offset: unaligned on purpose */
#define DOFF		5	/* destination offset */
#define GUARD		0xEE

static const int access_all = IBV_ACCESS_LOCAL_WRITE |
	IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
	IBV_ACCESS_REMOTE_ATOMIC;

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static int gid_index;

/*
 * A buffer of GPU (d) or host (h) memory and its memory region; iova, where
 * not 0, is the region's address of d in work requests.
 */
struct buf {
	const char *name;
	CUdeviceptr d;
	uint8_t *h;
	uint64_t iova;
	struct ibv_mr *mr;
	uint32_t lkey, rkey;
};

static uint64_t buf_addr(const struct buf *b)
{
	if (b->iova)
		return b->iova;
	return b->d ? (uint64_t)b->d : (uint64_t)(uintptr_t)b->h;
}

static int buf_put(const struct buf *b, size_t off, const void *src, size_t n)
{
	if (b->d)
		return cuMemcpyHtoD(b->d + off, src, n) == CUDA_SUCCESS ? 0 : -1;
	memcpy(b->h + off, src, n);
	return 0;
}

static int buf_get(const struct buf *b, size_t off, void *dst, size_t n)
{
	if (b->d)
		return cuMemcpyDtoH(dst, b->d + off, n) == CUDA_SUCCESS ? 0 : -1;
	memcpy(dst, b->h + off, n);
	return 0;
}

static int open_rxe0(void)
{
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return -1;
	for (i = 0; i < n && !ctx; i++)
		if (strcmp(ibv_get_device_name(list[i]), "rxe0") == 0)
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		return -1;
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	return cq ? 0 : -1;
}

/* An RC queue pair connected to itself through rxe0's GID. */
static struct ibv_qp *loop_qp(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	const char *step;
	union ibv_gid gid;
	struct ibv_qp *qp;

	qp = ibv_create_qp(pd, &ia);
	if (!qp)
		return NULL;
	if (ibv_query_gid(ctx, 1, gid_index, &gid) ||
	    rc_qp_connect(qp, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC, &gid, gid_index,
			  qp->qp_num, 0, 0, &step))
		goto fail;
	return qp;
fail:
	ibv_destroy_qp(qp);
	return NULL;
}

static void drop_qp(struct ibv_qp *qp)
{
	struct ibv_wc wc;

	if (qp)
		ibv_destroy_qp(qp);
	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Waits for @want completions; the first status that is not success, or
 * success; IBV_WC_GENERAL_ERR after 20 s.
 */
static enum ibv_wc_status wait_cq(int want)
{
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	double end = now() + 20;
	struct ibv_wc wc;
	int n;

	while (want > 0) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			return IBV_WC_GENERAL_ERR;
		if (n == 0) {
			if (now() > end) {
				tap_diag("no completion after 20 s");
				return IBV_WC_GENERAL_ERR;
			}
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS && st == IBV_WC_SUCCESS)
			st = wc.status;
		want--;
		/* A failed work request flushes the others: stop there. */
		if (st != IBV_WC_SUCCESS)
			break;
	}
	return st;
}

/*
 * One work request moving @n bytes from @src + @soff to @dst + @doff:
 * RDMA WRITE (the source local), RDMA READ (the destination local), or
 * SEND into a RECV posted on @dst.  Posted only: 0, or -1.
 */
static int post_xfer(struct ibv_qp *qp, enum ibv_wr_opcode op,
		     const struct buf *src, size_t soff,
		     const struct buf *dst, size_t doff, size_t n)
{
	const struct buf *local = op == IBV_WR_RDMA_READ ? dst : src;
	const struct buf *remote = op == IBV_WR_RDMA_READ ? src : dst;
	size_t loff = op == IBV_WR_RDMA_READ ? doff : soff;
	size_t roff = op == IBV_WR_RDMA_READ ? soff : doff;
	struct ibv_sge sge = {
		.addr = buf_addr(local) + loff, .length = n, .lkey = local->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_sge rsge = {
		.addr = buf_addr(dst) + doff, .length = n, .lkey = dst->lkey,
	};
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_recv_wr *rbad;

	if (op == IBV_WR_SEND) {
		if (ibv_post_recv(qp, &rwr, &rbad))
			return -1;
	} else {
		wr.wr.rdma.remote_addr = buf_addr(remote) + roff;
		wr.wr.rdma.rkey = remote->rkey;
	}
	return ibv_post_send(qp, &wr, &bad) ? -1 : 0;
}

/* post_xfer() and its completions. */
static enum ibv_wc_status xfer(struct ibv_qp *qp, enum ibv_wr_opcode op,
			       const struct buf *src, size_t soff,
			       const struct buf *dst, size_t doff, size_t n)
{
	if (post_xfer(qp, op, src, soff, dst, doff, n))
		return IBV_WC_GENERAL_ERR;
	return wait_cq(op == IBV_WR_SEND ? 2 : 1);
}

static const char *op_name(enum ibv_wr_opcode op)
{
	return op == IBV_WR_RDMA_WRITE ? "RDMA WRITE" :
	       op == IBV_WR_RDMA_READ ? "RDMA READ" : "SEND/RECV";
}

/* One transfer and its check; the queue pair is made again after an error. */
static void check_xfer(struct ibv_qp **qp, enum ibv_wr_opcode op,
		       const struct buf *src, const struct buf *dst, size_t n)
{
	size_t span = DOFF + n + 1, i;
	uint8_t *pat = malloc(n), *out = malloc(span), *guard = malloc(span);
	enum ibv_wc_status st = IBV_WC_GENERAL_ERR;
	int ok = 0;

	if (!pat || !out || !guard || !*qp)
		goto done;
	for (i = 0; i < n; i++)
		pat[i] = (uint8_t)(i * 7 + n + op + 1);
	memset(guard, GUARD, span);
	if (buf_put(src, SOFF, pat, n) || buf_put(dst, 0, guard, span))
		goto done;
	st = xfer(*qp, op, src, SOFF, dst, DOFF, n);
	if (st != IBV_WC_SUCCESS || buf_get(dst, 0, out, span))
		goto done;
	ok = memcmp(out + DOFF, pat, n) == 0 && out[DOFF - 1] == GUARD &&
	     out[DOFF + n] == GUARD;
done:
	tap_ok(ok, "%s %s -> %s, %zu B: data checked (%s)", op_name(op),
	       src->name, dst->name, n, ibv_wc_status_str(st));
	if (st != IBV_WC_SUCCESS) {
		drop_qp(*qp);
		*qp = loop_qp();
	}
	free(pat);
	free(out);
	free(guard);
}

static int reg(struct buf *b, size_t size)
{
	b->mr = ibv_reg_mr(pd, b->d ? (void *)(uintptr_t)b->d : b->h, size,
			   access_all);
	if (!b->mr)
		return -1;
	b->lkey = b->mr->lkey;
	b->rkey = b->mr->rkey;
	return 0;
}

static void check_module(void)
{
	char v[64] = "";

	guest_read("/sys/module/rdma_rxe/version", v, sizeof(v));
	v[strcspn(v, "\n")] = 0;
	tap_ok(strstr(v, "gdirect") != NULL,
	       "the patched rdma_rxe is loaded (version '%s')", v);
}

static void check_atomic(struct ibv_qp **qp, struct buf *gpu, struct buf *host)
{
	uint64_t v = 40, old = 0, now_v = 0;
	struct ibv_sge sge = {
		.addr = (uintptr_t)host->h, .length = 8, .lkey = host->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	enum ibv_wc_status st = IBV_WC_GENERAL_ERR;

	wr.wr.atomic.remote_addr = gpu->d + 64;
	wr.wr.atomic.rkey = gpu->rkey;
	wr.wr.atomic.compare_add = 2;
	if (*qp && !buf_put(gpu, 64, &v, 8) && !ibv_post_send(*qp, &wr, &bad))
		st = wait_cq(1);
	memcpy(&old, host->h, 8);
	buf_get(gpu, 64, &now_v, 8);
	tap_ok(st == IBV_WC_SUCCESS && old == 40 && now_v == 42,
	       "fetch-and-add on GPU memory: old %llu, now %llu (%s)",
	       (unsigned long long)old, (unsigned long long)now_v,
	       ibv_wc_status_str(st));
	if (st != IBV_WC_SUCCESS) {
		drop_qp(*qp);
		*qp = loop_qp();
	}
}

/*
 * cuMemFree of a registered buffer while a 1 MiB RDMA WRITE into it is in
 * flight: the revocation waits for the copy under way, the rest fails; the
 * WRITE ends either way and the region deregisters.  Failed, it completes
 * as a remote access error on 6.1, and flushed on 6.12, whose rxe moves
 * the QP to the error state and then flushes its send queue, the failed
 * request included.
 */
static void check_free_in_flight(struct buf *host)
{
	struct buf c = { .name = "GPU freed in flight" };
	enum ibv_wc_status st = IBV_WC_GENERAL_ERR;
	struct ibv_qp *qp = loop_qp();
	int posted = 0;

	if (!qp || cuMemAlloc(&c.d, 1 << 20) != CUDA_SUCCESS || reg(&c, 1 << 20)) {
		tap_ok(0, "a GPU buffer to free during a WRITE registers");
		drop_qp(qp);
		return;
	}
	posted = post_xfer(qp, IBV_WR_RDMA_WRITE, host, 0, &c, 0, 1 << 20) == 0;
	cuMemFree(c.d);
	if (posted)
		st = wait_cq(1);
	tap_ok(posted && (st == IBV_WC_SUCCESS || st == IBV_WC_REM_ACCESS_ERR ||
			  st == IBV_WC_WR_FLUSH_ERR),
	       "cuMemFree during a 1 MiB RDMA WRITE into the buffer: the WRITE ends (%s)",
	       ibv_wc_status_str(st));
	drop_qp(qp);
	tap_ok(ibv_dereg_mr(c.mr) == 0, "ibv_dereg_mr of the buffer freed in flight");
}

/*
 * A region of an interior pointer, neither start nor length on a GPU page
 * (64 KiB), the data across a page boundary, beside the region of the
 * whole buffer.
 */
static void check_interior(struct ibv_qp **qp, struct buf *gpu, struct buf *host)
{
	struct buf in = { .name = "GPU (interior region)", .d = gpu->d + 63000 };

	errno = 0;
	if (reg(&in, 8192)) {
		tap_ok(0, "ibv_reg_mr of bytes 63000 to 71191 of a GPU buffer (%s)",
		       strerror(errno));
		return;
	}
	check_xfer(qp, IBV_WR_RDMA_WRITE, host, &in, 4097);
	check_xfer(qp, IBV_WR_RDMA_READ, &in, host, 4097);
	tap_ok(ibv_dereg_mr(in.mr) == 0, "the interior GPU region deregisters");
}

/* cuMemFree of a registered buffer: later work requests fail, dereg works. */
static void check_revocation(struct buf *host)
{
	struct buf c = { .name = "freed GPU" };
	enum ibv_wc_status st;
	struct ibv_qp *qp;

	if (cuMemAlloc(&c.d, 256 << 10) != CUDA_SUCCESS || reg(&c, 256 << 10)) {
		tap_ok(0, "a GPU buffer to free registers");
		return;
	}
	tap_ok(cuMemFree(c.d) == CUDA_SUCCESS, "cuMemFree of a registered buffer");
	qp = loop_qp();
	st = qp ? xfer(qp, IBV_WR_RDMA_WRITE, host, 0, &c, 0, 4096) :
		  IBV_WC_GENERAL_ERR;
	tap_ok(qp && st != IBV_WC_SUCCESS,
	       "RDMA WRITE into the freed buffer completes in error (%s)",
	       ibv_wc_status_str(st));
	drop_qp(qp);
	qp = loop_qp();
	st = qp ? xfer(qp, IBV_WR_RDMA_WRITE, &c, 0, host, 0, 4096) :
		  IBV_WC_GENERAL_ERR;
	tap_ok(qp && st != IBV_WC_SUCCESS,
	       "RDMA WRITE from the freed buffer completes in error (%s)",
	       ibv_wc_status_str(st));
	drop_qp(qp);
	tap_ok(ibv_dereg_mr(c.mr) == 0, "ibv_dereg_mr after the revocation");
}

/* libibverbs' command helper for reg_dmabuf_mr (its private ABI). */
typedef int (*cmd_reg_dmabuf_fn)(struct ibv_pd *, uint64_t, size_t, uint64_t,
				 int, int, void *, void *);
typedef int (*cmd_dereg_fn)(void *);

/*
 * The owner frees a buffer while its registration is inside the provider's
 * dma_map_pages, before the API lock, where NVIDIA's driver reads the page
 * table (the emulator's map_entry_delay_ms holds the call there).  A pin
 * with a free callback is revoked meanwhile and the map then reads a freed
 * table: a use-after-free in NVIDIA's driver, map_misuse and a WARN in the
 * emulator.  rxe maps only a persistent pin, which the free does not
 * revoke; its second pin, without a peer, takes the callback and marks the
 * region stale.  Three rounds; map_misuse stays where it was.
 */
struct reg_race {
	struct buf b;
	int err;
};

static void *reg_race_thread(void *arg)
{
	struct reg_race *r = arg;

	errno = 0;
	r->err = reg(&r->b, 1 << 20) ? (errno ? errno : EIO) : 0;
	return NULL;
}

static void check_map_race(struct buf *host)
{
	uint64_t misuse0 = emu_stat_u64("map_misuse");
	unsigned int round;

	for (round = 1; round <= 3; round++) {
		struct reg_race r = { .b = { .name = "GPU freed while mapped" } };
		enum ibv_wc_status st = IBV_WC_SUCCESS;
		struct ibv_qp *qp;
		int entered;
		pthread_t t;

		if (cuMemAlloc(&r.b.d, 1 << 20) != CUDA_SUCCESS ||
		    emu_knob_set("map_entry_delay_ms", "60000")) {
			tap_ok(0, "map race %u: a GPU buffer and the map_entry_delay_ms knob",
			       round);
			return;
		}
		if (pthread_create(&t, NULL, reg_race_thread, &r)) {
			emu_knob_set("map_entry_delay_ms", "0");
			tap_ok(0, "map race %u: the registering thread starts", round);
			cuMemFree(r.b.d);
			return;
		}
		entered = emu_wait_stat("maps_entering", 1, 20000);
		cuMemFree(r.b.d);
		emu_knob_set("map_entry_delay_ms", "0");
		pthread_join(t, NULL);
		if (r.b.mr) {
			/* Registered, then freed: the region is stale. */
			qp = loop_qp();
			st = qp ? xfer(qp, IBV_WR_RDMA_WRITE, host, 0, &r.b, 0,
				       4096) : IBV_WC_GENERAL_ERR;
			drop_qp(qp);
		}
		tap_ok(entered && emu_stat_u64("map_misuse") == misuse0 &&
		       (!r.b.mr || st != IBV_WC_SUCCESS),
		       "map race %u: cuMemFree while ibv_reg_mr is in dma_map_pages: no map of a freed table (map_misuse %llu -> %llu), registration %s, a WRITE into it %s",
		       round, (unsigned long long)misuse0,
		       (unsigned long long)emu_stat_u64("map_misuse"),
		       r.b.mr ? "done" : strerror(r.err),
		       r.b.mr ? ibv_wc_status_str(st) : "not tried");
		if (r.b.mr && ibv_dereg_mr(r.b.mr))
			tap_ok(0, "map race %u: ibv_dereg_mr", round);
	}
}

/* Entries in the kernel's PAT memory-type list, or -1 where unreadable. */
static long pat_entries(void)
{
	FILE *f = fopen("/sys/kernel/debug/x86/pat_memtype_list", "r");
	long n = 0;
	int c;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/*
 * A 2 MiB GPU region maps its contiguous 64 KiB pages once: each
 * write-combining mapping of device memory is an entry of the kernel's
 * PAT memory-type list, so 32 mappings would add 32 entries.
 */
static void check_runs_mapped_once(void)
{
	struct buf c = { .name = "GPU (2 MiB, one run)" };
	long before = pat_entries(), after;

	if (before < 0) {
		tap_skip("a 2 MiB GPU region is mapped in contiguous runs",
			 "no /sys/kernel/debug/x86/pat_memtype_list (PAT off, or no debugfs)");
		return;
	}
	if (cuMemAlloc(&c.d, 2 << 20) != CUDA_SUCCESS || reg(&c, 2 << 20)) {
		tap_ok(0, "a 2 MiB GPU buffer registers");
		if (c.d)
			cuMemFree(c.d);
		return;
	}
	after = pat_entries();
	tap_ok(after >= before && after - before <= 2,
	       "a 2 MiB GPU region (32 pages of 64 KiB) adds %ld PAT memtype entries (at most 2: one mapping per contiguous run)",
	       after - before);
	ibv_dereg_mr(c.mr);
	cuMemFree(c.d);
	tap_ok(pat_entries() == before,
	       "its mappings are gone after ibv_dereg_mr (PAT entries %ld -> %ld)",
	       before, pat_entries());
}

/*
 * DRM's uapi (include/uapi/drm/drm.h, drm_mode.h), the three calls used
 * here: the headers are not installed on the build machine.
 */
struct gdt_drm_version {
	int major, minor, patchlevel;
	size_t name_len;
	char *name;
	size_t date_len;
	char *date;
	size_t desc_len;
	char *desc;
};

struct gdt_drm_create_dumb {
	uint32_t height, width, bpp, flags, handle, pitch;
	uint64_t size;
};

struct gdt_drm_prime_handle {
	uint32_t handle, flags;
	int32_t fd;
};

#define GDT_DRM_IOCTL_VERSION	_IOWR('d', 0x00, struct gdt_drm_version)
#define GDT_DRM_IOCTL_PRIME_HANDLE_TO_FD \
	_IOWR('d', 0x2d, struct gdt_drm_prime_handle)
#define GDT_DRM_IOCTL_MODE_CREATE_DUMB \
	_IOWR('d', 0xB2, struct gdt_drm_create_dumb)

/* A DRM device of the vgem driver, opened, or -1. */
static int open_vgem(void)
{
	char path[32], name[16];
	int i, fd;

	for (i = 0; i < 16; i++) {
		struct gdt_drm_version v = { .name = name, .name_len = sizeof(name) - 1 };

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		if (ioctl(fd, GDT_DRM_IOCTL_VERSION, &v) == 0 &&
		    strcmp(name, "vgem") == 0)
			return fd;
		close(fd);
	}
	return -1;
}

/*
 * A dma-buf of system memory (a vgem buffer: shmem pages) registered with
 * ibv_reg_dmabuf_mr and carrying data both ways, checked through the
 * dma-buf's own mapping.  RAM cannot be mapped write-combining by
 * memremap() (a WARN, and the registration fails); rxe maps it through its
 * pages.
 */
static void check_ram_dmabuf(struct ibv_qp **qp, struct buf *host,
			     int provider, cmd_reg_dmabuf_fn cmd_reg,
			     cmd_dereg_fn cmd_dereg)
{
	static const size_t sizes[] = { 1, 4097, 1 << 20 };
	struct gdt_drm_create_dumb dumb = { .width = 1024, .height = 512, .bpp = 32 };
	struct gdt_drm_prime_handle ph = { .flags = O_CLOEXEC | O_RDWR, .fd = -1 };
	struct buf r = { .name = "system memory (vgem dma-buf MR)", .iova = 0x30000000 };
	char why[160] = "no vgem device";
	void *map = MAP_FAILED;
	unsigned int i;
	int drm, ret;

	drm = open_vgem();
	if (drm < 0) {
		guest_read("/etc/cluster-test-modules-missing", why, sizeof(why));
		why[strcspn(why, "\n")] = 0;
		tap_skip("a dma-buf of system memory registers and carries data", why);
		return;
	}
	if (ioctl(drm, GDT_DRM_IOCTL_MODE_CREATE_DUMB, &dumb) ||
	    (ph.handle = dumb.handle,
	     ioctl(drm, GDT_DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph)) ||
	    (map = mmap(NULL, dumb.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			ph.fd, 0)) == MAP_FAILED) {
		tap_ok(0, "a vgem buffer of %llu bytes exported as a dma-buf and mapped (%s)",
		       (unsigned long long)dumb.size, strerror(errno));
		goto out;
	}
	r.h = map;
	errno = 0;
	if (provider) {
		r.mr = ibv_reg_dmabuf_mr(pd, 0, dumb.size, r.iova, ph.fd, access_all);
		ret = r.mr ? 0 : errno;
	} else {
		r.mr = calloc(1, 256);	/* a struct verbs_mr, with room */
		if (r.mr) {
			r.mr->context = ctx;
			r.mr->pd = pd;
		}
		ret = r.mr ? cmd_reg(pd, 0, dumb.size, r.iova, ph.fd, access_all,
				     r.mr, NULL) : ENOMEM;
		if (ret) {
			free(r.mr);
			r.mr = NULL;
		}
	}
	tap_ok(ret == 0, "a dma-buf of system memory (vgem, %llu bytes) registers (%s)",
	       (unsigned long long)dumb.size, strerror(ret));
	if (ret)
		goto out;
	r.lkey = r.mr->lkey;
	r.rkey = r.mr->rkey;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		check_xfer(qp, IBV_WR_RDMA_WRITE, host, &r, sizes[i]);
		check_xfer(qp, IBV_WR_RDMA_READ, &r, host, sizes[i]);
	}
	ret = provider ? ibv_dereg_mr(r.mr) : cmd_dereg(r.mr);
	tap_ok(ret == 0, "the system-memory dma-buf region deregisters");
	if (!provider)
		free(r.mr);
out:
	if (map != MAP_FAILED)
		munmap(map, dumb.size);
	if (ph.fd >= 0)
		close(ph.fd);
	close(drm);
}

/* The emulator's pending clear of a dma-buf (dmabuf_fence_ms), in ms. */
#define FENCE_MS 3000
#define FENCE_SIZE (64u << 10)
#define FENCE_OLD 0xC3 /* the bytes before the clear */

/* A registration of @size bytes of dma-buf @fd at @iova, either way. */
static int reg_dmabuf(struct buf *b, int fd, size_t size, int provider,
		      cmd_reg_dmabuf_fn cmd_reg)
{
	int ret;

	errno = 0;
	if (provider) {
		b->mr = ibv_reg_dmabuf_mr(pd, 0, size, b->iova, fd, access_all);
		ret = b->mr ? 0 : errno;
	} else {
		b->mr = calloc(1, 256); /* a struct verbs_mr, with room */
		if (b->mr) {
			b->mr->context = ctx;
			b->mr->pd = pd;
		}
		ret = b->mr ? cmd_reg(pd, 0, size, b->iova, fd, access_all,
				      b->mr, NULL) :
			      ENOMEM;
		if (ret) {
			free(b->mr);
			b->mr = NULL;
		}
	}
	if (!ret) {
		b->lkey = b->mr->lkey;
		b->rkey = b->mr->rkey;
	}
	return ret;
}

/*
 * A dma-buf whose exporter has a pending clear: the emulator's
 * dmabuf_fence_ms knob puts a DMA_RESV_USAGE_KERNEL fence on the dma-buf
 * and zeroes the range FENCE_MS ms after the export, then signals it.
 * The NIC must wait for the exporter's kernel fences before it uses the
 * pages (ib_umem_dmabuf_map_pages() does, rxe_gpu_wait_kernel_fences()
 * in emu/rxe), so the registration returns FENCE_MS ms after the export
 * at the earliest, an RDMA READ through it sees the zeroes, not the
 * FENCE_OLD bytes of before, and an RDMA WRITE through it is still there
 * once the clear is surely done.  A NIC that does not wait fails all three.
 */
static void check_dmabuf_fence(struct ibv_qp **qp, struct buf *host,
			       int provider, cmd_reg_dmabuf_fn cmd_reg,
			       cmd_dereg_fn cmd_dereg)
{
	struct buf d = { .name = "GPU (dma-buf MR, pending clear)",
			 .iova = 0x20000000 };
	enum ibv_wc_status st = IBV_WC_GENERAL_ERR;
	uint8_t *pat = malloc(FENCE_SIZE), *out = malloc(FENCE_SIZE);
	char ms[16];
	double t0, t1, t2;
	size_t bad, i;
	int fd = -1, ret, armed;

	if (!pat || !out || cuMemAlloc(&d.d, FENCE_SIZE) != CUDA_SUCCESS) {
		tap_ok(0, "a %u-byte GPU buffer for the pending clear",
		       FENCE_SIZE);
		goto out;
	}
	memset(pat, FENCE_OLD, FENCE_SIZE);
	snprintf(ms, sizeof(ms), "%u", FENCE_MS);
	armed = cuMemcpyHtoD(d.d, pat, FENCE_SIZE) == CUDA_SUCCESS &&
		emu_knob_set("dmabuf_fence_ms", ms) == 0;
	t0 = now();
	if (armed &&
	    cuMemGetHandleForAddressRange(&fd, d.d, FENCE_SIZE,
					  CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
					  0) != CUDA_SUCCESS)
		fd = -1;
	/* Only this export gets the clear. */
	emu_knob_set("dmabuf_fence_ms", "0");
	if (!armed || fd < 0) {
		tap_ok(0,
		       "a dma-buf with a pending clear (knob dmabuf_fence_ms %s, export %s)",
		       armed ? "set" : "not set", fd < 0 ? "failed" : "done");
		goto out;
	}
	t1 = now();
	ret = reg_dmabuf(&d, fd, FENCE_SIZE, provider, cmd_reg);
	t2 = now();
	tap_ok(ret == 0 && (t2 - t0) * 1000 >= FENCE_MS,
	       "a dma-buf with a pending kernel fence (signalled %u ms after the export) registers only once it signalled: %.0f ms after the export, %.0f ms in the registration (%s)",
	       FENCE_MS, (t2 - t0) * 1000, (t2 - t1) * 1000, strerror(ret));
	if (ret)
		goto out;

	memset(host->h, GUARD, FENCE_SIZE);
	if (*qp)
		st = xfer(*qp, IBV_WR_RDMA_READ, &d, 0, host, 0, FENCE_SIZE);
	for (bad = 0, i = 0; i < FENCE_SIZE; i++)
		bad += host->h[i] != 0;
	tap_ok(st == IBV_WC_SUCCESS && bad == 0,
	       "RDMA READ of its %u bytes sees the cleared bytes (%zu not 0, first 0x%02x; %s)",
	       FENCE_SIZE, bad, host->h[0], ibv_wc_status_str(st));
	if (st != IBV_WC_SUCCESS) {
		drop_qp(*qp);
		*qp = loop_qp();
	}

	for (i = 0; i < FENCE_SIZE; i++)
		host->h[i] = (uint8_t)(i * 13 + 1);
	st = *qp ? xfer(*qp, IBV_WR_RDMA_WRITE, host, 0, &d, 0, FENCE_SIZE) :
		   IBV_WC_GENERAL_ERR;
	/* A clear the NIC did not wait for is done by now. */
	while (now() < t0 + FENCE_MS / 1000.0 + 1)
		usleep(50000);
	memset(out, 0, FENCE_SIZE);
	ret = buf_get(&d, 0, out, FENCE_SIZE);
	tap_ok(st == IBV_WC_SUCCESS && !ret &&
		       memcmp(out, host->h, FENCE_SIZE) == 0,
	       "an RDMA WRITE of its %u bytes is still there after the clear's time (first byte 0x%02x, written 0x%02x; %s)",
	       FENCE_SIZE, out[0], host->h[0], ibv_wc_status_str(st));
	if (st != IBV_WC_SUCCESS) {
		drop_qp(*qp);
		*qp = loop_qp();
	}
	ret = provider ? ibv_dereg_mr(d.mr) : cmd_dereg(d.mr);
	tap_ok(ret == 0, "the region of the cleared dma-buf deregisters");
	if (!provider)
		free(d.mr);
out:
	if (fd >= 0)
		close(fd);
	if (d.d)
		cuMemFree(d.d);
	free(pat);
	free(out);
}

/*
 * A dma-buf released before its pending clear: the release cancels the
 * clear and signals the fence, so the dma-buf goes at once (the counter
 * dmabufs back where it was) and the range is never zeroed after it, when
 * the memory is the owner's alone again.
 */
static void check_dmabuf_fence_release(void)
{
	uint64_t n0 = emu_stat_u64("dmabufs"), n1 = UINT64_MAX;
	uint8_t *pat = malloc(FENCE_SIZE), *out = malloc(FENCE_SIZE);
	unsigned int first = 0;
	CUdeviceptr d = 0;
	char ms[16];
	double t0;
	int fd = -1, ok = 0;

	snprintf(ms, sizeof(ms), "%u", FENCE_MS);
	if (!pat || !out || cuMemAlloc(&d, FENCE_SIZE) != CUDA_SUCCESS)
		goto out;
	memset(pat, FENCE_OLD, FENCE_SIZE);
	if (cuMemcpyHtoD(d, pat, FENCE_SIZE) != CUDA_SUCCESS ||
	    emu_knob_set("dmabuf_fence_ms", ms))
		goto out;
	t0 = now();
	if (cuMemGetHandleForAddressRange(&fd, d, FENCE_SIZE,
					  CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
					  0) != CUDA_SUCCESS)
		fd = -1;
	emu_knob_set("dmabuf_fence_ms", "0");
	if (fd < 0)
		goto out;
	close(fd);
	n1 = emu_stat_u64("dmabufs");
	/* A clear the release did not cancel would be done by now. */
	while (now() < t0 + FENCE_MS / 1000.0 + 1)
		usleep(50000);
	if (cuMemcpyDtoH(out, d, FENCE_SIZE) != CUDA_SUCCESS)
		goto out;
	first = out[0];
	ok = n1 == n0 && memcmp(out, pat, FENCE_SIZE) == 0;
out:
	tap_ok(ok,
	       "a dma-buf closed before its pending clear is released at once (dmabufs %llu -> %llu) and its clear cancelled (first byte 0x%02x, was 0x%02x)",
	       (unsigned long long)n0, (unsigned long long)n1, first,
	       FENCE_OLD);
	if (d)
		cuMemFree(d);
	free(pat);
	free(out);
}

static void check_dmabuf(struct ibv_qp **qp, struct buf *host, struct buf *gpu)
{
	static const size_t sizes[] = { 1, 4097, 1 << 20 };
	cmd_reg_dmabuf_fn cmd_reg;
	cmd_dereg_fn cmd_dereg;
	uint64_t maps0 = emu_stat_u64("dmabuf_maps");
	struct buf d = { .name = "GPU (dma-buf MR)" };
	struct buf in = { .name = "GPU (dma-buf MR, interior)" };
	struct ibv_mr *mr, *vmr = NULL;
	int provider, fd = -1, ret;
	size_t size = BUF_SIZE;
	unsigned int i;

	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, 0, 4096, 0, -1, access_all);
	provider = !mr && errno == EBADF;
	if (!mr && errno == EOPNOTSUPP)
		tap_skip("ibv_reg_dmabuf_mr(fd -1) answers EBADF",
			 "the rxe provider (librxe-rdmav34.so of this rdma-core) has no reg_dmabuf_mr: EOPNOTSUPP");
	else
		tap_ok(provider, "ibv_reg_dmabuf_mr(fd -1) answers EBADF (%s)",
		       strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);

	cmd_reg = (cmd_reg_dmabuf_fn)dlsym(RTLD_DEFAULT, "ibv_cmd_reg_dmabuf_mr");
	cmd_dereg = (cmd_dereg_fn)dlsym(RTLD_DEFAULT, "ibv_cmd_dereg_mr");
	if (!provider && (!cmd_reg || !cmd_dereg)) {
		tap_skip("the dma-buf memory region", "no provider op and no ibv_cmd_reg_dmabuf_mr in libibverbs");
		return;
	}
	/* The kernel's op, whichever way user space reaches it. */
	if (!provider) {
		vmr = calloc(1, 256);	/* a struct verbs_mr, with room */
		if (!vmr)
			return;
		vmr->context = ctx;
		vmr->pd = pd;
		ret = cmd_reg(pd, 0, 4096, 0, -1, access_all, vmr, NULL);
		tap_ok(ret == EBADF, "the kernel's reg_user_mr_dmabuf(fd -1) answers EBADF (%s)",
		       strerror(ret));
	}
	check_ram_dmabuf(qp, host, provider, cmd_reg, cmd_dereg);
	check_dmabuf_fence(qp, host, provider, cmd_reg, cmd_dereg);
	check_dmabuf_fence_release();

	if (cuMemAlloc(&d.d, size) != CUDA_SUCCESS ||
	    cuMemGetHandleForAddressRange(&fd, d.d, size,
					  CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
					  0) != CUDA_SUCCESS) {
		tap_ok(0, "a dma-buf of GPU memory (cuMemGetHandleForAddressRange)");
		goto out;
	}
	if (provider) {
		d.mr = ibv_reg_dmabuf_mr(pd, 0, size, d.d, fd, access_all);
		ret = d.mr ? 0 : errno;
	} else {
		ret = cmd_reg(pd, 0, size, d.d, fd, access_all, vmr, NULL);
		if (!ret)
			d.mr = vmr;
	}
	tap_ok(!ret && emu_stat_u64("dmabuf_maps") > maps0,
	       "a dma-buf of GPU memory registers%s (%s; dmabuf_maps %llu -> %llu)",
	       provider ? "" : " through ibv_cmd_reg_dmabuf_mr", strerror(ret),
	       (unsigned long long)maps0,
	       (unsigned long long)emu_stat_u64("dmabuf_maps"));
	if (ret)
		goto out;
	d.lkey = d.mr->lkey;
	d.rkey = d.mr->rkey;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		check_xfer(qp, IBV_WR_RDMA_WRITE, host, &d, sizes[i]);
		check_xfer(qp, IBV_WR_RDMA_READ, &d, host, sizes[i]);
	}
	check_xfer(qp, IBV_WR_SEND, gpu, &d, 4097);

	/*
	 * An interior range of the dma-buf, unaligned, at an iova of its own
	 * (the core wants the same offset in the page as the range's).
	 */
	in.d = d.d + 65536 + 5;
	in.iova = 0x10000000 + 5;
	if (provider) {
		in.mr = ibv_reg_dmabuf_mr(pd, 65536 + 5, 8192, in.iova, fd,
					  access_all);
		ret = in.mr ? 0 : errno;
	} else {
		in.mr = calloc(1, 256);
		ret = in.mr ? cmd_reg(pd, 65536 + 5, 8192, in.iova, fd,
				      access_all, in.mr, NULL) : ENOMEM;
	}
	tap_ok(ret == 0, "a region of bytes 65541 to 73732 of the dma-buf registers (%s)",
	       strerror(ret));
	if (ret == 0) {
		in.lkey = in.mr->lkey;
		in.rkey = in.mr->rkey;
		check_xfer(qp, IBV_WR_RDMA_WRITE, host, &in, 4097);
		check_xfer(qp, IBV_WR_RDMA_READ, &in, host, 4097);
		tap_ok((provider ? ibv_dereg_mr(in.mr) : cmd_dereg(in.mr)) == 0,
		       "the interior region deregisters");
	}
	if (!provider)
		free(in.mr);

	ret = provider ? ibv_dereg_mr(d.mr) : cmd_dereg(d.mr);
	tap_ok(ret == 0, "the dma-buf memory region deregisters");
	close(fd);
	fd = -1;
	tap_ok(emu_stat_u64("dmabuf_maps") == maps0,
	       "the attachment's mapping is gone (dmabuf_maps %llu)",
	       (unsigned long long)emu_stat_u64("dmabuf_maps"));
out:
	if (fd >= 0)
		close(fd);
	if (d.d)
		cuMemFree(d.d);
	free(vmr);
}

/* The child: a GPU region registered, then exit without deregistering. */
static int exit_with_mr(void)
{
	struct buf b = { .name = "child" };

	if (guest_cuda_init() || open_rxe0() ||
	    cuMemAlloc(&b.d, 1 << 20) != CUDA_SUCCESS || reg(&b, 1 << 20))
		return 1;
	printf("# child: registered, pins %llu; exiting without ibv_dereg_mr\n",
	       (unsigned long long)emu_stat_u64("pins"));
	fflush(stdout);
	_exit(0);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 1, 4097, 1 << 20 };
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_SEND,
	};
	struct buf a = { .name = "GPU" }, b = { .name = "GPU" };
	struct buf h = { .name = "host" };
	struct buf *pairs[][2] = { { &a, &b }, { &h, &b }, { &a, &h } };
	uint64_t pins0;
	struct ibv_qp *qp;
	unsigned int i, j, k;
	int status, ret;
	pid_t pid;

	if (argc < 2)
		tap_skip_all("usage: rxe-gpu-test GID_INDEX");
	gid_index = atoi(argv[argc - 1]);
	if (strcmp(argv[1], "--exit-with-mr") == 0)
		return exit_with_mr();
	/* The caller brought rxe0 and the GPU up: failing now is a failure. */
	if (guest_cuda_init()) {
		tap_ok(0, "a CUDA context (nvp2p_emu loaded by cluster_up)");
		return tap_done();
	}
	if (open_rxe0()) {
		tap_ok(0, "rxe0 opens, with a protection domain and an RC queue pair");
		return tap_done();
	}

	check_module();
	pins0 = emu_stat_u64("pins");
	h.h = aligned_alloc(4096, BUF_SIZE);
	tap_ok(h.h && reg(&h, BUF_SIZE) == 0, "ibv_reg_mr of host memory");
	if (cuMemAlloc(&a.d, BUF_SIZE) != CUDA_SUCCESS ||
	    cuMemAlloc(&b.d, BUF_SIZE) != CUDA_SUCCESS) {
		tap_ok(0, "cuMemAlloc of two %u-byte buffers", BUF_SIZE);
		return tap_done();
	}
	errno = 0;
	ret = reg(&a, BUF_SIZE) == 0 && reg(&b, BUF_SIZE) == 0;
	tap_ok(ret, "ibv_reg_mr of cuMemAlloc memory (%s)",
	       ret ? "ok" : strerror(errno));
	tap_ok(emu_stat_u64("pins") > pins0 && emu_stat_u64("pins") != UINT64_MAX,
	       "the registrations pin GPU memory (pins %llu -> %llu)",
	       (unsigned long long)pins0,
	       (unsigned long long)emu_stat_u64("pins"));
	qp = loop_qp();
	tap_ok(qp != NULL, "an RC queue pair on rxe0 connected to itself");
	if (a.mr && b.mr && h.mr) {
		for (i = 0; i < 3; i++)
			for (j = 0; j < 3; j++)
				for (k = 0; k < 3; k++)
					check_xfer(&qp, ops[i], pairs[j][0],
						   pairs[j][1], sizes[k]);
		check_atomic(&qp, &b, &h);
		check_interior(&qp, &a, &h);
	} else {
		tap_skip("transfers on GPU memory regions", "no GPU memory region");
	}
	if (h.mr) {
		check_revocation(&h);
		check_free_in_flight(&h);
		check_map_race(&h);
		check_runs_mapped_once();
		check_dmabuf(&qp, &h, &a);
	}
	drop_qp(qp);
	tap_ok((!a.mr || ibv_dereg_mr(a.mr) == 0) &&
	       (!b.mr || ibv_dereg_mr(b.mr) == 0), "ibv_dereg_mr of the GPU regions");
	cuMemFree(a.d);
	cuMemFree(b.d);

	pid = fork();
	if (pid == 0) {
		char idx[16];

		snprintf(idx, sizeof(idx), "%d", gid_index);
		execl("/proc/self/exe", argv[0], "--exit-with-mr", idx, (char *)NULL);
		_exit(127);
	}
	tap_ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0,
	       "a process registers GPU memory and exits without ibv_dereg_mr");
	tap_ok(emu_wait_quiet(5000, NULL), "0 pins and 0 BAR1 bytes at the end");
	if (h.mr)
		ibv_dereg_mr(h.mr);
	free(h.h);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tap_done();
}
