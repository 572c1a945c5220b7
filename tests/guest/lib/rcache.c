/* SPDX-License-Identifier: MIT */
/*
 * lib-rcache: libgdirect against the real gdirect.ko and the emulated
 * CUDA driver, in the guest.
 *
 *  1-3  under each invalidation mode alone (kernel revocation, CUDA free
 *       hooks, BUFFER_ID tags), re-allocation at a freed VA never yields a
 *       stale registration: data written through the registration's BAR
 *       mapping is what CUDA then reads from the new buffer;
 *  4    a working set of twice the BAR1 budget: every operation succeeds,
 *       through evict-and-retry;
 *  5-6  copies to and from GPU memory byte-exact, 1 B .. 16 MiB, at
 *       misaligned offsets, through the real BAR mmap;
 *  7    a fork child cannot use the parent's context; the parent can;
 *  8    the example program of docs/libgdirect.md runs (helper gdirect-example-emu);
 *  9    hooks mode: a primary context release that leaves it retained
 *       invalidates nothing; the last one, which frees its memory,
 *       invalidates, and memory allocated after the next retain (at the
 *       same VA) is registered afresh.
 *
 * The program links libgdirect_interpose ahead of libcuda, so its own
 * cuMemFree_v2 calls are intercepted (hooks mode); the other modes free
 * through the driver's function fetched with dlsym, which no hook sees.
 * The body runs in a child process: the emulator's module can be unloaded
 * only after the CUDA context's file is closed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include <gdirect.h>

#include "tap.h"

#define KiB 1024ULL
#define MiB (1024ULL * 1024)

static CUresult (*real_free)(CUdeviceptr);
static sigjmp_buf fault_jmp;

static void on_fault(int sig)
{
	siglongjmp(fault_jmp, sig);
}

static uint64_t rng = 88172645463325252ULL;

static void fill(void *p, size_t n)
{
	unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		b[i] = (unsigned char)rng;
	}
}

static struct gdirect_ctx *mkctx(unsigned inv, uint64_t max_regions,
				 uint64_t max_bytes)
{
	struct gdirect_params p;
	struct gdirect_ctx *c = NULL;

	gdirect_params_init(&p);
	p.invalidation = inv;
	p.max_regions = max_regions;
	p.max_bytes = max_bytes;
	if (gdirect_ctx_create(&p, &c))
		tap_diag("gdirect_ctx_create: %s", gdirect_errmsg());
	return c;
}

/* Write through the registration's BAR mapping; read back through CUDA. */
static int fresh(struct gdirect_ctx *c, CUdeviceptr d, size_t size)
{
	struct gdirect_reg *r;
	struct gdirect_reg_info ri;
	unsigned char *pat = malloc(size), *back = malloc(size);
	volatile int ok = 0;

	if (!pat || !back || gdirect_reg_get(c, (void *)d, size, 0, &r)) {
		tap_diag("reg_get: %s", gdirect_errmsg());
		goto out;
	}
	gdirect_reg_info(r, &ri);
	fill(pat, size);
	/* A stale mapping would have been zapped by the revocation: catch
	 * the fault here, and only here. */
	signal(SIGBUS, on_fault);
	signal(SIGSEGV, on_fault);
	if (sigsetjmp(fault_jmp, 1) == 0) {
		void *m = gdirect_reg_map(r, (void *)d);

		if (m) {
			gdirect_copy_to_mapping(m, pat, size);
			ok = ri.valid && cuMemcpyDtoH(back, d, size) == CUDA_SUCCESS &&
			     !memcmp(back, pat, size);
		}
	} else {
		tap_diag("fault writing through the registration: stale");
	}
	signal(SIGBUS, SIG_DFL);
	signal(SIGSEGV, SIG_DFL);
	gdirect_reg_put(r);
out:
	free(pat);
	free(back);
	return ok;
}

