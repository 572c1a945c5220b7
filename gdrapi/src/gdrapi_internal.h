/* SPDX-License-Identifier: MIT */
/*
 * gdrapi_internal.h - libgdrapi's state and its three backends.  Never
 * installed.
 *
 * gdrapi.c holds the gdrcopy interface: argument checks, the choice of a
 * backend, the list of pins (under g->lock), mapping bookkeeping and the
 * copies.  A backend (be_gdirect.c over /dev/gdirect, be_gdrdrv.c over
 * /dev/gdrdrv, be_dmabuf.c over the CUDA driver's dma-bufs) pins and
 * answers queries; its functions run with g->lock held.
 */
#ifndef GDRAPI_INTERNAL_H
#define GDRAPI_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "gdrapi.h"

#define GDRAPI_EXPORT __attribute__((visibility("default")))

/* memh.magic of a live pin; cleared when it is freed. */
#define GDRAPI_MEMH_MAGIC 0x67647261706968ULL

struct gdr_memh {
	struct gdr_memh *prev, *next;	/* g->pins */
	uint64_t magic;
	uint64_t khandle;		/* the driver's handle */
	uint64_t va;			/* pinned range, 64 KiB-aligned */
	uint64_t size;
	uint64_t mmap_offset;
	int fd;				/* the file mmap maps; -1: g->fd */
	uint32_t page_size;		/* gdr_get_info's page_size */
	uint32_t page_offset;		/* dma-buf: addr - va; else 0 */
	gdr_mapping_type_t pin_type;	/* dma-buf: the type pinning fixed */
	uint32_t slot;			/* /dev/gdirect status slot */
	gdr_mapping_type_t mapping_type; /* NONE while unmapped */
	void *map_va;
	size_t map_len;
};

struct gdr;

struct gdr_backend_ops {
	const char *name;
	/* 0 or an errno value; fill m's khandle, va, size, mmap_offset, slot */
	int (*pin)(struct gdr *g, struct gdr_memh *m, unsigned long addr,
		   size_t size, uint64_t token, uint32_t va_space,
		   uint32_t flags);
	int (*unpin)(struct gdr *g, struct gdr_memh *m);
	int (*cb_flag)(struct gdr *g, struct gdr_memh *m, int *flag);
	/* The mapping type a map with gdr_map_flags FLAGS gets (before mmap). */
	int (*map_type)(struct gdr *g, struct gdr_memh *m, int flags,
			gdr_mapping_type_t *type);
	/*
	 * After the mmap (may be NULL): the type the mapping got, checked
	 * against FLAGS' request; an error makes gdr_map_v2 undo the mmap.
	 */
	int (*mapped)(struct gdr *g, struct gdr_memh *m, int flags,
		      gdr_mapping_type_t *type);
	int (*driver_version)(struct gdr *g, int *major, int *minor);
	int (*attr)(struct gdr *g, gdr_attr_t attr, int *v);
	void (*close)(struct gdr *g);
};

struct gdr {
	pthread_mutex_t lock;
	struct gdr_memh pins;		/* list head */
	const struct gdr_backend_ops *ops;
	int fd;
	void *status;			/* /dev/gdirect status area */
	uint32_t drv_version;		/* gdrdrv: GET_VERSION's answer */
	int persistent;
	unsigned int forks;		/* gdrapi_forks when opened */
};

/* Forks this process went through (counted in the child). */
unsigned int gdrapi_forks(void);

/* A gdr_t with no backend yet (unit tests give it a fake one). */
struct gdr *gdrapi_new(void);

/* Open G's device; 0 or an errno value. */
int gdrapi_open_gdirect(struct gdr *g, const char *path);
int gdrapi_open_gdrdrv(struct gdr *g, const char *path);
/* Give G the dma-buf backend (be_dmabuf.c); 0 or an errno value. */
int gdrapi_open_dmabuf(struct gdr *g);

/*
 * Choose and open G's backend as gdr_open() does, with the device nodes at
 * the paths given (unit tests pass others): 0 or an errno value.
 */
int gdrapi_open_backend(struct gdr *g, const char *gdirect_path,
			const char *gdrdrv_path);

/* Holders of the dma-buf backend's CUDA driver (be_dmabuf.c), for tests. */
unsigned int gdrapi_dmabuf_cuda_users(void);

__attribute__((format(printf, 1, 2)))
void gdrapi_log(const char *fmt, ...);

#endif
