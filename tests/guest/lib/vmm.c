/* SPDX-License-Identifier: MIT */
/*
 * lib-vmm: each kind of memory through the emulated CUDA driver's
 * pointer attributes and libgdirect's registration, in the guest, against
 * the real gdirect.ko.
 *
 *  1-5  SYNC_MEMOPS and IS_GPU_DIRECT_RDMA_CAPABLE, then
 *       cuPointerSetAttribute(SYNC_MEMOPS), for cuMemAlloc memory, VMM
 *       memory (cuMemCreate + cuMemMap) with and without
 *       gpuDirectRDMACapable, cuMemAllocHost memory and malloc memory:
 *       the answers an H200 with driver 580.159.04 gave (measured; VMM
 *       memory refuses SYNC_MEMOPS with CUDA_ERROR_NOT_SUPPORTED);
 *  6-7  VMM memory with and without gpuDirectRDMACapable registers
 *       through libgdirect (without SYNC_MEMOPS, counted in
 *       sync_memops_vmm), and bytes copied through the registration's
 *       BAR mapping are what CUDA reads back;
 *  8    cuMemAlloc memory still gets SYNC_MEMOPS before its first pin.
 *
 * The body runs in a child process: the emulator's module can be unloaded
 * only after the CUDA context's file is closed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include <gdirect.h>

#include "cuda_vmm.h"
#include "tap.h"

#define MiB (1024ULL * 1024)
/*
 * The attributes read before any setting, the set's answer, and for
 * memory that took it, SYNC_MEMOPS read again (1), against the table.
 */
static void attrs_case(const char *what, CUdeviceptr p, CUresult want_set,
		       CUresult want_get, unsigned want_sync, unsigned want_rdma)
{
	unsigned one = 1, sync = 77, rdma = 77, after = 77;
	CUresult g1 = cuPointerGetAttribute(&sync,
					    CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p);
	CUresult g2 = cuPointerGetAttribute(&rdma,
			CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, p);
	CUresult set = cuPointerSetAttribute(&one,
					     CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p);
	CUresult g3 = cuPointerGetAttribute(&after,
					    CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p);
	int ok = set == want_set && g1 == want_get && g2 == want_get &&
		 (want_get || (sync == want_sync && rdma == want_rdma));

	/* Device memory reads the setting back; a VMM mapping, which
	 * refused it, still reads 0. */
	if (want_rdma && !want_get)
		ok = ok && g3 == CUDA_SUCCESS &&
		     after == (want_set == CUDA_SUCCESS);

	tap_ok(ok, "%s: set SYNC_MEMOPS %d (want %d), SYNC_MEMOPS %d/%u, "
	       "RDMA_CAPABLE %d/%u (want %d/%u, %u)", what, set, want_set,
	       g1, sync, g2, rdma, want_get, want_sync, want_rdma);
}

/* Register the mapping's first and last 64 KiB through libgdirect and
 * copy through them; CUDA reads the bytes back. */
static int register_and_copy(struct gdirect_ctx *c, const struct tcu_vmm *v)
{
	static unsigned char in[64 << 10], out[64 << 10];
	struct gdirect_reg *r;
	int rc;

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 13 + 7);
	rc = gdirect_reg_get(c, (void *)(uintptr_t)v->va, 4096, 0, &r);
	if (rc) {
		tap_diag("gdirect_reg_get: %d %s", rc, gdirect_errmsg());
		return rc;
	}
	gdirect_reg_put(r);
	rc = gdirect_copy_to_gpu(c, (void *)(uintptr_t)(v->va + v->size -
							sizeof(in)),
				 in, sizeof(in));
	if (rc) {
		tap_diag("gdirect_copy_to_gpu: %d %s", rc, gdirect_errmsg());
		return rc;
	}
	if (cuMemcpyDtoH(out, v->va + v->size - sizeof(out), sizeof(out)))
		return -1;
	return memcmp(in, out, sizeof(in)) ? -1 : 0;
}

