/* SPDX-License-Identifier: MIT */
/*
 * lib-hooks: CUDA free interception.  This program is linked against
 * libgdirect_interpose ahead of the (fake) driver, so its calls to the free
 * functions reach the interposer first, exactly as under LD_PRELOAD; the
 * driver entry points fetched through cuGetProcAddress are wrapped too.
 * Each free must invalidate (hooks mode only, no kernel revocation), with
 * the unpin deferred out of the hook.
 */
#include <dlfcn.h>

#include <cuda.h>

#include "tutil.h"

typedef int cudaError_t;
cudaError_t cudaFree(void *p);
cudaError_t cudaFreeAsync(void *p, void *stream);
CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s);
CUresult cuMemUnmap(CUdeviceptr p, size_t size);
cudaError_t cudaFreeHost(void *p);

enum how { FREE_V2, FREE_ASYNC, UNMAP, RT_FREE, RT_FREE_ASYNC, GPA_FREE,
	   GPA_FREE_ASYNC, GPA_UNMAP };
static const char *names[] = { "cuMemFree_v2", "cuMemFreeAsync", "cuMemUnmap",
	"cudaFree", "cudaFreeAsync", "cuGetProcAddress(cuMemFree)",
	"cuGetProcAddress(cuMemFreeAsync)", "cuGetProcAddress(cuMemUnmap)" };

static void *gpa(const char *sym)
{
	void *fn = NULL;
	CUdriverProcAddressQueryResult st;

	CHECK_EQ(cuGetProcAddress_v2(sym, &fn, 13000, 0, &st), CUDA_SUCCESS);
	CHECK(fn);
	return fn;
}

static void do_free(enum how how, uint64_t a, size_t size)
{
	switch (how) {
	case FREE_V2: CHECK_EQ(cuMemFree_v2(a), 0); break;
	case FREE_ASYNC: CHECK_EQ(cuMemFreeAsync(a, NULL), 0); break;
	case UNMAP: CHECK_EQ(cuMemUnmap(a, size), 0); break;
	case RT_FREE: CHECK_EQ(cudaFree(P(a)), 0); break;
	case RT_FREE_ASYNC: CHECK_EQ(cudaFreeAsync(P(a), NULL), 0); break;
	case GPA_FREE:
		CHECK_EQ(((CUresult (*)(CUdeviceptr))gpa("cuMemFree"))(a), 0);
		break;
	case GPA_FREE_ASYNC:
		CHECK_EQ(((CUresult (*)(CUdeviceptr, CUstream))
			  gpa("cuMemFreeAsync"))(a, NULL), 0);
		break;
	case GPA_UNMAP:
		CHECK_EQ(((CUresult (*)(CUdeviceptr, size_t))
			  gpa("cuMemUnmap"))(a, size), 0);
		break;
	}
}

/*
 * One target per (function, variant): a later cuGetProcAddress of the
 * per-thread-default-stream variant does not redirect the wrapper handed
 * out for the default one, and each reaches its own variant.
 */
static void variants(struct gdirect_ctx *c)
{
	typedef CUresult (*fa_fn)(CUdeviceptr, CUstream);
	CUdriverProcAddressQueryResult st;
	void *dflt = NULL, *ptsz = NULL;
	struct gdirect_reg *r;
	struct gdirect_stats s0, s1;

	CHECK_EQ(cuGetProcAddress_v2("cuMemFreeAsync", &dflt, 13000, 0, &st), 0);
	CHECK_EQ(cuGetProcAddress_v2("cuMemFreeAsync", &ptsz, 13000,
				     CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
				     &st), 0);
	CHECK(dflt && ptsz);
	for (int v = 0; v < 2; v++) {
		uint64_t x = fake_cuda_alloc(64 * KiB);
		unsigned long p0 = fake_cuda_ptsz_frees();

		CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
		gdirect_reg_put(r);
		gdirect_stats(c, &s0);
		CHECK_EQ(((fa_fn)(v ? ptsz : dflt))(x, NULL), 0);
		gdirect_stats(c, &s1);
		CHECK_EQ(s1.inv_hooks, s0.inv_hooks + 1);
		CHECK_EQ(fake_cuda_ptsz_frees(), p0 + (unsigned long)v);
		gdirect_process_events(c);
	}
	tap_diag("%-34s each variant its own target", "cuGetProcAddress(_ptsz)");
}

/*
 * Context teardown frees the context's memory without any free call:
 * cuCtxDestroy, cuDevicePrimaryCtxReset, the last cuDevicePrimaryCtxRelease
 * (each also through cuGetProcAddress) and cudaDeviceReset invalidate what
 * they free.
 */
typedef CUresult (*ctx_destroy_fn)(CUcontext);
typedef CUresult (*ctx_reset_fn)(CUdevice);
CUresult cuCtxDestroy_v2(CUcontext ctx);
CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
int cudaDeviceReset(void);

