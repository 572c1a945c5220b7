// SPDX-License-Identifier: MIT
/*
 * nvml.c - the NVML subset over the emulated GPU (nvp2p_emu.ko)
 *
 * The device is the one /dev/nvp2p_emu drives.  Every query reads the
 * emulator afresh with its info ioctl (one consistent snapshot of memory
 * and BAR1 counters, PCI location and UUID); the PCI ids come from sysfs.
 * BAR1 "used" counts the part the emulator reserves for itself
 * (bar1_reserved) as well as what peers have mapped (bar1_used), as the
 * NVIDIA driver's own BAR1 mappings count in NVML's.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "nvml.h"
#include "nvp2p_emu.h"

#define NVML_EXPORT __attribute__((visibility("default")))

/* The driver whose behaviour the emulator mirrors
 * (cuda_emu/conformance/gpu/README.md). */
#define DRIVER_VERSION "580.159.04"
#define CUDA_DRIVER_VERSION 13000

struct nvmlDevice_st {
	unsigned int index;
};

static struct nvmlDevice_st the_gpu;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int init_count;
static unsigned int device_count;

/* Marker that packaging/install.sh looks for: this libnvidia-ml is ours. */
__attribute__((used)) static const char nvml_id[] =
	"GDIRECT_EMU_LIB: libnvidia-ml.so.1 of gdirect's emulated GPU";

static nvmlReturn_t read_info(struct nvp2p_emu_info *info)
{
	int fd = open(NVP2P_EMU_DEVICE, O_RDWR | O_CLOEXEC);
	int err;

	if (fd < 0)
		return errno == EACCES || errno == EPERM ? NVML_ERROR_NO_PERMISSION :
		       NVML_ERROR_DRIVER_NOT_LOADED;
	memset(info, 0, sizeof(*info));
	err = ioctl(fd, NVP2P_EMU_IOC_INFO, info);
	close(fd);
	if (err || info->abi_version != NVP2P_EMU_ABI_VERSION)
		return NVML_ERROR_LIB_RM_VERSION_MISMATCH;
	return NVML_SUCCESS;
}

static nvmlReturn_t init(unsigned int flags)
{
	struct nvp2p_emu_info info;
	nvmlReturn_t r = NVML_SUCCESS;

	if (flags & ~(unsigned int)(NVML_INIT_FLAG_NO_GPUS | NVML_INIT_FLAG_NO_ATTACH))
		return NVML_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&lock);
	if (!init_count) {
		r = read_info(&info);
		device_count = r == NVML_SUCCESS;
		/* With NO_GPUS, a machine without the GPU is no error. */
		if (r == NVML_ERROR_DRIVER_NOT_LOADED && (flags & NVML_INIT_FLAG_NO_GPUS))
			r = NVML_SUCCESS;
	}
	if (r == NVML_SUCCESS)
		init_count++;
	pthread_mutex_unlock(&lock);
	return r;
}

/* nvmlInit from before the _v2 names: the same here. */
NVML_EXPORT nvmlReturn_t nvmlInit_v2(void)
{
	return init(0);
}

#undef nvmlInit
NVML_EXPORT nvmlReturn_t nvmlInit(void)
{
	return init(0);
}

NVML_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
	return init(flags);
}

NVML_EXPORT nvmlReturn_t nvmlShutdown(void)
{
	nvmlReturn_t r = NVML_SUCCESS;

	pthread_mutex_lock(&lock);
	if (!init_count)
		r = NVML_ERROR_UNINITIALIZED;
	else
		init_count--;
	pthread_mutex_unlock(&lock);
	return r;
}

static bool initialized(void)
{
	bool yes;

	pthread_mutex_lock(&lock);
	yes = init_count > 0;
	pthread_mutex_unlock(&lock);
	return yes;
}

NVML_EXPORT const char *nvmlErrorString(nvmlReturn_t result)
{
	switch (result) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
	case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
	case NVML_ERROR_NOT_FOUND: return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
	case NVML_ERROR_INSUFFICIENT_POWER: return "Insufficient External Power";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_TIMEOUT: return "Timeout";
	case NVML_ERROR_IRQ_ISSUE: return "Interrupt request issue";
	case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
	case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
	case NVML_ERROR_CORRUPTED_INFOROM: return "Corrupted infoROM";
	case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
	case NVML_ERROR_RESET_REQUIRED: return "GPU requires restart";
	case NVML_ERROR_OPERATING_SYSTEM: return "The operating system has blocked the request.";
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "RM has detected an NVML/RM version mismatch.";
	case NVML_ERROR_IN_USE: return "In use by another client";
	case NVML_ERROR_MEMORY: return "Insufficient Memory";
	case NVML_ERROR_NO_DATA: return "No data";
	default: return "Unknown Error";
	}
}

