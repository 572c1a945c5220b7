// SPDX-License-Identifier: MIT
/*
 * rdma-probe.c - what rxe0 can register in this guest, asked through the
 * standard verbs: GPU memory through ibv_reg_mr (the peer-memory path,
 * nvidia-peermem's) and through ibv_reg_dmabuf_mr (the dma-buf path), and
 * the dma-buf capability probe NCCL, UCX and libfabric make
 * (ibv_reg_dmabuf_mr with fd -1: EBADF means supported, EOPNOTSUPP not).
 * cluster-perftest.sh runs perftest on GPU memory only where these answer ok.
 *
 * Prints one line per question, "NAME: ok" or "NAME: ERRNO-NAME", and
 * exits 0 once rxe0 and the GPU could be opened, 1 otherwise:
 *   dmabuf_probe  ibv_reg_dmabuf_mr(fd -1): EBADF where the path exists
 *   peermem       ibv_reg_mr on 64 KiB of cuMemAlloc
 *   dmabuf        ibv_reg_dmabuf_mr on cuMemGetHandleForAddressRange's fd
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "cuda.h"

#define PROBE_LEN (64u << 10)
#define PROBE_ACCESS                                        \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_READ)

/* report: one answer line; mr is deregistered here. */
static void report(const char *what, struct ibv_mr *mr, int err)
{
	if (mr) {
		printf("%s: ok\n", what);
		ibv_dereg_mr(mr);
		return;
	}
	printf("%s: %s\n", what,
	       strerrorname_np(err) ? strerrorname_np(err) : "unknown-errno");
}

int main(void)
{
	struct ibv_device **devs;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	CUcontext cu;
	CUdevice dev;
	CUdeviceptr d;
	CUresult r;
	int fd = -1;
	int n;

	devs = ibv_get_device_list(&n);
	for (int i = 0; devs && i < n; i++)
		if (!strcmp(ibv_get_device_name(devs[i]), "rxe0"))
			ctx = ibv_open_device(devs[i]);
	if (devs)
		ibv_free_device_list(devs);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd) {
		fprintf(stderr, "rdma-probe: cannot open rxe0 and a PD\n");
		return 1;
	}

	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, 0, PROBE_LEN, 0, -1, PROBE_ACCESS);
	report("dmabuf_probe", mr, errno);

	r = cuInit(0);
	if (!r)
		r = cuDeviceGet(&dev, 0);
	if (!r)
		r = cuCtxCreate(&cu, NULL, 0, dev);
	if (!r)
		r = cuMemAlloc(&d, PROBE_LEN);
	if (r) {
		fprintf(stderr, "rdma-probe: no GPU memory (CUDA error %d)\n",
			r);
		return 1;
	}
	errno = 0;
	mr = ibv_reg_mr(pd, (void *)(uintptr_t)d, PROBE_LEN, PROBE_ACCESS);
	report("peermem", mr, errno);

	r = cuMemGetHandleForAddressRange(
		&fd, d, PROBE_LEN, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (r) {
		printf("dmabuf: cuMemGetHandleForAddressRange-error-%d\n", r);
	} else {
		errno = 0;
		mr = ibv_reg_dmabuf_mr(pd, 0, PROBE_LEN, d, fd, PROBE_ACCESS);
		report("dmabuf", mr, errno);
		close(fd);
	}
	cuMemFree(d);
	cuCtxDestroy(cu);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
