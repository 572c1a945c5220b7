// SPDX-License-Identifier: MIT
/*
 * gpu-rdma-pair - GPU memory to GPU memory between two nodes over RDMA, as
 * a user of `gdirect-emu run --nodes 2` writes it from gdirect-emu(1): the
 * node's index and the other node's address come from GDIRECT_EMU_NODE and
 * GDIRECT_EMU_PEER, the NIC is the first verbs device, the GPU is CUDA's
 * device 0.
 *
 * usage: gpu-rdma-pair peer|dmabuf
 *
 * Each node allocates 1 MiB of GPU memory with cuMemAlloc and registers it
 * with the NIC: "peer" by ibv_reg_mr on the device pointer (peer memory),
 * "dmabuf" by ibv_reg_dmabuf_mr on the dma-buf of
 * cuMemGetHandleForAddressRange.  Node 1 fills its second half with one
 * pattern; node 0 fills its first half with another.  The nodes swap their
 * queue pair's address, rkey and buffer address over TCP (port 18515, node
 * 1 listening); node 0 RDMA-writes its first half into node 1's first half
 * and RDMA-reads node 1's second half into its own second half.  Then each
 * node copies its GPU buffer to the host and checks both halves: data
 * moved both ways, GPU memory at both ends.  Prints one line per check and
 * exits 0 only when all passed.
 *
 * It uses none of the tree's test helpers, though tests/guest/cluster/rc-qp.h
 * sets up the same queue pair for the cluster's programs: it stands for a
 * program written from the manual page alone, so what it needs to know
 * must be in that page, and a helper would hide what is missing there.
 */
#include <arpa/inet.h>
#include <cuda.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF_SIZE (1u << 20)
#define HALF (BUF_SIZE / 2)
#define PORT 18515

struct peer_info {
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint64_t addr;
	uint8_t gid[16];
};

static int fails;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAILED", what);
	fflush(stdout);
	if (!ok)
		fails++;
}

static void die(const char *what, long err)
{
	fprintf(stderr, "gpu-rdma-pair: %s failed (%ld)\n", what, err);
	exit(1);
}

static uint8_t pattern(int which, size_t i)
{
	return (uint8_t)(which * 0x5b + i * 7 + (i >> 12));
}

static int full_write(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t r = write(fd, c, n);

		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

static int full_read(int fd, void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t r = read(fd, c, n);

		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

/* A TCP connection to the other node: node 1 listens, node 0 connects. */
static int connect_peer(int node, const char *peer)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	int one = 1, fd, s;

	if (node == 1) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (s < 0)
			die("socket", errno);
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		a.sin_addr.s_addr = htonl(INADDR_ANY);
		if (bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 1))
			die("bind/listen", errno);
		fd = accept(s, NULL, NULL);
		close(s);
		if (fd < 0)
			die("accept", errno);
		return fd;
	}
	if (inet_pton(AF_INET, peer, &a.sin_addr) != 1)
		die("GDIRECT_EMU_PEER", 0);
	/* The other node may not listen yet: try for two minutes. */
	for (int i = 0; i < 240; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			die("socket", errno);
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
			return fd;
		close(fd);
		usleep(500000);
	}
	die("connect to the other node", errno);
	return -1;
}

/* The index of the port's RoCE v2 GID of an IPv4 address (::ffff:a.b.c.d). */
static int ipv4_gid_index(struct ibv_context *ctx, union ibv_gid *gid)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct ibv_port_attr pa;

	if (ibv_query_port(ctx, 1, &pa))
		die("ibv_query_port", errno);
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(ctx, 1, (uint32_t)i, &e, 0) ||
		    e.gid_type != IBV_GID_TYPE_ROCE_V2 ||
		    memcmp(e.gid.raw, v4mapped, sizeof(v4mapped)))
			continue;
		*gid = e.gid;
		return i;
	}
	die("finding an IPv4 RoCE v2 GID", 0);
	return -1;
}

static void qp_connect(struct ibv_qp *qp, const struct peer_info *me,
		       const struct peer_info *them, int gid_index)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_LOCAL_WRITE,
	};
	int r;

	r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (r)
		die("QP to INIT", r);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = them->qpn;
	a.rq_psn = them->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = (uint8_t)gid_index;
	memcpy(a.ah_attr.grh.dgid.raw, them->gid, 16);
	r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (r)
		die("QP to RTR", r);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = me->psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_MAX_QP_RD_ATOMIC);
	if (r)
		die("QP to RTS", r);
}

/* One RDMA operation of HALF bytes from or to @local, its completion. */
static int rdma(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr,
		uint64_t local, enum ibv_wr_opcode op, uint64_t remote,
		uint32_t rkey)
{
	struct ibv_sge sge = { .addr = local, .length = HALF, .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = remote, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;
	int n;

	if (ibv_post_send(qp, &wr, &bad))
		return -1;
	for (int i = 0; i < 600000; i++) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			return -1;
		if (n == 1)
			return wc.status == IBV_WC_SUCCESS ? 0 : -(int)wc.status;
		usleep(100);
	}
	return -ETIMEDOUT;
}

