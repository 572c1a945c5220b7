/* SPDX-License-Identifier: MIT */
/*
 * be_gdrdrv.c - libgdrapi over /dev/gdrdrv (include/uapi/gdrdrv.h): the
 * gdrdrv ioctl interface, served by gdirect.ko's gdrdrv personality or by
 * gdrcopy's own gdrdrv.ko.  Requests newer than the driver's version are
 * not sent: the version gates of gdrdrv.h are gdrcopy's (GET_INFO_V2 from
 * 2.4, GET_ATTR, PIN_BUFFER_V2 and REQ_MAPPING_TYPE from 2.5), so that an
 * older gdrdrv.ko never sees a request it lacks.  mmap offset = handle <<
 * PAGE_SHIFT.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <uapi/gdrdrv.h>

#include "gdrapi_internal.h"

static unsigned int page_shift(void)
{
	return (unsigned int)__builtin_ctzl((unsigned long)sysconf(_SC_PAGESIZE));
}

/* Fill m->va and m->size, and *type, from the driver. */
static int query(struct gdr *g, struct gdr_memh *m, gdr_mapping_type_t *type)
{
	if (g->drv_version >= GDRDRV_MINIMUM_VERSION_WITH_GET_INFO_V2) {
		struct GDRDRV_IOC_GET_INFO_V2_PARAMS p = { .handle = m->khandle };

		if (ioctl(g->fd, GDRDRV_IOC_GET_INFO_V2, &p) < 0)
			return errno;
		m->va = p.va;
		m->size = p.mapped_size;
		*type = (gdr_mapping_type_t)p.mapping_type;
	} else {
		struct GDRDRV_IOC_GET_INFO_PARAMS p = { .handle = m->khandle };

		if (ioctl(g->fd, GDRDRV_IOC_GET_INFO, &p) < 0)
			return errno;
		m->va = p.va;
		m->size = p.mapped_size;
		*type = !p.mapped ? GDR_MAPPING_TYPE_NONE :
			p.wc_mapping ? GDR_MAPPING_TYPE_WC :
				       GDR_MAPPING_TYPE_CACHING;
	}
	return 0;
}

static int dv_unpin(struct gdr *g, struct gdr_memh *m)
{
	struct GDRDRV_IOC_UNPIN_BUFFER_PARAMS p = { .handle = m->khandle };

	return ioctl(g->fd, GDRDRV_IOC_UNPIN_BUFFER, &p) < 0 ? errno : 0;
}

static int dv_pin(struct gdr *g, struct gdr_memh *m, unsigned long addr,
		  size_t size, uint64_t token, uint32_t va_space,
		  uint32_t flags)
{
	gdr_mapping_type_t type;
	int err;

	if (g->drv_version >= GDRDRV_MINIMUM_VERSION_WITH_PIN_BUFFER_V2 &&
	    !token && !va_space) {
		struct GDRDRV_IOC_PIN_BUFFER_V2_PARAMS p = {
			.addr = addr, .size = size,
			.flags = flags & GDR_PIN_FLAG_FORCE_PCIE ?
				 GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE : 0,
		};

		if (ioctl(g->fd, GDRDRV_IOC_PIN_BUFFER_V2, &p) < 0)
			return errno;
		m->khandle = p.handle;
	} else {
		struct GDRDRV_IOC_PIN_BUFFER_PARAMS p = {
			.addr = addr, .size = size,
			.p2p_token = token, .va_space = va_space,
		};

		if (flags)
			return EINVAL;	/* the driver is too old for flags */
		if (ioctl(g->fd, GDRDRV_IOC_PIN_BUFFER, &p) < 0)
			return errno;
		m->khandle = p.handle;
	}
	m->mmap_offset = m->khandle << page_shift();
	err = query(g, m, &type);
	if (err)
		dv_unpin(g, m);
	return err;
}

static int dv_cb_flag(struct gdr *g, struct gdr_memh *m, int *flag)
{
	struct GDRDRV_IOC_GET_CB_FLAG_PARAMS p = { .handle = m->khandle };

	if (ioctl(g->fd, GDRDRV_IOC_GET_CB_FLAG, &p) < 0)
		return errno;
	*flag = !!p.flag;
	return 0;
}