/*
 * The CUDA driver's version, as libcuda reports it: the emulator's
 * cuda_version knob (13030 for a 13.3-level driver), 13000 otherwise.
 */
NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
	struct nvp2p_emu_info info;

	if (!v)
		return NVML_ERROR_INVALID_ARGUMENT;
	*v = read_info(&info) == NVML_SUCCESS &&
	     info.cuda_version == NVP2P_EMU_CUDA_13_3 ? NVP2P_EMU_CUDA_13_3 :
	     CUDA_DRIVER_VERSION;
	return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	return nvmlSystemGetCudaDriverVersion(v);
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	if (!initialized())
		return NVML_ERROR_UNINITIALIZED;
	if (!version)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (length < sizeof(DRIVER_VERSION))
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(version, DRIVER_VERSION, sizeof(DRIVER_VERSION));
	return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	if (!initialized())
		return NVML_ERROR_UNINITIALIZED;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = device_count;
	return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
						       nvmlDevice_t *device)
{
	if (!initialized())
		return NVML_ERROR_UNINITIALIZED;
	if (!device || index >= device_count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &the_gpu;
	return NVML_SUCCESS;
}

/* A handle of ours and the emulator's snapshot (NVML_SUCCESS), or why not. */
static nvmlReturn_t device_info(nvmlDevice_t device, struct nvp2p_emu_info *info)
{
	if (!initialized())
		return NVML_ERROR_UNINITIALIZED;
	if (device != &the_gpu || !device_count)
		return NVML_ERROR_INVALID_ARGUMENT;
	return read_info(info) == NVML_SUCCESS ? NVML_SUCCESS : NVML_ERROR_GPU_IS_LOST;
}

/* One hex field of at most @digits digits, ended by @end; *p moves past
 * the terminator.  No sign, space or 0x: the whole field is digits. */
static bool hex_field(const char **p, unsigned int digits, char end,
		      unsigned int *v)
{
	const char *s = *p;
	unsigned int n = 0;

	*v = 0;
	while (isxdigit((unsigned char)s[n]) && n < digits) {
		*v = *v * 16 + (unsigned int)(isdigit((unsigned char)s[n]) ?
			s[n] - '0' : (tolower((unsigned char)s[n]) - 'a' + 10));
		n++;
	}
	if (!n || s[n] != end)
		return false;
	*p = s + n + (end ? 1 : 0);
	return true;
}

/* domain:bus:device.function, domain:bus:device or bus:device.function,
 * in hex, as NVML accepts them; the whole string must parse, each field
 * within its range (domain 32 bits, bus 8, device 5, function 3). */
static bool parse_bdf(const char *s, unsigned int *dom, unsigned int *bus,
		      unsigned int *dev, unsigned int *fn)
{
	const char *p = s;

	*dom = 0;
	*fn = 0;
	if (strchr(s, ':') != strrchr(s, ':')) {	/* with a domain */
		if (!hex_field(&p, 8, ':', dom) || !hex_field(&p, 2, ':', bus))
			return false;
		if (!strchr(p, '.'))
			return hex_field(&p, 2, 0, dev) && *dev <= 0x1f;
	} else if (!hex_field(&p, 2, ':', bus)) {
		return false;
	}
	return hex_field(&p, 2, '.', dev) && *dev <= 0x1f &&
	       hex_field(&p, 1, 0, fn) && *fn <= 7;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId,
							  nvmlDevice_t *device)
{
	struct nvp2p_emu_info info;
	unsigned int dom, bus, dev, fn;
	nvmlReturn_t r;

	if (!initialized())
		return NVML_ERROR_UNINITIALIZED;
	if (!pciBusId || !device || !parse_bdf(pciBusId, &dom, &bus, &dev, &fn))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!device_count)
		return NVML_ERROR_NOT_FOUND;
	r = read_info(&info);
	if (r)
		return r;
	if (dom != info.pci_domain || bus != info.pci_bus ||
	    dev != ((info.pci_devfn >> 3) & 0x1f) || fn != (info.pci_devfn & 7))
		return NVML_ERROR_NOT_FOUND;
	*device = &the_gpu;
	return NVML_SUCCESS;
}

/* A hex number from sysfs file @attr of the device, 0 if unreadable. */
static unsigned int sysfs_hex(const struct nvp2p_emu_info *info, const char *attr)
{
	char path[128];
	unsigned int v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%04x:%02x:%02x.%x/%s",
		 info->pci_domain, info->pci_bus, (info->pci_devfn >> 3) & 0x1f,
		 info->pci_devfn & 7, attr);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%x", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