static void teardown(struct gdirect_ctx *c, struct gdl_backend *b)
{
	static const char *const tn[] = { "cuCtxDestroy_v2",
		"cuDevicePrimaryCtxReset_v2", "cudaDeviceReset",
		"cuGetProcAddress(cuCtxDestroy)",
		"cuGetProcAddress(cuDevicePrimaryCtxReset)",
		"cuDevicePrimaryCtxRelease_v2",
		"cuGetProcAddress(cuDevicePrimaryCtxRelease)" };
	struct gdirect_reg *r;
	struct gdirect_reg_info ri;
	struct gdirect_stats s0, s1;
	CUcontext pc;

	for (int how = 0; how < 7; how++) {
		uint64_t size = 128 * KiB, x = fake_cuda_alloc(size);

		CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
		gdirect_reg_put(r);
		gdirect_stats(c, &s0);
		switch (how) {
		case 0: CHECK_EQ(cuCtxDestroy_v2(NULL), 0); break;
		case 1: CHECK_EQ(cuDevicePrimaryCtxReset_v2(0), 0); break;
		case 2: CHECK_EQ(cudaDeviceReset(), 0); break;
		case 3: CHECK_EQ(((ctx_destroy_fn)gpa("cuCtxDestroy"))(NULL), 0); break;
		case 4:
			CHECK_EQ(((ctx_reset_fn)gpa("cuDevicePrimaryCtxReset"))(0), 0);
			break;
		case 5:
			CHECK_EQ(cuDevicePrimaryCtxRetain(&pc, 0), 0);
			CHECK_EQ(cuDevicePrimaryCtxRelease_v2(0), 0);	/* last */
			break;
		case 6:
			CHECK_EQ(cuDevicePrimaryCtxRetain(&pc, 0), 0);
			CHECK_EQ(((ctx_reset_fn)gpa("cuDevicePrimaryCtxRelease"))(0), 0);
			break;
		}
		CHECK_EQ(fake_cuda_buffer_id_at(x), 0);		/* freed */
		gdirect_stats(c, &s1);
		CHECK(s1.inv_hooks > s0.inv_hooks);
		CHECK_EQ(fake_cuda_alloc(size), x);
		CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
		CHECK_EQ(gdirect_reg_info(r, &ri), 0);
		CHECK(fake_backend_pin_covers(b, ri.kernel_handle,
					      fake_cuda_buffer_id_at(x)));
		gdirect_reg_put(r);
		CHECK_EQ(cuMemFree_v2(x), 0);
		gdirect_process_events(c);
		tap_diag("%-34s invalidates", tn[how]);
	}
}

static struct gdirect_ctx *ctx;
static struct gdl_backend *backend;

static void wrapped(void)
{
	/* The wrapper, not the driver's own function. */
	void *drv = dlopen(getenv("GDIRECT_LIBCUDA"), RTLD_LAZY | RTLD_NOLOAD);

	CHECK(drv);
	CHECK(dlsym(drv, "cuMemFree_v2"));
	CHECK(gpa("cuMemFree") != dlsym(drv, "cuMemFree_v2"));
	dlclose(drv);
}

static void each_free_invalidates(void)
{
	struct gdirect_ctx *c = ctx;
	struct gdl_backend *b = backend;
	struct gdirect_reg *r;
	struct gdirect_reg_info ri;
	struct gdirect_stats st;
	struct fake_stats fs;

	for (int how = FREE_V2; how <= GPA_UNMAP; how++) {
		uint64_t size = 192 * KiB, x = fake_cuda_alloc(size);

		CHECK_EQ(gdirect_reg_get(c, P(x + 70 * KiB), 100, 0, &r), 0);
		gdirect_reg_put(r);
		fake_backend_stats(b, &fs);
		unsigned long unpins = fs.unpins;

		gdirect_stats(c, &st);
		uint64_t inv0 = st.inv_hooks;

		do_free(how, x, size);
		gdirect_stats(c, &st);
		CHECK_EQ(st.inv_hooks, inv0 + 1);
		fake_backend_stats(b, &fs);
		CHECK_EQ(fs.unpins, unpins);	/* not inside the hook */
		CHECK_EQ(fake_cuda_alloc(size), x);
		CHECK_EQ(gdirect_reg_get(c, P(x + 70 * KiB), 100, 0, &r), 0);
		CHECK_EQ(gdirect_reg_info(r, &ri), 0);
		CHECK(fake_backend_pin_covers(b, ri.kernel_handle,
					      fake_cuda_buffer_id_at(x)));
		fake_backend_stats(b, &fs);
		CHECK_EQ(fs.unpins, unpins + 1);	/* on the next call */
		gdirect_reg_put(r);
		CHECK_EQ(cuMemFree_v2(x), 0);	/* intercepted too */
		gdirect_process_events(c);
		tap_diag("%-34s invalidates", names[how]);
	}
}

