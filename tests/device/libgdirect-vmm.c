/* SPDX-License-Identifier: MIT */
/*
 * libgdirect-vmm.c - on a real GPU, without gdirect.ko: libgdirect's
 * registration steps for each kind of memory NVIDIA's driver hands out, up
 * to the pin.
 *
 * CUDA is real (classification, BUFFER_ID, SYNC_MEMOPS, the VMM check);
 * pins go to the fake backend (tests/fakes/fake_backend.c), so the module
 * need not be loaded and no BAR is mapped.
 *
 *  1-2  VMM memory (cuMemCreate + cuMemMap) with and without
 *       gpuDirectRDMACapable registers: the driver refuses SYNC_MEMOPS on
 *       it (CUDA_ERROR_NOT_SUPPORTED) and libgdirect goes on without it;
 *  3    cuMemAlloc memory registers with SYNC_MEMOPS set (reads 1 after);
 *  4    the counters: one SYNC_MEMOPS, two VMM allocations without it;
 *  5    managed memory is refused with -EOPNOTSUPP, as on the emulator.
 *
 * Run by `make test-gpu` (meson suite gpu); skipped without a GPU.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>
#include <gdirect.h>

#include "epoch.h"
#include "fake_backend.h"
#include "libgdirect_internal.h"
#include "cuda_vmm.h"
#include "tap.h"

#define MiB (1024ULL * 1024)

static int reg(struct gdirect_ctx *c, CUdeviceptr p)
{
	struct gdirect_reg *r;
	int rc = gdirect_reg_get(c, (void *)(uintptr_t)p, 4096, 0, &r);

	if (rc)
		tap_diag("gdirect_reg_get(%#llx): %d %s", (unsigned long long)p,
			 rc, gdirect_errmsg());
	else
		gdirect_reg_put(r);
	return rc;
}

int main(void)
{
	struct tcu_vmm v1, v0;
	CUdeviceptr d = 0, m = 0;
	struct gdirect_params p;
	struct gdirect_stats st;
	struct gdirect_ctx *c;
	CUcontext cctx;
	CUdevice dev;
	unsigned sync = 0, vmm_ok = 0;
	int count = 0, drv = 0;
	char name[256] = "";

	if (cuInit(0) || cuDeviceGetCount(&count) || !count)
		tap_skip_all("no CUDA device here");
	tap_plan(5);
	if (cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&cctx, dev) ||
	    cuCtxSetCurrent(cctx) || cuMemAlloc(&d, 1 * MiB)) {
		tap_diag("no CUDA context or memory");
		return 1;
	}
	cuDeviceGetName(name, sizeof(name), dev);
	cuDriverGetVersion(&drv);
	tap_diag("GPU %s, CUDA driver API %d", name, drv);
	if (cuDeviceGetAttribute((int *)&vmm_ok,
			CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
			dev) || !vmm_ok ||
	    tcu_vmm_alloc(&v1, dev, 1) || tcu_vmm_alloc(&v0, dev, 0)) {
		tap_diag("no VMM memory on this GPU");
		return 1;
	}
	gdl_epoch_init();
	struct gdl_backend *b = fake_backend_new(&(struct fake_cfg){
		.no_maps = true });

	gdirect_params_init(&p);
	p.invalidation = GDIRECT_INV_HOOKS;
	if (!b || gdl_ctx_create_backend(&p, b, &c)) {
		tap_diag("context: %s", gdirect_errmsg());
		return 1;
	}
	tap_ok(reg(c, v1.va) == 0, "VMM memory with gpuDirectRDMACapable registers");
	tap_ok(reg(c, v0.va) == 0, "VMM memory without gpuDirectRDMACapable registers");
	tap_ok(reg(c, d) == 0 &&
	       !cuPointerGetAttribute(&sync, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d) &&
	       sync == 1, "cuMemAlloc memory registers with SYNC_MEMOPS set");
	gdirect_stats(c, &st);
	tap_ok(st.sync_memops == 1 && st.sync_memops_vmm == 2,
	       "SYNC_MEMOPS set once, two VMM allocations without it "
	       "(sync_memops %llu, sync_memops_vmm %llu)",
	       (unsigned long long)st.sync_memops,
	       (unsigned long long)st.sync_memops_vmm);
	if (cuMemAllocManaged(&m, 1 * MiB, CU_MEM_ATTACH_GLOBAL))
		tap_skip("managed memory refused", "cuMemAllocManaged failed");
	else
		tap_ok(reg(c, m) == -EOPNOTSUPP, "managed memory refused");
	gdirect_ctx_destroy(c);
	if (m)
		cuMemFree(m);
	tcu_vmm_free(&v1);
	tcu_vmm_free(&v0);
	cuMemFree(d);
	return tap_done();
}
