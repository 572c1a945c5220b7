// SPDX-License-Identifier: MIT
/*
 * cuda.c - the five CUDA driver API calls the benchmarks need
 *
 * Declared here with the CUDA driver API's documented types (CUresult an
 * int, 0 = CUDA_SUCCESS; CUdevice an int; CUdeviceptr 64 bits on 64-bit
 * hosts) so the tool builds without CUDA headers.
 */
#include "tool_cuda.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef unsigned long long CUdeviceptr;

static struct {
	void *lib;
	CUdevice dev;
	CUcontext ctx;
	CUresult (*init)(unsigned int);
	CUresult (*device_get)(CUdevice *, int);
	CUresult (*retain)(CUcontext *, CUdevice);
	CUresult (*release)(CUdevice);
	CUresult (*set_current)(CUcontext);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*free)(CUdeviceptr);
} cu;

int gd_cuda_open(char *err, size_t errlen)
{
	/* Not from a less privileged user's environment (set-user-ID). */
	const char *name = secure_getenv("GDIRECT_LIBCUDA");
	CUresult rc;

	cu.lib = dlopen(name && *name ? name : "libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!cu.lib) {
		snprintf(err, errlen, "cannot load libcuda.so.1: %s", dlerror());
		return -ENOENT;
	}
	*(void **)&cu.init = dlsym(cu.lib, "cuInit");
	*(void **)&cu.device_get = dlsym(cu.lib, "cuDeviceGet");
	*(void **)&cu.retain = dlsym(cu.lib, "cuDevicePrimaryCtxRetain");
	*(void **)&cu.release = dlsym(cu.lib, "cuDevicePrimaryCtxRelease_v2");
	*(void **)&cu.set_current = dlsym(cu.lib, "cuCtxSetCurrent");
	*(void **)&cu.alloc = dlsym(cu.lib, "cuMemAlloc_v2");
	*(void **)&cu.free = dlsym(cu.lib, "cuMemFree_v2");
	if (!cu.init || !cu.device_get || !cu.retain || !cu.release ||
	    !cu.set_current || !cu.alloc || !cu.free) {
		snprintf(err, errlen, "libcuda.so.1 lacks a needed function");
		dlclose(cu.lib);
		cu.lib = NULL;
		return -ENOSYS;
	}
	if ((rc = cu.init(0)) || (rc = cu.device_get(&cu.dev, 0)) ||
	    (rc = cu.retain(&cu.ctx, cu.dev))) {
		snprintf(err, errlen, "CUDA initialisation failed (CUresult %d)", rc);
		dlclose(cu.lib);
		cu.lib = NULL;
		return -EIO;
	}
	if ((rc = cu.set_current(cu.ctx))) {
		snprintf(err, errlen, "cuCtxSetCurrent failed (CUresult %d)", rc);
		gd_cuda_close();
		return -EIO;
	}
	return 0;
}

int gd_cuda_alloc(size_t size, uint64_t *dptr)
{
	CUdeviceptr p;

	if (cu.alloc(&p, size))
		return -ENOMEM;
	*dptr = p;
	return 0;
}

void gd_cuda_free(uint64_t dptr)
{
	cu.free((CUdeviceptr)dptr);
}

void gd_cuda_close(void)
{
	if (!cu.lib)
		return;
	cu.release(cu.dev);
	/* libcuda is not unloaded: the real one does not support it well. */
	cu.lib = NULL;
}
