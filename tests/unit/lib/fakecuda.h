/* SPDX-License-Identifier: MIT */
/*
 * fakecuda.h - control interface of the fake CUDA driver used by the unit
 * tests (libfakecuda.so, loaded by libgdirect through GDIRECT_LIBCUDA).
 *
 * "Device memory" is host memory inside one reserved arena, allocated
 * first-fit so that a freed VA is handed out again (with a new BUFFER_ID),
 * small allocations packed at 4 KiB steps inside 64 KiB pages, as on real
 * GPUs.
 */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include <stddef.h>
#include <stdint.h>

/* Called (outside the fake's lock) before memory is freed, like the NVIDIA
 * driver's free callback. */
typedef void (*fake_free_listener)(uint64_t base, uint64_t size, void *arg);
void fake_cuda_set_free_listener(fake_free_listener fn, void *arg);

uint64_t fake_cuda_alloc(size_t size);		/* 0 on failure */
uint64_t fake_cuda_alloc_managed(size_t size);
/* Pinned host memory, as cuMemAllocHost gives it: MEMORY_TYPE host. */
uint64_t fake_cuda_alloc_host(size_t size);
void fake_cuda_reset(void);			/* free everything, no callbacks */

/* The live allocation holding addr: its buffer id, or 0 if none. */
uint64_t fake_cuda_buffer_id_at(uint64_t addr);
/* SYNC_MEMOPS settings applied to the allocation holding addr. */
unsigned fake_cuda_sync_count(uint64_t addr);
/* Attribute queries and cuMemGetAddressRange calls so far. */
unsigned long fake_cuda_queries(void);
unsigned long fake_cuda_frees(void);
/* Calls of cuMemFreeAsync_ptsz, the per-thread-stream variant. */
unsigned long fake_cuda_ptsz_frees(void);
/* fn runs inside the next last cuDevicePrimaryCtxRelease, after it freed
 * everything: what another thread may do at that moment. */
void fake_cuda_after_last_release(void (*fn)(void));

#endif
