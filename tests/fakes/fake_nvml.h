/* SPDX-License-Identifier: MIT */
/*
 * fake_nvml.h - the fake NVML library of the gdirect command's unit tests.
 *
 * It fakes the NVML subset the tool loads at run time (include/nvidia/
 * nvml.h, through GDIRECT_LIBNVML): nvmlInit_v2 and nvmlShutdown,
 * nvmlErrorString, nvmlSystemGetDriverVersion, and, for one GPU, the
 * device at FAKE_NVML_BDF, nvmlDeviceGetHandleByPciBusId_v2 and
 * nvmlDeviceGetBAR1MemoryInfo with the BAR1 below (the user guide's
 * example).  Any other bus id is NVML_ERROR_NOT_FOUND, whose string is
 * "Not Found"; a handle lookup before nvmlInit_v2 is the same.
 *
 * It records nothing and offers no calls of its own: the tests load
 * libfake_nvml.so by path, as the tool loads NVIDIA's library, and read
 * the figures below.  It never offers the other NVML calls, nor any CUDA
 * driver call, so a test can also name it where the CUDA driver is
 * expected and see it refused.
 */
#ifndef FAKE_NVML_H
#define FAKE_NVML_H

/* The one GPU's PCI address, as nvmlDeviceGetHandleByPciBusId_v2 takes it. */
#define FAKE_NVML_BDF "0000:03:00.0"
/* Its BAR1: 256 MiB, of which 2 MiB are used. */
#define FAKE_NVML_BAR1_TOTAL (256ULL << 20)
#define FAKE_NVML_BAR1_USED (2ULL << 20)
/* What nvmlSystemGetDriverVersion answers. */
#define FAKE_NVML_DRIVER_VERSION "580.95.05"

#endif
