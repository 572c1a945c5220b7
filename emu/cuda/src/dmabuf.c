// SPDX-License-Identifier: MIT
/*
 * dmabuf.c - cuMemGetHandleForAddressRange: a dma-buf of GPU memory
 *
 * nvp2p_emu exports the range (NVP2P_EMU_IOC_DMABUF) in its open licence
 * flavours; DMA_BUF_SUPPORTED answers what the loaded module can do, and
 * where it cannot, the call is CUDA_ERROR_NOT_SUPPORTED.  What the H100
 * showed is reproduced: a range inside one allocation, at host-page (4 KiB)
 * granularity, need not be the whole allocation nor 64 KiB-aligned; the
 * host pages around an allocation that is not page-sized are its own
 * (dmabuf_range); a range past those pages, of freed memory, handle type 0,
 * flags other than the PCIe mapping type, or a NULL handle are
 * CUDA_ERROR_INVALID_VALUE.
 * The PCIe mapping type (CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE) is
 * CUDA_ERROR_NOT_SUPPORTED at driver API 13.0, as the H100 and H200 answer,
 * and accepted from 13.3 (the knob cuda_version).
 *
 * Whether the fd can be mmapped is this library's request to the kernel
 * exporter, as NVIDIA's libcuda passes bAllowMmap to nv-dmabuf.c, and not
 * the mapping type's: at 13.0 no export asks for it, as an H200 with
 * driver API 13.0 refuses mmap of every export it gave; from 13.3 every
 * export asks for it, since gdrcopy 2.6, written for that version, mmaps
 * the default exports of a GPU that is not coherent.
 */
#include <errno.h>
#include <sys/ioctl.h>

#include "cuda_emu_internal.h"
#include "nvp2p_emu.h"

/*
 * [ptr, ptr + n) may be exported when it lies in the host pages of one live
 * cuMemAlloc allocation: [its start rounded down to 4 KiB, its end rounded
 * up to 4 KiB).  The driver takes only ranges aligned to the host page, so
 * a caller rounds an allocation that is not page-sized out to its pages, as
 * UCX 1.22 does for every registration through dma-buf (ucx_perftest's
 * buffers are the message size plus 8 bytes).  Nothing further of the
 * allocation's 2 MiB chunk is taken, since the rest of the chunk may be
 * freed neighbours that the importer could then touch after cuMemFree.  A
 * range past those pages, or of freed memory only, stays
 * CUDA_ERROR_INVALID_VALUE as on the H100.  VMM mappings and opened IPC
 * memory keep their exact bounds: their chunk is an address reservation or
 * another process's memory.
 */
static bool dmabuf_range(uint64_t ptr, size_t n)
{
	bool ok = emu_device_range(ptr, n);

	if (ok)
		return true;
	pthread_mutex_lock(&emu.lock);
	for (struct alloc *a = emu.allocs; a && !ok; a = a->next) {
		struct chunk *c = a->chunk;
		uint64_t lo = a->va & ~(uint64_t)4095;
		uint64_t hi = (a->va + a->size + 4095) & ~(uint64_t)4095;

		if (!c || c->resv || a->vmm || a->ipc_opens || !a->ctx)
			continue;
		ok = ptr >= lo && ptr < hi && n <= hi - ptr;
	}
	pthread_mutex_unlock(&emu.lock);
	return ok;
}

EMU_EXPORT CUresult cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr,
						  size_t size,
						  CUmemRangeHandleType type,
						  unsigned long long flags)
{
	struct nvp2p_emu_dmabuf req = { .va = dptr, .size = size };
	const unsigned long long pcie = CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE;
	CUresult r = emu_need_ctx();

	if (r)
		return r;
	if (!handle || type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD ||
	    (flags & ~pcie))
		return CUDA_ERROR_INVALID_VALUE;
	if (!size || (dptr | size) % 4096 || !dmabuf_range(dptr, size))
		return CUDA_ERROR_INVALID_VALUE;
	if ((flags & pcie) && emu.cuda_version < NVP2P_EMU_CUDA_13_3)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (flags & pcie)
		req.flags |= NVP2P_EMU_DMABUF_PCIE;
	if (emu.cuda_version >= NVP2P_EMU_CUDA_13_3)
		req.flags |= NVP2P_EMU_DMABUF_ALLOW_MMAP;
	if (!(emu.caps & NVP2P_EMU_CAP_DMABUF))
		return CUDA_ERROR_NOT_SUPPORTED;
	if (ioctl(emu.fd, NVP2P_EMU_IOC_DMABUF, &req))
		return errno == EOPNOTSUPP || errno == ENOTTY ? CUDA_ERROR_NOT_SUPPORTED :
		       errno == EINVAL ? CUDA_ERROR_INVALID_VALUE :
		       errno == ENOMEM || errno == EMFILE ? CUDA_ERROR_OUT_OF_MEMORY :
		       CUDA_ERROR_UNKNOWN;
	*(int *)handle = req.fd;
	return CUDA_SUCCESS;
}