/*
 * A registration made between the interposer's report and the real free
 * (another thread's get, which asked the driver while the memory was still
 * there) pinned the old pages: the report after the free kills it, so
 * that the next allocation at the address never hits it.  The get runs in
 * the fake driver's free listener, which the free calls before the memory
 * goes; the listener then passes the free on to the fake backend, which
 * marks the pin stale.
 */
static struct {
	struct gdirect_ctx *c;
	uint64_t addr;			/* the get's, 0: none armed */
	void (*fn)(uint64_t base, uint64_t size, void *arg);	/* backend's */
	void *arg;
} between;

static void between_listener(uint64_t base, uint64_t size, void *arg)
{
	struct gdirect_reg *r;

	(void)arg;
	if (between.addr && between.addr - base < size) {
		between.addr = 0;
		CHECK_EQ(gdirect_reg_get(between.c, P(base), 100, 0, &r), 0);
		gdirect_reg_put(r);
	}
	if (between.fn)
		between.fn(base, size, between.arg);
}

static void between_set_listener(void (*fn)(uint64_t, uint64_t, void *),
				 void *arg)
{
	between.fn = fn;
	between.arg = arg;
	fake_cuda_set_free_listener(fn ? between_listener : NULL, NULL);
}

static void get_between_report_and_free(void)
{
	struct gdirect_params p;
	struct gdirect_reg *r;
	struct gdirect_reg_info ri;
	struct fake_stats fs;
	struct gdl_backend *b;

	b = fake_backend_new(&(struct fake_cfg){
		.persistent = true, .buffer_id_at = fake_cuda_buffer_id_at,
		.set_free_listener = between_set_listener });
	CHECK(b);
	params(&p, GDIRECT_INV_HOOKS);
	CHECK_EQ(gdl_ctx_create_backend(&p, b, &between.c), 0);
	for (int how = FREE_V2; how <= GPA_UNMAP; how++) {
		uint64_t size = 64 * KiB, x = fake_cuda_alloc(size);

		between.addr = x;
		do_free(how, x, size);
		CHECK_EQ(between.addr, 0);	/* the get ran */
		CHECK_EQ(fake_cuda_alloc(size), x);
		CHECK_EQ(gdirect_reg_get(between.c, P(x), 100, 0, &r), 0);
		CHECK_EQ(gdirect_reg_info(r, &ri), 0);
		CHECK(fake_backend_pin_fresh(b, ri.kernel_handle, x));
		gdirect_reg_put(r);
		CHECK_EQ(cuMemFree_v2(x), 0);
		gdirect_process_events(between.c);
		tap_diag("%-34s reports again after the free", names[how]);
	}
	CHECK_EQ(gdirect_flush(between.c) >= 0, 1);
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.live, 0);
	CHECK_EQ(fs.bad_unpins, 0);
	gdirect_ctx_destroy(between.c);
}

/* Every free of pinned host memory forgets the cached CPU answers of its
 * pages (GDIRECT_CTX_CACHE_HOST), so that device memory later given the
 * same VA is classified as device memory. */
static void host_free_forgets(void)
{
	static const char *hn[] = { "cuMemFreeHost", "cudaFreeHost",
				    "cuGetProcAddress(cuMemFreeHost)" };
	struct gdirect_params p;
	struct gdirect_ptr_info in;

	params(&p, GDIRECT_INV_HOOKS);
	p.flags = GDIRECT_CTX_CACHE_HOST;
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, NULL);

	for (int how = 0; how < 3; how++) {
		void *h = NULL;
		uint64_t d;

		fake_cuda_reset();
		CHECK_EQ(cuMemAllocHost_v2(&h, 64 * KiB), CUDA_SUCCESS);
		for (uint64_t off = 0; off < 64 * KiB; off += 4 * KiB) {
			CHECK_EQ(gdirect_classify(c, (char *)h + off, &in), 0);
			CHECK_EQ(in.type, GDIRECT_MEM_CPU);
		}
		unsigned long q0 = fake_cuda_queries();

		CHECK_EQ(gdirect_classify(c, (char *)h + 40 * KiB, &in), 0);
		CHECK_EQ(fake_cuda_queries(), q0);	/* cached */
		if (how == 0)
			CHECK_EQ(cuMemFreeHost(h), CUDA_SUCCESS);
		else if (how == 1)
			CHECK_EQ(cudaFreeHost(h), 0);
		else
			CHECK_EQ(((CUresult (*)(void *))gpa("cuMemFreeHost"))(h),
				 CUDA_SUCCESS);
		d = fake_cuda_alloc(64 * KiB);
		CHECK_EQ(d, (uintptr_t)h);
		for (uint64_t off = 0; off < 64 * KiB; off += 4 * KiB) {
			CHECK_EQ(gdirect_classify(c, P(d + off), &in), 0);
			CHECK_EQ(in.type, GDIRECT_MEM_DEVICE);
			CHECK_EQ(in.alloc_base, d);
		}
		CHECK_EQ(cuMemFree_v2(d), 0);
		tap_diag("%-34s forgets host answers", hn[how]);
	}
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

