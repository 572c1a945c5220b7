/* SPDX-License-Identifier: MIT */
/*
 * fake_cuda.h - the fake CUDA driver of the unit tests and the benchmarks.
 *
 * It fakes the CUDA driver API (include/nvidia/cuda.h) for one device,
 * device 0: allocation and free, pointer attributes, primary contexts, a
 * per-thread current context, device queries and cuGetProcAddress_v2.
 * "Device memory" is host memory in one reserved arena, allocated first
 * fit, so that a freed address is handed out again with a new BUFFER_ID;
 * small allocations are packed at 4 KiB steps inside 64 KiB pages, as on
 * real GPUs.  Besides cuMemAlloc's memory it has managed, pinned host and
 * VMM memory (made by the calls below, not by cuMemCreate), whose
 * SYNC_MEMOPS and IS_GPU_DIRECT_RDMA_CAPABLE answers are those measured on
 * an H200 with driver 580.159.04: cuPointerSetAttribute(SYNC_MEMOPS)
 * succeeds on device, managed and host memory, returns
 * CUDA_ERROR_NOT_SUPPORTED on VMM memory (which then reads 0) and
 * CUDA_ERROR_INVALID_VALUE on memory it does not know; managed memory
 * reads 1 before any setting; RDMA_CAPABLE reads 1 for device memory and
 * VMM memory created gpuDirectRDMACapable, 0 for the rest.
 * cuMemRetainAllocationHandle knows VMM memory only.  Lookups are binary searches, so a benchmark with 65536
 * allocations pays a small constant for each driver call.
 *
 * cuMemGetHandleForAddressRange exports a dma-buf as the emulated driver
 * does (emu/cuda/src/dmabuf.c): a current context is needed
 * (CUDA_ERROR_INVALID_CONTEXT), and a range of device memory inside one
 * allocation at 4 KiB granularity, handle type DMA_BUF_FD and flags 0 or
 * the PCIe mapping type, else CUDA_ERROR_INVALID_VALUE.  The descriptor is
 * a memfd named "fake_dmabuf" of the range's size: its own memory, not the
 * arena's, so a test sees what a mapping of it wrote but the allocation
 * does not.  fake_cuda_set_dmabuf_mmap(false) hands out a read-only
 * descriptor instead, which a shared writable mmap refuses (EACCES), as a
 * driver before 13.3 refuses to map its dma-bufs.
 *
 * It records, under its lock, attribute queries, frees and per-thread
 * stream frees (the fake_cuda_* counters), and, as plain data for a test
 * that reads it from one thread, what the runtime passed (fake_cuda_calls).
 * A test configures it through the calls below; a free listener stands
 * for nvidia.ko's revocation of third-party pins (tests/fakes/
 * fake_backend.h takes it).
 *
 * It never runs kernels, never copies in cuMemcpyAsync, and never offers
 * cuMemcpy, cuMemAllocManaged or the IPC calls: the runtime's tests rely
 * on a driver missing entry points.  A device attribute's value is its
 * number (so a test can tell which attribute filled which field); those
 * above 140 are refused.
 *
 * One source builds two files: libfakecuda.so, which tests and benchmarks
 * link (for the calls below) and libgdirect dlopens through
 * GDIRECT_LIBCUDA, and fakecuda_rt.so, the same with SONAME libcuda.so.1,
 * which the runtime's test loads by path so that the runtime's dlopen of
 * "libcuda.so.1" finds it.  The second name lacks "lib" because the guest
 * initramfs packs every lib*.so* of the build.
 */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

/* Called, outside the fake's lock, before memory is freed, as the NVIDIA
 * driver calls its free callbacks. */
typedef void (*fake_free_listener)(uint64_t base, uint64_t size, void *arg);
/* Sets the one free listener (NULL: none). */
void fake_cuda_set_free_listener(fake_free_listener fn, void *arg);

/* Sizes the arena (default 1 GiB, readable): 0, or -EBUSY once it exists.
 * address_only reserves it PROT_NONE, for benchmarks that never copy. */
int fake_cuda_set_arena(uint64_t bytes, bool address_only);
/* A device allocation of size bytes; 0 on failure. */
uint64_t fake_cuda_alloc(size_t size);
/* A device allocation followed by at least gap bytes no allocation takes. */
uint64_t fake_cuda_alloc_spaced(size_t size, size_t gap);
/* Managed memory: MEMORY_TYPE unified, IS_MANAGED true. */
uint64_t fake_cuda_alloc_managed(size_t size);
/* Pinned host memory, as cuMemAllocHost gives it: MEMORY_TYPE host. */
uint64_t fake_cuda_alloc_host(size_t size);
/* VMM memory, as cuMemCreate + cuMemMap give it (size rounded up to 64
 * KiB): MEMORY_TYPE device; rdma is allocFlags.gpuDirectRDMACapable. */
uint64_t fake_cuda_alloc_vmm(size_t size, bool rdma);
/* Later SYNC_MEMOPS settings on non-VMM memory fail with r (0: succeed). */
void fake_cuda_fail_sync_memops(CUresult r);
/* Forgets every allocation without calling the free listener. */
void fake_cuda_reset(void);
/* cuDriverGetVersion's answer from now on (default CUDA_VERSION). */
void fake_cuda_set_driver_version(int v);
/* cuDeviceGetAttribute(a)'s answer from now on is v (default: a itself);
 * fake_cuda_clear_device_attributes() forgets every such setting. */
void fake_cuda_set_device_attribute(CUdevice_attribute a, int v);
void fake_cuda_clear_device_attributes(void);
/* Later cuMemGetHandleForAddressRange calls fail with r (0: succeed). */
void fake_cuda_fail_dmabuf(CUresult r);
/* Whether the exported descriptors can be mmap'ed writable (default yes). */
void fake_cuda_set_dmabuf_mmap(bool ok);
/* Successful exports so far, and the flags the last call passed. */
unsigned long fake_cuda_dmabuf_exports(void);
unsigned long long fake_cuda_dmabuf_last_flags(void);

/* The live allocation holding addr: its buffer id, or 0 if none. */
uint64_t fake_cuda_buffer_id_at(uint64_t addr);
/* SYNC_MEMOPS settings applied to the allocation holding addr. */
unsigned fake_cuda_sync_count(uint64_t addr);
/* Attribute queries and cuMemGetAddressRange calls so far. */
unsigned long fake_cuda_queries(void);
/* Successful frees so far, of any kind. */
unsigned long fake_cuda_frees(void);
/* Calls of cuMemFreeAsync_ptsz, the per-thread-stream variant. */
unsigned long fake_cuda_ptsz_frees(void);
/* fn runs inside the next last cuDevicePrimaryCtxRelease, after it freed
 * everything: what another thread may do at that moment. */
void fake_cuda_after_last_release(void (*fn)(void));

/* What callers passed, for the runtime's test (found there by dlsym). */
struct fake_cuda_calls {
	int inits, retains, allocs;	/* cuInit, PrimaryCtxRetain, cuMemAlloc */
	int free_calls;			/* cuMemFree calls, failed ones too */
	CUstream last_stream;		/* of the last cuMemcpyAsync */
	CUdeviceptr last_alloc, last_free;
};
extern struct fake_cuda_calls fake_cuda_calls;

#endif
