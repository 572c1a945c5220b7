/* SPDX-License-Identifier: MIT */
/*
 * be_dmabuf.c - libgdrapi without a kernel driver: gdrcopy 2.6's dma-buf
 * mmap backend.  A pin is a dma-buf the CUDA driver exports for the range
 * (cuMemGetHandleForAddressRange, handle type DMA_BUF_FD), one file
 * descriptor per pin; a mapping is an mmap of that descriptor.  gdrcopy
 * 2.6 defines the semantics, and this file keeps them:
 *
 *  - the backend needs a CUDA driver of 13.3 or later (cuDriverGetVersion
 *    at least 13030), where the driver's dma-bufs can be mmap'ed, and a
 *    device with CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED;
 *  - the range is widened to whole host pages: va is addr rounded down to
 *    the host page, the size rounded up, page_size the host page's; a pin
 *    whose addr is not on a page's start can be pinned but not mapped
 *    (EINVAL), where gdrcopy's mmap at the in-page offset fails the same;
 *  - the mapping type is fixed at pin time: write-combined, or cached where
 *    the device is coherent (PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES)
 *    and the pin did not ask GDR_PIN_FLAG_FORCE_PCIE; FORCE_PCIE passes
 *    CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE and nothing else does, as
 *    gdrcopy 2.6 exports; whether the fd can be mmapped is the CUDA
 *    driver's decision, not the type's (a 13.3-level driver allows it for
 *    every export, an earlier one for none).  gdr_map_v2 accepts the
 *    default or a request for that type only (EINVAL);
 *  - pins are always persistent and there is no invalidation callback:
 *    the callback flag is always 0 (the dma-buf keeps the memory's pages
 *    while it is open; the mapping outlives a cuMemFree);
 *  - p2p tokens are ignored; there is no driver version (ENODEV, where
 *    gdrcopy's assertion on its fd ends the process).
 *
 * The CUDA driver is loaded through lib/cudaload (libcuda.so.1, or
 * GDIRECT_LIBCUDA; "none": no driver), once for all gdr_t that use this
 * backend, and closed when the last of them is.  A CUDA error becomes an errno value
 * (cu_errno()), where gdrcopy returns the CUresult's number itself.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "cudaload.h"
#include "gdrapi_internal.h"

/* gdrcopy's GDR_CUDA_DMABUF_MMAP_MIN_VERSION: CUDA 13.3. */
#define DMABUF_MMAP_MIN_VERSION 13030

#define NEED (GDL_CU_BIT(init) | GDL_CU_BIT(driver_get_version) |	\
	      GDL_CU_BIT(device_get) | GDL_CU_BIT(device_get_count) |	\
	      GDL_CU_BIT(device_get_attribute) |				\
	      GDL_CU_BIT(pointer_get_attribute) |				\
	      GDL_CU_BIT(ctx_get_current) | GDL_CU_BIT(ctx_set_current) |	\
	      GDL_CU_BIT(primary_retain) | GDL_CU_BIT(primary_release) |	\
	      GDL_CU_BIT(mem_get_handle_for_address_range))

/* The driver, loaded while cuda_users > 0; both under cuda_lock. */
static pthread_mutex_t cuda_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gdl_cuda cu;
static unsigned int cuda_users;

unsigned int gdrapi_dmabuf_cuda_users(void)
{
	unsigned int n;

	pthread_mutex_lock(&cuda_lock);
	n = cuda_users;
	pthread_mutex_unlock(&cuda_lock);
	return n;
}

static int cu_errno(CUresult r)
{
	switch (r) {
	case CUDA_SUCCESS:
		return 0;
	case CUDA_ERROR_INVALID_VALUE:
	case CUDA_ERROR_INVALID_CONTEXT:
		return EINVAL;
	case CUDA_ERROR_OUT_OF_MEMORY:
		return ENOMEM;
	case CUDA_ERROR_NOT_INITIALIZED:
	case CUDA_ERROR_DEINITIALIZED:
	case CUDA_ERROR_NO_DEVICE:
	case CUDA_ERROR_INVALID_DEVICE:
		return ENODEV;
	case CUDA_ERROR_NOT_PERMITTED:
		return EPERM;
	case CUDA_ERROR_NOT_SUPPORTED:
		return ENOTSUP;
	default:
		return EIO;
	}
}

