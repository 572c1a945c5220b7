// SPDX-License-Identifier: MIT
/*
 * dmabuf.c - libgdrapi's dma-buf backend (gdrapi/src/be_dmabuf.c)
 * over the fake CUDA driver (TAP, fork mode: each test starts from a fresh
 * driver).  The library's code is linked statically so that a test can
 * name the device nodes (paths that do not exist, or /dev/null, which
 * opens but answers no ioctl) and count the backend's CUDA users; the
 * driver is the fake's libfakecuda.so, which the library dlopens through
 * GDIRECT_LIBCUDA as it would libcuda.so.1.  Checked: the choice of a
 * backend (a kernel driver first, then dma-bufs with a driver of 13.3 or
 * later and a device that exports them), the two environment variables
 * parsed strictly, what a pin, a mapping and the queries give, and that
 * nothing is left behind (dma-buf descriptors, mappings, the primary
 * context's reference, the driver) after an unpin, an unmap, a close, or a
 * failure halfway.
 */
#define TAP_FORK
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_cuda.h"
#include "gdrapi_internal.h"
#include "tap.h"

#define NO_GDIRECT "/nonexistent/gdirect"
#define NO_GDRDRV "/nonexistent/gdrdrv"
#define KB(n) ((size_t)(n) << 10)

/* Descriptors of this process that are the fake's dma-bufs. */
static int dmabuf_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], target[256];
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		n += !!strstr(target, "fake_dmabuf");
	}
	closedir(d);
	return n;
}

/* Mappings of this process that are of the fake's dma-bufs. */
static int dmabuf_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, "fake_dmabuf");
	fclose(f);
	return n;
}

static void env_clear(void)
{
	unsetenv("GDIRECT_GDRAPI_BACKEND");
	unsetenv("GDRCOPY_USE_DMABUF_MMAP");
}

/* A gdr_t over the nodes given: NULL with *err set when it fails. */
static struct gdr *open_with(const char *gdirect, const char *gdrdrv, int *err)
{
	struct gdr *g = gdrapi_new();

	*err = g ? gdrapi_open_backend(g, gdirect, gdrdrv) : ENOMEM;
	if (*err && g) {
		free(g);
		g = NULL;
	}
	return g;
}

/* The dma-buf backend with no kernel driver and a 13.3 driver. */
static struct gdr *open_dmabuf(void)
{
	struct gdr *g;
	int err;

	fake_cuda_set_driver_version(13030);
	g = open_with(NO_GDIRECT, NO_GDRDRV, &err);
	CHECK_EQ(err, 0);
	return g;
}

static int attr(struct gdr *g, gdr_attr_t a)
{
	int v = -1;

	CHECK_EQ(gdr_get_attribute(g, a, &v), 0);
	return v;
}

static void auto_falls_back_to_dmabuf(void)
{
	struct gdr *g;
	int major, minor, err;

	env_clear();
	fake_cuda_set_driver_version(13030);
	g = open_with(NO_GDIRECT, NO_GDRDRV, &err);
	CHECK_EQ(err, 0);
	CHECK_EQ(attr(g, GDR_ATTR_USING_DMA_BUF_MMAP), 1);
	CHECK_EQ(attr(g, GDR_ATTR_USE_PERSISTENT_MAPPING), 1);
	CHECK_EQ(attr(g, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE), 1);
	CHECK_EQ(gdr_get_attribute(g, (gdr_attr_t)4, &major), EINVAL);
	CHECK_EQ(gdr_driver_get_version(g, &major, &minor), ENODEV);
	CHECK_EQ(gdrapi_dmabuf_cuda_users(), 1);
	CHECK_EQ(gdr_close(g), 0);
	CHECK_EQ(gdrapi_dmabuf_cuda_users(), 0);
}

