/* SPDX-License-Identifier: MIT */
/*
 * benchcuda.h - control interface of the benchmark's fake CUDA driver
 * (libbenchcuda.so): address-only "device memory", found in O(log n).
 */
#ifndef BENCHCUDA_H
#define BENCHCUDA_H

#include <stddef.h>
#include <stdint.h>

/*
 * A new device allocation of size bytes (rounded up to 64 KiB), 64 KiB
 * aligned, followed by at least gap bytes of unallocated address space
 * (so that neighbouring registrations never touch).  0 on failure.
 */
uint64_t bc_alloc(size_t size, size_t gap);

#endif
