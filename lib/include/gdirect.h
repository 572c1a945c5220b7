/* SPDX-License-Identifier: MIT */
/*
 * gdirect.h - libgdirect, the user-space half of GPUDirect RDMA.
 *
 * libgdirect tells CPU memory from GPU memory, pins GPU memory through
 * gdirect.ko (/dev/gdirect) behind a registration cache, keeps that cache
 * consistent with frees, and copies between host memory and GPU memory
 * through the CPU mapping of the GPU's BAR.
 *
 * Conventions: functions return 0 (or a count) on success and a negative
 * errno value on failure; errno is not used.  After a failure,
 * gdirect_errmsg() gives a sentence saying why, for the calling thread.
 * All handles are opaque.  Every function is thread-safe.
 *
 * CUDA is loaded at run time (dlopen of libcuda.so.1, or of the file named by
 * the environment variable GDIRECT_LIBCUDA; "none" loads no driver); without
 * it every pointer is CPU memory and only the CPU path works.  A file that
 * GDIRECT_LIBCUDA names and that does not load, or lacks a required entry
 * point, makes gdirect_ctx_create() fail with -EINVAL.
 *
 * Registering GPU and host memory with an RDMA NIC (the gdirect_mr_*
 * functions, a cache of verbs memory regions) is declared in
 * <gdirect_verbs.h>, which is installed, and whose functions exist, only
 * when libgdirect was built with libibverbs (meson option verbs); a program
 * can test for GDIRECT_VERBS after including it.
 *
 * See docs/libgdirect.md for the design and gdirect(3) for an overview.
 */
#ifndef GDIRECT_H
#define GDIRECT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GDIRECT_LIB_VERSION_MAJOR 0
#define GDIRECT_LIB_VERSION_MINOR 1

struct gdirect_ctx;	/* one pinning context: an open /dev/gdirect + caches */
struct gdirect_reg;	/* a reference to one pinned (registered) region */

/* Where a pointer's memory lives. */
enum gdirect_mem_type {
	GDIRECT_MEM_CPU = 1,	 /* host memory: the CPU path */
	GDIRECT_MEM_DEVICE = 2,	 /* GPU memory (cuMemAlloc and friends) */
	GDIRECT_MEM_MANAGED = 3, /* Unified Memory: refused for RDMA */
};

/*
 * Invalidation modes (gdirect_params.invalidation), any combination.  Each
 * one alone keeps the invariant that a registration is never handed out for
 * memory that has been freed; see docs/libgdirect.md for what each costs.
 */
#define GDIRECT_INV_KERNEL	(1U << 0) /* gdirect.ko revocation: status word + events */
#define GDIRECT_INV_HOOKS	(1U << 1) /* CUDA free interception / gdirect_notify_free() */
#define GDIRECT_INV_BUFFER_ID	(1U << 2) /* CU_POINTER_ATTRIBUTE_BUFFER_ID tag check per use */
#define GDIRECT_INV_ALL		(GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS | GDIRECT_INV_BUFFER_ID)

/* gdirect_params.flags */
#define GDIRECT_CTX_CACHE_HOST	(1U << 0) /* also cache "CPU" answers of gdirect_classify() */
/*
 * Publish gdirect_stats() for `gdirect stat`: a thread of the context
 * rewrites DIR/gdirect-stats.PID.N ("name value" lines) every
 * GDIRECT_PUBLISH_INTERVAL_MS (default 500); DIR is the user's own
 * directory: GDIRECT_STATS_DIR, else /dev/shm/gdirect-UID (mode 0700; a
 * fresh /dev/shm/gdirect-UID.XXXXXX if another user took that name).
 * gdirect_ctx_create() fails if the file cannot be written.
 */
#define GDIRECT_CTX_PUBLISH_STATS (1U << 1)
/*
 * Run with no invalidation mode (invalidation 0): a freed and reallocated
 * buffer may then be handed a stale registration.  Without this flag an
 * empty mode set is refused (GDIRECT_INVALIDATION=unsafe_none sets it).
 */
#define GDIRECT_CTX_NO_INVALIDATION (1U << 2)

/*
 * gdirect_params.mr_path: how gdirect_mr_get() (gdirect_verbs.h) registers
 * GPU memory with a NIC.  AUTO: dma-buf when the NIC's verbs provider can
 * import one (probed once per device), else, or when the export or import
 * fails other than for lack of resources, peer memory (ibv_reg_mr on the
 * device address).  Environment: GDIRECT_MR_PATH=auto|dmabuf|peer.
 */
