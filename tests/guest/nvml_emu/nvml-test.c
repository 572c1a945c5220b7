// SPDX-License-Identifier: MIT
/*
 * nvml-test.c - the emulated NVML over the emulated GPU: its answers
 * against the emulator's own counters (debugfs or procfs: BAR1 size,
 * reserved and used, memory), sysfs (PCI ids) and the CUDA driver (bus id,
 * name, UUID, memory allocated), the NVLink answers of a PCIe GPU, and the
 * error cases.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>
#include <nvml.h>

#include "emu_knob.h"
#include "tap.h"

static unsigned int sysfs_hex(const char *bdf, const char *attr)
{
	char path[256];
	unsigned int v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", bdf, attr);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%x", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

int main(void)
{
	nvmlFieldValue_t fv[3] = { { .fieldId = NVML_FI_DEV_NVLINK_LINK_COUNT },
				   { .fieldId = 1 }, { .fieldId = 164 } };
	nvmlDevice_t dev = NULL, dev2 = NULL;
	nvmlBAR1Memory_t bar1;
	nvmlMemory_t mem0, mem1;
	nvmlPciInfo_t pci;
	unsigned int count = 0, minor = 9;
	char bus[32], lower[32], name[96], cuname[256], uuid[96], cuuuid[48], ver[80];
	const unsigned char *u;
	CUcontext ctx;
	CUdeviceptr d;
	CUuuid cu;
	int v = 0;

	tap_plan(25);
	if (cuInit(0) || cuDeviceGetPCIBusId(bus, sizeof(bus), 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx)) {
		tap_ok(0, "the CUDA driver answers");
		return tap_done();
	}
	for (size_t i = 0; i <= strlen(bus); i++)
		lower[i] = (char)(bus[i] >= 'A' && bus[i] <= 'F' ? bus[i] - 'A' + 'a' : bus[i]);
	tap_ok(nvmlDeviceGetCount_v2(&count) == NVML_ERROR_UNINITIALIZED,
	       "before nvmlInit: UNINITIALIZED");
	tap_ok(nvmlInit() == NVML_SUCCESS && nvmlInit_v2() == NVML_SUCCESS,
	       "nvmlInit twice (counted)");
	tap_ok(nvmlDeviceGetCount_v2(&count) == NVML_SUCCESS && count == 1, "one device");
	tap_ok(nvmlDeviceGetHandleByIndex_v2(0, &dev) == NVML_SUCCESS && dev,
	       "the handle of index 0");
	tap_ok(nvmlDeviceGetHandleByIndex_v2(1, &dev2) == NVML_ERROR_INVALID_ARGUMENT,
	       "index 1: INVALID_ARGUMENT");
	tap_ok(nvmlDeviceGetHandleByPciBusId_v2(bus, &dev2) == NVML_SUCCESS && dev2 == dev,
	       "the handle of the CUDA device's bus id %s", bus);
	tap_ok(nvmlDeviceGetHandleByPciBusId_v2(lower + 5, &dev2) == NVML_SUCCESS && dev2 == dev,
	       "... and of %s (bus:device.function)", lower + 5);
	tap_ok(nvmlDeviceGetHandleByPciBusId_v2("0000:ff:1f.0", &dev2) == NVML_ERROR_NOT_FOUND,
	       "another bus id: NOT_FOUND");
	tap_ok(nvmlDeviceGetPciInfo_v3(dev, &pci) == NVML_SUCCESS &&
	       !strcmp(pci.busIdLegacy, bus) && !strncmp(pci.busId, "0000", 4) &&
	       !strcmp(pci.busId + 4, bus), "PCI info: %s, legacy %s", pci.busId, pci.busIdLegacy);
	tap_ok(pci.pciDeviceId == (sysfs_hex(lower, "device") << 16 | sysfs_hex(lower, "vendor")) &&
	       pci.pciDeviceId == 0x11101af4, "PCI ids as sysfs: 0x%08x", pci.pciDeviceId);
	tap_ok(nvmlDeviceGetName(dev, name, sizeof(name)) == NVML_SUCCESS &&
	       cuDeviceGetName(cuname, sizeof(cuname), 0) == CUDA_SUCCESS && !strcmp(name, cuname),
	       "the name as the driver's: %s", name);
	tap_ok(nvmlDeviceGetName(dev, name, 8) == NVML_ERROR_INSUFFICIENT_SIZE,
	       "the name into 8 bytes: INSUFFICIENT_SIZE");
	cuDeviceGetUuid(&cu, 0);
	u = (const unsigned char *)cu.bytes;
	snprintf(cuuuid, sizeof(cuuuid),
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
		 u[12], u[13], u[14], u[15]);
	tap_ok(nvmlDeviceGetUUID(dev, uuid, sizeof(uuid)) == NVML_SUCCESS && !strcmp(uuid, cuuuid),
	       "the UUID as the driver's: %s", uuid);
	tap_ok(nvmlDeviceGetBAR1MemoryInfo(dev, &bar1) == NVML_SUCCESS &&
	       bar1.bar1Total == emu_stat_u64("bar1_total") &&
	       bar1.bar1Used == emu_stat_u64("bar1_used") + emu_stat_u64("bar1_reserved") &&
	       bar1.bar1Free == bar1.bar1Total - bar1.bar1Used,
	       "BAR1 as the emulator counts it: total %llu MiB, used %llu MiB (reserved %llu)",
	       bar1.bar1Total >> 20, bar1.bar1Used >> 20,
	       (unsigned long long)emu_stat_u64("bar1_reserved") >> 20);
	tap_ok(nvmlDeviceGetMemoryInfo(dev, &mem0) == NVML_SUCCESS &&
	       mem0.total == emu_stat_u64("mem_total") && mem0.used == emu_stat_u64("mem_used"),
	       "memory as the emulator counts it: %llu MiB, %llu used", mem0.total >> 20,
	       mem0.used >> 20);
	tap_ok(cuMemAlloc(&d, 4 << 20) == CUDA_SUCCESS &&
	       nvmlDeviceGetMemoryInfo(dev, &mem1) == NVML_SUCCESS &&
	       mem1.used >= mem0.used + (4 << 20), "a 4 MiB cuMemAlloc shows at once (%llu MiB used)",
	       mem1.used >> 20);
	cuMemFree(d);
	tap_ok(nvmlDeviceGetFieldValues(dev, 3, fv) == NVML_SUCCESS &&
	       fv[0].nvmlReturn == NVML_SUCCESS && fv[0].value.uiVal == 0 &&
	       fv[0].valueType == NVML_VALUE_TYPE_UNSIGNED_INT &&
	       fv[1].nvmlReturn == NVML_ERROR_NOT_SUPPORTED &&
	       fv[2].nvmlReturn == NVML_ERROR_NOT_SUPPORTED,
	       "field values: 0 NVLinks, other fields NOT_SUPPORTED each");
	tap_ok(nvmlDeviceGetNvLinkRemotePciInfo_v2(dev, 0, &pci) == NVML_ERROR_NOT_SUPPORTED,
	       "NVLink 0's remote end: NOT_SUPPORTED");
	tap_ok(nvmlDeviceGetMinorNumber(dev, &minor) == NVML_SUCCESS && minor == 0, "minor 0");
	tap_ok(nvmlSystemGetDriverVersion(ver, sizeof(ver)) == NVML_SUCCESS &&
	       nvmlSystemGetCudaDriverVersion(&v) == NVML_SUCCESS && v == 13000,
	       "driver %s, CUDA %d", ver, v);
	tap_ok(emu_knob_set("cuda_version", "13030") == 0 &&
	       nvmlSystemGetCudaDriverVersion(&v) == NVML_SUCCESS && v == 13030 &&
	       emu_knob_set("cuda_version", "13000") == 0,
	       "CUDA driver version follows the emulated driver's: 13030 at cuda_version 13030");
	tap_ok(nvmlDeviceGetBAR1MemoryInfo(dev, NULL) == NVML_ERROR_INVALID_ARGUMENT &&
	       nvmlDeviceGetBAR1MemoryInfo((nvmlDevice_t)&v, &bar1) == NVML_ERROR_INVALID_ARGUMENT,
	       "NULL output, foreign handle: INVALID_ARGUMENT");
	tap_ok(nvmlShutdown() == NVML_SUCCESS && nvmlDeviceGetCount_v2(&count) == NVML_SUCCESS,
	       "one nvmlShutdown of two: still initialized");
	tap_ok(nvmlShutdown() == NVML_SUCCESS &&
	       nvmlDeviceGetCount_v2(&count) == NVML_ERROR_UNINITIALIZED,
	       "the second: UNINITIALIZED again");
	tap_ok(nvmlShutdown() == NVML_ERROR_UNINITIALIZED, "a third: UNINITIALIZED");
	cuDevicePrimaryCtxRelease(0);
	return tap_done();
}
