// SPDX-License-Identifier: MIT
/*
 * ipc.c - interprocess memory and event handles (cuIpc*)
 *
 * A memory handle names one cuMemAlloc allocation: nvp2p_emu's export
 * handle of the GPU pages it lies in (NVP2P_EMU_IOC_EXPORT), and where in
 * them it lies.  Opening it in another process imports those pages at a VA
 * of that process (NVP2P_EMU_IOC_IMPORT) and returns the allocation's
 * address there.  What the H100 transcript shows is reproduced: an interior
 * pointer gives the allocation's handle; the flags must be
 * CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS; the exporting process cannot open its
 * own handle (INVALID_CONTEXT); a handle of memory nobody holds any more is
 * NOT_PERMITTED; the exporter's cuMemFree leaves the memory to the processes
 * that opened it, and the handle can be opened while one of them holds it;
 * cuMemFree of opened memory is INVALID_VALUE; closing twice is
 * INVALID_VALUE.  Opening a handle the process holds open already returns
 * the same address and counts the opens (CUDA's documented behaviour).
 *
 * An event handle names an event created with CU_EVENT_INTERPROCESS (and,
 * as the driver demands, CU_EVENT_DISABLE_TIMING).  Work completes when it
 * is issued here, so every recorded event is complete: an opened event is a
 * new event of the opener, complete at once, and waiting on it never
 * blocks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cuda_emu_internal.h"
#include "nvp2p_emu.h"

#define IPC_MEM_MAGIC	0x4d494447u	/* "GDIM" */
#define IPC_EVENT_MAGIC	0x45494447u	/* "GDIE" */
#define IPC_VERSION	1u

/* What a CUipcMemHandle holds (64 bytes, opaque to the caller). */
struct ipc_mem {
	uint32_t magic;
	uint32_t version;
	uint64_t handle;	/* nvp2p_emu's export handle of the allocation */
	uint64_t chunk_size;	/* of the pages it lies in */
	uint64_t offset;	/* of the allocation in them */
	uint64_t size;		/* of the allocation */
	uint8_t uuid[16];	/* of the GPU */
	uint32_t pid;		/* exporter, for the event handles */
	uint32_t reserved;
};

/* What a CUipcEventHandle holds. */
struct ipc_event {
	uint32_t magic;
	uint32_t version;
	uint32_t pid;		/* exporter */
	uint32_t flags;		/* of the event */
	uint64_t serial;
	uint8_t uuid[16];
	uint8_t reserved[24];
};

_Static_assert(sizeof(struct ipc_mem) <= CU_IPC_HANDLE_SIZE, "handle size");
_Static_assert(sizeof(struct ipc_event) <= CU_IPC_HANDLE_SIZE, "handle size");

static uint64_t next_event_serial = 1;	/* under emu.lock */

EMU_EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *ph, CUdeviceptr dptr)
{
	struct nvp2p_emu_export req = { 0 };
	CUresult r = emu_need_ctx();
	struct ipc_mem m = { 0 };
	struct alloc *a;

	if (r)
		return r;
	if (!ph)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&emu.lock);
	a = emu_find_alloc(dptr);
	/* cuMemAlloc memory only: no VMM mapping, no opened memory */
	if (!a || a->vmm || a->ipc_opens || a->chunk->resv) {
		pthread_mutex_unlock(&emu.lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	req.va = a->va;
	req.size = a->size;
	if (ioctl(emu.fd, NVP2P_EMU_IOC_EXPORT, &req)) {
		r = errno == ENOTTY ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_UNKNOWN;
		pthread_mutex_unlock(&emu.lock);
		return r;
	}
	m.magic = IPC_MEM_MAGIC;
	m.version = IPC_VERSION;
	a->ipc_handle = req.handle;	/* withdrawn when it is freed */
	m.handle = req.handle;
	m.chunk_size = req.alloc_size;
	m.offset = a->va - req.base;
	m.size = a->size;
	memcpy(m.uuid, emu.uuid, sizeof(m.uuid));
	m.pid = (uint32_t)getpid();
	pthread_mutex_unlock(&emu.lock);
	memset(ph, 0, sizeof(*ph));
	memcpy(ph->reserved, &m, sizeof(m));
	return CUDA_SUCCESS;
}

/* An allocation this process opened from @m already (emu.lock held). */
static struct alloc *find_opened(const struct ipc_mem *m)
{
	for (struct alloc *a = emu.allocs; a; a = a->next)
		if (a->ipc_opens && a->ipc_handle == m->handle)
			return a;
	return NULL;
}

static CUresult import_errno(int err)
{
	switch (err) {
	case ENOENT:
		return CUDA_ERROR_NOT_PERMITTED;	/* as the driver: freed */
	case ELOOP:
		return CUDA_ERROR_INVALID_CONTEXT;	/* the exporter itself */
	case ENOMEM:
		return CUDA_ERROR_OUT_OF_MEMORY;
	case ENOTTY:
		return CUDA_ERROR_NOT_SUPPORTED;
	case EINVAL:
		return CUDA_ERROR_INVALID_VALUE;
	default:
		return CUDA_ERROR_UNKNOWN;
	}
}

EMU_EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle h,
					  unsigned int flags)
{
	struct nvp2p_emu_import req = { 0 };
	CUresult r = emu_need_ctx();
	struct ipc_mem m;
	struct chunk *c;
	struct alloc *a;

	if (r)
		return r;
	memcpy(&m, h.reserved, sizeof(m));
	if (!pdptr || flags != CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS ||
	    m.magic != IPC_MEM_MAGIC || m.version != IPC_VERSION ||
	    !m.size || !m.chunk_size || m.chunk_size % CHUNK_PAGE ||
	    m.offset >= m.chunk_size || m.size > m.chunk_size - m.offset)
		return CUDA_ERROR_INVALID_VALUE;
	if (memcmp(m.uuid, emu.uuid, sizeof(m.uuid)))
		return CUDA_ERROR_INVALID_VALUE;	/* another GPU's */
	pthread_mutex_lock(&emu.lock);
	a = find_opened(&m);
	if (a) {
		a->ipc_opens++;
		*pdptr = a->va;
		pthread_mutex_unlock(&emu.lock);
		return CUDA_SUCCESS;
	}
	a = calloc(1, sizeof(*a));
	c = calloc(1, sizeof(*c));
	req.va = emu_va_find(m.chunk_size, CHUNK_PAGE);
	if (!a || !c || !req.va) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto fail;
	}
	req.handle = m.handle;
	req.size = m.chunk_size;
	if (ioctl(emu.fd, NVP2P_EMU_IOC_IMPORT, &req)) {
		r = import_errno(errno);
		goto fail;
	}
	c->va = req.va;
	c->size = m.chunk_size;
	c->users = 1;
	emu_chunk_link(c);
	a->va = req.va + req.offset;
	a->size = req.range_size;
	a->chunk = c;
	a->ctx = emu_current_ctx;
	a->buffer_id = emu.next_buffer_id++;
	a->ipc_opens = 1;
	a->ipc_handle = m.handle;
	emu_alloc_link(a);
	*pdptr = a->va;
	pthread_mutex_unlock(&emu.lock);
	return CUDA_SUCCESS;
