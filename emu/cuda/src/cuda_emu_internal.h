/* SPDX-License-Identifier: MIT */
/*
 * cuda_emu_internal.h - state of the emulated CUDA driver (not installed)
 *
 * GPU memory comes from nvp2p_emu.ko in "chunks" of whole 64 KiB pages at
 * GPU virtual addresses inside one PROT_NONE reservation of ours, as the CUDA
 * driver reserves its UVA range.  Small allocations share chunks, in
 * granules, each with its own BUFFER_ID; larger ones get a chunk each.  How
 * (struct emu_placement, mem.c) is CUDA_EMU_PLACEMENT's choice: "h100"
 * (default: below 2 MiB in 512-byte granules of 2 MiB chunks, as the H100
 * places them) or "64k" (up to 32 KiB in 256-byte granules of 64 KiB
 * chunks).  All state is under one mutex.
 */
#ifndef CUDA_EMU_INTERNAL_H
#define CUDA_EMU_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cuda.h"

#define EMU_EXPORT __attribute__((visibility("default")))

#define CHUNK_PAGE	(64u << 10)
#define VA_ALIGN	(2u << 20)	/* of our UVA reservation */
#define SMALL_SLOTS_MAX	4096u		/* granules of a small chunk, at most */

/* How cuMemAlloc places allocations (CUDA_EMU_PLACEMENT, mem.c). */
struct emu_placement {
	const char *name;
	uint64_t small_chunk;		/* bytes of a chunk of small allocations */
	uint64_t granule;		/* of a small allocation */
	uint64_t small_max;		/* larger sizes get chunks of their own */
	uint64_t align;			/* of a chunk's VA and size */
	bool subs;			/* tell nvp2p_emu of each small allocation
					 * (NVP2P_EMU_IOC_SUB_ADD): pins are
					 * checked against it and revoked when it
					 * is freed */
	bool regions;			/* H100 layout: first small page at the
					 * bottom, the rest and mid sizes from
					 * 128 MiB up, 16 MiB and more from the
					 * top down */
};

struct chunk {
	struct chunk *next;		/* sorted by va */
	uint64_t va, size;
	unsigned int users;		/* allocations inside */
	bool small;			/* a shared chunk of small allocations */
	bool resv;			/* a cuMemAddressReserve range: no memory */
	uint64_t used[SMALL_SLOTS_MAX / 64];	/* granule bitmap (small) */
};

struct alloc {
	struct alloc *next;
	uint64_t va, size;
	uint64_t buffer_id;
	struct chunk *chunk;
	struct CUctx_st *ctx;		/* NULL for VMM mappings */
	unsigned int sync_memops;
	struct vmm_handle *vmm;		/* a cuMemMap mapping of this handle */
	unsigned int access;		/* VMM: cuMemSetAccess flags */
	unsigned int ipc_opens;		/* > 0: opened IPC memory (ipc.c) */
	uint64_t ipc_handle;		/* nvp2p_emu's export handle: of the
					 * opened memory, or ours exported */
};

/* A cuMemCreate allocation handle (vmm.c). */
struct vmm_handle {
	struct vmm_handle *next;
	uint64_t size;
	bool rdma;			/* allocFlags.gpuDirectRDMACapable */
	unsigned int types;		/* requestedHandleTypes */
	unsigned int refs;		/* cuMemCreate/RetainAllocationHandle,
					 * less cuMemRelease; freed at 0 refs
					 * and no mapping */
	unsigned int maps;
};

/* Page-locked host memory (host.c). */
struct hostmem {
	struct hostmem *next;
	uint64_t va, size;
	uint64_t map_size;		/* of the mapping (allocations) */
	uint64_t buffer_id;
	struct CUctx_st *ctx;
	unsigned int flags;
	bool allocated;			/* cuMemHostAlloc, not registered */
};

struct CUctx_st {
	struct CUctx_st *next;		/* emu.ctxs: every created context */
	CUdevice dev;
	unsigned int flags;
	bool primary;
	bool destroyed;
	/* cuCtxGetId's answer: never 0, never reused in this process (a
	 * primary context brought back after its destruction gets a new one) */
	unsigned long long id;
};

