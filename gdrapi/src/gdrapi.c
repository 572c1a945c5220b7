/* SPDX-License-Identifier: MIT */
/*
 * gdrapi.c - the gdrcopy 2.x library interface over gdirect (gdrapi.h).
 *
 * Handles (gdr_mh_t.h) point at a struct gdr_memh on g->pins; every call
 * that gets G checks that the handle is on G's list (under g->lock), so a
 * stale or foreign handle is EINVAL, not a wild pointer.  The copies get no
 * G: they check the handle's magic and that the range lies in its mapping.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gdirect.h"		/* libgdirect's BAR copies, linked in */
#include "gdrapi_internal.h"

/* Marker that packaging/install.sh looks for: this libgdrapi is ours. */
__attribute__((used)) static const char gdrapi_id[] =
	"GDIRECT_LIBGDRAPI: libgdrapi.so.2 of gdirect";

void gdrapi_log(const char *fmt, ...)
{
	va_list ap;

	if (!getenv("GDRCOPY_ENABLE_LOGGING"))
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/*
 * A forked child inherits the gdr_t but not its device's ownership, nor the
 * status area (VM_DONTCOPY): calls that would touch it check this count.
 */
static atomic_uint forks;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void count_fork(void)
{
	atomic_fetch_add(&forks, 1);
}

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, count_fork);
}

unsigned int gdrapi_forks(void)
{
	return atomic_load_explicit(&forks, memory_order_relaxed);
}

enum backend { BE_AUTO, BE_GDIRECT, BE_GDRDRV, BE_DMABUF };

static const char *const backend_names[] = {
	[BE_AUTO] = "auto", [BE_GDIRECT] = "gdirect",
	[BE_GDRDRV] = "gdrdrv", [BE_DMABUF] = "dmabuf",
};

/*
 * GDIRECT_GDRAPI_BACKEND (unset or empty: auto) and gdrcopy's
 * GDRCOPY_USE_DMABUF_MMAP, both strictly: 0 or EINVAL, with a message
 * naming the variable.  gdrcopy forces its dma-buf backend when the latter
 * is "1" and ignores any other value; here "1" forces it, unset, empty or
 * "0" leave the choice alone, and anything else ("yes", "true", " 1") is
 * a typo, not a silent "no".  Forcing dma-bufs while the first names a
 * kernel backend is a contradiction and fails too.
 */
static int backend_from_env(enum backend *be)
{
	const char *v = getenv("GDIRECT_GDRAPI_BACKEND");
	const char *d = getenv("GDRCOPY_USE_DMABUF_MMAP");
	int force_dmabuf;

	*be = BE_AUTO;
	if (v && *v) {
		unsigned int i;

		for (i = 0; i < sizeof(backend_names) / sizeof(*backend_names); i++)
			if (!strcmp(v, backend_names[i]))
				break;
		if (i == sizeof(backend_names) / sizeof(*backend_names)) {
			fprintf(stderr, "libgdrapi: GDIRECT_GDRAPI_BACKEND=\"%s\": want gdirect, gdrdrv, dmabuf or auto\n",
				v);
			return EINVAL;
		}
		*be = (enum backend)i;
	}
	if (!d || !*d || !strcmp(d, "0")) {
		force_dmabuf = 0;
	} else if (!strcmp(d, "1")) {
		force_dmabuf = 1;
	} else {
		fprintf(stderr, "libgdrapi: GDRCOPY_USE_DMABUF_MMAP=\"%s\": want 1 (use the dma-buf backend only), 0 or unset\n",
			d);
		return EINVAL;
	}
	if (force_dmabuf && (*be == BE_GDIRECT || *be == BE_GDRDRV)) {
		fprintf(stderr, "libgdrapi: GDRCOPY_USE_DMABUF_MMAP=1 contradicts GDIRECT_GDRAPI_BACKEND=\"%s\"\n",
			v);
		return EINVAL;
	}
	if (force_dmabuf)
		*be = BE_DMABUF;
	return 0;
}

struct gdr *gdrapi_new(void)
{
	struct gdr *g;

	pthread_once(&atfork_once, register_atfork);
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->fd = -1;
	g->forks = gdrapi_forks();
	g->pins.next = g->pins.prev = &g->pins;
	pthread_mutex_init(&g->lock, NULL);
	return g;
}

static void gdrapi_free(struct gdr *g)
{
	pthread_mutex_destroy(&g->lock);
	free(g);
}

/*
 * The order is gdrcopy 2.6's: a kernel driver first (/dev/gdirect if it
 * exists, else /dev/gdrdrv), then, when that cannot be opened, the dma-buf
 * backend, which needs a CUDA driver of 13.3 or later.  A backend named by
 * the environment is the only one tried.  When neither works, the error is
 * the kernel driver's (ENOENT without a device node), since that is the
 * backend most installations mean to use; both reasons are logged.
 */
