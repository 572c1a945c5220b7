// SPDX-License-Identifier: MIT
/*
 * cuda.c - the CUDA driver API calls the benchmarks need
 *
 * The driver is loaded by the product's one loader (lib/cudaload), with
 * the types and prototypes of include/nvidia/cuda.h.
 */
#include "tool_cuda.h"

#include <errno.h>
#include <stdio.h>

#include "cudaload.h"

/* The command is single-threaded: opened once by gdcli_cuda_open(). */
static struct gdl_cuda cu;
static CUdevice dev;
static CUcontext ctx;

/* Every entry is required; they are looked up by their versioned symbols
 * with dlsym, and the library is loaded RTLD_GLOBAL. */
#define TOOL_ENTRIES (GDL_CU_BIT(init) | GDL_CU_BIT(device_get) |		\
		      GDL_CU_BIT(primary_retain) | GDL_CU_BIT(primary_release) | \
		      GDL_CU_BIT(ctx_set_current) | GDL_CU_BIT(mem_alloc) |	\
		      GDL_CU_BIT(mem_free))

int gdcli_cuda_open(char *err, size_t errlen)
{
	CUresult rc;
	int ret;

	ret = gdl_cuload_open(&cu, TOOL_ENTRIES, TOOL_ENTRIES, GDL_CUDA_GLOBAL,
			     err, errlen);
	if (ret)
		return ret;
	if ((rc = cu.init(0)) || (rc = cu.device_get(&dev, 0)) ||
	    (rc = cu.primary_retain(&ctx, dev))) {
		snprintf(err, errlen, "CUDA initialisation failed (CUresult %d)", rc);
		gdl_cuload_close(&cu);
		return -EIO;
	}
	if ((rc = cu.ctx_set_current(ctx))) {
		snprintf(err, errlen, "cuCtxSetCurrent failed (CUresult %d)", rc);
		gdcli_cuda_close();
		return -EIO;
	}
	return 0;
}

int gdcli_cuda_alloc(size_t size, uint64_t *dptr)
{
	CUdeviceptr p;

	if (cu.mem_alloc(&p, size))
		return -ENOMEM;
	*dptr = p;
	return 0;
}

void gdcli_cuda_free(uint64_t dptr)
{
	cu.mem_free((CUdeviceptr)dptr);
}

void gdcli_cuda_close(void)
{
	if (!cu.dl)
		return;
	cu.primary_release(dev);
	/* libcuda is not unloaded: the real one does not support it well. */
	cu.dl = NULL;
}