static int body(void)
{
	struct gdirect_stats st;
	struct gdirect_params p;
	struct gdirect_ctx *c = NULL;
	struct tcu_vmm v1, v0;
	CUdeviceptr d = 0;
	CUdevice dev;
	CUcontext ctx;
	void *host = NULL;
	char *plain = malloc(4096);

	tap_plan(8);
	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuMemAlloc(&d, 1 * MiB) || cuMemAllocHost(&host, 1 * MiB) ||
	    tcu_vmm_alloc(&v1, dev, 1) || tcu_vmm_alloc(&v0, dev, 0) || !plain) {
		tap_diag("no CUDA context or memory");
		return 1;
	}
	attrs_case("cuMemAlloc", d, CUDA_SUCCESS, CUDA_SUCCESS, 0, 1);
	attrs_case("VMM gpuDirectRDMACapable=1", v1.va,
		   CUDA_ERROR_NOT_SUPPORTED, CUDA_SUCCESS, 0, 1);
	attrs_case("VMM gpuDirectRDMACapable=0", v0.va,
		   CUDA_ERROR_NOT_SUPPORTED, CUDA_SUCCESS, 0, 0);
	attrs_case("cuMemAllocHost", (CUdeviceptr)(uintptr_t)host,
		   CUDA_SUCCESS, CUDA_SUCCESS, 0, 0);
	attrs_case("malloc", (CUdeviceptr)(uintptr_t)plain,
		   CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE, 0, 0);

	gdirect_params_init(&p);
	if (gdirect_ctx_create(&p, &c))
		tap_diag("gdirect_ctx_create: %s", gdirect_errmsg());
	tap_ok(c && register_and_copy(c, &v1) == 0,
	       "VMM memory with gpuDirectRDMACapable registers and copies");
	tap_ok(c && register_and_copy(c, &v0) == 0,
	       "VMM memory without gpuDirectRDMACapable registers and copies");
	memset(&st, 0, sizeof(st));
	if (c)
		gdirect_stats(c, &st);
	tap_diag("sync_memops %llu, sync_memops_vmm %llu",
		 (unsigned long long)st.sync_memops,
		 (unsigned long long)st.sync_memops_vmm);
	{
		struct gdirect_reg *r;
		int rc = c ? gdirect_reg_get(c, (void *)(uintptr_t)d, 4096, 0,
					     &r) : -1;

		if (rc == 0)
			gdirect_reg_put(r);
		if (c)
			gdirect_stats(c, &st);
		tap_ok(rc == 0 && st.sync_memops_vmm == 2 &&
		       st.sync_memops == 1,
		       "cuMemAlloc memory gets SYNC_MEMOPS, VMM memory goes "
		       "without (sync_memops %llu, sync_memops_vmm %llu)",
		       (unsigned long long)st.sync_memops,
		       (unsigned long long)st.sync_memops_vmm);
	}
	if (c)
		gdirect_ctx_destroy(c);
	tcu_vmm_free(&v1);
	tcu_vmm_free(&v0);
	cuMemFreeHost(host);
	cuMemFree(d);
	free(plain);
	return tap_done();
}

int main(void)
{
	int loaded_emu = 0, loaded_gdirect = 0, status;
	pid_t pid;

	if (access("/dev/gdirect", F_OK)) {
		loaded_emu = system("insmod /modules/nvp2p_emu.ko") == 0;
		loaded_gdirect = system("insmod /modules/gdirect.ko") == 0;
		if (access("/dev/gdirect", F_OK)) {
			tap_skip("VMM registration in the guest",
				 "gdirect.ko could not be loaded");
			return tap_done();
		}
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(body());
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	if (WIFSIGNALED(status))
		tap_diag("the test body was killed by signal %d", WTERMSIG(status));
	if (loaded_gdirect && system("rmmod gdirect"))
		tap_diag("rmmod gdirect failed");
	if (loaded_emu && system("rmmod nvp2p_emu"))
		tap_diag("rmmod nvp2p_emu failed");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