fail:
	pthread_mutex_unlock(&emu.lock);
	free(c);
	free(a);
	return r;
}

/* The name of CUDA 4.0 to 10.x, with the same behaviour. */
#undef cuIpcOpenMemHandle
EMU_EXPORT CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle h,
				       unsigned int flags)
{
	return cuIpcOpenMemHandle_v2(pdptr, h, flags);
}

EMU_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
	CUresult r = emu_need_ctx();
	struct alloc *a;

	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	a = emu_find_alloc(dptr);
	if (!a || !a->ipc_opens || a->va != dptr) {
		pthread_mutex_unlock(&emu.lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (!--a->ipc_opens)
		emu_alloc_release(a);	/* frees the import: its pins go */
	pthread_mutex_unlock(&emu.lock);
	return CUDA_SUCCESS;
}

void emu_ipc_release(struct alloc *a)
{
	struct nvp2p_emu_withdraw req = { .handle = a->ipc_handle };

	/* ours, exported: nobody may open it from now on */
	if (a->ipc_handle && !a->ipc_opens)
		ioctl(emu.fd, NVP2P_EMU_IOC_WITHDRAW, &req);
}

EMU_EXPORT CUresult cuIpcGetEventHandle(CUipcEventHandle *ph, CUevent e)
{
	CUresult r = emu_need_ctx();
	struct ipc_event v = { 0 };
	int flags;

	if (r)
		return r;
	if (!ph)
		return CUDA_ERROR_INVALID_VALUE;
	flags = emu_event_flags(e);
	if (flags < 0 || !(flags & CU_EVENT_INTERPROCESS))
		return CUDA_ERROR_INVALID_HANDLE;
	v.magic = IPC_EVENT_MAGIC;
	v.version = IPC_VERSION;
	v.pid = (uint32_t)getpid();
	v.flags = (uint32_t)flags;
	pthread_mutex_lock(&emu.lock);
	v.serial = next_event_serial++;
	memcpy(v.uuid, emu.uuid, sizeof(v.uuid));
	pthread_mutex_unlock(&emu.lock);
	memset(ph, 0, sizeof(*ph));
	memcpy(ph->reserved, &v, sizeof(v));
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuIpcOpenEventHandle(CUevent *pe, CUipcEventHandle h)
{
	CUresult r = emu_need_ctx();
	struct ipc_event v;

	if (r)
		return r;
	if (!pe)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&v, h.reserved, sizeof(v));
	/* as the driver: a handle that maps nothing is MAP_FAILED */
	if (v.magic != IPC_EVENT_MAGIC || v.version != IPC_VERSION ||
	    memcmp(v.uuid, emu.uuid, sizeof(v.uuid)))
		return CUDA_ERROR_MAP_FAILED;
	if (v.pid == (uint32_t)getpid())
		return CUDA_ERROR_INVALID_CONTEXT;
	return cuEventCreate(pe, v.flags & (CU_EVENT_INTERPROCESS |
					    CU_EVENT_DISABLE_TIMING |
					    CU_EVENT_BLOCKING_SYNC));
}