int gdrapi_open_backend(struct gdr *g, const char *gdirect_path,
			const char *gdrdrv_path)
{
	enum backend be, asked;
	const char *node;
	int err, derr;

	err = backend_from_env(&asked);
	if (err)
		return err;
	be = asked;
	if (be == BE_DMABUF) {
		err = gdrapi_open_dmabuf(g);
		if (err)
			gdrapi_log("libgdrapi: dma-buf backend: %s\n", strerror(err));
		return err;
	}
	if (be == BE_AUTO)
		be = access(gdirect_path, F_OK) == 0 ? BE_GDIRECT : BE_GDRDRV;
	node = be == BE_GDIRECT ? gdirect_path : gdrdrv_path;
	if (be == BE_GDIRECT)
		err = gdrapi_open_gdirect(g, node);
	else
		err = gdrapi_open_gdrdrv(g, node);
	if (!err)
		return 0;
	gdrapi_log("libgdrapi: cannot open %s: %s\n", node, strerror(err));
	if (asked != BE_AUTO)
		return err;	/* named: no other backend */
	derr = gdrapi_open_dmabuf(g);
	if (!derr)
		return 0;
	gdrapi_log("libgdrapi: dma-buf backend: %s\n", strerror(derr));
	return err;
}

GDRAPI_EXPORT gdr_t gdr_open(void)
{
	struct gdr *g;
	int err;

	g = gdrapi_new();
	if (!g) {
		errno = ENOMEM;
		return NULL;
	}
	err = gdrapi_open_backend(g, "/dev/gdirect", "/dev/gdrdrv");
	if (err) {
		gdrapi_free(g);
		errno = err;
		return NULL;
	}
	return g;
}

/* The pin HANDLE names in G, or NULL.  Call with g->lock held. */
static struct gdr_memh *lookup(struct gdr *g, gdr_mh_t handle)
{
	for (struct gdr_memh *m = g->pins.next; m != &g->pins; m = m->next)
		if ((unsigned long)m == handle.h)
			return m;
	return NULL;
}

static int do_unmap(struct gdr_memh *m)
{
	if (m->mapping_type == GDR_MAPPING_TYPE_NONE)
		return EINVAL;
	if (munmap(m->map_va, m->map_len))
		return errno;
	m->mapping_type = GDR_MAPPING_TYPE_NONE;
	m->map_va = NULL;
	m->map_len = 0;
	return 0;
}

/* Unmap if mapped, unpin, take off the list, free.  g->lock held. */
static int do_unpin(struct gdr *g, struct gdr_memh *m)
{
	int err = 0;

	if (m->mapping_type != GDR_MAPPING_TYPE_NONE)
		err = do_unmap(m);
	if (!err)
		err = g->ops->unpin(g, m);
	if (err)
		return err;
	m->prev->next = m->next;
	m->next->prev = m->prev;
	m->magic = 0;
	free(m);
	return 0;
}

GDRAPI_EXPORT int gdr_close(gdr_t g)
{
	int err = 0;

	if (!g)
		return EINVAL;
	pthread_mutex_lock(&g->lock);
	while (g->pins.next != &g->pins) {
		err = do_unpin(g, g->pins.next);
		if (err) {
			gdrapi_log("libgdrapi: gdr_close: unpin: %s\n",
				   strerror(err));
			pthread_mutex_unlock(&g->lock);
			return err;
		}
	}
	pthread_mutex_unlock(&g->lock);
	g->ops->close(g);
	gdrapi_free(g);
	return 0;
}

static int pin(gdr_t g, unsigned long addr, size_t size, uint64_t token,
	       uint32_t va_space, uint32_t flags, gdr_mh_t *handle)
{
	struct gdr_memh *m;
	int err;

	if (!g || !handle || !size || (flags & ~(uint32_t)GDR_PIN_FLAG_FORCE_PCIE))
		return EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return ENOMEM;
	m->fd = -1;
	m->page_size = GPU_PAGE_SIZE;
	pthread_mutex_lock(&g->lock);
	err = g->ops->pin(g, m, addr, size, token, va_space, flags);
	if (err) {
		pthread_mutex_unlock(&g->lock);
		free(m);
		return err;
	}
	m->magic = GDRAPI_MEMH_MAGIC;
	m->next = g->pins.next;
	m->prev = &g->pins;
	g->pins.next->prev = m;
	g->pins.next = m;
	handle->h = (unsigned long)m;
	pthread_mutex_unlock(&g->lock);
	return 0;
}