#define GDIRECT_MR_PATH_AUTO	0
#define GDIRECT_MR_PATH_DMABUF	1 /* dma-buf only: no fallback */
#define GDIRECT_MR_PATH_PEER	2 /* peer memory only */

/*
 * Context parameters.  Fill with gdirect_params_init(), which applies the
 * defaults and then the environment (GDIRECT_INVALIDATION=kernel,hooks,
 * buffer_id,all or unsafe_none; GDIRECT_MAX_REGIONS; GDIRECT_MAX_BYTES;
 * GDIRECT_WHOLE_ALLOC_MAX; GDIRECT_DEVICE; GDIRECT_PUBLISH_STATS=0|1;
 * GDIRECT_MR_PATH=auto|dmabuf|peer),
 * then change what you need.  Every variable is parsed strictly: a value
 * that is not understood whole (a misspelt or differently-cased word, a
 * space, a fraction, an overflow) makes gdirect_ctx_create() fail with
 * -EINVAL and a sentence naming it in gdirect_errmsg().  An empty variable
 * is the same as an unset one.
 */
struct gdirect_params {
	uint32_t invalidation;	 /* GDIRECT_INV_* (default KERNEL|HOOKS) */
	uint32_t flags;		 /* GDIRECT_CTX_* (default 0) */
	uint64_t max_regions;	 /* unused regions are evicted, LRU first, above */
	uint64_t max_bytes;	 /*   these totals of pinned regions/bytes; 0 = no limit */
	uint64_t whole_alloc_max; /* pin the whole allocation when it is at most
				   * this big (0: pin only the 64 KiB-rounded request) */
	const char *device_path; /* default "/dev/gdirect" */
	uint32_t mr_path;	 /* GDIRECT_MR_PATH_* (default AUTO) */
	uint32_t reserved32;	 /* must be zero */
	uint64_t reserved[7];	 /* must be zero */
};

/* What a pointer is. */
struct gdirect_ptr_info {
	enum gdirect_mem_type type;
	int device;		/* CUDA device ordinal, -1 for CPU memory */
	uint64_t alloc_base;	/* the allocation holding it (0 for CPU memory) */
	uint64_t alloc_size;
	uint64_t buffer_id;	/* CU_POINTER_ATTRIBUTE_BUFFER_ID */
};

/* A registration, as gdirect_reg_info() reports it. */
struct gdirect_reg_info {
	uint64_t addr;		/* pinned GPU virtual address, 64 KiB aligned */
	uint64_t size;		/* pinned bytes, a multiple of 64 KiB */
	uint64_t kernel_handle;	/* gdirect.ko's handle (gdirect_pin.handle) */
	int device;
	int valid;		/* 0 once revoked or invalidated */
};

/* Statistics of one context (gdirect_stats()). */
struct gdirect_stats {
	uint64_t hits;		 /* gdirect_reg_get() answered from the cache */
	uint64_t misses;	 /* ... that needed a new pin */
	uint64_t pin_waits;	 /* ... that waited for another thread's pin of the range */
	uint64_t pins;		 /* successful pins */
	uint64_t pin_failures;	 /* pins that failed for good */
	uint64_t unpins;
	uint64_t evictions;	 /* unused regions evicted above max_regions/max_bytes */
	uint64_t evictions_bar;	 /* unused regions evicted because a pin ran out of BAR space */
	uint64_t inv_kernel;	 /* regions invalidated by gdirect.ko revocation */
	uint64_t inv_hooks;	 /* ... by an intercepted CUDA free */
	uint64_t inv_buffer_id;	 /* ... by a BUFFER_ID tag mismatch */
	uint64_t sync_memops;	 /* allocations given CU_POINTER_ATTRIBUTE_SYNC_MEMOPS */
	uint64_t classify_hits;
	uint64_t classify_misses;
	uint64_t regions;	 /* regions pinned now */
	uint64_t bytes_pinned;	 /* bytes pinned now */
	uint64_t release_waits;	 /* pins out of BAR space, nothing to evict, that
				    waited for other threads' releases */
	uint64_t sync_memops_vmm; /* VMM allocations registered without
				     SYNC_MEMOPS, which the driver refuses them */
	/* The verbs memory regions of gdirect_mr_get() (gdirect_verbs.h);
	 * 0 in a library built without libibverbs.  Regions registered now:
	 * mr_regs_dmabuf + mr_regs_peer + mr_regs_host - mr_deregs. */
	uint64_t mr_hits;	 /* gdirect_mr_get() answered from the cache */
	uint64_t mr_regs_dmabuf; /* registrations: ibv_reg_dmabuf_mr of GPU memory */
	uint64_t mr_regs_peer;	 /* ... ibv_reg_mr of GPU memory (peer memory) */
	uint64_t mr_regs_host;	 /* ... ibv_reg_mr of host memory */
	uint64_t mr_evictions;	 /* unused regions deregistered because the NIC
				    refused a registration (ENOMEM, ENOSPC) */
	uint64_t mr_deregs;	 /* ibv_dereg_mr of every cause */
};

