/* SPDX-License-Identifier: MIT */
/*
 * guest_cuda.h - the CUDA context of a guest test (header only)
 *
 * guest_cuda_init(): cuInit, device 0's primary context retained and made
 * current; 0, or -1 at the first call that fails.  After fork() the child
 * calls it again.
 */
#ifndef GDIRECT_GUEST_CUDA_H
#define GDIRECT_GUEST_CUDA_H

#include <cuda.h>

static inline int guest_cuda_init(void)
{
	CUdevice dev;
	CUcontext ctx;

	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS)
		return -1;
	if (cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
		return -1;
	return 0;
}

#endif /* GDIRECT_GUEST_CUDA_H */