GDRAPI_EXPORT int gdr_pin_buffer(gdr_t g, unsigned long addr, size_t size,
				 uint64_t p2p_token, uint32_t va_space,
				 gdr_mh_t *handle)
{
	return pin(g, addr, size, p2p_token, va_space, GDR_PIN_FLAG_DEFAULT,
		   handle);
}

GDRAPI_EXPORT int gdr_pin_buffer_v2(gdr_t g, unsigned long addr, size_t size,
				    uint32_t flags, gdr_mh_t *handle)
{
	return pin(g, addr, size, 0, 0, flags, handle);
}

GDRAPI_EXPORT int gdr_unpin_buffer(gdr_t g, gdr_mh_t handle)
{
	struct gdr_memh *m;
	int err;

	if (!g)
		return EINVAL;
	pthread_mutex_lock(&g->lock);
	m = lookup(g, handle);
	err = m ? do_unpin(g, m) : EINVAL;
	pthread_mutex_unlock(&g->lock);
	return err;
}

GDRAPI_EXPORT int gdr_get_callback_flag(gdr_t g, gdr_mh_t handle, int *flag)
{
	struct gdr_memh *m;
	int err;

	if (!g || !flag)
		return EINVAL;
	pthread_mutex_lock(&g->lock);
	m = lookup(g, handle);
	err = m ? g->ops->cb_flag(g, m, flag) : EINVAL;
	pthread_mutex_unlock(&g->lock);
	return err;
}

GDRAPI_EXPORT int gdr_get_info_v2(gdr_t g, gdr_mh_t handle, gdr_info_v2_t *info)
{
	struct gdr_memh *m;
	int err = 0;

	if (!g || !info)
		return EINVAL;
	pthread_mutex_lock(&g->lock);
	m = lookup(g, handle);
	if (!m) {
		err = EINVAL;
	} else {
		memset(info, 0, sizeof(*info));
		info->va = m->va;
		info->mapped_size = m->size;
		info->page_size = m->page_size;
		info->mapped = m->mapping_type != GDR_MAPPING_TYPE_NONE;
		info->wc_mapping = m->mapping_type == GDR_MAPPING_TYPE_WC;
		info->mapping_type = m->mapping_type;
	}
	pthread_mutex_unlock(&g->lock);
	return err;
}

GDRAPI_EXPORT int gdr_map_v2(gdr_t g, gdr_mh_t handle, void **va, size_t size,
			     int flags)
{
	gdr_mapping_type_t type;
	struct gdr_memh *m;
	long pg = sysconf(_SC_PAGESIZE);
	size_t len;
	void *p;
	int err;

	if (!g || !va || !size || flags < GDR_MAP_FLAG_DEFAULT ||
	    flags > GDR_MAP_FLAG_REQ_DEVICE_MAPPING)
		return EINVAL;
	pthread_mutex_lock(&g->lock);
	m = lookup(g, handle);
	if (!m || size > m->size) {
		err = EINVAL;
		goto out;
	}
	if (m->mapping_type != GDR_MAPPING_TYPE_NONE) {
		err = EAGAIN;	/* gdrcopy's answer: mapped already */
		goto out;
	}
	err = g->ops->map_type(g, m, flags, &type);
	if (err)
		goto out;
	len = (size + pg - 1) & ~(size_t)(pg - 1);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 m->fd >= 0 ? m->fd : g->fd, (off_t)m->mmap_offset);
	if (p == MAP_FAILED) {
		err = errno;
		goto out;
	}
	if (g->ops->mapped) {
		err = g->ops->mapped(g, m, flags, &type);
		if (err) {
			munmap(p, len);
			goto out;
		}
	}
	m->map_va = p;
	m->map_len = len;
	m->mapping_type = type;
	*va = p;
out:
	pthread_mutex_unlock(&g->lock);
	return err;
}

GDRAPI_EXPORT int gdr_map(gdr_t g, gdr_mh_t handle, void **va, size_t size)
{
	return gdr_map_v2(g, handle, va, size, GDR_MAP_FLAG_DEFAULT);
}

GDRAPI_EXPORT int gdr_unmap(gdr_t g, gdr_mh_t handle, void *va, size_t size)
{
	struct gdr_memh *m;
	int err;

	if (!g)
		return EINVAL;
	pthread_mutex_lock(&g->lock);
	m = lookup(g, handle);
	if (!m || m->mapping_type == GDR_MAPPING_TYPE_NONE || va != m->map_va ||
	    !size || size > m->map_len)
		err = EINVAL;
	else
		err = do_unmap(m);
	pthread_mutex_unlock(&g->lock);
	return err;
}

/* The mapped pin HANDLE if [p, p + n) lies inside its mapping, or NULL. */
static struct gdr_memh *in_mapping(gdr_mh_t handle, const void *p, size_t n)
{
	struct gdr_memh *m = (struct gdr_memh *)handle.h;
	uintptr_t a = (uintptr_t)p, b;

