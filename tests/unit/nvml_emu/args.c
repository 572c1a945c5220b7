// SPDX-License-Identifier: MIT
/*
 * args.c - the emulated NVML's argument and state checks, on a
 * machine without the emulated GPU (the host running unit tests): what
 * each call answers before nvmlInit, with no GPU, with bad handles, short
 * buffers and unparseable bus ids, and the struct layouts NVIDIA's
 * nvml.h gives.  The answers with a GPU are tested in the guest
 * (tests/guest/nvml_emu).
 */
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "nvml.h"
#include "tap.h"

int main(void)
{
	nvmlFieldValue_t fv[2] = { { .fieldId = NVML_FI_DEV_NVLINK_LINK_COUNT },
				   { .fieldId = 1 } };
	nvmlDevice_t dev = NULL;
	nvmlBAR1Memory_t bar1;
	nvmlPciInfo_t pci;
	unsigned int count = 99;
	char buf[96] = "";
	nvmlReturn_t rc;
	int v = 0;

	if (access("/dev/nvp2p_emu", F_OK) == 0) {
		printf("1..0 # SKIP the emulated GPU is present (tested in the guest)\n");
		return 77;
	}
	tap_ok(sizeof(nvmlPciInfo_t) == 68 && offsetof(nvmlPciInfo_t, busId) == 36,
	       "nvmlPciInfo_t has the v3 layout (68 bytes, busId at 36)");
	tap_ok(sizeof(nvmlFieldValue_t) == 40 && offsetof(nvmlFieldValue_t, value) == 32,
	       "nvmlFieldValue_t is 40 bytes, value at 32");
	tap_ok(nvmlDeviceGetCount_v2(&count) == NVML_ERROR_UNINITIALIZED,
	       "nvmlDeviceGetCount before nvmlInit: UNINITIALIZED");
	tap_ok(nvmlShutdown() == NVML_ERROR_UNINITIALIZED,
	       "nvmlShutdown before nvmlInit: UNINITIALIZED");
	tap_ok(nvmlSystemGetDriverVersion(buf, sizeof(buf)) == NVML_ERROR_UNINITIALIZED,
	       "nvmlSystemGetDriverVersion before nvmlInit: UNINITIALIZED");
	tap_ok(nvmlInit_v2() == NVML_ERROR_DRIVER_NOT_LOADED,
	       "nvmlInit_v2 without the GPU: DRIVER_NOT_LOADED");
	tap_ok(nvmlInitWithFlags(0x80) == NVML_ERROR_INVALID_ARGUMENT,
	       "nvmlInitWithFlags with an unknown flag: INVALID_ARGUMENT");
	tap_ok(nvmlInitWithFlags(NVML_INIT_FLAG_NO_GPUS) == NVML_SUCCESS,
	       "nvmlInitWithFlags(NO_GPUS) without the GPU: SUCCESS");
	tap_ok(nvmlDeviceGetCount_v2(NULL) == NVML_ERROR_INVALID_ARGUMENT,
	       "nvmlDeviceGetCount_v2(NULL): INVALID_ARGUMENT");
	rc = nvmlDeviceGetCount_v2(&count);
	tap_ok(rc == NVML_SUCCESS && count == 0, "no GPU: count 0 (got %u)", count);
	tap_ok(nvmlDeviceGetHandleByIndex_v2(0, &dev) == NVML_ERROR_INVALID_ARGUMENT,
	       "handle of index 0 with no GPU: INVALID_ARGUMENT");
	tap_ok(nvmlDeviceGetHandleByPciBusId_v2("0000:03:00.0", &dev) == NVML_ERROR_NOT_FOUND,
	       "handle of an absent bus id: NOT_FOUND");
	tap_ok(nvmlDeviceGetHandleByPciBusId_v2("03:00", &dev) == NVML_ERROR_INVALID_ARGUMENT,
	       "handle of an unparseable bus id: INVALID_ARGUMENT");
	tap_ok(nvmlDeviceGetHandleByPciBusId_v2("0000:03:00.0x", &dev) == NVML_ERROR_INVALID_ARGUMENT,
	       "handle of a bus id with trailing junk: INVALID_ARGUMENT");
	tap_ok(nvmlDeviceGetHandleByPciBusId_v2("100000000:03:00.0", &dev) == NVML_ERROR_INVALID_ARGUMENT,
	       "a domain wider than 32 bits: INVALID_ARGUMENT, not truncated");
	tap_ok(nvmlDeviceGetHandleByPciBusId_v2("0000:03:20.0", &dev) == NVML_ERROR_INVALID_ARGUMENT &&
	       nvmlDeviceGetHandleByPciBusId_v2("0000:03:00.8", &dev) == NVML_ERROR_INVALID_ARGUMENT &&
	       nvmlDeviceGetHandleByPciBusId_v2("0000:103:00.0", &dev) == NVML_ERROR_INVALID_ARGUMENT,
	       "device > 0x1f, function > 7, bus > 0xff: INVALID_ARGUMENT");
	tap_ok(nvmlDeviceGetHandleByPciBusId_v2("03:00.0", &dev) == NVML_ERROR_NOT_FOUND &&
	       nvmlDeviceGetHandleByPciBusId_v2("00000000:03:00", &dev) == NVML_ERROR_NOT_FOUND,
	       "bus:device.function and domain:bus:device parse (absent: NOT_FOUND)");
	tap_ok(nvmlDeviceGetHandleByPciBusId_v2(NULL, &dev) == NVML_ERROR_INVALID_ARGUMENT,
	       "handle of a NULL bus id: INVALID_ARGUMENT");
	tap_ok(nvmlDeviceGetBAR1MemoryInfo(NULL, &bar1) == NVML_ERROR_INVALID_ARGUMENT,
	       "BAR1 of a NULL handle: INVALID_ARGUMENT");
	tap_ok(nvmlDeviceGetPciInfo_v3((nvmlDevice_t)&count, &pci) == NVML_ERROR_INVALID_ARGUMENT,
	       "PCI info of a foreign handle: INVALID_ARGUMENT");
	tap_ok(nvmlDeviceGetFieldValues(NULL, 2, fv) == NVML_ERROR_INVALID_ARGUMENT,
	       "field values of a NULL handle: INVALID_ARGUMENT");
	tap_ok(nvmlSystemGetDriverVersion(buf, 4) == NVML_ERROR_INSUFFICIENT_SIZE,
	       "driver version into 4 bytes: INSUFFICIENT_SIZE");
	rc = nvmlSystemGetDriverVersion(buf, sizeof(buf));
	tap_ok(rc == NVML_SUCCESS && !strcmp(buf, "580.159.04"), "driver version: %s", buf);
	rc = nvmlSystemGetCudaDriverVersion_v2(&v);
	tap_ok(rc == NVML_SUCCESS && v == 13000, "CUDA driver version 13000 (got %d)", v);
	tap_ok(!strcmp(nvmlErrorString(NVML_ERROR_NOT_FOUND), "Not Found") &&
	       !strcmp(nvmlErrorString((nvmlReturn_t)12345), "Unknown Error"),
	       "nvmlErrorString: \"%s\", \"%s\"", nvmlErrorString(NVML_ERROR_NOT_FOUND),
	       nvmlErrorString((nvmlReturn_t)12345));
	tap_ok(nvmlShutdown() == NVML_SUCCESS, "nvmlShutdown after the init: SUCCESS");
	tap_ok(nvmlShutdown() == NVML_ERROR_UNINITIALIZED,
	       "a second nvmlShutdown: UNINITIALIZED");
	return tap_done();
}