/* Does device dev export mmap-able dma-bufs?  0 or an errno value. */
static int dev_supported(CUdevice dev, int *yes)
{
	CUresult r;

	*yes = 0;
	r = cu.device_get_attribute(yes, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
				    dev);
	return cu_errno(r);
}

/* Load the driver for the first user: 0 or an errno value.  cuda_lock held. */
static int cuda_load(void)
{
	int version = 0, ndev = 0, yes = 0, err;
	char why[256];
	CUresult r;

	err = gdl_cuload_open(&cu, NEED, NEED, GDL_CUDA_PROC_ADDRESS, why,
			      sizeof(why));
	/*
	 * A driver GDIRECT_LIBCUDA names that does not load is a mistake in
	 * a setting, as libgdirect treats it; the default libcuda.so.1
	 * missing only means a machine without CUDA.
	 */
	if (err == -ENOENT && gdl_cuload_named()) {
		fprintf(stderr, "libgdrapi: GDIRECT_LIBCUDA: %s\n", why);
		return EINVAL;
	}
	if (err) {
		gdrapi_log("libgdrapi: dma-buf backend: %s\n", why);
		return -err;
	}
	r = cu.driver_get_version(&version);
	if (r != CUDA_SUCCESS) {
		err = cu_errno(r);
		goto fail;
	}
	if (version < DMABUF_MMAP_MIN_VERSION) {
		gdrapi_log("libgdrapi: dma-buf backend: the CUDA driver is %d, not %d or later\n",
			   version, DMABUF_MMAP_MIN_VERSION);
		err = ENOTSUP;
		goto fail;
	}
	r = cu.init(0);
	if (r == CUDA_SUCCESS)
		r = cu.device_get_count(&ndev);
	if (r != CUDA_SUCCESS) {
		err = cu_errno(r);
		goto fail;
	}
	for (int i = 0; i < ndev && !yes; i++) {
		CUdevice dev;

		r = cu.device_get(&dev, i);
		err = r == CUDA_SUCCESS ? dev_supported(dev, &yes) : cu_errno(r);
		if (err)
			goto fail;
	}
	if (!yes) {
		gdrapi_log("libgdrapi: dma-buf backend: no device exports dma-bufs\n");
		err = ENOTSUP;
		goto fail;
	}
	return 0;
fail:
	gdl_cuload_close(&cu);
	return err;
}

static void cuda_put(void)
{
	pthread_mutex_lock(&cuda_lock);
	if (!--cuda_users)
		gdl_cuload_close(&cu);
	pthread_mutex_unlock(&cuda_lock);
}