static int halves_match(const uint8_t *buf, int first, int second)
{
	for (size_t i = 0; i < HALF; i++)
		if (buf[i] != pattern(first, i) || buf[HALF + i] != pattern(second, i))
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	const char *node_s = getenv("GDIRECT_EMU_NODE");
	const char *peer = getenv("GDIRECT_EMU_PEER");
	struct peer_info me = { 0 }, them;
	struct ibv_device **devs;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	union ibv_gid gid;
	CUdeviceptr gpu;
	CUcontext cu;
	CUdevice dev;
	CUresult cr;
	uint8_t *host, go = 1;
	int node, dmabuf, fd, gid_index, access, r;

	if (argc != 2 || (strcmp(argv[1], "peer") && strcmp(argv[1], "dmabuf"))) {
		fprintf(stderr, "usage: gpu-rdma-pair peer|dmabuf\n");
		return 2;
	}
	dmabuf = !strcmp(argv[1], "dmabuf");
	if (!node_s || (strcmp(node_s, "0") && strcmp(node_s, "1")) || !peer) {
		fprintf(stderr, "gpu-rdma-pair: GDIRECT_EMU_NODE (0 or 1) and GDIRECT_EMU_PEER must be set (gdirect-emu run --nodes 2)\n");
		return 2;
	}
	node = node_s[0] - '0';

	cr = cuInit(0);
	if (cr)
		die("cuInit", cr);
	if ((cr = cuDeviceGet(&dev, 0)) || (cr = cuDevicePrimaryCtxRetain(&cu, dev)) ||
	    (cr = cuCtxSetCurrent(cu)))
		die("the CUDA context", cr);
	cr = cuMemAlloc(&gpu, BUF_SIZE);
	if (cr)
		die("cuMemAlloc", cr);
	host = malloc(BUF_SIZE);
	if (!host)
		die("malloc", ENOMEM);
	/* Node 0's first half and node 1's second half are the sources. */
	memset(host, 0, BUF_SIZE);
	for (size_t i = 0; i < HALF; i++)
		host[node ? HALF + i : i] = pattern(node, i);
	cr = cuMemcpyHtoD(gpu, host, BUF_SIZE);
	if (cr)
		die("cuMemcpyHtoD", cr);

	devs = ibv_get_device_list(NULL);
	if (!devs || !devs[0])
		die("ibv_get_device_list: no RDMA device", errno);
	ctx = ibv_open_device(devs[0]);
	if (!ctx)
		die("ibv_open_device", errno);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!pd || !cq)
		die("the PD and CQ", errno);
	access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		 IBV_ACCESS_REMOTE_READ;
	if (dmabuf) {
		int dfd = -1;

		cr = cuMemGetHandleForAddressRange(&dfd, gpu, BUF_SIZE,
						   CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
		if (cr)
			die("cuMemGetHandleForAddressRange", cr);
		mr = ibv_reg_dmabuf_mr(pd, 0, BUF_SIZE, (uint64_t)gpu, dfd, access);
		close(dfd);
	} else {
		mr = ibv_reg_mr(pd, (void *)(uintptr_t)gpu, BUF_SIZE, access);
	}
	check(mr != NULL, dmabuf ? "ibv_reg_dmabuf_mr registers cuMemAlloc'd memory"
				 : "ibv_reg_mr registers cuMemAlloc'd memory");
	if (!mr)
		die("registering GPU memory", errno);
	qp = ibv_create_qp(pd, &(struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	});
	if (!qp)
		die("ibv_create_qp", errno);

	gid_index = ipv4_gid_index(ctx, &gid);
	me.qpn = qp->qp_num;
	me.psn = (uint32_t)(getpid() & 0xffffff);
	me.rkey = mr->rkey;
	me.addr = (uint64_t)gpu;
	memcpy(me.gid, gid.raw, 16);
	fd = connect_peer(node, peer);
	if (full_write(fd, &me, sizeof(me)) || full_read(fd, &them, sizeof(them)))
		die("swapping QP addresses", errno);
	qp_connect(qp, &me, &them, gid_index);
	/* Both QPs are ready to receive before node 0 sends. */
	if (full_write(fd, &go, 1) || full_read(fd, &go, 1))
		die("the ready handshake", errno);

	if (node == 0) {
		r = rdma(qp, cq, mr, (uint64_t)gpu, IBV_WR_RDMA_WRITE, them.addr,
			 them.rkey);
		check(r == 0, "RDMA write from node 0's GPU memory to node 1's");
		r = rdma(qp, cq, mr, (uint64_t)gpu + HALF, IBV_WR_RDMA_READ,
			 them.addr + HALF, them.rkey);
		check(r == 0, "RDMA read from node 1's GPU memory into node 0's");
	}
	/* Node 1 waits for node 0's word that both operations completed. */
	if (full_write(fd, &go, 1) || full_read(fd, &go, 1))
		die("the done handshake", errno);
	memset(host, 0, BUF_SIZE);
	cr = cuMemcpyDtoH(host, gpu, BUF_SIZE);
	if (cr)
		die("cuMemcpyDtoH", cr);
	check(halves_match(host, 0, 1), node ? "node 1's GPU memory holds node 0's data (written) and its own"
					     : "node 0's GPU memory holds its own data and node 1's (read)");
	close(fd);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(devs);
	cuMemFree(gpu);
	free(host);
	printf("gpu-rdma-pair node %d (%s): %s\n", node, argv[1], fails ? "FAILED" : "passed");
	return fails ? 1 : 0;
}