static int dv_map_type(struct gdr *g, struct gdr_memh *m, int flags,
		       gdr_mapping_type_t *type)
{
	struct GDRDRV_IOC_REQ_MAPPING_TYPE_PARAMS p = {
		.handle = m->khandle,
		.mapping_type = (uint32_t)flags, /* GDR_MAP_FLAG_REQ_x == GDR_MR_x */
	};

	*type = (gdr_mapping_type_t)flags;
	if (g->drv_version < GDRDRV_MINIMUM_VERSION_WITH_REQ_MAPPING_TYPE)
		return flags == GDR_MAP_FLAG_DEFAULT ? 0 : EINVAL;
	return ioctl(g->fd, GDRDRV_IOC_REQ_MAPPING_TYPE, &p) < 0 ? errno : 0;
}

static int dv_mapped(struct gdr *g, struct gdr_memh *m, int flags,
		     gdr_mapping_type_t *type)
{
	gdr_mapping_type_t got = GDR_MAPPING_TYPE_NONE;
	int err = query(g, m, &got);

	if (err)
		return err;
	if (got == GDR_MAPPING_TYPE_NONE)
		return EAGAIN;	/* as gdrcopy: the driver says not mapped */
	if (flags != GDR_MAP_FLAG_DEFAULT && got != *type)
		return EINVAL;
	*type = got;
	return 0;
}

static int dv_driver_version(struct gdr *g, int *major, int *minor)
{
	struct GDRDRV_IOC_GET_VERSION_PARAMS p = { 0 };

	if (ioctl(g->fd, GDRDRV_IOC_GET_VERSION, &p) < 0)
		return errno;
	*major = (int)(p.gdrdrv_version >> GDRDRV_MAJOR_VERSION_SHIFT);
	*minor = (int)(p.gdrdrv_version & 0xffff);
	return 0;
}

static int dv_attr(struct gdr *g, gdr_attr_t attr, int *v)
{
	struct GDRDRV_IOC_GET_ATTR_PARAMS p = { 0 };

	switch (attr) {
	case GDR_ATTR_USE_PERSISTENT_MAPPING:
		p.attr = GDRDRV_ATTR_USE_PERSISTENT_MAPPING;
		break;
	case GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE:
		p.attr = GDRDRV_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE;
		break;
	case GDR_ATTR_USING_DMA_BUF_MMAP:
		*v = 0;
		return 0;
	default:
		return EINVAL;
	}
	/* Older drivers have no attributes: 0, as gdrcopy assumes. */
	if (g->drv_version < GDRDRV_MINIMUM_VERSION_WITH_GET_ATTR) {
		*v = 0;
		return 0;
	}
	if (ioctl(g->fd, GDRDRV_IOC_GET_ATTR, &p) < 0)
		return errno;
	*v = (int)p.val;
	return 0;
}

static void dv_close(struct gdr *g)
{
	close(g->fd);
}

static const struct gdr_backend_ops gdrdrv_ops = {
	.name = "gdrdrv",
	.pin = dv_pin,
	.unpin = dv_unpin,
	.cb_flag = dv_cb_flag,
	.map_type = dv_map_type,
	.mapped = dv_mapped,
	.driver_version = dv_driver_version,
	.attr = dv_attr,
	.close = dv_close,
};

int gdrapi_open_gdrdrv(struct gdr *g, const char *path)
{
	struct GDRDRV_IOC_GET_VERSION_PARAMS p = { 0 };
	int fd, err;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (ioctl(fd, GDRDRV_IOC_GET_VERSION, &p) < 0) {
		err = errno;
		goto fail;
	}
	if (p.gdrdrv_version < MINIMUM_GDRDRV_VERSION ||
	    p.minimum_gdr_api_version > GDR_API_VERSION) {
		gdrapi_log("libgdrapi: gdrdrv %u.%u wants libgdrapi %u.%u or later\n",
			   p.gdrdrv_version >> 16, p.gdrdrv_version & 0xffff,
			   p.minimum_gdr_api_version >> 16,
			   p.minimum_gdr_api_version & 0xffff);
		err = EPROTO;
		goto fail;
	}
	g->fd = fd;
	g->drv_version = p.gdrdrv_version;
	g->ops = &gdrdrv_ops;
	return 0;
fail:
	close(fd);
	return err;
}
