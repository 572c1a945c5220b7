// SPDX-License-Identifier: MIT
/*
 * demo-gpu.c - the guide's flow on a machine with a real NVIDIA GPU
 *
 * The same walk as the emulated demo, on the real path where it can go:
 * the CUDA driver (dlopen of libcuda.so.1), libgdirect's classification and
 * registration cache, and gdirect.ko if it is loaded.  Each step that cannot
 * run here says so and why, instead of pretending.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <gdirect.h>

static struct {
	CUresult (*init)(unsigned int);
	CUresult (*drv_version)(int *);
	CUresult (*dev_get)(CUdevice *, int);
	CUresult (*dev_name)(char *, int, CUdevice);
	CUresult (*dev_attr)(int *, CUdevice_attribute, CUdevice);
	CUresult (*ctx_retain)(CUcontext *, CUdevice);
	CUresult (*ctx_set)(CUcontext);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*free)(CUdeviceptr);
	CUresult (*get_attr)(void *, CUpointer_attribute, CUdeviceptr);
} cu;

static int load_cuda(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return -1;
#define SYM(f, n) (*(void **)&cu.f = dlsym(h, n))
	SYM(init, "cuInit");
	SYM(drv_version, "cuDriverGetVersion");
	SYM(dev_get, "cuDeviceGet");
	SYM(dev_name, "cuDeviceGetName");
	SYM(dev_attr, "cuDeviceGetAttribute");
	SYM(ctx_retain, "cuDevicePrimaryCtxRetain");
	SYM(ctx_set, "cuCtxSetCurrent");
	SYM(alloc, "cuMemAlloc_v2");
	SYM(free, "cuMemFree_v2");
	SYM(get_attr, "cuPointerGetAttribute");
#undef SYM
	return cu.init && cu.alloc && cu.free && cu.get_attr && cu.ctx_retain ? 0 : -1;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int step_no, skipped;

static void step(const char *what)
{
	printf("\n[%d] %s\n", ++step_no, what);
}

static void skip(const char *why)
{
	printf("    SKIPPED: %s\n", why);
	skipped++;
}

int main(void)
{
	struct gdirect_ctx *g = NULL;
	struct gdirect_ptr_info pi;
	struct gdirect_stats st;
	struct gdirect_reg *r = NULL;
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr d, d2;
	char name[256] = "";
	int ver = 0, rdma = 0, bus = 0, have_gdirect;
	unsigned long long id = 0, id2 = 0;
	unsigned int mt = 0;
	double t0, t;
	int rc, n = 200000;

	printf("gdirect demo: the GPUDirect RDMA flow on this machine's GPU\n");
	if (load_cuda() || cu.init(0)) {
		printf("no usable CUDA driver (libcuda.so.1): run `make demo` for the emulated machine\n");
		return 1;
	}
	have_gdirect = access("/dev/gdirect", R_OK | W_OK) == 0;

	step("The machine");
	cu.dev_get(&dev, 0);
	cu.dev_name(name, sizeof(name), dev);
	cu.drv_version(&ver);
	cu.dev_attr(&rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, dev);
	cu.dev_attr(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev);
	printf("    GPU 0: %s (PCI bus %02x), CUDA driver API %d.%d, GPU_DIRECT_RDMA_SUPPORTED=%d\n",
	       name, bus, ver / 1000, ver % 1000 / 10, rdma);
	printf("    gdirect.ko: %s\n", have_gdirect ? "/dev/gdirect present" :
	       "not loaded (/dev/gdirect absent): pinning steps are skipped");
	printf("    `gdirect info` reports BAR1 (through NVML) and the PCIe topology\n");

	step("Allocate GPU memory (cuMemAlloc)");
	cu.ctx_retain(&ctx, dev);
	cu.ctx_set(ctx);
	t0 = now_ns();
	if (cu.alloc(&d, 8 << 20)) {
		printf("    cuMemAlloc failed\n");
		return 1;
	}
	t = now_ns() - t0;
	printf("    8 MiB at 0x%llx in %.0f us\n", d, t / 1e3);

	step("Classify the pointer (guide 3): libgdirect's cache against the CUDA call");
	if (gdirect_ctx_create(NULL, &g)) {
		printf("    gdirect_ctx_create: %s\n", gdirect_errmsg());
		return 1;
	}
	gdirect_classify(g, (void *)(uintptr_t)d, &pi);
	t0 = now_ns();
	for (int i = 0; i < n; i++)
		gdirect_classify(g, (void *)(uintptr_t)(d + (uint64_t)(i & 1023) * 64), &pi);
	t = (now_ns() - t0) / n;
	printf("    gdirect_classify: %s, device %d, allocation 0x%llx + %llu: %.1f ns per cached query\n",
	       pi.type == GDIRECT_MEM_DEVICE ? "device memory" : "NOT device memory", pi.device,
	       (unsigned long long)pi.alloc_base, (unsigned long long)pi.alloc_size, t);
	t0 = now_ns();
	for (int i = 0; i < n; i++)
		cu.get_attr(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + (uint64_t)(i & 1023) * 64);
	printf("    cuPointerGetAttribute(MEMORY_TYPE): %.1f ns per call\n", (now_ns() - t0) / n);

	step("Register it (SYNC_MEMOPS, 64 KiB rounding, pin; guide 12.2) and hit the cache");
	if (!have_gdirect) {
		skip("gdirect.ko is not loaded; on a machine that can load modules: make && insmod build/kmod/v2/gdirect/gdirect.ko");
	} else {
		t0 = now_ns();
		rc = gdirect_reg_get(g, (void *)(uintptr_t)d, 1 << 20, 0, &r);
		t = now_ns() - t0;
		if (rc) {
			printf("    gdirect_reg_get: %s\n", gdirect_errmsg());
		} else {
			printf("    first registration (pin) in %.0f us\n", t / 1e3);
			gdirect_reg_put(r);
			t0 = now_ns();
			for (int i = 0; i < n; i++) {
				gdirect_reg_get(g, (void *)(uintptr_t)d, 4096, 0, &r);
				gdirect_reg_put(r);
			}
			printf("    cache hit (get + put): %.1f ns\n", (now_ns() - t0) / n);
		}
	}

	step("Peer-to-peer DMA by a third-party device");
	skip("no third-party DMA device driver here (the emulated machine uses qemu's edu device)");

	step("CPU copy through the BAR mapping");
	if (!have_gdirect) {
		skip("needs gdirect.ko to map BAR1 pages into the process");
	} else {
		static char buf[1 << 20];

		memset(buf, 0x5a, sizeof(buf));
		t0 = now_ns();
		rc = gdirect_copy_to_gpu(g, (void *)(uintptr_t)d, buf, sizeof(buf));
		t = now_ns() - t0;
		printf("    1 MiB to GPU memory (%s): %s, %.0f MB/s\n", gdirect_copy_impl(),
		       rc ? "failed" : "done", rc ? 0 : sizeof(buf) / (t / 1e3));
	}

	step("Free while registered: how the cache learns of it (guide 11.2, 12.5)");
	cu.get_attr(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, d);
	cu.free(d);
	rc = cu.get_attr(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, d);
	printf("    BUFFER_ID before the free: %llu; after: %s\n", id,
	       rc == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE (a tag check sees it)" : "still answered");
	cu.alloc(&d2, 8 << 20);
	cu.get_attr(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, d2);
	printf("    re-allocation: %s VA, BUFFER_ID %llu\n", d2 == d ? "the same" : "another", id2);
	gdirect_flush(g);
	gdirect_stats(g, &st);
	printf("    libgdirect saw: %llu invalidations by hooks, %llu by kernel, %llu by BUFFER_ID\n",
	       (unsigned long long)st.inv_hooks, (unsigned long long)st.inv_kernel,
	       (unsigned long long)st.inv_buffer_id);
	if (!have_gdirect)
		printf("    (no registration existed: the kernel's free callback needs gdirect.ko)\n");
	cu.free(d2);

	step("BAR1 exhaustion and evict-and-retry");
	if (!have_gdirect)
		skip("needs pins through gdirect.ko");
	else
		printf("    see `gdirect bench` and the guest test t-50-lib-rcache\n");

	gdirect_ctx_destroy(g);
	printf("\n%d steps, %d skipped on this machine; `make demo` with no GPU runs them all in the emulated machine\n",
	       step_no, skipped);
	return 0;
}