static void realloc_mode(const char *name, unsigned inv)
{
	static const size_t sizes[] = { 4 * KiB, 200 * KiB, 2 * MiB };
	struct gdirect_ctx *c = mkctx(inv, 1024, 1ULL << 30);
	struct gdirect_stats st;
	int good = c != NULL, reused = 0;

	for (size_t i = 0; good && i < 3; i++) {
		CUdeviceptr x, y;

		if (cuMemAlloc(&x, sizes[i]) || !fresh(c, x, sizes[i])) {
			good = 0;
			break;
		}
		if (inv == GDIRECT_INV_HOOKS)
			cuMemFree(x);		/* through the interposer */
		else
			real_free(x);		/* unseen by any hook */
		if (cuMemAlloc(&y, sizes[i])) {
			good = 0;
			break;
		}
		reused += y == x;
		good = fresh(c, y, sizes[i]);
		real_free(y);
	}
	if (c) {
		gdirect_stats(c, &st);
		tap_diag("%s: %d/3 VAs reused; invalidations kernel %llu hooks %llu "
			 "buffer_id %llu", name, reused,
			 (unsigned long long)st.inv_kernel,
			 (unsigned long long)st.inv_hooks,
			 (unsigned long long)st.inv_buffer_id);
		gdirect_ctx_destroy(c);
	}
	tap_ok(good && reused > 0, "%s mode: no stale registration after "
	       "re-allocation at a freed VA", name);
}

static void twice_bar(void)
{
	enum { MAXN = 512 };
	struct gdirect_ctx *c = mkctx(GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS, 0, 0);
	static CUdeviceptr buf[2 * MAXN + 4];
	static struct gdirect_reg *held[MAXN];
	struct gdirect_stats st;
	int n = 0, total, good = c != NULL, rc = 0;
	char pat[4096], back[4096];

	/* The budget: 1 MiB registrations held until the BAR is full. */
	while (good && n < MAXN) {
		if (cuMemAlloc(&buf[n], 1 * MiB)) {
			good = 0;
			break;
		}
		rc = gdirect_reg_get(c, (void *)buf[n], 1 * MiB, 0, &held[n]);
		if (rc)
			break;
		n++;
	}
	if (rc != -ENOMEM || n == 0) {
		tap_diag("no BAR exhaustion found after %d MiB (%d: %s)", n, rc,
			 gdirect_errmsg());
		good = 0;
	}
	for (int i = 0; i < n; i++)
		gdirect_reg_put(held[i]);
	total = 2 * n + 2;
	tap_diag("BAR1 budget for libgdirect: %d MiB; working set %d MiB", n, total);
	int short_mem = 0;

	for (int i = n + 1; good && i < total && !short_mem; i++)
		if (cuMemAlloc(&buf[i], 1 * MiB))
			short_mem = 1;
	if (short_mem) {
		for (int i = 0; i < total; i++)
			if (buf[i])
				real_free(buf[i]);
		gdirect_ctx_destroy(c);
		tap_skip("working set of twice the BAR1 budget",
			 "GPU memory is smaller than twice the BAR1 budget");
		return;
	}
	for (int round = 0; good && round < 2; round++)
		for (int i = 0; good && i < total; i++) {
			fill(pat, sizeof(pat));
			size_t off = (i * 4099) % (1 * MiB - sizeof(pat));

			if (gdirect_copy_to_gpu(c, (char *)buf[i] + off, pat,
						sizeof(pat)) ||
			    cuMemcpyDtoH(back, buf[i] + off, sizeof(back)) ||
			    memcmp(pat, back, sizeof(pat))) {
				tap_diag("buffer %d round %d: %s", i, round,
					 gdirect_errmsg());
				good = 0;
			}
		}
	if (c) {
		gdirect_stats(c, &st);
		tap_diag("evictions for BAR space %llu, pin failures %llu",
			 (unsigned long long)st.evictions_bar,
			 (unsigned long long)st.pin_failures);
		good = good && st.evictions_bar > 0;
		gdirect_ctx_destroy(c);
	}
	for (int i = 0; i < total; i++)
		if (buf[i])
			real_free(buf[i]);
	tap_ok(good, "working set of twice the BAR1 budget: every operation "
	       "succeeds through evict-and-retry");
}

