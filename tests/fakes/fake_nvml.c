// SPDX-License-Identifier: MIT
/*
 * fake_nvml.c - the fake NVML library (libfake_nvml.so); fake_nvml.h says
 * what it fakes and what it never does.  Its calls are those of
 * include/nvidia/nvml.h, so their types are checked against NVIDIA's.
 */
#include <string.h>

#include <nvml.h>

#include "fake_nvml.h"

struct nvmlDevice_st { int unused; };

static struct nvmlDevice_st the_gpu;
static int inited;

nvmlReturn_t nvmlInit_v2(void)
{
	inited++;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
	inited--;
	return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t rc)
{
	return rc == NVML_ERROR_NOT_FOUND ? "Not Found" : "Unknown Error";
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bdf, nvmlDevice_t *dev)
{
	if (!inited || strcmp(bdf, FAKE_NVML_BDF))
		return NVML_ERROR_NOT_FOUND;
	*dev = &the_gpu;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t dev, nvmlBAR1Memory_t *m)
{
	if (dev != &the_gpu)
		return NVML_ERROR_INVALID_ARGUMENT;
	m->bar1Total = FAKE_NVML_BAR1_TOTAL;
	m->bar1Used = FAKE_NVML_BAR1_USED;
	m->bar1Free = m->bar1Total - m->bar1Used;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *buf, unsigned int len)
{
	if (len < sizeof(FAKE_NVML_DRIVER_VERSION))
		return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(buf, FAKE_NVML_DRIVER_VERSION);
	return NVML_SUCCESS;
}