/* Fill *p with the defaults, then apply the environment. */
void gdirect_params_init(struct gdirect_params *p);

/*
 * Create a context.  p may be NULL (defaults).  Opens the pinning device;
 * when it is absent the context still classifies pointers, and pinning fails
 * with -ENODEV.
 */
int gdirect_ctx_create(const struct gdirect_params *p, struct gdirect_ctx **ctx);

/* Unpin everything and free the context.  Every registration must be put. */
void gdirect_ctx_destroy(struct gdirect_ctx *ctx);

/*
 * Classify ptr: CPU, device or managed memory, with its device and
 * allocation.  Repeated queries are answered from a cache.
 */
int gdirect_classify(struct gdirect_ctx *ctx, const void *ptr,
		     struct gdirect_ptr_info *info);

/*
 * Get a registration covering [ptr, ptr+len) of GPU memory, pinning it on a
 * miss.  The range must lie in one CUDA allocation.  Errors: -EINVAL (not
 * device memory, len 0, spans allocations), -EOPNOTSUPP (managed memory),
 * -ENOMEM (no BAR space even after evicting every unused region), -ENODEV
 * (no pinning device), -EPERM (context inherited across fork).
 * flags must be 0.
 */
int gdirect_reg_get(struct gdirect_ctx *ctx, const void *ptr, size_t len,
		    unsigned int flags, struct gdirect_reg **reg);

/* Drop a reference.  The region stays pinned (lazy unpinning). */
void gdirect_reg_put(struct gdirect_reg *reg);

int gdirect_reg_info(const struct gdirect_reg *reg, struct gdirect_reg_info *info);

/*
 * The CPU address, inside the BAR mapping of reg, of GPU address gpu_ptr
 * (which must lie in the registration).  The mapping is made on first use
 * and is valid until the registration is released.  NULL on error.
 */
void *gdirect_reg_map(struct gdirect_reg *reg, const void *gpu_ptr);

/*
 * Copy n bytes into / out of a BAR mapping (any size, any alignment), with
 * the best CPU instructions available and the fences write-combined memory
 * needs: stores are complete (sfence) when copy_to returns.
 */
void gdirect_copy_to_mapping(void *map_dst, const void *src, size_t n);
void gdirect_copy_from_mapping(void *dst, const void *map_src, size_t n);

/* Name of the copy routines in use: "movdir64b", "avx512", "avx2", "sse", "generic". */
const char *gdirect_copy_impl(void);

/* Host <-> GPU copies through the registration cache and the BAR mapping. */
int gdirect_copy_to_gpu(struct gdirect_ctx *ctx, void *gpu_dst,
			const void *src, size_t n);
int gdirect_copy_from_gpu(struct gdirect_ctx *ctx, void *dst,
			  const void *gpu_src, size_t n);

/*
 * Report that [ptr, ptr+len) of GPU memory is about to be freed (len 0: the
 * whole allocation holding ptr; a range past the end of the address space,
 * e.g. len SIZE_MAX: everything from ptr).  The CUDA free hooks call this; call it
 * yourself if you free memory in a way they cannot see.  Safe in any thread
 * and inside hooks: unpinning is deferred to the next library call.
 * Applies to every context with GDIRECT_INV_HOOKS.
 */
void gdirect_notify_free(const void *ptr, size_t len);

/*
 * Process pending invalidations: read gdirect.ko's revocation events and
 * unpin regions whose release was deferred.  Returns how many regions it
 * invalidated or unpinned.  Called implicitly on every cache miss.
 */
int gdirect_process_events(struct gdirect_ctx *ctx);

/* A file descriptor that polls readable while revocation events wait (-1: none). */
int gdirect_event_fd(struct gdirect_ctx *ctx);

/* Unpin every unused region. Returns how many it unpinned. */
int gdirect_flush(struct gdirect_ctx *ctx);

void gdirect_stats(struct gdirect_ctx *ctx, struct gdirect_stats *st);

/* Why the calling thread's last failed call failed ("" if none). */
const char *gdirect_errmsg(void);

#ifdef __cplusplus
}
#endif

#endif /* GDIRECT_H */
