/* SPDX-License-Identifier: MIT */
/*
 * tool_cuda.h - GPU memory for the benchmarks, from libcuda.so.1 loaded at run
 * time (or the file GDIRECT_LIBCUDA names) by lib/cudaload, the loader
 * libgdirect uses: the real driver on a GPU machine, cuda_emu's in the
 * emulated machine.
 */
#ifndef GDTOOL_CUDA_H
#define GDTOOL_CUDA_H

#include <stddef.h>
#include <stdint.h>

/* Open CUDA, make device 0's primary context current: 0, or -errno with a
 * reason in err. */
int gdcli_cuda_open(char *err, size_t errlen);
/* Allocate / free GPU memory (a CUdeviceptr): 0 or -errno. */
int gdcli_cuda_alloc(size_t size, uint64_t *dptr);
void gdcli_cuda_free(uint64_t dptr);
void gdcli_cuda_close(void);

#endif