/* A kernel node that opens but is not a driver: it is tried first. */
static void kernel_driver_first(void)
{
	struct gdr *g;
	int err;

	env_clear();
	fake_cuda_set_driver_version(13000);
	g = open_with("/dev/null", NO_GDRDRV, &err);
	CHECK(!g);
	CHECK_EQ(err, ENOTTY);	/* /dev/gdirect's error, not dma-buf's */
	g = open_with(NO_GDIRECT, "/dev/null", &err);
	CHECK(!g);
	CHECK_EQ(err, ENOTTY);
	/* It failed; with 13.3 the dma-buf backend takes over. */
	fake_cuda_set_driver_version(13030);
	g = open_with(NO_GDIRECT, "/dev/null", &err);
	CHECK_EQ(err, 0);
	CHECK_EQ(attr(g, GDR_ATTR_USING_DMA_BUF_MMAP), 1);
	gdr_close(g);
	/* A kernel backend named by the environment is the only one. */
	setenv("GDIRECT_GDRAPI_BACKEND", "gdrdrv", 1);
	g = open_with(NO_GDIRECT, "/dev/null", &err);
	CHECK(!g);
	CHECK_EQ(err, ENOTTY);
	CHECK_EQ(gdrapi_dmabuf_cuda_users(), 0);
}

/* Below 13.3, or with no device exporting dma-bufs, there is none. */
static void needs_13_3_and_a_device(void)
{
	struct gdr *g;
	int err;

	env_clear();
	fake_cuda_set_driver_version(13029);
	g = open_with(NO_GDIRECT, NO_GDRDRV, &err);
	CHECK(!g);
	CHECK_EQ(err, ENOENT);	/* the kernel node's */
	setenv("GDRCOPY_USE_DMABUF_MMAP", "1", 1);
	g = open_with(NO_GDIRECT, NO_GDRDRV, &err);
	CHECK(!g);
	CHECK_EQ(err, ENOTSUP);	/* forced: the backend's own */
	fake_cuda_set_driver_version(13100);
	fake_cuda_set_device_attribute(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 0);
	g = open_with(NO_GDIRECT, NO_GDRDRV, &err);
	CHECK(!g);
	CHECK_EQ(err, ENOTSUP);
	CHECK_EQ(gdrapi_dmabuf_cuda_users(), 0);
	fake_cuda_set_device_attribute(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 1);
	g = open_with(NO_GDIRECT, NO_GDRDRV, &err);
	CHECK_EQ(err, 0);
	gdr_close(g);
}

/* No driver (GDIRECT_LIBCUDA=none) is ENOENT; one named but missing is
 * a mistake in a setting, EINVAL. */
