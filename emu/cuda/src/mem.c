// SPDX-License-Identifier: MIT
/*
 * mem.c - cuMemAlloc, cuMemFree, copies, and the allocation table
 *
 * Chunks are placed first-fit at the lowest free VA of their region of our
 * reservation (struct emu_placement), so a freed VA is handed out again at
 * once, with a new BUFFER_ID, as the CUDA driver does.  Freeing the last allocation in a chunk frees the chunk in
 * the kernel, which revokes any third-party pin of it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "cuda_emu_internal.h"
#include "hookable.h"
#include "nvp2p_emu.h"

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/*
 * The placements CUDA_EMU_PLACEMENT chooses from.  "h100" reproduces the
 * classes measured on an H100 with driver 580 (tests/conformance/cuda_emu/
 * gpu/h100-580.transcript, alloc.*): allocations below 2 MiB packed first
 * fit in 512-byte granules of 2 MiB pages, the first such page at the
 * bottom of the range and the others more than 64 MiB above it, sizes
 * from 2 MiB to 16 MiB rounded to 2 MiB upwards from there, 16 MiB and
 * more from the top of the range down.
 */
static const struct emu_placement placements[] = {
	{ .name = "h100", .small_chunk = 2u << 20, .granule = 512,
	  .small_max = (2u << 20) - 1, .align = 2u << 20, .subs = true,
	  .regions = true },	/* the default */
	{ .name = "64k", .small_chunk = 64u << 10, .granule = 256,
	  .small_max = 32u << 10, .align = CHUNK_PAGE },
};

#define MID_BASE	(128u << 20)	/* H100: where pages past the first go */
#define BIG_MIN		(16u << 20)	/* H100: placed from the top down */

const struct emu_placement *emu_placement_parse(const char *value)
{
	if (!value)
		return &placements[0];
	for (size_t i = 0; i < sizeof(placements) / sizeof(placements[0]); i++)
		if (!strcmp(value, placements[i].name))
			return &placements[i];
	return NULL;
}

/* Lowest @align-aligned gap of @size bytes at or above @from; 0 if none. */
static uint64_t va_find_from(uint64_t from, uint64_t size, uint64_t align)
{
	uint64_t at = round_up(from, align);

	for (struct chunk *c = emu.chunks; c; c = c->next) {
		if (c->va + c->size <= at)
			continue;
		if (c->va >= at && c->va - at >= size)
			break;
		at = round_up(c->va + c->size, align);
	}
	return at + size <= emu.va_base + emu.va_size ? at : 0;
}

/* Lowest @align-aligned gap of @size bytes in the VA reservation; 0 if none. */
uint64_t emu_va_find(uint64_t size, uint64_t align)
{
	return va_find_from(emu.va_base, size, align);
}

/* Highest @align-aligned gap of @size bytes; 0 if none. */
static uint64_t va_find_top(uint64_t size, uint64_t align)
{
	uint64_t lo = emu.va_base, best = 0, at;

	for (struct chunk *c = emu.chunks;; c = c->next) {
		uint64_t hi = c ? c->va : emu.va_base + emu.va_size;

		if (hi >= lo + size) {
			at = (hi - size) & ~(align - 1);
			if (at >= lo)
				best = at;
		}
		if (!c)
			return best;
		if (c->va + c->size > lo)
			lo = c->va + c->size;
	}
}

/* Where a chunk of @size bytes goes (@small: one of small allocations). */
static uint64_t chunk_va(uint64_t size, bool small)
{
	const struct emu_placement *pl = emu.place;
	uint64_t va;

	if (!pl->regions)
		return emu_va_find(size, pl->align);
	if (small && va_find_from(emu.va_base, size, pl->align) == emu.va_base)
		return emu.va_base;	/* the first page */
	if (!small && size >= BIG_MIN && (va = va_find_top(size, pl->align)))
		return va;
	if (emu.va_size > MID_BASE && (va = va_find_from(emu.va_base + MID_BASE, size, pl->align)))
		return va;
	return emu_va_find(size, pl->align);
}

void emu_chunk_link(struct chunk *c)
{
	struct chunk **pp;

	for (pp = &emu.chunks; *pp && (*pp)->va < c->va; pp = &(*pp)->next)
		;
	c->next = *pp;
	*pp = c;
}

static CUresult chunk_new(uint64_t size, bool small, struct chunk **out)
{
	struct nvp2p_emu_alloc req = { .size = size };
	struct chunk *c;

	req.va = chunk_va(size, small);
	if (!req.va)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (ioctl(emu.fd, NVP2P_EMU_IOC_ALLOC, &req)) {
		free(c);
		return errno == ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_UNKNOWN;
	}
	c->va = req.va;
	c->size = size;
	c->small = small;
	emu_chunk_link(c);
	*out = c;
	return CUDA_SUCCESS;
}