static void each_variant(void)
{
	variants(ctx);
}

static void teardown_invalidates(void)
{
	teardown(ctx, backend);
}

/* A release that leaves the primary context retained frees nothing and
 * invalidates nothing: libraries retain and release around operations. */
static void release_not_last_keeps(void)
{
	struct gdirect_stats s0, s1;
	struct gdirect_reg *r, *r2;
	CUcontext pc;
	uint64_t x = fake_cuda_alloc(64 * KiB);

	for (int i = 0; i < 3; i++)
		CHECK_EQ(cuDevicePrimaryCtxRetain(&pc, 0), 0);
	CHECK_EQ(gdirect_reg_get(ctx, P(x), 1, 0, &r), 0);
	gdirect_reg_put(r);
	gdirect_stats(ctx, &s0);
	CHECK_EQ(cuDevicePrimaryCtxRelease_v2(0), 0);
	CHECK_EQ(((ctx_reset_fn)gpa("cuDevicePrimaryCtxRelease"))(0), 0);
	CHECK(fake_cuda_buffer_id_at(x) != 0);		/* not freed */
	gdirect_stats(ctx, &s1);
	CHECK_EQ(s1.inv_hooks, s0.inv_hooks);
	CHECK_EQ(gdirect_reg_get(ctx, P(x), 1, 0, &r2), 0);	/* a hit */
	CHECK(r2 == r);
	gdirect_reg_put(r2);
	gdirect_stats(ctx, &s1);
	CHECK_EQ(s1.misses, s0.misses);
	CHECK_EQ(cuDevicePrimaryCtxRelease_v2(0), 0);	/* the last */
	CHECK_EQ(fake_cuda_buffer_id_at(x), 0);
	gdirect_stats(ctx, &s1);
	CHECK(s1.inv_hooks > s0.inv_hooks);
	gdirect_process_events(ctx);
}

/* Another thread's retain just after the last release: the context is
 * active again when the release's wrapper asks, but its memory went. */
static void retain_now(void)
{
	CUcontext pc;

	CHECK_EQ(cuDevicePrimaryCtxRetain(&pc, 0), 0);	/* the interposer's */
}

static void retain_after_last_release(void)
{
	static const char *const rn[] = { "cuDevicePrimaryCtxRelease_v2",
		"cuGetProcAddress(cuDevicePrimaryCtxRelease)" };
	struct gdirect_stats s0, s1;
	struct gdirect_reg *r;
	CUcontext pc;

	for (int how = 0; how < 2; how++) {
		uint64_t x = fake_cuda_alloc(64 * KiB);

		CHECK_EQ(cuDevicePrimaryCtxRetain(&pc, 0), 0);
		CHECK_EQ(gdirect_reg_get(ctx, P(x), 1, 0, &r), 0);
		gdirect_reg_put(r);
		gdirect_stats(ctx, &s0);
		fake_cuda_after_last_release(retain_now);
		if (how == 0)
			CHECK_EQ(cuDevicePrimaryCtxRelease_v2(0), 0);
		else
			CHECK_EQ(((ctx_reset_fn)gpa("cuDevicePrimaryCtxRelease"))(0), 0);
		CHECK_EQ(fake_cuda_buffer_id_at(x), 0);		/* freed */
		gdirect_stats(ctx, &s1);
		CHECK(s1.inv_hooks > s0.inv_hooks);
		CHECK_EQ(cuDevicePrimaryCtxRelease_v2(0), 0);	/* retain_now's */
		gdirect_process_events(ctx);
		tap_diag("%-44s invalidates", rn[how]);
	}
}

int main(void)
{
	struct gdirect_params p;

	need_fake_cuda();
	TAP_TEST(wrapped);
	TAP_TEST(host_free_forgets);
	TAP_TEST(get_between_report_and_free);
	params(&p, GDIRECT_INV_HOOKS);
	ctx = mkctx(&p, &(struct fake_cfg){ 0 }, &backend);
	TAP_TEST(each_free_invalidates);
	TAP_TEST(each_variant);
	TAP_TEST(teardown_invalidates);
	TAP_TEST(release_not_last_keeps);
	TAP_TEST(retain_after_last_release);
	gdirect_ctx_destroy(ctx);
	return tap_done();
}
