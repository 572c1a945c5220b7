// SPDX-License-Identifier: MIT
/*
 * host.c - page-locked host memory: cuMemAllocHost, cuMemHostAlloc,
 * cuMemFreeHost, cuMemHostRegister/Unregister, cuMemHostGetDevicePointer
 *
 * Host memory is in the unified address space at its own address (the
 * device pointer of a host allocation is the host pointer, as with UVA on
 * a real GPU).  Allocations are 2 MiB-aligned anonymous mappings, as the
 * driver's are; registrations keep the caller's range, aligned or not.
 * Nothing is pinned: no GPU reads this memory, only our copies, which run
 * on the CPU.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cuda_emu_internal.h"
#include "hookable.h"

#define HOST_ALIGN	(2u << 20)
#define HOST_ALLOC_FLAGS	0x7u	/* PORTABLE, DEVICEMAP, WRITECOMBINED */
#define HOST_REGISTER_FLAGS	0xfu	/* PORTABLE, DEVICEMAP, IOMEMORY, READ_ONLY */

static struct hostmem *hostmems;	/* under emu.lock */

struct hostmem *emu_find_hostmem(uint64_t ptr)
{
	for (struct hostmem *h = hostmems; h; h = h->next)
		if (ptr >= h->va && ptr - h->va < h->size)
			return h;
	return NULL;
}

static CUresult host_alloc(void **pp, size_t size, unsigned int flags)
{
	CUresult r = emu_need_ctx();
	struct hostmem *h;
	size_t len;
	uint8_t *m, *a;

	if (!pp || (flags & ~HOST_ALLOC_FLAGS))
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	if (!size) {		/* as the driver: success, nothing allocated */
		*pp = NULL;
		return CUDA_SUCCESS;
	}
	len = (size + HOST_ALIGN - 1) & ~(size_t)(HOST_ALIGN - 1);
	if (len < size)
		return CUDA_ERROR_OUT_OF_MEMORY;
	h = calloc(1, sizeof(*h));
	if (!h)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m = mmap(NULL, len + HOST_ALIGN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		free(h);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	a = (uint8_t *)(((uintptr_t)m + HOST_ALIGN - 1) & ~(uintptr_t)(HOST_ALIGN - 1));
	if (a > m)
		munmap(m, (size_t)(a - m));
	if (a + len < m + len + HOST_ALIGN)
		munmap(a + len, (size_t)(m + len + HOST_ALIGN - (a + len)));
	h->va = (uint64_t)(uintptr_t)a;
	h->size = size;
	h->map_size = len;
	h->allocated = true;
	h->flags = flags;
	h->ctx = emu_current_ctx;
	pthread_mutex_lock(&emu.lock);
	h->buffer_id = emu.next_buffer_id++;
	h->next = hostmems;
	hostmems = h;
	pthread_mutex_unlock(&emu.lock);
	*pp = a;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuMemHostAlloc(void **pp, size_t size, unsigned int flags)
{
	return host_alloc(pp, size, flags);
}

EMU_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t size)
{
	return host_alloc(pp, size, 0);
}

static void hostmem_unlink(struct hostmem *h)
{
	struct hostmem **pp;

	for (pp = &hostmems; *pp != h; pp = &(*pp)->next)
		;
	*pp = h->next;
}

/*
 * Whether p names host memory of ours, one that @allocated says (an
 * allocation, else a registration), starting at p.
 */
static bool hostmem_at(void *p, bool allocated)
{
	struct hostmem *h;
	bool ok;

	pthread_mutex_lock(&emu.lock);
	h = emu_find_hostmem((uint64_t)(uintptr_t)p);
	ok = h && h->allocated == allocated && h->va == (uint64_t)(uintptr_t)p;
	pthread_mutex_unlock(&emu.lock);
	return ok;
}

/*
 * Freeing or unregistering page-locked memory waits for the work queued on
 * every stream first, so a queued write to it lands rather than faults
 * (measured on the H100: the conformance sections hostfree, hostunreg).
 * Then the lookup is made again: another thread may have freed it meanwhile.
 * After a sticky error both return it, as cuMemFree does (section sticky).
 */
EMU_HOOK_IMPL CUresult emu_cuMemFreeHost(void *p)
{
	CUresult r = emu_check_init();
	struct hostmem *h;

	if (!r)
		r = emu_sticky();
	if (r)
		return r;
	if (hostmem_at(p, true))
		emu_ctx_synchronize(NULL);
	pthread_mutex_lock(&emu.lock);
	h = emu_find_hostmem((uint64_t)(uintptr_t)p);
	if (!h || !h->allocated || h->va != (uint64_t)(uintptr_t)p) {
		pthread_mutex_unlock(&emu.lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	hostmem_unlink(h);
	pthread_mutex_unlock(&emu.lock);
	munmap(p, h->map_size);
	free(h);
	return CUDA_SUCCESS;
}
EMU_HOOKABLE(cuMemFreeHost, emu_cuMemFreeHost);

EMU_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned int flags)
{
	CUresult r = emu_need_ctx();
	uint64_t va = (uint64_t)(uintptr_t)p;
	struct hostmem *h;

	if (!p || !size || (flags & ~HOST_REGISTER_FLAGS) || va + size < va)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	h = calloc(1, sizeof(*h));
	if (!h)
		return CUDA_ERROR_OUT_OF_MEMORY;
	h->va = va;
	h->size = size;
	h->map_size = size;
	h->flags = flags;
	h->ctx = emu_current_ctx;
	pthread_mutex_lock(&emu.lock);
	for (struct hostmem *o = hostmems; o; o = o->next) {
		if (va < o->va + o->size && o->va < va + size) {
			pthread_mutex_unlock(&emu.lock);
			free(h);
			return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
		}
	}
	h->buffer_id = emu.next_buffer_id++;
	h->next = hostmems;
	hostmems = h;
	pthread_mutex_unlock(&emu.lock);
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuMemHostUnregister(void *p)
{
	CUresult r = emu_check_init();
	struct hostmem *h;

	if (!r)
		r = emu_sticky();
	if (r)
		return r;
	if (hostmem_at(p, false))
		emu_ctx_synchronize(NULL);	/* as cuMemFreeHost */
	pthread_mutex_lock(&emu.lock);
	h = emu_find_hostmem((uint64_t)(uintptr_t)p);
	if (!h || h->allocated) {
		pthread_mutex_unlock(&emu.lock);
		return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
	}
	if (h->va != (uint64_t)(uintptr_t)p) {
		pthread_mutex_unlock(&emu.lock);
		return CUDA_ERROR_INVALID_VALUE;	/* inside a registration */
	}
	hostmem_unlink(h);
	pthread_mutex_unlock(&emu.lock);
	free(h);
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *dptr, void *p,
						 unsigned int flags)
{
	CUresult r = emu_check_init();
	bool known;

	if (!dptr || !p || flags)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	known = emu_find_hostmem((uint64_t)(uintptr_t)p) != NULL;
	pthread_mutex_unlock(&emu.lock);
	if (!known)
		return CUDA_ERROR_INVALID_VALUE;
	*dptr = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

/* The flags an allocation or registration was made with. */
EMU_EXPORT CUresult cuMemHostGetFlags(unsigned int *flags, void *p)
{
	CUresult r = emu_check_init();
	struct hostmem *h;

	if (!flags || !p)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	h = emu_find_hostmem((uint64_t)(uintptr_t)p);
	if (h)
		*flags = h->flags;
	pthread_mutex_unlock(&emu.lock);
	return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