static void pci_info(const struct nvp2p_emu_info *info, nvmlPciInfo_t *pci)
{
	memset(pci, 0, sizeof(*pci));
	pci->domain = info->pci_domain;
	pci->bus = info->pci_bus;
	pci->device = (info->pci_devfn >> 3) & 0x1f;
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0",
		 pci->domain & 0xffff, pci->bus, pci->device);
	snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.0",
		 pci->domain, pci->bus, pci->device);
	pci->pciDeviceId = sysfs_hex(info, "device") << 16 | sysfs_hex(info, "vendor");
	pci->pciSubSystemId = sysfs_hex(info, "subsystem_device") << 16 |
			      sysfs_hex(info, "subsystem_vendor");
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	struct nvp2p_emu_info info;
	nvmlReturn_t r = device_info(device, &info);

	if (r)
		return r;
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	pci_info(&info, pci);
	return NVML_SUCCESS;
}

/* The name cuDeviceGetName gives for the same GPU (cuda_emu). */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name,
					   unsigned int length)
{
	struct nvp2p_emu_info info;
	nvmlReturn_t r = device_info(device, &info);
	char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	int n;

	if (r)
		return r;
	if (!name)
		return NVML_ERROR_INVALID_ARGUMENT;
	n = snprintf(buf, sizeof(buf), "gdirect emulated GPU (ivshmem %04x:%02x:%02x.%x)",
		     info.pci_domain, info.pci_bus, (info.pci_devfn >> 3) & 0x1f,
		     info.pci_devfn & 7);
	if ((unsigned int)n >= length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(name, buf, (size_t)n + 1);
	return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid,
					   unsigned int length)
{
	struct nvp2p_emu_info info;
	nvmlReturn_t r = device_info(device, &info);
	const unsigned char *u = info.gpu_uuid;
	char buf[48];
	int n;

	if (r)
		return r;
	if (!uuid)
		return NVML_ERROR_INVALID_ARGUMENT;
	n = snprintf(buf, sizeof(buf),
		     "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		     u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		     u[10], u[11], u[12], u[13], u[14], u[15]);
	if ((unsigned int)n >= length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(uuid, buf, (size_t)n + 1);
	return NVML_SUCCESS;
}

/* The emulated GPU is /dev/nvidia0's. */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minor)
{
	struct nvp2p_emu_info info;
	nvmlReturn_t r = device_info(device, &info);

	if (r)
		return r;
	if (!minor)
		return NVML_ERROR_INVALID_ARGUMENT;
	*minor = device->index;
	return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *m)
{
	struct nvp2p_emu_info info;
	nvmlReturn_t r = device_info(device, &info);

	if (r)
		return r;
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	m->total = info.mem_size;
	m->used = info.mem_used;
	m->free = info.mem_size > info.mem_used ? info.mem_size - info.mem_used : 0;
	return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device,
						     nvmlBAR1Memory_t *b)
{
	struct nvp2p_emu_info info;
	nvmlReturn_t r = device_info(device, &info);

	if (r)
		return r;
	if (!b)
		return NVML_ERROR_INVALID_ARGUMENT;
	b->bar1Total = info.bar1_size;
	b->bar1Used = info.bar1_used + info.bar1_reserved;
	b->bar1Free = b->bar1Total > b->bar1Used ? b->bar1Total - b->bar1Used : 0;
	return NVML_SUCCESS;
}

/*
 * Each value has its own result: NVML_FI_DEV_NVLINK_LINK_COUNT is 0 (a
 * PCIe GPU), every other field NVML_ERROR_NOT_SUPPORTED.
 */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count,
						  nvmlFieldValue_t *values)
{
	struct nvp2p_emu_info info;
	nvmlReturn_t r = device_info(device, &info);
	struct timespec now;

	if (r)
		return r;
	if (!values || count < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	clock_gettime(CLOCK_REALTIME, &now);
	for (int i = 0; i < count; i++) {
		nvmlFieldValue_t *v = &values[i];

		v->timestamp = (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000;
		v->latencyUsec = 0;
		if (v->fieldId == NVML_FI_DEV_NVLINK_LINK_COUNT) {
			v->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
			v->value.ullVal = 0;
			v->nvmlReturn = NVML_SUCCESS;
		} else {
			v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
		}
	}
	return NVML_SUCCESS;
}

/* No NVLink: no link has a remote end. */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device,
							     unsigned int link,
							     nvmlPciInfo_t *pci)
{
	struct nvp2p_emu_info info;
	nvmlReturn_t r = device_info(device, &info);

	(void)link;
	if (r)
		return r;
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	return NVML_ERROR_NOT_SUPPORTED;
}