/* One copy case; 1 if byte-exact and the guards are intact. */
static int copy_case(struct gdirect_ctx *c, CUdeviceptr d, int to_gpu,
		     unsigned char *src, unsigned char *dst, size_t sz, size_t off)
{
	int good;

	fill(src, sz);
	if (to_gpu) {
		/* guards: 64 bytes each side must not change */
		cuMemsetD8(d, 0x5a, sz + 128 + off);
		good = !gdirect_copy_to_gpu(c, (char *)d + 64 + off, src, sz) &&
		       !cuMemcpyDtoH(dst, d, sz + 128 + off);
		good = good && !memcmp(dst + 64 + off, src, sz);
		for (size_t g = 0; good && g < 64 + off; g++)
			good = dst[g] == 0x5a;
		for (size_t g = 0; good && g < 64; g++)
			good = dst[64 + off + sz + g] == 0x5a;
	} else {
		good = !cuMemcpyHtoD(d + off, src, sz) &&
		       !gdirect_copy_from_gpu(c, dst, (char *)d + off, sz) &&
		       !memcmp(dst, src, sz);
	}
	return good;
}

static void copies(int to_gpu)
{
	static const size_t offs[] = { 0, 1, 7, 63, 4095 };
	struct gdirect_ctx *c = mkctx(GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS,
				      1024, 1ULL << 30);
	size_t sizes[80], ns = 0, asz = 16 * MiB + 128 * KiB;	/* 25 powers x 3 */
	/* dst holds a copy with its guards: 64 + offset + size + 64 */
	unsigned char *src = malloc(16 * MiB), *dst = malloc(16 * MiB + 8192);
	CUdeviceptr d = 0;
	volatile int good = c && src && dst && cuMemAlloc(&d, asz) == CUDA_SUCCESS;
	volatile int n = 0;
	volatile size_t i, k;

	for (size_t s = 1; s <= 16 * MiB; s *= 2) {
		sizes[ns++] = s;
		if (s > 2)
			sizes[ns++] = s - 1;
		if (s < 16 * MiB)
			sizes[ns++] = s + 3;
	}
	/* A fault in the BAR mapping is a failure, not a crash. */
	signal(SIGBUS, on_fault);
	signal(SIGSEGV, on_fault);
	for (i = 0; good && i < ns; i++)
		for (k = 0; good && k < 5; k++) {
			int sig;

			if (sizes[i] >= 1 * MiB && k % 2)
				continue;	/* keep TCG time bounded */
			n++;
			sig = sigsetjmp(fault_jmp, 1);
			if (sig) {
				tap_diag("size %zu offset %zu: signal %d in the copy",
					 sizes[i], offs[k], sig);
				good = 0;
			} else if (!copy_case(c, d, to_gpu, src, dst, sizes[i],
					      offs[k])) {
				tap_diag("size %zu offset %zu failed (last library "
					 "error: %s)", sizes[i], offs[k],
					 gdirect_errmsg());
				good = 0;
			}
		}
	signal(SIGBUS, SIG_DFL);
	signal(SIGSEGV, SIG_DFL);
	tap_ok(good, "copies %s GPU memory byte-exact, 1 B .. 16 MiB at "
	       "misaligned offsets (%d cases, %s)", to_gpu ? "to" : "from", n,
	       gdirect_copy_impl());
	if (d)
		real_free(d);
	if (c)
		gdirect_ctx_destroy(c);
	free(src);
	free(dst);
}

static void fork_case(void)
{
	struct gdirect_ctx *c = mkctx(GDIRECT_INV_KERNEL, 1024, 1ULL << 30);
	struct gdirect_reg *r;
	CUdeviceptr d;
	int status = -1, good = c && !cuMemAlloc(&d, 64 * KiB) &&
		     !gdirect_reg_get(c, (void *)d, 64, 0, &r);

	if (good) {
		gdirect_reg_put(r);
		fflush(NULL);
		pid_t pid = fork();

		if (pid == 0) {
			int rc = gdirect_reg_get(c, (void *)d, 64, 0, &r);

			gdirect_ctx_destroy(c);
			_exit(rc == -EPERM ? 0 : 1);
		}
		waitpid(pid, &status, 0);
		good = WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
		       !gdirect_reg_get(c, (void *)d, 64, 0, &r);
		if (good)
			gdirect_reg_put(r);
		real_free(d);
	}
	if (c)
		gdirect_ctx_destroy(c);
	tap_ok(good, "fork: the child gets -EPERM, the parent keeps its cache");
}