static void no_driver_library(void)
{
	struct gdr *g;
	int err;

	env_clear();
	setenv("GDRCOPY_USE_DMABUF_MMAP", "1", 1);
	setenv("GDIRECT_LIBCUDA", "none", 1);
	g = open_with(NO_GDIRECT, NO_GDRDRV, &err);
	CHECK(!g);
	CHECK_EQ(err, ENOENT);
	setenv("GDIRECT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
	g = open_with(NO_GDIRECT, NO_GDRDRV, &err);
	CHECK(!g);
	CHECK_EQ(err, EINVAL);
	/* Not forced: the kernel node's error, the message all the same. */
	unsetenv("GDRCOPY_USE_DMABUF_MMAP");
	g = open_with(NO_GDIRECT, NO_GDRDRV, &err);
	CHECK(!g);
	CHECK_EQ(err, ENOENT);
	CHECK_EQ(gdrapi_dmabuf_cuda_users(), 0);
}

/* GDRCOPY_USE_DMABUF_MMAP=1 skips a kernel driver that would open. */
static void env_forces_dmabuf(void)
{
	static const char *const off[] = { "0", "" };
	struct gdr *g;
	int err;

	env_clear();
	fake_cuda_set_driver_version(13030);
	setenv("GDRCOPY_USE_DMABUF_MMAP", "1", 1);
	/* /dev/null as /dev/gdirect would fail with ENOTTY if tried. */
	g = open_with("/dev/null", NO_GDRDRV, &err);
	CHECK_EQ(err, 0);
	CHECK_EQ(attr(g, GDR_ATTR_USING_DMA_BUF_MMAP), 1);
	gdr_close(g);
	/* Not forced: the kernel node is tried, and with a 13.0 driver its
	 * error is what gdr_open reports. */
	fake_cuda_set_driver_version(13000);
	for (unsigned int i = 0; i < 2; i++) {
		setenv("GDRCOPY_USE_DMABUF_MMAP", off[i], 1);
		g = open_with("/dev/null", NO_GDRDRV, &err);
		CHECK(!g);
		CHECK_EQ(err, ENOTTY);	/* the kernel node was tried */
	}
	fake_cuda_set_driver_version(13030);
	unsetenv("GDRCOPY_USE_DMABUF_MMAP");
	setenv("GDIRECT_GDRAPI_BACKEND", "dmabuf", 1);
	g = open_with("/dev/null", NO_GDRDRV, &err);
	CHECK_EQ(err, 0);
	gdr_close(g);
	setenv("GDRCOPY_USE_DMABUF_MMAP", "1", 1);
	g = open_with("/dev/null", NO_GDRDRV, &err);
	CHECK_EQ(err, 0);
	gdr_close(g);
}

/* What gdrcopy would read as "not forced" is a typo here. */
static void env_strict(void)
{
	static const char *const bad[] = {
		"yes", "true", "2", "01", " 1", "1 ", "on", "1x",
	};
	struct gdr *g;
	int err;

	env_clear();
	fake_cuda_set_driver_version(13030);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		setenv("GDRCOPY_USE_DMABUF_MMAP", bad[i], 1);
		g = open_with(NO_GDIRECT, NO_GDRDRV, &err);
		CHECK(!g);
		CHECK_EQ(err, EINVAL);
	}
	/* gdr_open() itself: NULL and errno. */
	setenv("GDRCOPY_USE_DMABUF_MMAP", "yes", 1);
	errno = 0;
	CHECK(!gdr_open());
	CHECK_EQ(errno, EINVAL);
	/* Forcing dma-bufs and naming a kernel backend contradict. */
	setenv("GDRCOPY_USE_DMABUF_MMAP", "1", 1);
	setenv("GDIRECT_GDRAPI_BACKEND", "gdirect", 1);
	g = open_with(NO_GDIRECT, NO_GDRDRV, &err);
	CHECK(!g);
	CHECK_EQ(err, EINVAL);
	setenv("GDIRECT_GDRAPI_BACKEND", "gdrdrv", 1);
	g = open_with(NO_GDIRECT, NO_GDRDRV, &err);
	CHECK(!g);
	CHECK_EQ(err, EINVAL);
	setenv("GDIRECT_GDRAPI_BACKEND", "dma-buf", 1);
	unsetenv("GDRCOPY_USE_DMABUF_MMAP");
	g = open_with(NO_GDIRECT, NO_GDRDRV, &err);
	CHECK(!g);
	CHECK_EQ(err, EINVAL);
	CHECK_EQ(gdrapi_dmabuf_cuda_users(), 0);
}