struct emu_state {
	pthread_mutex_t lock;
	bool initialized;
	bool forked;			/* a child of an initialized process */
	int fd;				/* /dev/nvp2p_emu */
	uint64_t va_base, va_size;	/* our UVA reservation */
	const struct emu_placement *place;	/* CUDA_EMU_PLACEMENT */
	struct chunk *chunks;
	struct alloc *allocs;
	uint64_t next_buffer_id;
	struct CUctx_st primary;
	unsigned int primary_refs;
	/* created contexts, kept after cuCtxDestroy so that a stale handle on
	 * another thread's stack reads as destroyed, never as freed memory */
	struct CUctx_st *ctxs;
	/* from NVP2P_EMU_IOC_INFO */
	uint32_t pci_domain, pci_bus, pci_devfn;
	uint32_t caps;			/* NVP2P_EMU_CAP_* */
	int cuda_version;		/* the driver API version emulated */
	uint64_t mem_size;
	uint8_t uuid[16];
	/* a sticky error (a queued operation's memory went): from then on
	 * every call that needs a context returns it, in every context, as
	 * the H100 does ("the process must be terminated and relaunched");
	 * atomic */
	CUresult sticky;
};

extern struct emu_state emu;

/*
 * init.c: the CUDA driver API version that nvp2p_emu's cuda_version knob
 * asked for (NVP2P_EMU_CUDA_13_0 where the module predates the knob or
 * names a version this library does not know).
 */
int emu_cuda_version_of(uint32_t knob);
extern __thread struct CUctx_st *emu_current_ctx;	/* top of the stack */

/* ctx.c: CUDA_SUCCESS when a live context is current on this thread */
CUresult emu_ctx_live(void);
/* ctx.c: emu_ctx_live(), then the sticky error if there is one */
CUresult emu_need_ctx(void);
/* ctx.c: the sticky error, or CUDA_SUCCESS */
CUresult emu_sticky(void);

/* init.c: CUDA_SUCCESS when the driver may be used from this process */
CUresult emu_check_init(void);

/* host.c, with emu.lock held */
struct hostmem *emu_find_hostmem(uint64_t ptr);

/* mem.c */
/* CUDA_EMU_PLACEMENT's value (NULL: the default); NULL if unknown */
const struct emu_placement *emu_placement_parse(const char *value);
CUresult emu_cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);	/* cuMemAlloc_v2, unhooked */
struct alloc *emu_find_alloc(uint64_t ptr);	/* with emu.lock held */
void emu_free_ctx_allocs(struct CUctx_st *ctx);	/* with emu.lock held */
/* [ptr, ptr + n) lies in one live allocation (takes emu.lock) */
bool emu_device_range(uint64_t ptr, size_t n);
/* one NVP2P_EMU_IOC_COPY request, with its checks */
CUresult emu_copy(uint64_t dst, uint64_t src, size_t n, uint32_t dir);

/* mem.c, with emu.lock held: chunks and allocations for vmm.c */
uint64_t emu_va_find(uint64_t size, uint64_t align);
void emu_chunk_link(struct chunk *c);
void emu_alloc_link(struct alloc *a);
void emu_alloc_release(struct alloc *a);
/* vmm.c, with emu.lock held: a mapping of h went */
void emu_vmm_unmapped(struct vmm_handle *h);

/* ipc.c, with emu.lock held: @a is about to be freed */
void emu_ipc_release(struct alloc *a);

/* stream.c: CUDA_SUCCESS for the NULL stream or a live stream of ours */
CUresult emu_check_stream(CUstream s);
/* stream.c: the creation flags of a live event, or -1 */
int emu_event_flags(CUevent e);
/* stream.c: call fn(s, arg, status) in s's order, on the stream worker;
 * status is the context's sticky error, if it has one by then */
CUresult emu_stream_host_fn(CUstream s, void (*fn)(CUstream, void *, CUresult),
			    void *arg);
/* stream.c: wait for the work of every stream of ctx (NULL: of every
 * context); the sticky error */
CUresult emu_ctx_synchronize(struct CUctx_st *ctx);
/* stream.c: cuCtxDestroy's part: the context's work done, its streams go */
void emu_ctx_streams_destroy(struct CUctx_st *ctx);
/* The calling thread is the stream worker, running a host function. */
bool emu_on_worker(void);

/* Another exported name for the same entry point. */
#define EMU_ALIAS(name, target) \
	extern __typeof__(target) name \
		__attribute__((alias(#target), visibility("default")))

/* stream.c: in a _ptsz/_ptds call, the NULL stream is CU_STREAM_PER_THREAD */
extern __thread bool emu_ptds;

/*
 * The _ptsz/_ptds name of an entry point (the per-thread default stream
 * variants): target with emu_ptds set, so that a NULL stream, and the
 * default stream of the synchronous copies, is this thread's default
 * stream.  params names its arguments, args passes them on.
 */
#define EMU_PTDS(name, target, params, args) \
	extern __typeof__(target) name __attribute__((visibility("default"))); \
	CUresult name params \
	{ \
		bool outer = emu_ptds; \
		CUresult r; \
		emu_ptds = true; \
		r = target args; \
		emu_ptds = outer; \
		return r; \
	}

#endif /* CUDA_EMU_INTERNAL_H */