static void chunk_put(struct chunk *c)
{
	struct nvp2p_emu_free req = { .va = c->va };
	struct chunk **pp;

	if (--c->users || c->resv)	/* a reservation goes by cuMemAddressFree */
		return;
	for (pp = &emu.chunks; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	ioctl(emu.fd, NVP2P_EMU_IOC_FREE, &req);
	free(c);
}

/* First fit of @granules consecutive free granules in a small chunk. */
static int small_fit(struct chunk *c, unsigned int granules)
{
	unsigned int slots = (unsigned int)(c->size / emu.place->granule);
	unsigned int run = 0;

	for (unsigned int i = 0; i < slots; i++) {
		if (c->used[i / 64] & (1ULL << (i % 64)))
			run = 0;
		else if (++run == granules)
			return (int)(i + 1 - granules);
	}
	return -1;
}

static void small_mark(struct chunk *c, uint64_t va, uint64_t size, bool used)
{
	uint64_t g = emu.place->granule;
	unsigned int first = (unsigned int)((va - c->va) / g);
	unsigned int n = (unsigned int)(round_up(size, g) / g);

	for (unsigned int i = first; i < first + n; i++) {
		if (used)
			c->used[i / 64] |= 1ULL << (i % 64);
		else
			c->used[i / 64] &= ~(1ULL << (i % 64));
	}
}

static CUresult small_place(uint64_t size, struct chunk **out, uint64_t *va)
{
	const struct emu_placement *pl = emu.place;
	unsigned int granules = (unsigned int)(round_up(size, pl->granule) / pl->granule);
	struct chunk *c;
	CUresult r;
	int slot;

	for (c = emu.chunks; c; c = c->next) {
		if (c->small && (slot = small_fit(c, granules)) >= 0)
			goto found;
	}
	r = chunk_new(pl->small_chunk, true, &c);
	if (r)
		return r;
	slot = 0;
found:
	*out = c;
	*va = c->va + (uint64_t)slot * pl->granule;
	small_mark(c, *va, size, true);
	return CUDA_SUCCESS;
}

struct alloc *emu_find_alloc(uint64_t ptr)
{
	for (struct alloc *a = emu.allocs; a; a = a->next)
		if (ptr >= a->va && ptr - a->va < a->size)
			return a;
	return NULL;
}

void emu_alloc_link(struct alloc *a)
{
	a->next = emu.allocs;
	emu.allocs = a;
}

void emu_alloc_release(struct alloc *a)
{
	struct alloc **pp;

	for (pp = &emu.allocs; *pp != a; pp = &(*pp)->next)
		;
	*pp = a->next;
	emu_ipc_release(a);
	if (a->vmm) {		/* a mapping: its memory goes, the VA stays */
		struct nvp2p_emu_free req = { .va = a->va };

		ioctl(emu.fd, NVP2P_EMU_IOC_FREE, &req);
		emu_vmm_unmapped(a->vmm);
		chunk_put(a->chunk);
		free(a);
		return;
	}
	if (a->chunk->small) {
		struct nvp2p_emu_sub req = { .va = a->va };

		/* revokes the pins covering it, even where the page stays */
		if (emu.place->subs)
			ioctl(emu.fd, NVP2P_EMU_IOC_SUB_DEL, &req);
		small_mark(a->chunk, a->va, a->size, false);
	}
	chunk_put(a->chunk);
	free(a);
}

void emu_free_ctx_allocs(struct CUctx_st *ctx)
{
	struct alloc *a = emu.allocs, *next;

	for (; a; a = next) {
		next = a->next;
		if (a->ctx == ctx)
			emu_alloc_release(a);
	}
}

EMU_HOOK_IMPL CUresult emu_cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	CUresult r = emu_need_ctx();
	struct alloc *a;
	struct chunk *c;
	uint64_t va;

	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	if (bytesize > emu.mem_size)
		return CUDA_ERROR_OUT_OF_MEMORY;
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&emu.lock);
	if (bytesize <= emu.place->small_max) {
		r = small_place(bytesize, &c, &va);
		if (!r && emu.place->subs) {
			struct nvp2p_emu_sub req = { .va = va, .size = bytesize };

			if (ioctl(emu.fd, NVP2P_EMU_IOC_SUB_ADD, &req)) {
				r = errno == ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_UNKNOWN;
				small_mark(c, va, bytesize, false);
				c->users++;	/* chunk_put: the page goes if empty */
				chunk_put(c);
			}
		}
	} else {
		r = chunk_new(round_up(bytesize, emu.place->align), false, &c);
		va = r ? 0 : c->va;
	}
	if (r) {
		pthread_mutex_unlock(&emu.lock);
		free(a);
		return r;
	}
	c->users++;
	a->va = va;
	a->size = bytesize;
	a->chunk = c;
	a->ctx = emu_current_ctx;
	a->buffer_id = emu.next_buffer_id++;
	a->next = emu.allocs;
	emu.allocs = a;
	pthread_mutex_unlock(&emu.lock);
	*dptr = va;
	return CUDA_SUCCESS;
}
EMU_HOOKABLE(cuMemAlloc_v2, emu_cuMemAlloc_v2);

