// SPDX-License-Identifier: MIT
/*
 * nvml.c - the few NVML calls the tool needs, declared here
 *
 * Types and signatures as NVML documents them (nvml.h, stable since CUDA
 * 6.0): nvmlReturn_t is an int (0 = NVML_SUCCESS), nvmlDevice_t an opaque
 * pointer, nvmlBAR1Memory_t three unsigned long longs in bytes.
 */
#include "tool_nvml.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
	unsigned long long bar1Total;
	unsigned long long bar1Free;
	unsigned long long bar1Used;
} nvmlBAR1Memory_t;

struct nvml {
	void *lib;
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error_string)(nvmlReturn_t);
	nvmlReturn_t (*by_bus_id)(const char *, nvmlDevice_t *);
	nvmlReturn_t (*bar1)(nvmlDevice_t, nvmlBAR1Memory_t *);
	nvmlReturn_t (*driver_version)(char *, unsigned int);
};

static int nvml_open(struct nvml *n)
{
	/* Not from a less privileged user's environment (set-user-ID). */
	const char *name = secure_getenv("GDIRECT_LIBNVML");

	n->lib = dlopen(name && *name ? name : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n->lib)
		return -ENOENT;
	/* POSIX allows converting dlsym's void * to a function pointer. */
	*(void **)&n->init = dlsym(n->lib, "nvmlInit_v2");
	*(void **)&n->shutdown = dlsym(n->lib, "nvmlShutdown");
	*(void **)&n->error_string = dlsym(n->lib, "nvmlErrorString");
	*(void **)&n->by_bus_id = dlsym(n->lib, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&n->bar1 = dlsym(n->lib, "nvmlDeviceGetBAR1MemoryInfo");
	*(void **)&n->driver_version = dlsym(n->lib, "nvmlSystemGetDriverVersion");
	if (!n->init || !n->shutdown || n->init() != 0) {
		dlclose(n->lib);
		return -EIO;
	}
	return 0;
}

static void nvml_close(struct nvml *n)
{
	n->shutdown();
	dlclose(n->lib);
}

static void why(const struct nvml *n, nvmlReturn_t rc, const char *what, char *err, int len)
{
	if (err)
		snprintf(err, (size_t)len, "%s: %s", what,
			 n->error_string ? n->error_string(rc) : "NVML error");
}

int gdcli_nvml_bar1(const char *bdf, struct gdcli_nvml_bar1 *bar1, char *err,
		    int errlen)
{
	struct nvml n;
	nvmlDevice_t dev;
	nvmlBAR1Memory_t mem;
	nvmlReturn_t rc;
	int ret = nvml_open(&n);

	if (ret) {
		if (err)
			snprintf(err, (size_t)errlen, "%s", ret == -ENOENT ?
				 "libnvidia-ml.so.1 not found" : "nvmlInit failed");
		return ret;
	}
	ret = -EIO;
	if (!n.by_bus_id || !n.bar1) {
		if (err)
			snprintf(err, (size_t)errlen, "NVML lacks the BAR1 query");
	} else if ((rc = n.by_bus_id(bdf, &dev)) != 0) {
		why(&n, rc, "nvmlDeviceGetHandleByPciBusId_v2", err, errlen);
	} else if ((rc = n.bar1(dev, &mem)) != 0) {
		why(&n, rc, "nvmlDeviceGetBAR1MemoryInfo", err, errlen);
	} else {
		bar1->total = mem.bar1Total;
		bar1->used = mem.bar1Used;
		bar1->free = mem.bar1Free;
		ret = 0;
	}
	nvml_close(&n);
	return ret;
}

int gdcli_nvml_driver_version(char *buf, int len)
{
	struct nvml n;
	int ret = nvml_open(&n);

	if (ret)
		return ret;
	ret = n.driver_version && n.driver_version(buf, (unsigned int)len) == 0 ? 0 : -EIO;
	nvml_close(&n);
	return ret;
}
