// SPDX-License-Identifier: MIT
/*
 * fake_nvml.c - a stand-in libnvidia-ml for t_nvml: one GPU at
 * 0000:03:00.0 with a 256 MiB BAR1, 2 MiB used (the guide's 12.1 example).
 * Loaded through GDIRECT_LIBNVML.
 */
#include <string.h>

struct nvmlDevice_st { int unused; };
typedef struct {
	unsigned long long bar1Total, bar1Free, bar1Used;
} nvmlBAR1Memory_t;

static struct nvmlDevice_st the_gpu;
static int inited;

int nvmlInit_v2(void) { inited++; return 0; }
int nvmlShutdown(void) { inited--; return 0; }
const char *nvmlErrorString(int rc) { return rc == 6 ? "Not Found" : "Unknown Error"; }

int nvmlDeviceGetHandleByPciBusId_v2(const char *bdf, struct nvmlDevice_st **dev)
{
	if (!inited || strcmp(bdf, "0000:03:00.0"))
		return 6;	/* NVML_ERROR_NOT_FOUND */
	*dev = &the_gpu;
	return 0;
}

int nvmlDeviceGetBAR1MemoryInfo(struct nvmlDevice_st *dev, nvmlBAR1Memory_t *m)
{
	if (dev != &the_gpu)
		return 2;
	m->bar1Total = 256ULL << 20;
	m->bar1Used = 2ULL << 20;
	m->bar1Free = m->bar1Total - m->bar1Used;
	return 0;
}

int nvmlSystemGetDriverVersion(char *buf, unsigned int len)
{
	if (len < 11)
		return 7;
	strcpy(buf, "580.95.05");
	return 0;
}
