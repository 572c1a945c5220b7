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
#include <sys/utsname.h>
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
	CUresult (*set_attr)(const void *, CUpointer_attribute, CUdeviceptr);
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
	SYM(set_attr, "cuPointerSetAttribute");
#undef SYM
	return cu.init && cu.alloc && cu.free && cu.get_attr && cu.set_attr &&
	       cu.ctx_retain ? 0 : -1;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int step_no, skipped;

/* Why /dev/gdirect is absent, as precisely as this machine tells. */
static const char *no_module_reason(void)
{
	static char why[512];
	char path[sizeof(((struct utsname *)0)->release) + 32];
	struct utsname u;
	FILE *f = fopen("/proc/sys/kernel/modules_disabled", "r");
	int disabled = 0;

	if (f) {
		if (fscanf(f, "%d", &disabled) != 1)
			disabled = 0;
		fclose(f);
	}
	if (disabled)
		return "gdirect.ko not loaded: this machine does not allow kernel modules "
		       "(kernel.modules_disabled=1)";
	if (access("/proc/modules", R_OK))
		return "gdirect.ko not loaded: this kernel has no loadable-module support "
		       "(/proc/modules absent)";
	uname(&u);
	snprintf(path, sizeof(path), "/lib/modules/%s/build", u.release);
	if (access(path, R_OK)) {
		snprintf(why, sizeof(why), "gdirect.ko not loaded, and it cannot be built here: "
			 "no kernel headers for %s (%s)", u.release, path);
		return why;
	}
	return "gdirect.ko not loaded: make -C kernel/gdirect && insmod kernel/gdirect/gdirect.ko";
}

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
	unsigned int mt = 0, sync0 = 0, sync1 = 0, one = 1;
	const char *nomod = NULL;
	double t0, t;
	int rc, n = 200000;
	struct gdirect_stats st0, st1;

	printf("gdirect demo: the GPUDirect RDMA flow on this machine's GPU\n");
	if (load_cuda() || cu.init(0)) {
		printf("no usable CUDA driver (libcuda.so.1): run `make demo` for the emulated machine\n");
		return 1;
	}
	have_gdirect = access("/dev/gdirect", R_OK | W_OK) == 0;
	if (!have_gdirect)
		nomod = no_module_reason();

	step("The machine");
	cu.dev_get(&dev, 0);
	cu.dev_name(name, sizeof(name), dev);
	cu.drv_version(&ver);
	cu.dev_attr(&rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, dev);
	cu.dev_attr(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev);
	printf("    GPU 0: %s (PCI bus %02x), CUDA driver API %d.%d, GPU_DIRECT_RDMA_SUPPORTED=%d\n",
	       name, bus, ver / 1000, ver % 1000 / 10, rdma);
	printf("    gdirect.ko: %s\n", have_gdirect ? "/dev/gdirect present" : nomod);

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
	gdirect_stats(g, &st0);
	t0 = now_ns();
	for (int i = 0; i < n; i++)
		gdirect_classify(g, (void *)(uintptr_t)(d + (uint64_t)(i & 1023) * 64), &pi);
	t = (now_ns() - t0) / n;
	gdirect_stats(g, &st1);
	printf("    gdirect_classify: %s, device %d, allocation 0x%llx + %llu: %.1f ns per query\n",
	       pi.type == GDIRECT_MEM_DEVICE ? "device memory" : "NOT device memory", pi.device,
	       (unsigned long long)pi.alloc_base, (unsigned long long)pi.alloc_size, t);
	printf("    (%d queries: %llu answered from the cache, %llu asked CUDA)\n", n,
	       (unsigned long long)(st1.classify_hits - st0.classify_hits),
	       (unsigned long long)(st1.classify_misses - st0.classify_misses));
	t0 = now_ns();
	for (int i = 0; i < n; i++)
		cu.get_attr(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + (uint64_t)(i & 1023) * 64);
	printf("    cuPointerGetAttribute(MEMORY_TYPE): %.1f ns per call\n", (now_ns() - t0) / n);
	{
		static char host[4096];

		gdirect_classify(g, host, &pi);
		t0 = now_ns();
		for (int i = 0; i < n; i++)
			gdirect_classify(g, host + (i & 63) * 64, &pi);
		t = (now_ns() - t0) / n;
		printf("    a host pointer: gdirect_classify says %s, %.1f ns per query\n",
		       pi.type == GDIRECT_MEM_DEVICE ? "device memory (WRONG)" : "not device memory", t);
		t0 = now_ns();
		for (int i = 0; i < n; i++)
			rc = cu.get_attr(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
					 (CUdeviceptr)(uintptr_t)(host + (i & 63) * 64));
		printf("    cuPointerGetAttribute on it: error %d (not CUDA memory), %.1f ns per call\n",
		       rc, (now_ns() - t0) / n);
	}

	step("SYNC_MEMOPS on the allocation (guide 12.2: what libgdirect sets before a first pin)");
	cu.get_attr(&sync0, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d);
	t0 = now_ns();
	rc = cu.set_attr(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d);
	t = now_ns() - t0;
	cu.get_attr(&sync1, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d);
	printf("    before: %u; cuPointerSetAttribute(SYNC_MEMOPS, 1): %s in %.1f us; after: %u\n",
	       sync0, rc ? "FAILED" : "done", t / 1e3, sync1);
	if (rc || sync1 != 1) {
		printf("    SYNC_MEMOPS did not take\n");
		return 1;
	}

	step("Register it (SYNC_MEMOPS, 64 KiB rounding, pin; guide 12.2) and hit the cache");
	if (!have_gdirect) {
		skip(nomod);
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
		skip("needs gdirect.ko to map BAR1 pages into the process: see [1]");
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
	/* What libgdirect_interpose does on every cuMemFree: tell the caches. */
	gdirect_notify_free((void *)(uintptr_t)d, 8 << 20);
	cu.free(d);
	rc = cu.get_attr(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, d);
	printf("    BUFFER_ID before the free: %llu; after: %s\n", id,
	       rc == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE (a tag check sees it)" : "still answered");
	cu.alloc(&d2, 8 << 20);
	cu.get_attr(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, d2);
	printf("    re-allocation: %s VA, BUFFER_ID %llu (%s)\n", d2 == d ? "the same" : "another",
	       id2, id2 != id ? "a new one: a cache keyed by it sees the change" :
	       "THE SAME: a stale registration could be reused");
	gdirect_classify(g, (void *)(uintptr_t)d2, &pi);
	printf("    told of the free (gdirect_notify_free, as libgdirect_interpose does),\n"
	       "    gdirect_classify of the new buffer answers BUFFER_ID %llu, not the stale %llu\n",
	       (unsigned long long)pi.buffer_id, id);
	if (id2 == id || pi.buffer_id != id2) {
		printf("    BUFFER_ID check failed\n");
		return 1;
	}
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
		skip("needs pins through gdirect.ko: see [1]");
	else
		printf("    see `gdirect bench` and the guest's lib-rcache\n");

	gdirect_ctx_destroy(g);
	printf("\n%d steps, %d skipped on this machine; GDIRECT_DEMO=emulated make demo runs them all in the emulated machine\n",
	       step_no, skipped);
	return 0;
}