static int db_pin(struct gdr *g, struct gdr_memh *m, unsigned long addr,
		  size_t size, uint64_t token, uint32_t va_space,
		  uint32_t flags)
{
	unsigned long long cflags = 0;
	unsigned long pg = (unsigned long)sysconf(_SC_PAGESIZE);
	CUdeviceptr va = addr & ~(pg - 1);
	size_t len;
	CUcontext ctx = NULL;
	int ordinal = -1, yes = 0, coherent = 0, retained = 0, fd = -1, err;
	CUdevice dev;
	CUresult r;

	(void)g;
	(void)token;	/* gdrcopy's dma-buf backend ignores them too */
	(void)va_space;
	if (size > SIZE_MAX - (addr - va) - pg)
		return EINVAL;
	len = (size + (addr - va) + pg - 1) & ~(pg - 1);
	if (flags & GDR_PIN_FLAG_FORCE_PCIE)
		cflags |= CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE;
	r = cu.pointer_get_attribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
				     va);
	if (r == CUDA_SUCCESS)
		r = cu.device_get(&dev, ordinal);
	if (r != CUDA_SUCCESS)
		return cu_errno(r);
	err = dev_supported(dev, &yes);
	if (err)
		return err;
	if (!yes)
		return ENOTSUP;
	/* An error reads as not coherent, as in gdrcopy. */
	if (cu.device_get_attribute(&coherent,
				    CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
				    dev) != CUDA_SUCCESS)
		coherent = 0;
	r = cu.ctx_get_current(&ctx);
	if (r == CUDA_SUCCESS && !ctx) {
		r = cu.primary_retain(&ctx, dev);
		if (r == CUDA_SUCCESS) {
			retained = 1;
			r = cu.ctx_set_current(ctx);
		}
	}
	if (r == CUDA_SUCCESS)
		r = cu.mem_get_handle_for_address_range(&fd, va, len,
							CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
							cflags);
	err = cu_errno(r);
	/* The primary context was only borrowed for the export. */
	if (retained) {
		cu.ctx_set_current(NULL);
		cu.primary_release(dev);
	}
	if (err)
		return err;
	m->fd = fd;
	m->va = va;
	m->size = len;
	m->mmap_offset = 0;
	m->page_size = (uint32_t)pg;
	m->page_offset = (uint32_t)(addr - va);
	m->pin_type = coherent && !(flags & GDR_PIN_FLAG_FORCE_PCIE) ?
		      GDR_MAPPING_TYPE_CACHING : GDR_MAPPING_TYPE_WC;
	return 0;
}

/* The mapping is gone (gdrapi.c unmaps first): the fd is the pin. */
static int db_unpin(struct gdr *g, struct gdr_memh *m)
{
	(void)g;
	/* Linux closes the descriptor even when close() reports an error. */
	close(m->fd);
	m->fd = -1;
	return 0;
}

static int db_cb_flag(struct gdr *g, struct gdr_memh *m, int *flag)
{
	(void)g;
	(void)m;
	*flag = 0;	/* no invalidation callback: always persistent */
	return 0;
}

static int db_map_type(struct gdr *g, struct gdr_memh *m, int flags,
		       gdr_mapping_type_t *type)
{
	(void)g;
	if (m->page_offset)
		return EINVAL;
	*type = m->pin_type;
	/* GDR_MAP_FLAG_REQ_x == GDR_MAPPING_TYPE_x */
	if (flags != GDR_MAP_FLAG_DEFAULT && (gdr_mapping_type_t)flags != *type)
		return EINVAL;
	return 0;
}

static int db_driver_version(struct gdr *g, int *major, int *minor)
{
	(void)g;
	(void)major;
	(void)minor;
	return ENODEV;
}

static int db_attr(struct gdr *g, gdr_attr_t attr, int *v)
{
	(void)g;
	switch (attr) {
	case GDR_ATTR_USE_PERSISTENT_MAPPING:
	case GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE:
	case GDR_ATTR_USING_DMA_BUF_MMAP:
		*v = 1;
		return 0;
	default:
		return EINVAL;
	}
}

static void db_close(struct gdr *g)
{
	(void)g;
	cuda_put();
}

static const struct gdr_backend_ops dmabuf_ops = {
	.name = "dmabuf",
	.pin = db_pin,
	.unpin = db_unpin,
	.cb_flag = db_cb_flag,
	.map_type = db_map_type,
	.driver_version = db_driver_version,
	.attr = db_attr,
	.close = db_close,
};

int gdrapi_open_dmabuf(struct gdr *g)
{
	int err = 0;

	pthread_mutex_lock(&cuda_lock);
	if (!cuda_users)
		err = cuda_load();
	if (!err)
		cuda_users++;
	pthread_mutex_unlock(&cuda_lock);
	if (err)
		return err;
	g->fd = -1;
	g->persistent = 1;
	g->ops = &dmabuf_ops;
	return 0;
}