static void example(void)
{
	char line[256];
	int rc = system("gdirect-example-emu > /tmp/gdirect-example.out 2>&1");
	FILE *f = fopen("/tmp/gdirect-example.out", "r");

	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		tap_diag("example: %s", line);
	}
	if (f)
		fclose(f);
	tap_ok(rc == 0, "the example program of docs/libgdirect.md runs");
}

static void primary_release(CUdevice dev)
{
	const size_t size = 2 * MiB;
	struct gdirect_ctx *c = mkctx(GDIRECT_INV_HOOKS, 1024, 1ULL << 30);
	struct gdirect_stats s0, s1, s2;
	CUcontext pc;
	CUdeviceptr x = 0, y = 0;
	int good = c != NULL;

	good = good && !cuMemAlloc(&x, size) && fresh(c, x, size);
	if (c)
		gdirect_stats(c, &s0);
	/* body() holds one retain: one more, released, is not the last */
	good = good && !cuDevicePrimaryCtxRetain(&pc, dev) &&
	       !cuDevicePrimaryCtxRelease(dev);
	if (c)
		gdirect_stats(c, &s1);
	good = good && s1.inv_hooks == s0.inv_hooks;
	/* the last: the context and x go; the next retain brings it back */
	good = good && !cuDevicePrimaryCtxRelease(dev) &&
	       !cuDevicePrimaryCtxRetain(&pc, dev) && !cuCtxSetCurrent(pc) &&
	       !cuMemAlloc(&y, size);
	if (c)
		gdirect_stats(c, &s2);
	good = good && s2.inv_hooks > s1.inv_hooks && fresh(c, y, size);
	if (c) {
		tap_diag("primary release: VA %s; invalidations by hooks %llu -> "
			 "%llu (not last) -> %llu (last)",
			 y == x ? "reused" : "not reused",
			 (unsigned long long)s0.inv_hooks,
			 (unsigned long long)s1.inv_hooks,
			 (unsigned long long)s2.inv_hooks);
		gdirect_ctx_destroy(c);
	}
	if (y)
		real_free(y);
	tap_ok(good && y == x, "hooks mode: only the last primary context "
	       "release invalidates; no stale registration after it");
}

static int body(void)
{
	CUdevice dev;
	CUcontext ctx;
	void *h;

	tap_plan(9);
	if (cuInit(0) || cuDeviceGet(&dev, 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
		tap_diag("no CUDA context");
		return 1;
	}
	h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	real_free = h ? (CUresult (*)(CUdeviceptr))dlsym(h, "cuMemFree_v2") : NULL;
	if (!real_free) {
		tap_diag("cannot find the driver's own cuMemFree_v2");
		return 1;
	}
	realloc_mode("kernel", GDIRECT_INV_KERNEL);
	realloc_mode("hooks", GDIRECT_INV_HOOKS);
	realloc_mode("buffer_id", GDIRECT_INV_BUFFER_ID);
	twice_bar();
	copies(1);
	copies(0);
	fork_case();
	example();
	primary_release(dev);
	return tap_done();
}

static int loaded_emu, loaded_gdirect;

int main(void)
{
	int status;
	pid_t pid;

	if (access("/dev/gdirect", F_OK)) {
		/* A BAR1 budget well below GPU memory (256 MiB), so that a
		 * working set of twice it fits. */
		loaded_emu = system("insmod /modules/nvp2p_emu.ko "
				    "bar1_size_mb=64 bar1_reserve_mb=8") == 0;
		loaded_gdirect = system("insmod /modules/gdirect.ko") == 0;
		if (access("/dev/gdirect", F_OK)) {
			tap_skip("the registration cache in the guest",
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
