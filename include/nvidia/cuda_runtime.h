/* SPDX-License-Identifier: MIT */
/*
 * cuda_runtime.h - what host code includes for the CUDA runtime: here, the
 * runtime API of gdirect's emulated runtime (cuda_runtime_api.h).
 */
#ifndef GDIRECT_CUDA_RUNTIME_H
#define GDIRECT_CUDA_RUNTIME_H

#include "cuda_runtime_api.h"

#endif /* GDIRECT_CUDA_RUNTIME_H */
