// SPDX-License-Identifier: MIT
/*
 * copy.c - cuMemcpy (unified addressing), 16- and 32-bit memsets, the
 * asynchronous copies and memsets, and cuMemAllocPitch
 *
 * Asynchronous operations wait, in the caller, for what their stream's
 * next operation follows (emu_check_stream), then run at once; the
 * synchronous ones are the legacy NULL stream's.
 */
#include <string.h>

#include "cuda_emu_internal.h"
#include "hookable.h"
#include "nvp2p_emu.h"

static bool is_device(uint64_t p)
{
	bool dev;

	pthread_mutex_lock(&emu.lock);
	dev = emu_find_alloc(p) != NULL;
	pthread_mutex_unlock(&emu.lock);
	return dev;
}

/* The kind of each pointer decides the copy, as with UVA. */
static CUresult copy_any(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	bool dd, sd;

	if (!n)
		return CUDA_SUCCESS;
	if (!dst || !src)
		return CUDA_ERROR_INVALID_VALUE;
	dd = is_device(dst);
	sd = is_device(src);
	if (!dd && !sd) {
		memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
		return CUDA_SUCCESS;
	}
	return emu_copy(dst, src, n, dd && sd ? NVP2P_EMU_DTOD :
				     dd ? NVP2P_EMU_HTOD : NVP2P_EMU_DTOH);
}

EMU_EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	CUresult r = emu_check_stream(NULL);	/* legacy stream work */

	return r ? r : copy_any(dst, src, n);
}

/* Fill with a 2- or 4-byte pattern: a page of it, copied in over and over. */
static CUresult memset_pattern(CUstream s, CUdeviceptr dst, const void *pat,
			       size_t width, size_t count)
{
	unsigned char page[4096];
	size_t bytes = count * width, done = 0;
	CUresult r = emu_check_stream(s);

	if (r)
		return r;
	if (dst % width || count > SIZE_MAX / width)
		return CUDA_ERROR_INVALID_VALUE;
	if (!count)
		return CUDA_SUCCESS;
	if (!emu_device_range(dst, bytes))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(page); i += width)
		memcpy(page + i, pat, width);
	while (done < bytes) {
		size_t n = bytes - done < sizeof(page) ? bytes - done : sizeof(page);

		r = emu_copy(dst + done, (uint64_t)(uintptr_t)page, n, NVP2P_EMU_HTOD);
		if (r)
			return r;
		done += n;
	}
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short us, size_t n)
{
	return memset_pattern(NULL, dst, &us, sizeof(us), n);
}

EMU_EXPORT CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int ui, size_t n)
{
	return memset_pattern(NULL, dst, &ui, sizeof(ui), n);
}

EMU_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src,
					 size_t n, CUstream s)
{
	CUresult r = emu_check_stream(s);

	if (r)
		return r;
	if (!src && n)
		return CUDA_ERROR_INVALID_VALUE;
	return emu_copy(dst, (uint64_t)(uintptr_t)src, n, NVP2P_EMU_HTOD);
}

EMU_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n,
					 CUstream s)
{
	CUresult r = emu_check_stream(s);

	if (r)
		return r;
	if (!dst && n)
		return CUDA_ERROR_INVALID_VALUE;
	return emu_copy((uint64_t)(uintptr_t)dst, src, n, NVP2P_EMU_DTOH);
}

EMU_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src,
					 size_t n, CUstream s)
{
	CUresult r = emu_check_stream(s);

	return r ? r : emu_copy(dst, src, n, NVP2P_EMU_DTOD);
}

EMU_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n,
				  CUstream s)
{
	CUresult r = emu_check_stream(s);

	return r ? r : copy_any(dst, src, n);
}

EMU_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n,
				    CUstream s)
{
	CUresult r = emu_check_stream(s);

	return r ? r : emu_copy(dst, uc, n, NVP2P_EMU_MEMSET);
}

EMU_EXPORT CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short us,
				     size_t n, CUstream s)
{
	return memset_pattern(s, dst, &us, sizeof(us), n);
}

EMU_EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int ui, size_t n,
				     CUstream s)
{
	return memset_pattern(s, dst, &ui, sizeof(ui), n);
}

/*
 * Rows padded to 512 bytes, as the driver pads them on this GPU
 * (TEXTURE_ALIGNMENT); element sizes 4, 8 and 16 only.
 */
EMU_HOOK_IMPL CUresult emu_cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch,
					      size_t width, size_t height,
					      unsigned int elem)
{
	size_t p;
	CUresult r;

	if (!dptr || !pitch || !width || !height ||
	    (elem != 4 && elem != 8 && elem != 16))
		return CUDA_ERROR_INVALID_VALUE;
	p = (width + 511) & ~(size_t)511;
	if (p < width || height > SIZE_MAX / p)
		return CUDA_ERROR_INVALID_VALUE;
	r = emu_cuMemAlloc_v2(dptr, p * height);
	if (!r)
		*pitch = p;
	return r;
}
EMU_HOOKABLE(cuMemAllocPitch_v2, emu_cuMemAllocPitch_v2);

/* The per-thread-default-stream names of the same calls. */
EMU_PTDS(cuMemcpy_ptds, cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t n),
	 (dst, src, n))
EMU_PTDS(cuMemcpyAsync_ptsz, cuMemcpyAsync,
	 (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s), (dst, src, n, s))
EMU_PTDS(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync_v2,
	 (CUdeviceptr dst, const void *src, size_t n, CUstream s), (dst, src, n, s))
EMU_PTDS(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync_v2,
	 (void *dst, CUdeviceptr src, size_t n, CUstream s), (dst, src, n, s))
EMU_PTDS(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync_v2,
	 (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s), (dst, src, n, s))
EMU_PTDS(cuMemsetD16_v2_ptds, cuMemsetD16_v2,
	 (CUdeviceptr dst, unsigned short us, size_t n), (dst, us, n))
EMU_PTDS(cuMemsetD32_v2_ptds, cuMemsetD32_v2,
	 (CUdeviceptr dst, unsigned int ui, size_t n), (dst, ui, n))
EMU_PTDS(cuMemsetD8Async_ptsz, cuMemsetD8Async,
	 (CUdeviceptr dst, unsigned char uc, size_t n, CUstream s), (dst, uc, n, s))
EMU_PTDS(cuMemsetD16Async_ptsz, cuMemsetD16Async,
	 (CUdeviceptr dst, unsigned short us, size_t n, CUstream s), (dst, us, n, s))
EMU_PTDS(cuMemsetD32Async_ptsz, cuMemsetD32Async,
	 (CUdeviceptr dst, unsigned int ui, size_t n, CUstream s), (dst, ui, n, s))
