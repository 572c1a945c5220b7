/* SPDX-License-Identifier: MIT */
/*
 * be_gdirect.c - libgdrapi over /dev/gdirect (include/uapi/gdirect_ioctl.h).
 *
 * Pins are gdirect registrations; the callback flag is the registration's
 * word in the read-only status area (no system call); a mapping is an mmap
 * at the registration's mmap_offset, write-combined unless the page table
 * says the memory is CPU-cacheable; there, as gdrdrv, cached or, asked
 * for, write-combined (GDIRECT_IOC_MAP_TYPE).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <uapi/gdirect_ioctl.h>

#include "gdrapi_internal.h"

static int gdra_pin(struct gdr *g, struct gdr_memh *m, unsigned long addr,
		  size_t size, uint64_t token, uint32_t va_space,
		  uint32_t flags)
{
	struct gdirect_pin p = {
		.addr = addr, .size = size,
		.p2p_token = token, .va_space = va_space,
	};

	if (flags & GDR_PIN_FLAG_FORCE_PCIE)
		return EINVAL;	/* no such thing here: see get_attribute */
	if (ioctl(g->fd, GDIRECT_IOC_PIN, &p) < 0)
		return errno;
	m->khandle = p.handle;
	m->va = p.pinned_addr;
	m->size = p.pinned_size;
	m->mmap_offset = p.mmap_offset;
	m->slot = p.status_slot;
	return 0;
}

static int gdra_unpin(struct gdr *g, struct gdr_memh *m)
{
	struct gdirect_unpin u = { .handle = m->khandle };

	return ioctl(g->fd, GDIRECT_IOC_UNPIN, &u) < 0 ? errno : 0;
}

static int gdra_cb_flag(struct gdr *g, struct gdr_memh *m, int *flag)
{
	const _Atomic uint32_t *st = g->status;

	/* A child has no status area; the driver would say EPERM too. */
	if (g->forks != gdrapi_forks())
		return EPERM;
	*flag = atomic_load_explicit(&st[m->slot], memory_order_acquire) ==
		GDIRECT_STATUS_REVOKED;
	return 0;
}

static int gdra_map_type(struct gdr *g, struct gdr_memh *m, int flags,
		       gdr_mapping_type_t *type)
{
	struct gdirect_region_info ri = { .handle = m->khandle };

	if (ioctl(g->fd, GDIRECT_IOC_REGION_INFO, &ri) < 0)
		return errno;
	if (ri.status == GDIRECT_STATUS_REVOKED)
		return EINVAL;	/* as gdrdrv: no mapping of a freed buffer */
	*type = ri.cpu_cacheable ? GDR_MAPPING_TYPE_CACHING : GDR_MAPPING_TYPE_WC;
	switch (flags) {
	case GDR_MAP_FLAG_DEFAULT:
		break;
	case GDR_MAP_FLAG_REQ_WC_MAPPING:
		/* Cacheable memory may be mapped WC too, as gdrdrv does. */
		*type = GDR_MAPPING_TYPE_WC;
		break;
	case GDR_MAP_FLAG_REQ_CACHE_MAPPING:
		if (*type != GDR_MAPPING_TYPE_CACHING)
			return EINVAL;
		break;
	default:
		return EINVAL;	/* device mappings: ARM64 BlueField only */
	}
	/*
	 * A region of cacheable memory keeps the type its last mapping was
	 * given, so each mapping of one says its own; other memory is only
	 * ever mapped WC, the default, and needs no call.
	 */
	if (ri.cpu_cacheable) {
		struct gdirect_map_type mt = {
			.handle = m->khandle,
			.type = *type == GDR_MAPPING_TYPE_WC ? GDIRECT_MAP_WC :
							      GDIRECT_MAP_NATURAL,
		};

		if (ioctl(g->fd, GDIRECT_IOC_MAP_TYPE, &mt) < 0)
			/* A gdirect.ko without the call maps cached only. */
			return errno == ENOTTY &&
			       *type == GDR_MAPPING_TYPE_CACHING ? 0 : EINVAL;
	}
	return 0;
}

static int gdra_driver_version(struct gdr *g, int *major, int *minor)
{
	(void)g;
	/* gdirect.ko offers what gdrdrv of this interface version offers. */
	*major = GDR_API_MAJOR_VERSION;
	*minor = GDR_API_MINOR_VERSION;
	return 0;
}

static int gdra_attr(struct gdr *g, gdr_attr_t attr, int *v)
{
	switch (attr) {
	case GDR_ATTR_USE_PERSISTENT_MAPPING:
		*v = g->persistent;
		return 0;
	case GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE:
	case GDR_ATTR_USING_DMA_BUF_MMAP:
		*v = 0;
		return 0;
	default:
		return EINVAL;
	}
}

static void gdra_close(struct gdr *g)
{
	munmap(g->status, GDIRECT_STATUS_BYTES);
	close(g->fd);
}

static const struct gdr_backend_ops gdirect_ops = {
	.name = "gdirect",
	.pin = gdra_pin,
	.unpin = gdra_unpin,
	.cb_flag = gdra_cb_flag,
	.map_type = gdra_map_type,
	.driver_version = gdra_driver_version,
	.attr = gdra_attr,
	.close = gdra_close,
};

int gdrapi_open_gdirect(struct gdr *g, const char *path)
{
	struct gdirect_info info = { 0 };
	int fd, err;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (ioctl(fd, GDIRECT_IOC_INFO, &info) < 0) {
		err = errno;
		goto fail;
	}
	if (info.abi_version != GDIRECT_ABI_VERSION) {
		gdrapi_log("libgdrapi: %s speaks ABI %u, not %u\n", path,
			   info.abi_version, GDIRECT_ABI_VERSION);
		err = EPROTO;
		goto fail;
	}
	g->status = mmap(NULL, GDIRECT_STATUS_BYTES, PROT_READ, MAP_SHARED, fd,
			 GDIRECT_STATUS_OFFSET);
	if (g->status == MAP_FAILED) {
		err = errno;
		goto fail;
	}
	g->fd = fd;
	g->persistent = !!info.default_persistent;
	g->ops = &gdirect_ops;
	return 0;
fail:
	close(fd);
	return err;
}