	if (!m || m->magic != GDRAPI_MEMH_MAGIC ||
	    m->mapping_type == GDR_MAPPING_TYPE_NONE)
		return NULL;
	b = (uintptr_t)m->map_va;
	if (a < b || a - b > m->map_len || n > m->map_len - (a - b))
		return NULL;
	return m;
}

GDRAPI_EXPORT int gdr_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr,
				      const void *h_ptr, size_t size)
{
	struct gdr_memh *m = in_mapping(handle, map_d_ptr, size);

	if (!m || (size && !h_ptr))
		return EINVAL;
	if (!size)
		return 0;
	if (m->mapping_type == GDR_MAPPING_TYPE_WC) {
		gdirect_copy_to_mapping(map_d_ptr, h_ptr, size);
	} else {
		memcpy(map_d_ptr, h_ptr, size);
		atomic_thread_fence(memory_order_seq_cst);
	}
	return 0;
}

GDRAPI_EXPORT int gdr_copy_from_mapping(gdr_mh_t handle, void *h_ptr,
					const void *map_d_ptr, size_t size)
{
	struct gdr_memh *m = in_mapping(handle, map_d_ptr, size);

	if (!m || (size && !h_ptr))
		return EINVAL;
	if (!size)
		return 0;
	if (m->mapping_type == GDR_MAPPING_TYPE_WC) {
		gdirect_copy_from_mapping(h_ptr, map_d_ptr, size);
	} else {
		atomic_thread_fence(memory_order_seq_cst);
		memcpy(h_ptr, map_d_ptr, size);
	}
	return 0;
}

GDRAPI_EXPORT void gdr_runtime_get_version(int *major, int *minor)
{
	if (major)
		*major = GDR_API_MAJOR_VERSION;
	if (minor)
		*minor = GDR_API_MINOR_VERSION;
}

GDRAPI_EXPORT int gdr_driver_get_version(gdr_t g, int *major, int *minor)
{
	int err;

	if (!g || !major || !minor)
		return EINVAL;
	pthread_mutex_lock(&g->lock);
	err = g->ops->driver_version(g, major, minor);
	pthread_mutex_unlock(&g->lock);
	return err;
}

GDRAPI_EXPORT int gdr_get_attribute(gdr_t g, gdr_attr_t attr, int *v)
{
	int err;

	if (!g || !v)
		return EINVAL;
	*v = 0;
	pthread_mutex_lock(&g->lock);
	err = g->ops->attr(g, attr, v);
	pthread_mutex_unlock(&g->lock);
	return err;
}

GDRAPI_EXPORT int gdr_get_mapping_type_string(gdr_mapping_type_t type,
					      const char **str)
{
	static const char *const names[] = {
		[GDR_MAPPING_TYPE_NONE] = "None",
		[GDR_MAPPING_TYPE_WC] = "Write Combining",
		[GDR_MAPPING_TYPE_CACHING] = "Caching",
		[GDR_MAPPING_TYPE_DEVICE] = "Device",
	};

	if (!str || (unsigned int)type >= sizeof(names) / sizeof(names[0]))
		return EINVAL;
	*str = names[type];
	return 0;
}

/*
 * The gdr_get_info symbol of gdrcopy 2.0-2.2 programs: the 40-byte layout,
 * without mapping_type.  gdrapi.h maps the name to gdr_get_info_v2.
 */
#undef gdr_get_info
struct gdr_info_v1 {
	uint64_t va;
	uint64_t mapped_size;
	uint32_t page_size;
	uint64_t tm_cycles;
	uint32_t cycles_per_ms;
	unsigned mapped:1;
	unsigned wc_mapping:1;
};
_Static_assert(sizeof(struct gdr_info_v1) == 40, "gdrcopy's v1 gdr_info");

GDRAPI_EXPORT int gdr_get_info(gdr_t g, gdr_mh_t handle, struct gdr_info_v1 *info);
int gdr_get_info(gdr_t g, gdr_mh_t handle, struct gdr_info_v1 *info)
{
	gdr_info_v2_t v2;
	int err;

	if (!info)
		return EINVAL;
	err = gdr_get_info_v2(g, handle, &v2);
	if (err)
		return err;
	memset(info, 0, sizeof(*info));
	info->va = v2.va;
	info->mapped_size = v2.mapped_size;
	info->page_size = v2.page_size;
	info->tm_cycles = v2.tm_cycles;
	info->cycles_per_ms = v2.cycles_per_ms;
	info->mapped = v2.mapped;
	info->wc_mapping = v2.wc_mapping;
	return 0;
}