/* Free and total GPU memory; either pointer may be NULL. */
EMU_EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
	struct nvp2p_emu_info info;
	CUresult r = emu_need_ctx();

	if (r)
		return r;
	if (ioctl(emu.fd, NVP2P_EMU_IOC_INFO, &info))
		return CUDA_ERROR_UNKNOWN;
	if (free_bytes)
		*free_bytes = info.mem_size - info.mem_used;
	if (total)
		*total = info.mem_size;
	return CUDA_SUCCESS;
}

/*
 * As on the H100, the free waits for the work queued on every stream (a
 * queued write to the memory lands first) and, after a sticky error,
 * returns it.
 */
EMU_HOOK_IMPL CUresult emu_cuMemFree_v2(CUdeviceptr dptr)
{
	CUresult r = emu_check_init();
	struct alloc *a;

	if (!r)
		r = emu_sticky();	/* also for 0, as the H100 */
	if (r)
		return r;
	/* Freeing needs no context, but a destroyed one current refuses it,
	 * even a free of 0 (the H100, conformance: primrelease, primreset). */
	if (emu_current_ctx && emu_current_ctx->destroyed)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	if (!dptr)
		return CUDA_SUCCESS;	/* as the driver: freeing 0 is a no-op */
	r = emu_ctx_synchronize(NULL);
	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	a = emu_find_alloc(dptr);
	/* VMM mappings go by cuMemUnmap, opened IPC memory by its close */
	if (!a || a->va != dptr || a->vmm || a->ipc_opens) {
		pthread_mutex_unlock(&emu.lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	emu_alloc_release(a);
	pthread_mutex_unlock(&emu.lock);
	return CUDA_SUCCESS;
}
EMU_HOOKABLE(cuMemFree_v2, emu_cuMemFree_v2);

EMU_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize,
					    CUdeviceptr dptr)
{
	CUresult r = emu_check_init();
	struct alloc *a;

	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	a = emu_find_alloc(dptr);
	if (a) {
		if (pbase)
			*pbase = a->va;
		if (psize)
			*psize = a->size;
	}
	pthread_mutex_unlock(&emu.lock);
	return a ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/* [ptr, ptr + n) must lie in one live allocation. */
bool emu_device_range(uint64_t ptr, size_t n)
{
	struct alloc *a;
	bool ok;

	pthread_mutex_lock(&emu.lock);
	a = emu_find_alloc(ptr);
	ok = a && n <= a->size - (ptr - a->va);
	pthread_mutex_unlock(&emu.lock);
	return ok;
}

CUresult emu_copy(uint64_t dst, uint64_t src, size_t n, uint32_t dir)
{
	struct nvp2p_emu_copy req = { .dst = dst, .src = src, .size = n, .dir = dir };
	CUresult r = emu_need_ctx();

	if (r)
		return r;
	if (!n)
		return CUDA_SUCCESS;
	if (dir != NVP2P_EMU_DTOH && !emu_device_range(dst, n))
		return CUDA_ERROR_INVALID_VALUE;
	if ((dir == NVP2P_EMU_DTOH || dir == NVP2P_EMU_DTOD) && !emu_device_range(src, n))
		return CUDA_ERROR_INVALID_VALUE;
	if (ioctl(emu.fd, NVP2P_EMU_IOC_COPY, &req))
		return errno == EFAULT ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_UNKNOWN;
	return CUDA_SUCCESS;
}

/*
 * The synchronous copies and memsets are work of the legacy NULL stream:
 * they follow what it follows (emu_check_stream).
 */
EMU_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	CUresult r;

	if (!src && n)
		return CUDA_ERROR_INVALID_VALUE;
	r = emu_check_stream(NULL);
	return r ? r : emu_copy(dst, (uint64_t)(uintptr_t)src, n, NVP2P_EMU_HTOD);
}

EMU_EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	CUresult r;

	if (!dst && n)
		return CUDA_ERROR_INVALID_VALUE;
	r = emu_check_stream(NULL);
	return r ? r : emu_copy((uint64_t)(uintptr_t)dst, src, n, NVP2P_EMU_DTOH);
}

EMU_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	CUresult r = emu_check_stream(NULL);

	return r ? r : emu_copy(dst, src, n, NVP2P_EMU_DTOD);
}

EMU_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char uc, size_t n)
{
	CUresult r = emu_check_stream(NULL);

	return r ? r : emu_copy(dst, uc, n, NVP2P_EMU_MEMSET);
}

EMU_PTDS(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2,
	 (CUdeviceptr dst, const void *src, size_t n), (dst, src, n))
EMU_PTDS(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2,
	 (void *dst, CUdeviceptr src, size_t n), (dst, src, n))
EMU_PTDS(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2,
	 (CUdeviceptr dst, CUdeviceptr src, size_t n), (dst, src, n))
EMU_PTDS(cuMemsetD8_v2_ptds, cuMemsetD8_v2,
	 (CUdeviceptr dst, unsigned char uc, size_t n), (dst, uc, n))