/* A pin, its mapping and the queries, on a non-coherent machine. */
static void pin_map_query(void)
{
	CUcontext ctx = NULL, cur = (CUcontext)1;
	uint64_t d = fake_cuda_alloc(KB(256));
	int retains, fds = dmabuf_fds(), flag = -1, active = 0;
	unsigned int pflags;
	char in[100], out[100];
	struct gdr_memh *m;
	gdr_info_v2_t info;
	struct gdr *g;
	gdr_mh_t h, hp;
	void *va;

	env_clear();
	fake_cuda_set_device_attribute(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, 0);
	g = open_dmabuf();
	/* The program holds the primary context but made none current. */
	CHECK_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
	retains = fake_cuda_calls.retains;
	CHECK_EQ(gdr_pin_buffer(g, d, KB(256), 0, 0, &h), 0);
	/* The library borrowed the primary context and gave it back. */
	CHECK_EQ(fake_cuda_calls.retains, retains + 1);
	CHECK_EQ(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
	CHECK(cur == NULL);
	CHECK_EQ(cuDevicePrimaryCtxGetState(0, &pflags, &active), CUDA_SUCCESS);
	CHECK_EQ(active, 1);
	CHECK_EQ(fake_cuda_dmabuf_exports(), 1);
	/*
	 * gdrcopy's export flags: the default type for a write-combined pin,
	 * whose mmap the driver allows; the PCIe type only for FORCE_PCIE.
	 */
	CHECK_EQ(fake_cuda_dmabuf_last_flags(), 0);
	CHECK_EQ(dmabuf_fds(), fds + 1);
	CHECK_EQ(gdr_pin_buffer_v2(g, d, KB(64), GDR_PIN_FLAG_FORCE_PCIE, &hp), 0);
	CHECK_EQ(fake_cuda_dmabuf_last_flags(),
		 CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE);
	CHECK_EQ(gdr_unpin_buffer(g, hp), 0);
	CHECK_EQ(dmabuf_fds(), fds + 1);
	CHECK_EQ(gdr_get_info_v2(g, h, &info), 0);
	CHECK_EQ(info.va, d);
	CHECK_EQ(info.mapped_size, KB(256));
	CHECK_EQ(info.page_size, sysconf(_SC_PAGESIZE));
	CHECK_EQ(info.mapped, 0);
	CHECK_EQ(info.mapping_type, GDR_MAPPING_TYPE_NONE);
	CHECK_EQ(gdr_get_callback_flag(g, h, &flag), 0);
	CHECK_EQ(flag, 0);
	CHECK_EQ(gdr_map(g, h, &va, KB(256)), 0);
	CHECK_EQ(dmabuf_maps(), 1);
	CHECK_EQ(gdr_get_info_v2(g, h, &info), 0);
	CHECK_EQ(info.mapped, 1);
	CHECK_EQ(info.wc_mapping, 1);
	CHECK_EQ(info.mapping_type, GDR_MAPPING_TYPE_WC);
	CHECK_EQ(info.tm_cycles, 0);
	CHECK_EQ(info.cycles_per_ms, 0);
	CHECK_EQ(gdr_map(g, h, &va, KB(256)), EAGAIN);
	/* A copy lands in the dma-buf: read it back through its fd. */
	for (int i = 0; i < 100; i++)
		in[i] = (char)(i * 7 + 1);
	CHECK_EQ(gdr_copy_to_mapping(h, (char *)va + KB(100), in, 100), 0);
	m = (struct gdr_memh *)h.h;
	CHECK_EQ(pread(m->fd, out, 100, KB(100)), 100);
	CHECK(!memcmp(in, out, 100));
	memset(out, 0, sizeof(out));
	CHECK_EQ(gdr_copy_from_mapping(h, out, (char *)va + KB(100), 100), 0);
	CHECK(!memcmp(in, out, 100));
	/* Persistent: cuMemFree changes nothing the library reports. */
	CHECK_EQ(cuMemFree_v2(d), CUDA_SUCCESS);
	CHECK_EQ(gdr_get_callback_flag(g, h, &flag), 0);
	CHECK_EQ(flag, 0);
	CHECK_EQ(gdr_unmap(g, h, va, KB(256)), 0);
	CHECK_EQ(dmabuf_maps(), 0);
	CHECK_EQ(dmabuf_fds(), fds + 1);	/* the pin keeps its fd */
	CHECK_EQ(gdr_unpin_buffer(g, h), 0);
	CHECK_EQ(dmabuf_fds(), fds);
	CHECK_EQ(gdr_close(g), 0);
}

/* The mapping type is fixed by the pin; a map asks for it or nothing. */
static void mapping_types(void)
{
	uint64_t d = fake_cuda_alloc(KB(64));
	CUcontext ctx;
	struct gdr *g;
	gdr_info_v2_t info;
	gdr_mh_t h, hp;
	void *va;

	env_clear();
	fake_cuda_set_device_attribute(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, 1);
	g = open_dmabuf();
	CHECK_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
	CHECK_EQ(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
	/* Coherent: cached, unless the pin forces PCIe. */
	CHECK_EQ(gdr_pin_buffer(g, d, KB(64), 0, 0, &h), 0);
	CHECK_EQ(fake_cuda_dmabuf_last_flags(), 0);
	CHECK_EQ(gdr_pin_buffer_v2(g, d, KB(64), GDR_PIN_FLAG_FORCE_PCIE, &hp), 0);
	CHECK_EQ(fake_cuda_dmabuf_last_flags(),
		 CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE);
	CHECK_EQ(gdr_map_v2(g, h, &va, KB(64), GDR_MAP_FLAG_REQ_WC_MAPPING), EINVAL);
	CHECK_EQ(gdr_map_v2(g, h, &va, KB(64), GDR_MAP_FLAG_REQ_DEVICE_MAPPING), EINVAL);
	CHECK_EQ(dmabuf_maps(), 0);
	CHECK_EQ(gdr_map_v2(g, h, &va, KB(64), GDR_MAP_FLAG_REQ_CACHE_MAPPING), 0);
	CHECK_EQ(gdr_get_info_v2(g, h, &info), 0);
	CHECK_EQ(info.mapping_type, GDR_MAPPING_TYPE_CACHING);
	CHECK_EQ(info.wc_mapping, 0);
	CHECK_EQ(gdr_map_v2(g, hp, &va, KB(64), GDR_MAP_FLAG_REQ_CACHE_MAPPING), EINVAL);
	CHECK_EQ(gdr_map_v2(g, hp, &va, KB(64), GDR_MAP_FLAG_DEFAULT), 0);
	CHECK_EQ(gdr_get_info_v2(g, hp, &info), 0);
	CHECK_EQ(info.mapping_type, GDR_MAPPING_TYPE_WC);
	CHECK_EQ(dmabuf_maps(), 2);
	CHECK_EQ(gdr_close(g), 0);
	CHECK_EQ(dmabuf_maps(), 0);
}

/* Host pages, not GPU pages; a pin off a page's start is not mappable. */
static void unaligned_pins(void)
{
	uint64_t d = fake_cuda_alloc(KB(64));
	long pg = sysconf(_SC_PAGESIZE);
	gdr_info_v2_t info;
	CUcontext ctx;
	struct gdr *g;
	gdr_mh_t h, h2;
	void *va;

	env_clear();
	g = open_dmabuf();
	CHECK_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
	CHECK_EQ(gdr_pin_buffer(g, d + 8, 8, 0, 0, &h), 0);
	CHECK_EQ(gdr_get_info_v2(g, h, &info), 0);
	CHECK_EQ(info.va, d);
	CHECK_EQ(info.mapped_size, pg);
	CHECK_EQ(gdr_map(g, h, &va, 8), EINVAL);
	CHECK_EQ(dmabuf_maps(), 0);
	/* A page inside the allocation, not on a 64 KiB boundary. */
	CHECK_EQ(gdr_pin_buffer(g, d + (uint64_t)pg, (size_t)pg + 1, 0, 0, &h2), 0);
	CHECK_EQ(gdr_get_info_v2(g, h2, &info), 0);
	CHECK_EQ(info.va, d + (uint64_t)pg);
	CHECK_EQ(info.mapped_size, 2 * pg);
	CHECK_EQ(gdr_map(g, h2, &va, (size_t)pg + 1), 0);
	CHECK_EQ(gdr_unpin_buffer(g, h), 0);
	CHECK_EQ(gdr_unpin_buffer(g, h2), 0);
	CHECK_EQ(dmabuf_maps(), 0);
	CHECK_EQ(dmabuf_fds(), 0);
	CHECK_EQ(gdr_close(g), 0);
}

/* A pin that fails halfway leaves no fd and no context reference. */
static void pin_failures(void)
{
	static const struct { CUresult r; int err; } fails[] = {
		{ CUDA_ERROR_OUT_OF_MEMORY, ENOMEM },
		{ CUDA_ERROR_NOT_SUPPORTED, ENOTSUP },
		{ CUDA_ERROR_INVALID_VALUE, EINVAL },
		{ CUDA_ERROR_UNKNOWN, EIO },
	};
	uint64_t d = fake_cuda_alloc(KB(64)), host = fake_cuda_alloc_host(KB(64));
	int fds = dmabuf_fds(), retains, active = 0;
	unsigned int pflags;
	CUcontext ctx, cur;
	struct gdr *g;
	gdr_mh_t h;

	env_clear();
	g = open_dmabuf();
	CHECK_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
	retains = fake_cuda_calls.retains;
	for (unsigned int i = 0; i < sizeof(fails) / sizeof(*fails); i++) {
		fake_cuda_fail_dmabuf(fails[i].r);
		CHECK_EQ(gdr_pin_buffer(g, d, KB(64), 0, 0, &h), fails[i].err);
	}
	fake_cuda_fail_dmabuf(CUDA_SUCCESS);
	CHECK_EQ(gdr_pin_buffer(g, host, KB(64), 0, 0, &h), EINVAL);
	CHECK_EQ(gdr_pin_buffer(g, 0x1000, KB(64), 0, 0, &h), EINVAL);
	/* Past the allocation's end. */
	CHECK_EQ(gdr_pin_buffer(g, d, KB(128), 0, 0, &h), EINVAL);
	CHECK_EQ(gdr_pin_buffer(g, d, SIZE_MAX - 100, 0, 0, &h), EINVAL);
	CHECK_EQ(dmabuf_fds(), fds);
	CHECK_EQ(fake_cuda_dmabuf_exports(), 0);
	CHECK_EQ(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
	CHECK(cur == NULL);
	CHECK_EQ(cuDevicePrimaryCtxGetState(0, &pflags, &active), CUDA_SUCCESS);
	CHECK_EQ(active, 1);	/* still the program's one reference */
	CHECK(fake_cuda_calls.retains > retains);
	CHECK_EQ(cuDevicePrimaryCtxRelease_v2(0), CUDA_SUCCESS);
	CHECK_EQ(cuDevicePrimaryCtxGetState(0, &pflags, &active), CUDA_SUCCESS);
	CHECK_EQ(active, 0);
	/* A device that stopped exporting: ENOTSUP at the pin. */
	d = fake_cuda_alloc(KB(64));
	fake_cuda_set_device_attribute(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 0);
	CHECK_EQ(gdr_pin_buffer(g, d, KB(64), 0, 0, &h), ENOTSUP);
	CHECK_EQ(gdr_close(g), 0);
	CHECK_EQ(dmabuf_fds(), fds);
}

/* A dma-buf the driver will not let be mapped: the map fails, no leak. */
static void map_refused(void)
{
	uint64_t d = fake_cuda_alloc(KB(64));
	CUcontext ctx;
	struct gdr *g;
	gdr_mh_t h;
	void *va = NULL;

	env_clear();
	g = open_dmabuf();
	CHECK_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
	fake_cuda_set_dmabuf_mmap(false);
	CHECK_EQ(gdr_pin_buffer(g, d, KB(64), 0, 0, &h), 0);
	CHECK_EQ(dmabuf_fds(), 1);
	CHECK_EQ(gdr_map(g, h, &va, KB(64)), EACCES);
	CHECK_EQ(dmabuf_maps(), 0);
	CHECK_EQ(gdr_unmap(g, h, va, KB(64)), EINVAL);
	CHECK_EQ(gdr_unpin_buffer(g, h), 0);
	CHECK_EQ(dmabuf_fds(), 0);
	CHECK_EQ(gdr_close(g), 0);
}

/* One fd per pin; gdr_close releases every fd, mapping and the driver. */
static void close_releases_everything(void)
{
	uint64_t d = fake_cuda_alloc(KB(512));
	struct gdr *g, *g2;
	CUcontext ctx;
	gdr_mh_t h[4];
	void *va;

	env_clear();
	g = open_dmabuf();
	g2 = open_dmabuf();
	CHECK_EQ(gdrapi_dmabuf_cuda_users(), 2);
	CHECK_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(gdr_pin_buffer(g, d + (uint64_t)i * KB(128), KB(128), 0, 0,
					&h[i]), 0);
	CHECK_EQ(dmabuf_fds(), 4);
	CHECK_EQ(gdr_map(g, h[0], &va, KB(128)), 0);
	CHECK_EQ(gdr_map(g, h[2], &va, KB(64)), 0);
	CHECK_EQ(dmabuf_maps(), 2);
	/* Unpinning a mapped pin unmaps it first. */
	CHECK_EQ(gdr_unpin_buffer(g, h[2]), 0);
	CHECK_EQ(dmabuf_maps(), 1);
	CHECK_EQ(dmabuf_fds(), 3);
	CHECK_EQ(gdr_close(g), 0);
	CHECK_EQ(dmabuf_fds(), 0);
	CHECK_EQ(dmabuf_maps(), 0);
	CHECK_EQ(gdrapi_dmabuf_cuda_users(), 1);
	CHECK_EQ(gdr_close(g2), 0);
	CHECK_EQ(gdrapi_dmabuf_cuda_users(), 0);
}

int main(void)
{
	TAP_TEST(auto_falls_back_to_dmabuf);
	TAP_TEST(kernel_driver_first);
	TAP_TEST(needs_13_3_and_a_device);
	TAP_TEST(no_driver_library);
	TAP_TEST(env_forces_dmabuf);
	TAP_TEST(env_strict);
	TAP_TEST(pin_map_query);
	TAP_TEST(mapping_types);
	TAP_TEST(unaligned_pins);
	TAP_TEST(pin_failures);
	TAP_TEST(map_refused);
	TAP_TEST(close_releases_everything);
	return tap_done();
}
