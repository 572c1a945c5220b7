/* SPDX-License-Identifier: MIT */
/*
 * pin_backend.h - the pinning backend: how a context pins, maps and learns of
 * revocations.  gdirect.ko (backend_kernel.c) is the real one; the unit
 * tests and benchmarks supply a fake with the same contract
 * (tests/fakes/fake_backend.c).
 */
#ifndef GDL_BACKEND_H
#define GDL_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gdl_pin {
	uint64_t handle;	/* nonzero */
	uint64_t addr;		/* pinned start, 64 KiB aligned */
	uint64_t size;		/* pinned bytes */
	uint64_t mmap_offset;
	uint32_t slot;		/* index into the status area */
};

/* What the kernel reports when it revokes a registration. */
struct gdl_revocation {
	uint64_t handle;
	uint64_t addr, size;
	uint32_t slot;
};

struct gdl_backend;

struct gdl_backend_ops {
	const char *name;
	/*
	 * Pin [addr, addr+size) (64 KiB aligned).  -ENOMEM means BAR space
	 * is exhausted: the cache evicts and retries.
	 */
	int (*pin)(struct gdl_backend *b, uint64_t addr, uint64_t size,
		   struct gdl_pin *out);
	int (*unpin)(struct gdl_backend *b, uint64_t handle);
	/* CPU mapping of the whole pinned range, or NULL (errno set). */
	void *(*map)(struct gdl_backend *b, const struct gdl_pin *p);
	void (*unmap)(struct gdl_backend *b, void *addr, size_t len);
	/* Up to max pending revocations, without blocking; count or -errno. */
	int (*read_events)(struct gdl_backend *b, struct gdl_revocation *ev, int max);
	void (*destroy)(struct gdl_backend *b);
};

struct gdl_backend {
	const struct gdl_backend_ops *ops;
	/* One status word per slot (GDIRECT_STATUS_*), or NULL. */
	const uint32_t *status;
	uint32_t nslots;
	int event_fd;		/* pollable, or -1 */
	bool persistent;	/* pins are persistent: never revoked */
};

/* Open gdirect.ko's device; -errno on failure. */
int gdl_backend_kernel_open(const char *path, struct gdl_backend **out);

/* Status word values, as gdirect.ko defines them. */
#define GDL_STATUS_PINNED 1
#define GDL_STATUS_REVOKED 2

#endif
