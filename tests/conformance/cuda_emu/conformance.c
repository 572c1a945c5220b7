// SPDX-License-Identifier: MIT
/*
 * conformance.c - one section of the differential CUDA driver conformance
 * suite: calls the CUDA driver API of whatever libcuda.so.1 the dynamic
 * linker finds (NVIDIA's on a GPU machine, cuda_emu's in the guest) and
 * prints a normalised transcript, one "key = value" line per observation.
 *
 *   cuda-conformance all|SECTION|list
 *
 * Every entry point is looked up by its exported name with dlsym, so a call
 * the library lacks shows as "absent" instead of failing to link, and the
 * program builds without NVIDIA's header.  Types and enum values below are
 * NVIDIA's (CUDA 13.0).
 *
 * Normalisation (what legitimately differs between two machines):
 *  - device addresses never appear: an allocation shows its alignment class
 *    (the largest power of two dividing it, capped at 2 MiB) and its distance
 *    from the allocation before it ("far" beyond 64 MiB);
 *  - BUFFER_IDs show as their difference from the one before;
 *  - clock rates, PCI location, NUMA ids, the board's subsystem id, UUIDs and
 *    memory sizes show as a class ("<machine>", "nonzero", ...);
 *  - the device name shows as is (listed as an intended difference).
 * With "all", each section runs in a child process of its own (the parent
 * never touches CUDA), so a crash in one shows as "SECTION.end signal N"
 * and loses nothing else.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUstream;
typedef void *CUevent;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;

typedef struct { int type; int id; } CUmemLocation;
typedef struct {
	int type;
	int requestedHandleTypes;
	CUmemLocation location;
	void *win32HandleMetaData;
	struct {
		unsigned char compressionType;
		unsigned char gpuDirectRDMACapable;
		unsigned short usage;
		unsigned char reserved[4];
	} allocFlags;
} CUmemAllocationProp;
typedef struct { CUmemLocation location; int flags; } CUmemAccessDesc;
typedef struct { char bytes[16]; } CUuuid;

enum {
	PA_CONTEXT = 1, PA_MEMORY_TYPE = 2, PA_DEVICE_POINTER = 3,
	PA_HOST_POINTER = 4, PA_P2P_TOKENS = 5, PA_SYNC_MEMOPS = 6,
	PA_BUFFER_ID = 7, PA_IS_MANAGED = 8, PA_DEVICE_ORDINAL = 9,
	PA_IS_LEGACY_CUDA_IPC_CAPABLE = 10, PA_RANGE_START_ADDR = 11,
	PA_RANGE_SIZE = 12, PA_MAPPED = 13, PA_ALLOWED_HANDLE_TYPES = 14,
	PA_IS_GPU_DIRECT_RDMA_CAPABLE = 15, PA_ACCESS_FLAGS = 16,
	PA_MAPPING_SIZE = 18, PA_MAPPING_BASE_ADDR = 19, PA_MEMORY_BLOCK_ID = 20,
};

static void *lib;
static const char *section = "";

static void *sym(const char *name)
{
	return lib ? dlsym(lib, name) : NULL;
}

static const struct { int code; const char *name; } results[] = {
	{ 0, "SUCCESS" }, { 1, "INVALID_VALUE" }, { 2, "OUT_OF_MEMORY" },
	{ 3, "NOT_INITIALIZED" }, { 4, "DEINITIALIZED" }, { 100, "NO_DEVICE" },
	{ 101, "INVALID_DEVICE" }, { 200, "INVALID_IMAGE" },
	{ 201, "INVALID_CONTEXT" }, { 205, "MAP_FAILED" },
	{ 206, "UNMAP_FAILED" }, { 208, "ALREADY_MAPPED" },
	{ 211, "NOT_MAPPED" }, { 216, "CONTEXT_ALREADY_IN_USE" },
	{ 218, "INVALID_PTX" }, { 400, "INVALID_HANDLE" },
	{ 401, "ILLEGAL_STATE" }, { 500, "NOT_FOUND" }, { 600, "NOT_READY" },
	{ 700, "ILLEGAL_ADDRESS" }, { 719, "LAUNCH_FAILED" }, { 709, "CONTEXT_IS_DESTROYED" },
	{ 712, "HOST_MEMORY_ALREADY_REGISTERED" },
	{ 713, "HOST_MEMORY_NOT_REGISTERED" }, { 800, "NOT_PERMITTED" },
	{ 801, "NOT_SUPPORTED" }, { 999, "UNKNOWN" },
};

static const char *rcname(CUresult r)
{
	static char buf[32];

	for (size_t i = 0; i < sizeof(results) / sizeof(results[0]); i++)
		if (results[i].code == r)
			return results[i].name;
	snprintf(buf, sizeof(buf), "CUresult_%d", r);
	return buf;
}

static void out(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void out(const char *key, const char *fmt, ...)
{
	va_list ap;

	printf("%s%s%s = ", section, *section ? "." : "", key);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/*
 * C(key, name, type, args): call NAME (an exported symbol, of function type
 * TYPE) and print its result under KEY; an absent symbol prints "absent"
 * and yields -1.
 */
#define C(key, name, type, ...) ({					\
	type fn__ = (type)sym(name);					\
	CUresult r__ = -1;						\
	if (fn__)							\
		r__ = fn__(__VA_ARGS__);				\
	report(key, fn__ != NULL, r__);					\
	r__; })

static void report(const char *key, int present, CUresult r)
{
	if (key)
		out(key, "%s", present ? rcname(r) : "absent");
}

typedef CUresult (*f_v)(void);
typedef CUresult (*f_u)(unsigned int);
typedef CUresult (*f_pi)(int *);
typedef CUresult (*f_pdev_i)(CUdevice *, int);
typedef CUresult (*f_name)(char *, int, CUdevice);
typedef CUresult (*f_attr)(int *, int, CUdevice);
typedef CUresult (*f_uuid)(CUuuid *, CUdevice);
typedef CUresult (*f_totalmem)(size_t *, CUdevice);
typedef CUresult (*f_meminfo)(size_t *, size_t *);
typedef CUresult (*f_retain)(CUcontext *, CUdevice);
typedef CUresult (*f_dev)(CUdevice);
typedef CUresult (*f_ctxcreate4)(CUcontext *, void *, unsigned int, CUdevice);
typedef CUresult (*f_ctx)(CUcontext);
typedef CUresult (*f_pctx)(CUcontext *);
typedef CUresult (*f_pdev)(CUdevice *);
typedef CUresult (*f_alloc)(CUdeviceptr *, size_t);
typedef CUresult (*f_dptr)(CUdeviceptr);
typedef CUresult (*f_range)(CUdeviceptr *, size_t *, CUdeviceptr);
typedef CUresult (*f_getattr)(void *, int, CUdeviceptr);
typedef CUresult (*f_getattrs)(unsigned int, int *, void **, CUdeviceptr);
typedef CUresult (*f_setattr)(const void *, int, CUdeviceptr);
typedef CUresult (*f_allochost)(void **, size_t);
typedef CUresult (*f_hostalloc)(void **, size_t, unsigned int);
typedef CUresult (*f_ptr)(void *);
typedef CUresult (*f_hostreg)(void *, size_t, unsigned int);
typedef CUresult (*f_hostdevptr)(CUdeviceptr *, void *, unsigned int);
typedef CUresult (*f_htod)(CUdeviceptr, const void *, size_t);
typedef CUresult (*f_dtoh)(void *, CUdeviceptr, size_t);
typedef CUresult (*f_dtod)(CUdeviceptr, CUdeviceptr, size_t);
typedef CUresult (*f_htod_a)(CUdeviceptr, const void *, size_t, CUstream);
typedef CUresult (*f_dtoh_a)(void *, CUdeviceptr, size_t, CUstream);
typedef CUresult (*f_dtod_a)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
typedef CUresult (*f_memset8)(CUdeviceptr, unsigned char, size_t);
typedef CUresult (*f_memset16)(CUdeviceptr, unsigned short, size_t);
typedef CUresult (*f_memset32)(CUdeviceptr, unsigned int, size_t);
typedef CUresult (*f_memset8_a)(CUdeviceptr, unsigned char, size_t, CUstream);
typedef CUresult (*f_memset32_a)(CUdeviceptr, unsigned int, size_t, CUstream);
typedef CUresult (*f_streamcreate)(CUstream *, unsigned int);
typedef CUresult (*f_stream)(CUstream);
typedef CUresult (*f_streamflags)(CUstream, unsigned int *);
typedef CUresult (*f_eventcreate)(CUevent *, unsigned int);
typedef CUresult (*f_event)(CUevent);
typedef CUresult (*f_eventrecord)(CUevent, CUstream);
typedef CUresult (*f_elapsed)(float *, CUevent, CUevent);
typedef CUresult (*f_waitevent)(CUstream, CUevent, unsigned int);
typedef CUresult (*f_gran)(size_t *, const CUmemAllocationProp *, int);
typedef CUresult (*f_memcreate)(CUmemGenericAllocationHandle *, size_t,
				const CUmemAllocationProp *, unsigned long long);
typedef CUresult (*f_reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
			      unsigned long long);
typedef CUresult (*f_addrfree)(CUdeviceptr, size_t);
typedef CUresult (*f_map)(CUdeviceptr, size_t, size_t,
			  CUmemGenericAllocationHandle, unsigned long long);
typedef CUresult (*f_unmap)(CUdeviceptr, size_t);
typedef CUresult (*f_setaccess)(CUdeviceptr, size_t, const CUmemAccessDesc *,
				size_t);
typedef CUresult (*f_release)(CUmemGenericAllocationHandle);
typedef CUresult (*f_proc)(const char *, void **, int, unsigned long long,
			   int *);
typedef CUresult (*f_errstr)(CUresult, const char **);
typedef CUresult (*f_moddata)(void **, const void *);
typedef CUresult (*f_pitch)(CUdeviceptr *, size_t *, size_t, size_t,
			    unsigned int);
typedef CUresult (*f_ctxid)(CUcontext, unsigned long long *);
typedef CUresult (*f_export)(void *, CUmemGenericAllocationHandle, int,
			     unsigned long long);
typedef CUresult (*f_import)(CUmemGenericAllocationHandle *, void *, int);
typedef CUresult (*f_rangeattr)(void *, size_t, int, CUdeviceptr, size_t);
typedef CUresult (*f_managed)(CUdeviceptr *, size_t, unsigned int);

static CUdevice dev;
static CUcontext pctx;

/* cuInit, device 0 and its primary context made current. */
static int setup(void)
{
	CUresult r = C(NULL, "cuInit", f_u, 0);

	if (r)
		return out("setup", "cuInit %s", rcname(r)), -1;
	r = C(NULL, "cuDeviceGet", f_pdev_i, &dev, 0);
	if (!r)
		r = C(NULL, "cuDevicePrimaryCtxRetain", f_retain, &pctx, dev);
	if (!r)
		r = C(NULL, "cuCtxSetCurrent", f_ctx, pctx);
	if (r)
		return out("setup", "%s", rcname(r)), -1;
	return 0;
}

static const char *align_class(uint64_t a)
{
	static const struct { uint64_t al; const char *name; } cls[] = {
		{ 2u << 20, "2M" }, { 1u << 20, "1M" }, { 512u << 10, "512K" },
		{ 256u << 10, "256K" }, { 128u << 10, "128K" }, { 64u << 10, "64K" },
		{ 32u << 10, "32K" }, { 16u << 10, "16K" }, { 8u << 10, "8K" },
		{ 4u << 10, "4K" }, { 2u << 10, "2K" }, { 1u << 10, "1K" },
		{ 512, "512" }, { 256, "256" }, { 128, "128" }, { 1, "<128" },
	};

	if (!a)
		return "null";
	for (size_t i = 0; i < sizeof(cls) / sizeof(cls[0]); i++)
		if (!(a & (cls[i].al - 1)))
			return cls[i].name;
	return "?";
}

static void delta(char *buf, size_t n, uint64_t a, uint64_t prev)
{
	int64_t d = (int64_t)(a - prev);

	if (!prev || !a)
		snprintf(buf, n, "none");
	else if (d > (64 << 20) || d < -(64 << 20))
		snprintf(buf, n, "far");
	else
		snprintf(buf, n, "%+lld", (long long)d);
}

/* --- sections ----------------------------------------------------------- */

static void s_init(void)
{
	int n = -1, v = 0;
	CUdeviceptr p = 0;

	C("before_init.cuDeviceGetCount", "cuDeviceGetCount", f_pi, &n);
	C("before_init.cuMemAlloc_v2", "cuMemAlloc_v2", f_alloc, &p, 16);
	C("cuInit(1)", "cuInit", f_u, 1);
	C("cuInit(0)", "cuInit", f_u, 0);
	C("cuInit(0).again", "cuInit", f_u, 0);
	if (!C("cuDriverGetVersion", "cuDriverGetVersion", f_pi, &v))
		out("cuDriverGetVersion.value", "%d", v);
	C("cuDriverGetVersion(NULL)", "cuDriverGetVersion", f_pi, NULL);
	if (!C("cuDeviceGetCount", "cuDeviceGetCount", f_pi, &n))
		out("cuDeviceGetCount.value", "%s", n >= 1 ? ">=1" : "0");
	C("cuDeviceGetCount(NULL)", "cuDeviceGetCount", f_pi, NULL);
}

/* The names a GPUDirect or communication library resolves, as exported. */
static const char *const symbols[] = {
	"cuInit", "cuDriverGetVersion", "cuGetErrorName", "cuGetErrorString",
	"cuGetProcAddress", "cuGetProcAddress_v2",
	"cuDeviceGet", "cuDeviceGetCount", "cuDeviceGetName",
	"cuDeviceGetAttribute", "cuDeviceGetUuid", "cuDeviceGetUuid_v2",
	"cuDeviceTotalMem", "cuDeviceTotalMem_v2", "cuDeviceGetPCIBusId",
	"cuDeviceGetByPCIBusId",
	"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease",
	"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxGetState",
	"cuDevicePrimaryCtxReset_v2", "cuDevicePrimaryCtxSetFlags_v2",
	"cuCtxCreate", "cuCtxCreate_v2", "cuCtxCreate_v3", "cuCtxCreate_v4",
	"cuCtxDestroy", "cuCtxDestroy_v2", "cuCtxGetCurrent", "cuCtxSetCurrent",
	"cuCtxPushCurrent", "cuCtxPushCurrent_v2", "cuCtxPopCurrent",
	"cuCtxPopCurrent_v2", "cuCtxGetDevice", "cuCtxGetDevice_v2",
	"cuCtxSynchronize", "cuCtxGetApiVersion", "cuCtxGetFlags",
	"cuMemAlloc", "cuMemAlloc_v2", "cuMemFree", "cuMemFree_v2",
	"cuMemAllocPitch_v2", "cuMemGetInfo", "cuMemGetInfo_v2",
	"cuMemGetAddressRange_v2", "cuMemAllocHost", "cuMemAllocHost_v2",
	"cuMemFreeHost", "cuMemHostAlloc", "cuMemHostGetDevicePointer_v2",
	"cuMemHostGetFlags", "cuMemHostRegister", "cuMemHostRegister_v2",
	"cuMemHostUnregister",
	"cuMemcpy", "cuMemcpyAsync", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2",
	"cuMemcpyDtoD_v2", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2",
	"cuMemcpyDtoDAsync_v2", "cuMemcpy_ptds", "cuMemcpyAsync_ptsz",
	"cuMemcpyHtoD_v2_ptds", "cuMemcpyHtoDAsync_v2_ptsz",
	"cuMemsetD8_v2", "cuMemsetD16_v2", "cuMemsetD32_v2",
	"cuMemsetD8Async", "cuMemsetD16Async", "cuMemsetD32Async",
	"cuMemsetD2D8_v2", "cuMemsetD8_v2_ptds", "cuMemsetD8Async_ptsz",
	"cuPointerGetAttribute", "cuPointerGetAttributes", "cuPointerSetAttribute",
	"cuStreamCreate", "cuStreamCreateWithPriority", "cuStreamDestroy",
	"cuStreamDestroy_v2", "cuStreamQuery", "cuStreamSynchronize",
	"cuStreamWaitEvent", "cuStreamGetFlags", "cuStreamGetCtx",
	"cuStreamQuery_ptsz", "cuStreamSynchronize_ptsz",
	"cuEventCreate", "cuEventDestroy", "cuEventDestroy_v2", "cuEventRecord",
	"cuEventRecord_ptsz", "cuEventQuery", "cuEventSynchronize",
	"cuEventElapsedTime", "cuEventElapsedTime_v2",
	"cuStreamWaitValue32_v2", "cuStreamWaitValue64_v2",
	"cuStreamWriteValue32_v2", "cuStreamWriteValue64_v2",
	"cuStreamBatchMemOp_v2",
	"cuMemCreate", "cuMemRelease", "cuMemAddressReserve", "cuMemAddressFree",
	"cuMemMap", "cuMemUnmap", "cuMemSetAccess", "cuMemGetAccess",
	"cuMemGetAllocationGranularity", "cuMemGetAllocationPropertiesFromHandle",
	"cuMemExportToShareableHandle", "cuMemImportFromShareableHandle",
	"cuMemRetainAllocationHandle",
	"cuIpcGetMemHandle", "cuIpcOpenMemHandle", "cuIpcOpenMemHandle_v2",
	"cuIpcCloseMemHandle", "cuIpcGetEventHandle", "cuIpcOpenEventHandle",
	"cuMemGetHandleForAddressRange",
	"cuModuleLoadData", "cuLaunchKernel",
};

static void s_symbols(void)
{
	char key[96];

	for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
		snprintf(key, sizeof(key), "export.%s", symbols[i]);
		out(key, "%s", sym(symbols[i]) ? "present" : "absent");
	}
}

/*
 * cuGetProcAddress: each base name at CUDA 13.0 resolves to the same entry
 * point as one exported name; which one is the observation.
 */
static const char *const procnames[] = {
	"cuInit", "cuGetProcAddress", "cuDeviceGetUuid", "cuDeviceTotalMem",
	"cuCtxCreate", "cuCtxDestroy", "cuCtxGetDevice", "cuCtxPushCurrent",
	"cuCtxPopCurrent", "cuDevicePrimaryCtxRelease", "cuMemAlloc",
	"cuMemFree", "cuMemGetInfo", "cuMemGetAddressRange", "cuMemAllocHost",
	"cuMemHostAlloc", "cuMemHostRegister", "cuMemHostGetDevicePointer",
	"cuMemcpy", "cuMemcpyHtoD", "cuMemcpyHtoDAsync", "cuMemsetD8",
	"cuMemsetD32Async", "cuStreamCreate", "cuStreamDestroy", "cuEventRecord",
	"cuEventDestroy", "cuEventElapsedTime", "cuStreamWaitValue32",
	"cuMemCreate", "cuMemMap", "cuIpcOpenMemHandle", "cuPointerGetAttribute",
	"cuNoSuchFunction",
};

static void s_procaddr(void)
{
	static const char *const sfx[] = { "", "_v2", "_v3", "_v4", "_ptds", "_ptsz", "_v2_ptds", "_v2_ptsz" };
	static const struct { int ver; unsigned long long flags; const char *tag; } q[] = {
		{ 13000, 0, "13000" }, { 3000, 0, "3000" }, { 13000, 2, "13000.ptds" },
	};
	char key[128], name[96];
	int status;
	void *p;

	if (setup())
		return;
	for (size_t i = 0; i < sizeof(procnames) / sizeof(procnames[0]); i++) {
		for (size_t j = 0; j < sizeof(q) / sizeof(q[0]); j++) {
			const char *which = "none";

			p = NULL;
			status = -1;
			snprintf(key, sizeof(key), "proc.%s.%s", procnames[i], q[j].tag);
			CUresult r = C(NULL, "cuGetProcAddress_v2", f_proc, procnames[i], &p, q[j].ver, q[j].flags, &status);
			for (size_t k = 0; p && k < sizeof(sfx) / sizeof(sfx[0]); k++) {
				snprintf(name, sizeof(name), "%s%s", procnames[i], sfx[k]);
				if (sym(name) == p) {
					which = sfx[k][0] ? sfx[k] : "base";
					break;
				}
			}
			if (p && !strcmp(which, "none"))
				which = "unexported";
			out(key, "%s status=%d %s", r < 0 ? "absent" : rcname(r), status, which);
		}
	}
	p = NULL;
	C("proc.unversioned_name", "cuGetProcAddress", f_proc, "cuMemAlloc", &p, 13000, 0, NULL);
	out("proc.unversioned_name.same", "%s", p && p == sym("cuMemAlloc_v2") ? "yes" : "no");
}

static const struct { int num; const char *name; } attrs[] = {
#define A(n, s) { n, s }
#include "attrs.h"
#undef A
};

/* Attributes whose value belongs to this machine, not to the GPU model. */
static int machine_attr(int a)
{
	switch (a) {
	case 13: /* CLOCK_RATE */
	case 33: /* PCI_BUS_ID */
	case 34: /* PCI_DEVICE_ID */
	case 36: /* MEMORY_CLOCK_RATE */
	case 50: /* PCI_DOMAIN_ID */
	case 85: /* MULTI_GPU_BOARD_GROUP_ID */
	case 131: /* NUMA_ID */
	case 134: /* HOST_NUMA_ID */
	case 140: /* GPU_PCI_SUBSYSTEM_ID */
		return 1;
	}
	return 0;
}

static void s_device(void)
{
	char name[256], key[96];
	CUuuid u;
	size_t t = 0, f = 0;
	int v;

	if (C(NULL, "cuInit", f_u, 0))
		return;
	C("cuDeviceGet(1)", "cuDeviceGet", f_pdev_i, &dev, 1);
	C("cuDeviceGet(-1)", "cuDeviceGet", f_pdev_i, &dev, -1);
	C("cuDeviceGet(NULL)", "cuDeviceGet", f_pdev_i, NULL, 0);
	C("cuDeviceGet(0)", "cuDeviceGet", f_pdev_i, &dev, 0);
	if (!C("cuDeviceGetName", "cuDeviceGetName", f_name, name, sizeof(name), dev))
		out("cuDeviceGetName.value", "%s", name);
	memset(&u, 0, sizeof(u));
	if (!C("cuDeviceGetUuid_v2", "cuDeviceGetUuid_v2", f_uuid, &u, dev)) {
		static const char z[16];

		out("cuDeviceGetUuid_v2.value", "%s", memcmp(u.bytes, z, 16) ? "nonzero" : "zero");
	}
	C("cuDeviceGetUuid", "cuDeviceGetUuid", f_uuid, &u, dev);
	if (!C("cuDeviceTotalMem_v2", "cuDeviceTotalMem_v2", f_totalmem, &t, dev))
		out("cuDeviceTotalMem_v2.value", "%s", t >= (1ull << 30) ? ">=1GiB" : t ? "nonzero" : "zero");
	C("cuMemGetInfo_v2(no ctx)", "cuMemGetInfo_v2", f_meminfo, &f, &t);
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		CUresult r;

		v = -12345;
		snprintf(key, sizeof(key), "attr.%d.%s", attrs[i].num, attrs[i].name);
		r = C(NULL, "cuDeviceGetAttribute", f_attr, &v, attrs[i].num, dev);
		if (r)
			out(key, "%s", r < 0 ? "absent" : rcname(r));
		else if (machine_attr(attrs[i].num))
			out(key, "SUCCESS <machine>");
		else
			out(key, "SUCCESS %d", v);
	}
}

static void s_ctx(void)
{
	CUcontext c = (CUcontext)1, c2 = NULL, c3 = NULL;
	CUdevice d = -1;
	CUdeviceptr p = 0;

	if (C(NULL, "cuInit", f_u, 0))
		return;
	C(NULL, "cuDeviceGet", f_pdev_i, &dev, 0);
	if (!C("cuCtxGetCurrent(none)", "cuCtxGetCurrent", f_pctx, &c))
		out("cuCtxGetCurrent(none).value", "%s", c ? "ctx" : "NULL");
	C("cuCtxGetDevice(none)", "cuCtxGetDevice", f_pdev, &d);
	C("cuCtxSynchronize(none)", "cuCtxSynchronize", f_v);
	C("cuCtxPopCurrent_v2(empty)", "cuCtxPopCurrent_v2", f_pctx, &c);
	C("cuMemAlloc_v2(none)", "cuMemAlloc_v2", f_alloc, &p, 16);
	C("cuCtxGetCurrent(NULL)", "cuCtxGetCurrent", f_pctx, NULL);
	C("cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain", f_retain, &pctx, dev);
	C("cuDevicePrimaryCtxRetain(dev 7)", "cuDevicePrimaryCtxRetain", f_retain, &c2, 7);
	C("cuDevicePrimaryCtxRetain(NULL)", "cuDevicePrimaryCtxRetain", f_retain, NULL, dev);
	C("cuCtxSetCurrent(primary)", "cuCtxSetCurrent", f_ctx, pctx);
	if (!C("cuCtxGetDevice", "cuCtxGetDevice", f_pdev, &d))
		out("cuCtxGetDevice.value", "%d", d);
	C("cuCtxGetDevice(NULL)", "cuCtxGetDevice", f_pdev, NULL);
	C("cuCtxCreate_v4(flags 0x100)", "cuCtxCreate_v4", f_ctxcreate4, &c2, NULL, 0x100, dev);
	C("cuCtxCreate_v4(dev 7)", "cuCtxCreate_v4", f_ctxcreate4, &c2, NULL, 0, 7);
	if (!C("cuCtxCreate_v4", "cuCtxCreate_v4", f_ctxcreate4, &c2, NULL, 0, dev)) {
		C("cuCtxGetCurrent(after create)", "cuCtxGetCurrent", f_pctx, &c);
		out("cuCtxGetCurrent(after create).value", "%s", c == c2 ? "created" : c == pctx ? "primary" : "other");
		if (!C("cuCtxPopCurrent_v2", "cuCtxPopCurrent_v2", f_pctx, &c3))
			out("cuCtxPopCurrent_v2.value", "%s", c3 == c2 ? "created" : c3 == pctx ? "primary" : c3 ? "other" : "NULL");
		C("cuCtxGetCurrent(after pop)", "cuCtxGetCurrent", f_pctx, &c);
		out("cuCtxGetCurrent(after pop).value", "%s", c == c2 ? "created" : c == pctx ? "primary" : c ? "other" : "NULL");
		C("cuCtxPopCurrent_v2(again)", "cuCtxPopCurrent_v2", f_pctx, &c3);
		out("cuCtxPopCurrent_v2(again).value", "%s", c3 == c2 ? "created" : c3 == pctx ? "primary" : c3 ? "other" : "NULL");
		C("cuCtxGetCurrent(after 2 pops)", "cuCtxGetCurrent", f_pctx, &c);
		out("cuCtxGetCurrent(after 2 pops).value", "%s", c == c2 ? "created" : c == pctx ? "primary" : c ? "other" : "NULL");
		C("cuCtxPushCurrent_v2(created)", "cuCtxPushCurrent_v2", f_ctx, c2);
		C("cuCtxPushCurrent_v2(primary)", "cuCtxPushCurrent_v2", f_ctx, pctx);
		C("cuCtxPushCurrent_v2(NULL)", "cuCtxPushCurrent_v2", f_ctx, NULL);
		C("cuCtxGetCurrent(after pushes)", "cuCtxGetCurrent", f_pctx, &c);
		out("cuCtxGetCurrent(after pushes).value", "%s", c == c2 ? "created" : c == pctx ? "primary" : c ? "other" : "NULL");
		C("cuCtxPopCurrent_v2(NULL out)", "cuCtxPopCurrent_v2", f_pctx, NULL);
		C("cuCtxGetCurrent(after pop NULL)", "cuCtxGetCurrent", f_pctx, &c);
		out("cuCtxGetCurrent(after pop NULL).value", "%s", c == c2 ? "created" : c == pctx ? "primary" : c ? "other" : "NULL");
		/* memory of the created context, freed while the primary is current */
		C("cuMemAlloc_v2(in created)", "cuMemAlloc_v2", f_alloc, &p, 4096);
		C("cuCtxSetCurrent(primary again)", "cuCtxSetCurrent", f_ctx, pctx);
		C("cuMemFree_v2(other ctx's memory)", "cuMemFree_v2", f_dptr, p);
		C("cuCtxSetCurrent(created)", "cuCtxSetCurrent", f_ctx, c2);
		C("cuMemAlloc_v2(in created, 2)", "cuMemAlloc_v2", f_alloc, &p, 4096);
		C("cuCtxDestroy_v2(created, current)", "cuCtxDestroy_v2", f_ctx, c2);
		C("cuCtxGetCurrent(after destroy)", "cuCtxGetCurrent", f_pctx, &c);
		out("cuCtxGetCurrent(after destroy).value", "%s", c == c2 ? "destroyed" : c == pctx ? "primary" : c ? "other" : "NULL");
		C("cuMemAlloc_v2(after destroy)", "cuMemAlloc_v2", f_alloc, &p, 16);
		C("cuCtxSetCurrent(NULL)", "cuCtxSetCurrent", f_ctx, NULL);
	}
	C("cuCtxDestroy_v2(NULL)", "cuCtxDestroy_v2", f_ctx, NULL);
	C("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease_v2", f_dev, dev);
	C("cuDevicePrimaryCtxRelease_v2(unretained)", "cuDevicePrimaryCtxRelease_v2", f_dev, dev);
	C("cuDevicePrimaryCtxRelease_v2(dev 7)", "cuDevicePrimaryCtxRelease_v2", f_dev, 7);
}

static void alloc_line(const char *tag, int idx, size_t size, CUdeviceptr *prev,
		       unsigned long long *prev_id, CUdeviceptr *got)
{
	CUdeviceptr p = 0, base = 0;
	unsigned long long id = 0;
	size_t rs = 0;
	char key[96], d[32], did[32];
	CUresult r;

	snprintf(key, sizeof(key), "alloc.%s.%02d.%zu", tag, idx, size);
	r = C(NULL, "cuMemAlloc_v2", f_alloc, &p, size);
	if (r) {
		out(key, "%s", r < 0 ? "absent" : rcname(r));
		*got = 0;
		return;
	}
	C(NULL, "cuPointerGetAttribute", f_getattr, &id, PA_BUFFER_ID, p);
	C(NULL, "cuMemGetAddressRange_v2", f_range, &base, &rs, p);
	delta(d, sizeof(d), p, *prev);
	if (*prev_id)
		snprintf(did, sizeof(did), "%+lld", (long long)(id - *prev_id));
	else
		snprintf(did, sizeof(did), "none");
	out(key, "align=%s delta=%s id_delta=%s range=%s", align_class(p), d, did,
	    base == p && rs == size ? "exact" : "other");
	*prev = p;
	*prev_id = id;
	*got = p;
}

static void s_alloc(void)
{
	static const size_t sizes[] = {
		1, 8, 255, 256, 257, 512, 1000, 1024, 4095, 4096, 4097, 8192,
		16384, 32767, 32768, 32769, 65535, 65536, 65537, 131072, 262144,
		524288, 1048575, 1048576, 1048577, 2097151, 2097152, 2097153,
		4194304, 8388608, 16777216, 33554432, 67108864,
	};
	static const size_t inter[] = { 16, 2 << 20, 16, 4096, 1 << 20, 16, 64 << 10, 100, 3 << 20, 256 };
	CUdeviceptr prev = 0, got[64], p, q;
	unsigned long long pid = 0, id1 = 0, id2 = 0;
	size_t free_b = 0, total_b = 0;
	char key[96];

	if (setup())
		return;
	if (!C("cuMemGetInfo_v2", "cuMemGetInfo_v2", f_meminfo, &free_b, &total_b))
		out("cuMemGetInfo_v2.value", "%s", free_b && free_b <= total_b ? "0<free<=total" : "other");
	C("cuMemGetInfo_v2(NULL)", "cuMemGetInfo_v2", f_meminfo, NULL, &total_b);
	C("cuMemAlloc_v2(0 bytes)", "cuMemAlloc_v2", f_alloc, &p, 0);
	C("cuMemAlloc_v2(NULL)", "cuMemAlloc_v2", f_alloc, NULL, 16);
	C("cuMemAlloc_v2(1 PiB)", "cuMemAlloc_v2", f_alloc, &p, 1ull << 50);
	/* every size class, each kept */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		alloc_line("seq", (int)i, sizes[i], &prev, &pid, &got[i]);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (got[i])
			C(NULL, "cuMemFree_v2", f_dptr, got[i]);
	/* each size alone: allocate, free, allocate again */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		CUdeviceptr a = 0, b = 0;

		snprintf(key, sizeof(key), "realloc.%zu", sizes[i]);
		if (C(NULL, "cuMemAlloc_v2", f_alloc, &a, sizes[i]))
			continue;
		C(NULL, "cuPointerGetAttribute", f_getattr, &id1, PA_BUFFER_ID, a);
		C(NULL, "cuMemFree_v2", f_dptr, a);
		C(NULL, "cuMemAlloc_v2", f_alloc, &b, sizes[i]);
		C(NULL, "cuPointerGetAttribute", f_getattr, &id2, PA_BUFFER_ID, b);
		out(key, "align=%s same_va=%s new_id=%s", align_class(a),
		    a == b ? "yes" : "no", id1 != id2 ? "yes" : "no");
		C(NULL, "cuMemFree_v2", f_dptr, b);
	}
	/* interleaved sizes */
	prev = 0;
	pid = 0;
	for (size_t i = 0; i < sizeof(inter) / sizeof(inter[0]); i++)
		alloc_line("inter", (int)i, inter[i], &prev, &pid, &got[i]);
	/* free every other one, then the same sizes again */
	for (size_t i = 0; i < sizeof(inter) / sizeof(inter[0]); i += 2)
		C(NULL, "cuMemFree_v2", f_dptr, got[i]);
	for (size_t i = 0; i < sizeof(inter) / sizeof(inter[0]); i += 2) {
		CUdeviceptr old = got[i];

		alloc_line("after_free", (int)i, inter[i], &prev, &pid, &got[i]);
		snprintf(key, sizeof(key), "after_free.%02zu.%zu.same_va", i, inter[i]);
		out(key, "%s", got[i] == old ? "yes" : "no");
	}
	for (size_t i = 0; i < sizeof(inter) / sizeof(inter[0]); i++)
		C(NULL, "cuMemFree_v2", f_dptr, got[i]);
	/* 4 KiB allocations: how they pack */
	prev = 0;
	pid = 0;
	for (int i = 0; i < 6; i++)
		alloc_line("pack4k", i, 4096, &prev, &pid, &got[i]);
	for (int i = 0; i < 6; i++)
		C(NULL, "cuMemFree_v2", f_dptr, got[i]);
	/* double free, interior pointer, NULL */
	if (!C("cuMemAlloc_v2(1 MiB)", "cuMemAlloc_v2", f_alloc, &q, 1 << 20)) {
		C("cuMemFree_v2(interior)", "cuMemFree_v2", f_dptr, q + 4096);
		C("cuMemFree_v2", "cuMemFree_v2", f_dptr, q);
		C("cuMemFree_v2(double)", "cuMemFree_v2", f_dptr, q);
		C("freed.BUFFER_ID", "cuPointerGetAttribute", f_getattr, &id1, PA_BUFFER_ID, q);
		C("freed.cuMemGetAddressRange_v2", "cuMemGetAddressRange_v2", f_range, &p, &free_b, q);
		C("freed.cuMemsetD8_v2", "cuMemsetD8_v2", f_memset8, q, 0, 16);
	}
	C("cuMemFree_v2(0)", "cuMemFree_v2", f_dptr, 0);
	if (!C("cuMemAllocPitch_v2", "cuMemAllocPitch_v2", f_pitch, &p, &free_b, 100, 10, 4)) {
		out("cuMemAllocPitch_v2.pitch", "%zu", free_b);
		out("cuMemAllocPitch_v2.align", "%s", align_class(p));
		C(NULL, "cuMemFree_v2", f_dptr, p);
	}
	C("cuMemAllocPitch_v2(elem 3)", "cuMemAllocPitch_v2", f_pitch, &p, &free_b, 100, 10, 3);
}

static void pointer_lines(const char *tag, CUdeviceptr p)
{
	static const struct { int a; const char *n; int sz; } pa[] = {
		{ PA_CONTEXT, "CONTEXT", 8 }, { PA_MEMORY_TYPE, "MEMORY_TYPE", 4 },
		{ PA_DEVICE_POINTER, "DEVICE_POINTER", 8 },
		{ PA_HOST_POINTER, "HOST_POINTER", 8 },
		{ PA_SYNC_MEMOPS, "SYNC_MEMOPS", 4 }, { PA_BUFFER_ID, "BUFFER_ID", 8 },
		{ PA_IS_MANAGED, "IS_MANAGED", 4 },
		{ PA_DEVICE_ORDINAL, "DEVICE_ORDINAL", 4 },
		{ PA_IS_LEGACY_CUDA_IPC_CAPABLE, "IS_LEGACY_CUDA_IPC_CAPABLE", 4 },
		{ PA_RANGE_START_ADDR, "RANGE_START_ADDR", 8 },
		{ PA_RANGE_SIZE, "RANGE_SIZE", 8 }, { PA_MAPPED, "MAPPED", 4 },
		{ PA_ALLOWED_HANDLE_TYPES, "ALLOWED_HANDLE_TYPES", 8 },
		{ PA_IS_GPU_DIRECT_RDMA_CAPABLE, "IS_GPU_DIRECT_RDMA_CAPABLE", 4 },
		{ PA_ACCESS_FLAGS, "ACCESS_FLAGS", 4 },
		{ PA_MAPPING_SIZE, "MAPPING_SIZE", 8 },
		{ PA_MAPPING_BASE_ADDR, "MAPPING_BASE_ADDR", 8 },
		{ PA_MEMORY_BLOCK_ID, "MEMORY_BLOCK_ID", 8 },
	};
	char key[128];

	for (size_t i = 0; i < sizeof(pa) / sizeof(pa[0]); i++) {
		unsigned long long v = 0xdeadbeefdeadbeefull;
		CUresult r;

		snprintf(key, sizeof(key), "ptr.%s.%s", tag, pa[i].n);
		r = C(NULL, "cuPointerGetAttribute", f_getattr, &v, pa[i].a, p);
		if (r) {
			out(key, "%s", r < 0 ? "absent" : rcname(r));
			continue;
		}
		if (pa[i].sz == 4)
			v &= 0xffffffffull;
		/* addresses and ids: relative to the pointer, or a class */
		switch (pa[i].a) {
		case PA_CONTEXT:
			out(key, "SUCCESS %s", (CUcontext)(uintptr_t)v == pctx ? "primary" : v ? "other" : "NULL");
			break;
		case PA_DEVICE_POINTER: case PA_HOST_POINTER:
		case PA_RANGE_START_ADDR: case PA_MAPPING_BASE_ADDR:
			out(key, "SUCCESS %s", !v ? "0" : v == p ? "=ptr" : "other");
			break;
		case PA_BUFFER_ID: case PA_MEMORY_BLOCK_ID:
			out(key, "SUCCESS %s", v ? "nonzero" : "0");
			break;
		default:
			out(key, "SUCCESS %llu", v);
		}
	}
}

static void s_pointer(void)
{
	CUdeviceptr d = 0;
	char *h = malloc(4096);
	unsigned int one = 1, mt = 0;
	int attrs2[3] = { PA_MEMORY_TYPE, PA_BUFFER_ID, PA_DEVICE_ORDINAL };
	unsigned long long id = 0;
	int ord = 0;
	void *data[3] = { &mt, &id, &ord };

	if (setup() || !h)
		return;
	if (C("cuMemAlloc_v2(64 KiB)", "cuMemAlloc_v2", f_alloc, &d, 65536))
		return;
	pointer_lines("device", d);
	pointer_lines("device+100", d + 100);
	pointer_lines("host_malloc", (CUdeviceptr)(uintptr_t)h);
	pointer_lines("null", 0);
	mt = 77;
	C("attrs(host)", "cuPointerGetAttributes", f_getattrs, 3, attrs2, data, (CUdeviceptr)(uintptr_t)h);
	out("attrs(host).values", "type=%u id=%llu ord=%d", mt, id, ord);
	C("attrs(device)", "cuPointerGetAttributes", f_getattrs, 3, attrs2, data, d);
	out("attrs(device).values", "type=%u id=%s ord=%d", mt, id ? "nonzero" : "0", ord);
	C("set.SYNC_MEMOPS(device)", "cuPointerSetAttribute", f_setattr, &one, PA_SYNC_MEMOPS, d);
	C("set.SYNC_MEMOPS(host)", "cuPointerSetAttribute", f_setattr, &one, PA_SYNC_MEMOPS, (CUdeviceptr)(uintptr_t)h);
	C("set.BUFFER_ID(device)", "cuPointerSetAttribute", f_setattr, &one, PA_BUFFER_ID, d);
	C("get(NULL data)", "cuPointerGetAttribute", f_getattr, NULL, PA_MEMORY_TYPE, d);
	C("get(attr 999)", "cuPointerGetAttribute", f_getattr, &id, 999, d);
	{
		/* The three attributes UCX 1.22's cuda_ipc asks for at once:
		 * IS_LEGACY_CUDA_IPC_CAPABLE, ALLOWED_HANDLE_TYPES and
		 * MEMPOOL_HANDLE (10, 14, 17). */
		int attrs3[3] = { 10, 14, 17 };
		unsigned int legacy = 7;
		unsigned long long types = 7;
		void *pool = &legacy;
		void *data3[3] = { &legacy, &types, &pool };

		C("attrs(device, ucx ipc)", "cuPointerGetAttributes", f_getattrs, 3, attrs3, data3, d);
		out("attrs(device, ucx ipc).values", "legacy=%u types=%llu pool=%s",
		    legacy, types, pool ? "non-NULL" : "NULL");
	}
	C(NULL, "cuMemFree_v2", f_dptr, d);
	pointer_lines("freed", d);
	C("attrs(freed)", "cuPointerGetAttributes", f_getattrs, 3, attrs2, data, d);
	free(h);
}

static void s_host(void)
{
	void *h = NULL, *h2 = NULL;
	CUdeviceptr dp = 0;
	char *m;
	char key[64];
	unsigned int fl;

	if (setup())
		return;
	if (!C("cuMemAllocHost_v2", "cuMemAllocHost_v2", f_allochost, &h, 1 << 20)) {
		out("cuMemAllocHost_v2.align", "%s", align_class((uintptr_t)h));
		pointer_lines("allochost", (CUdeviceptr)(uintptr_t)h);
		if (!C("cuMemHostGetDevicePointer_v2", "cuMemHostGetDevicePointer_v2", f_hostdevptr, &dp, h, 0))
			out("cuMemHostGetDevicePointer_v2.value", "%s", dp == (uintptr_t)h ? "=host" : "other");
		C("cuMemHostGetDevicePointer_v2(flags 1)", "cuMemHostGetDevicePointer_v2", f_hostdevptr, &dp, h, 1);
		memset(h, 0x5a, 4096);
		C("cuMemFreeHost", "cuMemFreeHost", f_ptr, h);
	}
	C("cuMemAllocHost_v2(0)", "cuMemAllocHost_v2", f_allochost, &h, 0);
	C("cuMemAllocHost_v2(NULL)", "cuMemAllocHost_v2", f_allochost, NULL, 16);
	for (fl = 0; fl < 16; fl++) {
		snprintf(key, sizeof(key), "cuMemHostAlloc(flags %u)", fl);
		if (!C(key, "cuMemHostAlloc", f_hostalloc, &h2, 4096, fl))
			C(NULL, "cuMemFreeHost", f_ptr, h2);
	}
	m = malloc(64);
	C("cuMemFreeHost(malloc)", "cuMemFreeHost", f_ptr, m);
	free(m);
	m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return;
	C("cuMemHostGetDevicePointer_v2(unregistered)", "cuMemHostGetDevicePointer_v2", f_hostdevptr, &dp, m, 0);
	if (!C("cuMemHostRegister_v2", "cuMemHostRegister_v2", f_hostreg, m, 1 << 20, 0)) {
		pointer_lines("registered", (CUdeviceptr)(uintptr_t)m);
		if (!C("registered.cuMemHostGetDevicePointer_v2", "cuMemHostGetDevicePointer_v2", f_hostdevptr, &dp, m + 100, 0))
			out("registered.devptr", "%s", dp == (uintptr_t)(m + 100) ? "=host" : "other");
		C("cuMemHostRegister_v2(again)", "cuMemHostRegister_v2", f_hostreg, m, 1 << 20, 0);
		C("cuMemHostRegister_v2(overlap)", "cuMemHostRegister_v2", f_hostreg, m + 4096, 4096, 0);
		C("cuMemHostUnregister(interior)", "cuMemHostUnregister", f_ptr, m + 4096);
		C("cuMemHostUnregister", "cuMemHostUnregister", f_ptr, m);
		C("cuMemHostUnregister(again)", "cuMemHostUnregister", f_ptr, m);
	}
	C("cuMemHostRegister_v2(unaligned)", "cuMemHostRegister_v2", f_hostreg, m + 100, 5000, 0);
	C("cuMemHostUnregister(unaligned)", "cuMemHostUnregister", f_ptr, m + 100);
	C("cuMemHostRegister_v2(flags 0x40)", "cuMemHostRegister_v2", f_hostreg, m, 4096, 0x40);
	C("cuMemHostRegister_v2(size 0)", "cuMemHostRegister_v2", f_hostreg, m, 0, 0);
	C("cuMemHostRegister_v2(NULL)", "cuMemHostRegister_v2", f_hostreg, NULL, 4096, 0);
	C("cuMemHostRegister_v2(DEVICEMAP)", "cuMemHostRegister_v2", f_hostreg, m, 8192, 2);
	C("cuMemHostUnregister(DEVICEMAP)", "cuMemHostUnregister", f_ptr, m);
	munmap(m, 1 << 20);
}

static int check_bytes(const unsigned char *b, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != v)
			return 0;
	return 1;
}

static void s_copy(void)
{
	CUdeviceptr a = 0, b = 0;
	unsigned char src[8192], dst[8192];
	CUstream s = NULL;
	CUresult r;

	if (setup())
		return;
	if (C(NULL, "cuMemAlloc_v2", f_alloc, &a, 8192) || C(NULL, "cuMemAlloc_v2", f_alloc, &b, 8192))
		return;
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 13 + 7);
	C("cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2", f_htod, a, src, 8192);
	C("cuMemcpyDtoD_v2", "cuMemcpyDtoD_v2", f_dtod, b, a, 8192);
	memset(dst, 0, sizeof(dst));
	C("cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2", f_dtoh, dst, b, 8192);
	out("roundtrip", "%s", memcmp(src, dst, 8192) ? "differs" : "equal");
	memset(dst, 0, sizeof(dst));
	r = C("cuMemcpy(DtoH)", "cuMemcpy", f_dtod, (CUdeviceptr)(uintptr_t)dst, a, 8192);
	if (!r)
		out("cuMemcpy(DtoH).data", "%s", memcmp(src, dst, 8192) ? "differs" : "equal");
	C("cuMemcpy(HtoH)", "cuMemcpy", f_dtod, (CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, 16);
	C("cuMemcpy(HtoD)", "cuMemcpy", f_dtod, b, (CUdeviceptr)(uintptr_t)src, 8192);
	C("cuMemsetD8_v2", "cuMemsetD8_v2", f_memset8, a, 0xab, 8192);
	C(NULL, "cuMemcpyDtoH_v2", f_dtoh, dst, a, 8192);
	out("cuMemsetD8_v2.data", "%s", check_bytes(dst, 8192, 0xab) ? "set" : "differs");
	C("cuMemsetD16_v2", "cuMemsetD16_v2", f_memset16, a, 0x1234, 4096);
	C(NULL, "cuMemcpyDtoH_v2", f_dtoh, dst, a, 8192);
	out("cuMemsetD16_v2.data", "%02x%02x%02x%02x", dst[0], dst[1], dst[8190], dst[8191]);
	C("cuMemsetD32_v2", "cuMemsetD32_v2", f_memset32, a, 0xdeadbeef, 2048);
	C(NULL, "cuMemcpyDtoH_v2", f_dtoh, dst, a, 8192);
	out("cuMemsetD32_v2.data", "%02x%02x%02x%02x", dst[0], dst[1], dst[2], dst[3]);
	C("cuMemsetD16_v2(odd ptr)", "cuMemsetD16_v2", f_memset16, a + 1, 0, 4);
	C("cuMemsetD32_v2(ptr+2)", "cuMemsetD32_v2", f_memset32, a + 2, 0, 4);
	C("cuMemsetD8_v2(past end)", "cuMemsetD8_v2", f_memset8, a, 0, 8193);
	C("cuMemcpyHtoD_v2(past end)", "cuMemcpyHtoD_v2", f_htod, a + 4096, src, 8192);
	C("cuMemcpyHtoD_v2(NULL src)", "cuMemcpyHtoD_v2", f_htod, a, NULL, 16);
	C("cuMemcpyHtoD_v2(0 bytes)", "cuMemcpyHtoD_v2", f_htod, a, src, 0);
	C("cuMemcpyDtoH_v2(dst 0)", "cuMemcpyDtoH_v2", f_dtoh, NULL, a, 16);
	C("cuMemcpyDtoD_v2(unknown src)", "cuMemcpyDtoD_v2", f_dtod, a, 0x10, 16);
	/* async on the NULL stream and on a created one */
	C("cuMemcpyHtoDAsync_v2(stream 0)", "cuMemcpyHtoDAsync_v2", f_htod_a, a, src, 8192, NULL);
	if (!C("cuStreamCreate", "cuStreamCreate", f_streamcreate, &s, 0)) {
		C("cuMemsetD8Async(stream)", "cuMemsetD8Async", f_memset8_a, b, 0x11, 8192, s);
		C("cuMemcpyDtoDAsync_v2(stream)", "cuMemcpyDtoDAsync_v2", f_dtod_a, b, a, 4096, s);
		memset(dst, 0, sizeof(dst));
		C("cuMemcpyDtoHAsync_v2(stream)", "cuMemcpyDtoHAsync_v2", f_dtoh_a, dst, b, 8192, s);
		C("cuStreamSynchronize", "cuStreamSynchronize", f_stream, s);
		out("async.order", "%s", !memcmp(dst, src, 4096) && check_bytes(dst + 4096, 4096, 0x11) ? "in order" : "wrong");
		C("cuMemsetD32Async(stream)", "cuMemsetD32Async", f_memset32_a, b, 7, 2048, s);
		C("cuMemcpyAsync(stream)", "cuMemcpyAsync", f_dtod_a, (CUdeviceptr)(uintptr_t)dst, b, 8, s);
		C("cuStreamSynchronize(2)", "cuStreamSynchronize", f_stream, s);
		out("cuMemsetD32Async.data", "%02x%02x%02x%02x", dst[0], dst[1], dst[2], dst[3]);
		C("cuMemcpyHtoDAsync_v2(past end)", "cuMemcpyHtoDAsync_v2", f_htod_a, a + 4096, src, 8192, s);
		C("cuStreamDestroy_v2", "cuStreamDestroy_v2", f_stream, s);
	}
	C(NULL, "cuMemFree_v2", f_dptr, a);
	C("cuMemcpyHtoD_v2(freed)", "cuMemcpyHtoD_v2", f_htod, a, src, 16);
	C("cuMemcpyDtoH_v2(freed)", "cuMemcpyDtoH_v2", f_dtoh, dst, a, 16);
	C(NULL, "cuMemFree_v2", f_dptr, b);
}

static void s_stream(void)
{
	CUstream s = NULL, s2 = NULL;
	CUevent e1 = NULL, e2 = NULL, e3 = NULL;
	unsigned int fl = 99;
	float ms = -1;
	CUcontext c = NULL;

	if (setup())
		return;
	C("cuStreamCreate(flags 2)", "cuStreamCreate", f_streamcreate, &s, 2);
	C("cuStreamCreate(NULL)", "cuStreamCreate", f_streamcreate, NULL, 0);
	if (C("cuStreamCreate(NON_BLOCKING)", "cuStreamCreate", f_streamcreate, &s, 1))
		return;
	if (!C("cuStreamGetFlags", "cuStreamGetFlags", f_streamflags, s, &fl))
		out("cuStreamGetFlags.value", "%u", fl);
	if (!C("cuStreamGetCtx", "cuStreamGetCtx", f_streamflags, s, (unsigned int *)&c))
		out("cuStreamGetCtx.value", "%s", c == pctx ? "primary" : "other");
	C("cuStreamQuery(idle)", "cuStreamQuery", f_stream, s);
	C("cuStreamQuery(NULL stream)", "cuStreamQuery", f_stream, NULL);
	C("cuStreamSynchronize(NULL stream)", "cuStreamSynchronize", f_stream, NULL);
	C("cuStreamCreate(default)", "cuStreamCreate", f_streamcreate, &s2, 0);
	C("cuEventCreate(flags 0x10)", "cuEventCreate", f_eventcreate, &e1, 0x10);
	C("cuEventCreate(NULL)", "cuEventCreate", f_eventcreate, NULL, 0);
	C("cuEventCreate(default)", "cuEventCreate", f_eventcreate, &e1, 0);
	C("cuEventCreate(DISABLE_TIMING)", "cuEventCreate", f_eventcreate, &e2, 2);
	C("cuEventCreate(BLOCKING_SYNC)", "cuEventCreate", f_eventcreate, &e3, 1);
	C("cuEventQuery(unrecorded)", "cuEventQuery", f_event, e1);
	C("cuEventSynchronize(unrecorded)", "cuEventSynchronize", f_event, e1);
	C("cuEventElapsedTime_v2(unrecorded)", "cuEventElapsedTime_v2", f_elapsed, &ms, e1, e3);
	C("cuEventRecord(stream)", "cuEventRecord", f_eventrecord, e1, s);
	C("cuEventRecord(NULL stream)", "cuEventRecord", f_eventrecord, e3, NULL);
	C("cuEventRecord(no timing)", "cuEventRecord", f_eventrecord, e2, s);
	C("cuEventSynchronize", "cuEventSynchronize", f_event, e3);
	C("cuEventQuery(recorded)", "cuEventQuery", f_event, e1);
	if (!C("cuEventElapsedTime_v2", "cuEventElapsedTime_v2", f_elapsed, &ms, e1, e3))
		out("cuEventElapsedTime_v2.value", "%s", ms >= 0 ? ">=0" : "<0");
	C("cuEventElapsedTime_v2(no timing)", "cuEventElapsedTime_v2", f_elapsed, &ms, e1, e2);
	C("cuEventElapsedTime_v2(NULL out)", "cuEventElapsedTime_v2", f_elapsed, NULL, e1, e3);
	C("cuStreamWaitEvent", "cuStreamWaitEvent", f_waitevent, s2, e1, 0);
	C("cuStreamWaitEvent(flags 4)", "cuStreamWaitEvent", f_waitevent, s2, e1, 4);
	C("cuStreamQuery(after wait)", "cuStreamQuery", f_stream, s2);
	C("cuEventRecord(NULL event)", "cuEventRecord", f_eventrecord, NULL, s);
	C("cuEventQuery(NULL)", "cuEventQuery", f_event, NULL);
	C("cuEventDestroy_v2", "cuEventDestroy_v2", f_event, e1);
	C("cuEventDestroy_v2(e2)", "cuEventDestroy_v2", f_event, e2);
	C("cuEventDestroy_v2(e3)", "cuEventDestroy_v2", f_event, e3);
	C("cuEventDestroy_v2(NULL)", "cuEventDestroy_v2", f_event, NULL);
	C("cuStreamDestroy_v2", "cuStreamDestroy_v2", f_stream, s);
	C("cuStreamDestroy_v2(s2)", "cuStreamDestroy_v2", f_stream, s2);
	C("cuStreamDestroy_v2(NULL)", "cuStreamDestroy_v2", f_stream, NULL);
}

static void s_vmm(void)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	CUmemGenericAllocationHandle h = 0, h2 = 0;
	CUdeviceptr va = 0, va2 = 0, base = 0;
	size_t gmin = 0, grec = 0, rs = 0;
	unsigned char buf[64];
	char key[96];

	if (setup())
		return;
	memset(&prop, 0, sizeof(prop));
	prop.type = 1;			/* CU_MEM_ALLOCATION_TYPE_PINNED */
	prop.location.type = 1;		/* CU_MEM_LOCATION_TYPE_DEVICE */
	prop.location.id = dev;
	for (int rdma = 0; rdma < 2; rdma++) {
		prop.allocFlags.gpuDirectRDMACapable = (unsigned char)rdma;
		snprintf(key, sizeof(key), "granularity.min.rdma%d", rdma);
		if (!C(key, "cuMemGetAllocationGranularity", f_gran, &gmin, &prop, 0)) {
			strcat(key, ".value");
			out(key, "%zu", gmin);
		}
		snprintf(key, sizeof(key), "granularity.rec.rdma%d", rdma);
		if (!C(key, "cuMemGetAllocationGranularity", f_gran, &grec, &prop, 1)) {
			strcat(key, ".value");
			out(key, "%zu", grec);
		}
	}
	C("granularity(flags 2)", "cuMemGetAllocationGranularity", f_gran, &gmin, &prop, 2);
	C("granularity(NULL prop)", "cuMemGetAllocationGranularity", f_gran, &gmin, NULL, 0);
	prop.location.id = 7;
	C("granularity(dev 7)", "cuMemGetAllocationGranularity", f_gran, &gmin, &prop, 0);
	prop.location.id = dev;
	prop.type = 0;
	C("granularity(type 0)", "cuMemGetAllocationGranularity", f_gran, &gmin, &prop, 0);
	prop.type = 1;
	if (!gmin)
		gmin = 2 << 20;
	prop.allocFlags.gpuDirectRDMACapable = 1;
	C("cuMemCreate(size gran/2)", "cuMemCreate", f_memcreate, &h, gmin / 2, &prop, 0);
	C("cuMemCreate(size 0)", "cuMemCreate", f_memcreate, &h, 0, &prop, 0);
	C("cuMemCreate(flags 1)", "cuMemCreate", f_memcreate, &h, gmin, &prop, 1);
	C("cuMemCreate(NULL)", "cuMemCreate", f_memcreate, NULL, gmin, &prop, 0);
	if (C("cuMemCreate(2 gran)", "cuMemCreate", f_memcreate, &h, 2 * gmin, &prop, 0))
		return;
	C("cuMemAddressReserve(size gran/2)", "cuMemAddressReserve", f_reserve, &va, gmin / 2, 0, 0, 0);
	C("cuMemAddressReserve(align 3)", "cuMemAddressReserve", f_reserve, &va, gmin, 3, 0, 0);
	if (C("cuMemAddressReserve(4 gran)", "cuMemAddressReserve", f_reserve, &va, 4 * gmin, 0, 0, 0))
		return;
	out("cuMemAddressReserve.align", "%s", align_class(va));
	if (!C("cuMemAddressReserve(second)", "cuMemAddressReserve", f_reserve, &va2, gmin, 0, 0, 0))
		C("cuMemAddressFree(second)", "cuMemAddressFree", f_addrfree, va2, gmin);
	pointer_lines("reserved", va);
	C("cuMemMap(offset gran/2)", "cuMemMap", f_map, va, gmin, gmin / 2, h, 0);
	C("cuMemMap(va unaligned)", "cuMemMap", f_map, va + 4096, gmin, 0, h, 0);
	C("cuMemMap(size > handle)", "cuMemMap", f_map, va, 3 * gmin, 0, h, 0);
	C("cuMemMap(flags 1)", "cuMemMap", f_map, va, gmin, 0, h, 1);
	C("cuMemMap", "cuMemMap", f_map, va, 2 * gmin, 0, h, 0);
	C("cuMemMap(again)", "cuMemMap", f_map, va, 2 * gmin, 0, h, 0);
	pointer_lines("mapped_noaccess", va);
	memset(&acc, 0, sizeof(acc));
	acc.location.type = 1;
	acc.location.id = dev;
	acc.flags = 3;
	C("cuMemSetAccess(unmapped part)", "cuMemSetAccess", f_setaccess, va, 4 * gmin, &acc, 1);
	C("cuMemSetAccess(count 0)", "cuMemSetAccess", f_setaccess, va, 2 * gmin, &acc, 0);
	C("cuMemSetAccess", "cuMemSetAccess", f_setaccess, va, 2 * gmin, &acc, 1);
	pointer_lines("mapped", va);
	pointer_lines("mapped+gran", va + gmin);
	if (!C("vmm.cuMemGetAddressRange_v2", "cuMemGetAddressRange_v2", f_range, &base, &rs, va + 100))
		out("vmm.range", "%s size=%s", base == va ? "=va" : "other", rs == 2 * gmin ? "2gran" : rs == gmin ? "gran" : "other");
	memset(buf, 0x3c, sizeof(buf));
	C("vmm.cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2", f_htod, va + gmin - 32, buf, 64);
	memset(buf, 0, sizeof(buf));
	C("vmm.cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2", f_dtoh, buf, va + gmin - 32, 64);
	out("vmm.data", "%s", check_bytes(buf, 64, 0x3c) ? "equal" : "differs");
	C("vmm.cuMemFree_v2", "cuMemFree_v2", f_dptr, va);
	C("cuMemRelease(mapped)", "cuMemRelease", f_release, h);
	C("vmm.after_release.cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2", f_dtoh, buf, va, 64);
	C("cuMemUnmap(part)", "cuMemUnmap", f_unmap, va, gmin);
	C("cuMemUnmap(unaligned)", "cuMemUnmap", f_unmap, va + 4096, gmin);
	C("cuMemUnmap", "cuMemUnmap", f_unmap, va, 2 * gmin);
	C("cuMemUnmap(again)", "cuMemUnmap", f_unmap, va, 2 * gmin);
	C("cuMemAddressFree(part)", "cuMemAddressFree", f_addrfree, va, gmin);
	C("cuMemAddressFree", "cuMemAddressFree", f_addrfree, va, 4 * gmin);
	C("cuMemAddressFree(again)", "cuMemAddressFree", f_addrfree, va, 4 * gmin);
	/* without gpuDirectRDMACapable */
	prop.allocFlags.gpuDirectRDMACapable = 0;
	if (!C("cuMemCreate(no rdma)", "cuMemCreate", f_memcreate, &h2, gmin, &prop, 0)) {
		if (!C(NULL, "cuMemAddressReserve", f_reserve, &va, gmin, 0, 0, 0)) {
			C("norda.cuMemMap", "cuMemMap", f_map, va, gmin, 0, h2, 0);
			C("norda.cuMemSetAccess", "cuMemSetAccess", f_setaccess, va, gmin, &acc, 1);
			pointer_lines("nordma", va);
			C(NULL, "cuMemUnmap", f_unmap, va, gmin);
			C(NULL, "cuMemAddressFree", f_addrfree, va, gmin);
		}
		C("cuMemRelease(no rdma)", "cuMemRelease", f_release, h2);
	}
	/* last: handles that no longer exist */
	C("cuMemRelease(released)", "cuMemRelease", f_release, h);
}

typedef CUresult (*f_wait32)(CUstream, CUdeviceptr, unsigned int, unsigned int);
typedef CUresult (*f_wait64)(CUstream, CUdeviceptr, unsigned long long, unsigned int);
typedef struct { char reserved[64]; } CUipcHandle;
typedef CUresult (*f_ipcget)(CUipcHandle *, CUdeviceptr);
typedef CUresult (*f_ipcopen)(CUdeviceptr *, CUipcHandle, unsigned int);
typedef CUresult (*f_ipcevget)(CUipcHandle *, CUevent);
typedef CUresult (*f_ipcevopen)(CUevent *, CUipcHandle);
typedef CUresult (*f_rangehandle)(void *, CUdeviceptr, size_t, int, unsigned long long);
typedef CUresult (*f_launch)(void *, unsigned int, unsigned int, unsigned int,
			     unsigned int, unsigned int, unsigned int,
			     unsigned int, CUstream, void **, void **);

static volatile unsigned int *release_word;

static void *release_later(void *arg)
{
	(void)arg;
	usleep(200 * 1000);
	*release_word = 5;
	return NULL;
}

/* Stream memory operations: a wait on a word the host writes later. */
static void s_memops(void)
{
	CUstream s = NULL;
	CUdeviceptr d = 0, hd = 0;
	unsigned int *m;
	unsigned long long v64 = 0;
	unsigned int v32 = 0;
	pthread_t t;

	if (setup())
		return;
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || C(NULL, "cuMemAlloc_v2", f_alloc, &d, 4096) ||
	    C("cuStreamCreate", "cuStreamCreate", f_streamcreate, &s, 1))
		return;
	C("cuMemsetD8_v2", "cuMemsetD8_v2", f_memset8, d, 0, 4096);
	C("write32", "cuStreamWriteValue32_v2", f_wait32, s, d, 0x1234, 0);
	C("write32(NO_MEMORY_BARRIER)", "cuStreamWriteValue32_v2", f_wait32, s, d + 4, 0x5678, 1);
	C("write32(flags 4)", "cuStreamWriteValue32_v2", f_wait32, s, d, 1, 4);
	C("write32(unaligned)", "cuStreamWriteValue32_v2", f_wait32, s, d + 2, 1, 0);
	C("write64", "cuStreamWriteValue64_v2", f_wait64, s, d + 8, 0x1122334455667788ull, 0);
	C("write64(unaligned)", "cuStreamWriteValue64_v2", f_wait64, s, d + 4, 1, 0);
	C("wait32(satisfied GEQ)", "cuStreamWaitValue32_v2", f_wait32, s, d, 0x1000, 0);
	C("wait32(satisfied EQ)", "cuStreamWaitValue32_v2", f_wait32, s, d, 0x1234, 1);
	C("wait32(satisfied AND)", "cuStreamWaitValue32_v2", f_wait32, s, d, 0x4, 2);
	C("wait64(satisfied)", "cuStreamWaitValue64_v2", f_wait64, s, d + 8, 0x1122334455667788ull, 1);
	C("wait32(flags 9)", "cuStreamWaitValue32_v2", f_wait32, s, d, 0, 9);
	C("wait32(unaligned)", "cuStreamWaitValue32_v2", f_wait32, s, d + 1, 0, 0);
	C("cuStreamSynchronize", "cuStreamSynchronize", f_stream, s);
	C(NULL, "cuMemcpyDtoH_v2", f_dtoh, &v32, d, 4);
	C(NULL, "cuMemcpyDtoH_v2", f_dtoh, &v64, d + 8, 8);
	out("written", "%x %llx", v32, v64);
	if (C("cuMemHostRegister_v2(DEVICEMAP)", "cuMemHostRegister_v2", f_hostreg, m, 4096, 2) ||
	    C("cuMemHostGetDevicePointer_v2", "cuMemHostGetDevicePointer_v2", f_hostdevptr, &hd, m, 0))
		return;
	release_word = m;
	*m = 0;
	C("wait32(host word, GEQ 5)", "cuStreamWaitValue32_v2", f_wait32, s, hd, 5, 0);
	C("write32(after wait)", "cuStreamWriteValue32_v2", f_wait32, s, d, 0xabcd, 0);
	C("cuStreamQuery(waiting)", "cuStreamQuery", f_stream, s);
	if (pthread_create(&t, NULL, release_later, NULL))
		return;
	C("cuStreamSynchronize(released)", "cuStreamSynchronize", f_stream, s);
	pthread_join(t, NULL);
	C(NULL, "cuMemcpyDtoH_v2", f_dtoh, &v32, d, 4);
	out("after_release", "%x", v32);
	C("write32(host word)", "cuStreamWriteValue32_v2", f_wait32, s, hd, 77, 0);
	C("cuStreamSynchronize(host write)", "cuStreamSynchronize", f_stream, s);
	out("host_word", "%u", *m);
	C(NULL, "cuMemHostUnregister", f_ptr, m);
	C(NULL, "cuStreamDestroy_v2", f_stream, s);
	C(NULL, "cuMemFree_v2", f_dptr, d);
}

/* IPC: a handle made here, opened by a second process. */
static void s_ipc(void)
{
	int to_child[2], pid, st;
	CUipcHandle h;
	CUdeviceptr d = 0, o = 0;
	CUevent e = NULL, e2 = NULL;
	unsigned char buf[256];

	if (pipe(to_child))
		return;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		close(to_child[1]);
		if (read(to_child[0], &h, sizeof(h)) != (ssize_t)sizeof(h))
			_exit(1);
		section = "ipc.child";
		if (setup())
			_exit(1);
		if (!C("cuIpcOpenMemHandle_v2", "cuIpcOpenMemHandle_v2", f_ipcopen, &o, h, 1)) {
			C("cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2", f_dtoh, buf, o, sizeof(buf));
			out("data", "%s", check_bytes(buf, sizeof(buf), 0x42) ? "equal" : "differs");
			pointer_lines("child_opened", o);
			C("cuMemFree_v2(opened)", "cuMemFree_v2", f_dptr, o);
			C("cuIpcCloseMemHandle", "cuIpcCloseMemHandle", f_dptr, o);
			C("cuIpcCloseMemHandle(again)", "cuIpcCloseMemHandle", f_dptr, o);
		}
		_exit(0);
	}
	close(to_child[0]);
	memset(&h, 0, sizeof(h));
	if (!setup() && !C("cuMemAlloc_v2", "cuMemAlloc_v2", f_alloc, &d, 2 << 20)) {
		C(NULL, "cuMemsetD8_v2", f_memset8, d, 0x42, 2 << 20);
		C("cuIpcGetMemHandle", "cuIpcGetMemHandle", f_ipcget, &h, d);
		C("cuIpcGetMemHandle(interior)", "cuIpcGetMemHandle", f_ipcget, &h, d + 4096);
		C("cuIpcGetMemHandle(NULL)", "cuIpcGetMemHandle", f_ipcget, NULL, d);
		C("cuIpcGetMemHandle(host)", "cuIpcGetMemHandle", f_ipcget, &h, (CUdeviceptr)(uintptr_t)buf);
		C("cuIpcGetMemHandle", "cuIpcGetMemHandle", f_ipcget, &h, d);
		C("cuIpcOpenMemHandle_v2(own)", "cuIpcOpenMemHandle_v2", f_ipcopen, &o, h, 1);
		C("cuEventCreate(INTERPROCESS)", "cuEventCreate", f_eventcreate, &e, 6);
		C("cuIpcGetEventHandle", "cuIpcGetEventHandle", f_ipcevget, (CUipcHandle *)buf, e);
		C("cuEventCreate(default)", "cuEventCreate", f_eventcreate, &e2, 0);
		C("cuIpcGetEventHandle(not interprocess)", "cuIpcGetEventHandle", f_ipcevget, (CUipcHandle *)buf, e2);
	}
	if (write(to_child[1], &h, sizeof(h)) != (ssize_t)sizeof(h))
		out("pipe", "failed");
	close(to_child[1]);
	waitpid(pid, &st, 0);
	out("child_end", "%s", WIFEXITED(st) ? "exit" : "signal");
}

/*
 * IPC lifetimes and error cases: a handle opened twice, of an interior
 * pointer, of a small allocation, of freed memory, with bad flags; the
 * memory read after its exporter freed it; event handles in the child.
 */
static void ipc_wait(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		_exit(1);
}

static void ipc_post(int fd)
{
	if (write(fd, "x", 1) != 1)
		_exit(1);
}

static void ipclife_child(int rd, int wr)
{
	CUipcHandle h[5], zero;
	CUdeviceptr o = 0, o2 = 0, oi = 0, os = 0, of = 0, mine = 0;
	CUevent ev = NULL, ev2 = NULL;
	unsigned char buf[256];
	size_t sz = 0;

	if (read(rd, h, sizeof(h)) != (ssize_t)sizeof(h))
		_exit(1);
	section = "ipclife.child";
	alarm(30);
	if (setup())
		_exit(1);
	memset(&zero, 0, sizeof(zero));
	C("open(flags 2)", "cuIpcOpenMemHandle_v2", f_ipcopen, &o, h[0], 2);
	C("open(zero handle)", "cuIpcOpenMemHandle_v2", f_ipcopen, &o, zero, 1);
	C("open(freed)", "cuIpcOpenMemHandle_v2", f_ipcopen, &of, h[3], 1);
	if (!C("open(flags 0)", "cuIpcOpenMemHandle_v2", f_ipcopen, &o, h[0], 0) &&
	    !C("open(again)", "cuIpcOpenMemHandle_v2", f_ipcopen, &o2, h[0], 1))
		out("open(again).ptr", "%s", o2 == o ? "same" : "other");
	C("open(unversioned)", "cuIpcOpenMemHandle", f_ipcopen, &o2, h[0], 1);
	if (!C("open(interior handle)", "cuIpcOpenMemHandle_v2", f_ipcopen, &oi, h[1], 1)) {
		out("open(interior handle).ptr", "%s", oi == o ? "same" : "other");
		C(NULL, "cuMemcpyDtoH_v2", f_dtoh, buf, oi, 16);
		out("open(interior handle).first", "%02x", buf[0]);
		C("close(interior)", "cuIpcCloseMemHandle", f_dptr, oi);
	}
	if (!C("open(small)", "cuIpcOpenMemHandle_v2", f_ipcopen, &os, h[2], 1)) {
		C(NULL, "cuMemcpyDtoH_v2", f_dtoh, buf, os, 16);
		out("open(small).first", "%02x", buf[0]);
		C("range(small)", "cuMemGetAddressRange_v2", f_range, NULL, &sz, os);
		out("range(small).size", "%zu", sz);
		C("close(small)", "cuIpcCloseMemHandle", f_dptr, os);
	}
	if (!C(NULL, "cuMemAlloc_v2", f_alloc, &mine, 4096))
		C("close(not opened)", "cuIpcCloseMemHandle", f_dptr, mine);
	C("close(interior ptr)", "cuIpcCloseMemHandle", f_dptr, o + 4096);
	/* the exporter frees its memory now */
	ipc_post(wr);
	ipc_wait(rd);
	if (o) {
		memset(buf, 0, sizeof(buf));
		C("read(after exporter freed)", "cuMemcpyDtoH_v2", f_dtoh, buf, o, sizeof(buf));
		out("read(after exporter freed).data", "%s",
		    check_bytes(buf, sizeof(buf), 0x42) ? "equal" : "differs");
		C("close(1 of 3)", "cuIpcCloseMemHandle", f_dptr, o);
		C("read(opened twice more)", "cuMemcpyDtoH_v2", f_dtoh, buf, o, 16);
		C("close(2 of 3)", "cuIpcCloseMemHandle", f_dptr, o);
		C("close(3 of 3)", "cuIpcCloseMemHandle", f_dptr, o);
		C("read(closed)", "cuMemcpyDtoH_v2", f_dtoh, buf, o, 16);
		C("close(4 of 3)", "cuIpcCloseMemHandle", f_dptr, o);
	}
	if (!C("open(after exporter freed)", "cuIpcOpenMemHandle_v2", f_ipcopen, &o, h[0], 1))
		C(NULL, "cuIpcCloseMemHandle", f_dptr, o);
	if (!C("cuIpcOpenEventHandle", "cuIpcOpenEventHandle", f_ipcevopen, &ev, h[4])) {
		C("cuEventQuery(opened)", "cuEventQuery", f_event, ev);
		C("cuEventSynchronize(opened)", "cuEventSynchronize", f_event, ev);
		if (!C("cuIpcOpenEventHandle(again)", "cuIpcOpenEventHandle", f_ipcevopen, &ev2, h[4])) {
			out("cuIpcOpenEventHandle(again).event", "%s", ev2 == ev ? "same" : "other");
			C("cuEventDestroy_v2(second)", "cuEventDestroy_v2", f_event, ev2);
		}
		C("cuEventRecord(opened)", "cuEventRecord", f_eventrecord, ev, NULL);
		C("cuEventDestroy_v2(opened)", "cuEventDestroy_v2", f_event, ev);
	}
	C("cuIpcOpenEventHandle(zero)", "cuIpcOpenEventHandle", f_ipcevopen, &ev, zero);
	ipc_post(wr);
	_exit(0);
}

static void s_ipclife(void)
{
	int to_child[2], to_parent[2], pid, st;
	CUipcHandle h[5];
	CUdeviceptr d = 0, s = 0, f = 0, o = 0;
	CUevent e = NULL, e2 = NULL;

	if (pipe(to_child) || pipe(to_parent))
		return;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		ipclife_child(to_child[0], to_parent[1]);
	}
	close(to_child[0]);
	close(to_parent[1]);
	alarm(30);
	memset(h, 0, sizeof(h));
	if (!setup() && !C(NULL, "cuMemAlloc_v2", f_alloc, &d, 2 << 20) &&
	    !C(NULL, "cuMemAlloc_v2", f_alloc, &s, 4096) &&
	    !C(NULL, "cuMemAlloc_v2", f_alloc, &f, 2 << 20)) {
		C(NULL, "cuMemsetD8_v2", f_memset8, d, 0x42, 2 << 20);
		C(NULL, "cuMemsetD8_v2", f_memset8, d + 4096, 0x43, 4096);
		C(NULL, "cuMemsetD8_v2", f_memset8, s, 0x44, 4096);
		C("get", "cuIpcGetMemHandle", f_ipcget, &h[0], d);
		C("get(interior)", "cuIpcGetMemHandle", f_ipcget, &h[1], d + 4096);
		out("get(interior).handle", "%s", memcmp(&h[0], &h[1], sizeof(h[0])) ? "other" : "same");
		C("get(small)", "cuIpcGetMemHandle", f_ipcget, &h[2], s);
		C("get(to be freed)", "cuIpcGetMemHandle", f_ipcget, &h[3], f);
		C(NULL, "cuMemFree_v2", f_dptr, f);
		C("get(freed)", "cuIpcGetMemHandle", f_ipcget, &h[3], f);
		C("open(own, unversioned)", "cuIpcOpenMemHandle", f_ipcopen, &o, h[0], 1);
		C("close(own)", "cuIpcCloseMemHandle", f_dptr, d);
		C("cuEventCreate(INTERPROCESS)", "cuEventCreate", f_eventcreate, &e2, 4);
		if (!C("cuEventCreate(INTERPROCESS|DISABLE_TIMING)", "cuEventCreate", f_eventcreate, &e, 6)) {
			C("cuIpcGetEventHandle", "cuIpcGetEventHandle", f_ipcevget, &h[4], e);
			C("cuIpcGetEventHandle(NULL)", "cuIpcGetEventHandle", f_ipcevget, NULL, e);
			C("cuIpcOpenEventHandle(own)", "cuIpcOpenEventHandle", f_ipcevopen, &e2, h[4]);
			C("cuEventRecord", "cuEventRecord", f_eventrecord, e, NULL);
		}
	}
	if (write(to_child[1], h, sizeof(h)) != (ssize_t)sizeof(h))
		out("pipe", "failed");
	ipc_wait(to_parent[0]);
	if (d)
		C("cuMemFree_v2(opened elsewhere)", "cuMemFree_v2", f_dptr, d);
	ipc_post(to_child[1]);
	ipc_wait(to_parent[0]);
	if (e)
		C("cuEventDestroy_v2", "cuEventDestroy_v2", f_event, e);
	waitpid(pid, &st, 0);
	out("child_end", "%s %d", WIFEXITED(st) ? "exit" : "signal",
	    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

/* CUDA 13.0's CUstreamBatchMemOpParams_v1 (48 bytes). */
typedef union {
	int operation;
	struct {
		int operation;
		CUdeviceptr address;
		union { unsigned int value; unsigned long long value64; };
		unsigned int flags;
		CUdeviceptr alias;
	} value;	/* waitValue and writeValue */
	struct { int operation; unsigned int flags; } flags;	/* flush, barrier */
	unsigned long long pad[6];
} BatchOp;
typedef CUresult (*f_batch)(CUstream, unsigned int, BatchOp *, unsigned int);

static BatchOp op_value(int op, CUdeviceptr a, unsigned long long v, unsigned int flags)
{
	BatchOp o;

	memset(&o, 0, sizeof(o));
	o.value.operation = op;
	o.value.address = a;
	if (op == 4 || op == 5)
		o.value.value64 = v;
	else
		o.value.value = (unsigned int)v;
	o.value.flags = flags;
	return o;
}

static BatchOp op_flags(int op, unsigned int flags)
{
	BatchOp o;

	memset(&o, 0, sizeof(o));
	o.flags.operation = op;
	o.flags.flags = flags;
	return o;
}

static void s_batchmemop(void)
{
	CUstream s = NULL;
	CUdeviceptr d = 0, hd = 0;
	BatchOp ops[300];
	unsigned int *m, v32 = 0;
	unsigned long long v64 = 0;
	pthread_t t;
	int v = -1;

	if (setup())
		return;
	alarm(30);
	C(NULL, "cuDeviceGetAttribute", f_attr, &v, 98, dev);
	out("CAN_FLUSH_REMOTE_WRITES", "%d", v);
	out("sizeof", "%zu", sizeof(BatchOp));
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || C(NULL, "cuMemAlloc_v2", f_alloc, &d, 4096) ||
	    C(NULL, "cuStreamCreate", f_streamcreate, &s, 1))
		return;
	C(NULL, "cuMemsetD8_v2", f_memset8, d, 0, 4096);
	ops[0] = op_value(2, d, 0x1234, 0);
	ops[1] = op_value(5, d + 8, 0x1122334455667788ull, 0);
	ops[2] = op_value(1, d, 0x1234, 1);
	ops[3] = op_value(4, d + 8, 0x1122334455667788ull, 1);
	ops[4] = op_flags(6, 0);
	ops[5] = op_flags(6, 1);
	C("batch(write32 write64 wait32 wait64 barrier barrier)", "cuStreamBatchMemOp_v2", f_batch, s, 6, ops, 0);
	C(NULL, "cuStreamSynchronize", f_stream, s);
	C(NULL, "cuMemcpyDtoH_v2", f_dtoh, &v32, d, 4);
	C(NULL, "cuMemcpyDtoH_v2", f_dtoh, &v64, d + 8, 8);
	out("written", "%x %llx", v32, v64);
	C("batch(unversioned)", "cuStreamBatchMemOp", f_batch, s, 1, ops, 0);
	C("batch(NULL stream)", "cuStreamBatchMemOp_v2", f_batch, NULL, 1, ops, 0);
	C("batch(count 0)", "cuStreamBatchMemOp_v2", f_batch, s, 0, ops, 0);
	C("batch(count 0, NULL)", "cuStreamBatchMemOp_v2", f_batch, s, 0, NULL, 0);
	C("batch(flags 1)", "cuStreamBatchMemOp_v2", f_batch, s, 1, ops, 1);
	for (int i = 0; i < 300; i++)
		ops[i] = op_value(2, d + 16, (unsigned int)i, 0);
	C("batch(count 255)", "cuStreamBatchMemOp_v2", f_batch, s, 255, ops, 0);
	C("batch(count 256)", "cuStreamBatchMemOp_v2", f_batch, s, 256, ops, 0);
	C("batch(count 257)", "cuStreamBatchMemOp_v2", f_batch, s, 257, ops, 0);
	C(NULL, "cuStreamSynchronize", f_stream, s);
	C(NULL, "cuMemcpyDtoH_v2", f_dtoh, &v32, d + 16, 4);
	out("count.last", "%u", v32);
	ops[0] = op_flags(0, 0);
	C("batch(op 0)", "cuStreamBatchMemOp_v2", f_batch, s, 1, ops, 0);
	ops[0] = op_flags(7, 0);
	C("batch(op 7)", "cuStreamBatchMemOp_v2", f_batch, s, 1, ops, 0);
	ops[0] = op_flags(99, 0);
	C("batch(op 99)", "cuStreamBatchMemOp_v2", f_batch, s, 1, ops, 0);
	ops[0] = op_flags(3, 0);
	C("batch(flush)", "cuStreamBatchMemOp_v2", f_batch, s, 1, ops, 0);
	ops[0] = op_flags(3, 1);
	C("batch(flush flags 1)", "cuStreamBatchMemOp_v2", f_batch, s, 1, ops, 0);
	ops[0] = op_flags(6, 2);
	C("batch(barrier flags 2)", "cuStreamBatchMemOp_v2", f_batch, s, 1, ops, 0);
	ops[0] = op_value(2, d, 1, 1);
	C("batch(write32 NO_MEMORY_BARRIER)", "cuStreamBatchMemOp_v2", f_batch, s, 1, ops, 0);
	ops[0] = op_value(2, d, 1, 2);
	C("batch(write32 flags 2)", "cuStreamBatchMemOp_v2", f_batch, s, 1, ops, 0);
	ops[0] = op_value(2, d + 2, 1, 0);
	C("batch(write32 unaligned)", "cuStreamBatchMemOp_v2", f_batch, s, 1, ops, 0);
	ops[0] = op_value(5, d + 4, 1, 0);
	C("batch(write64 unaligned)", "cuStreamBatchMemOp_v2", f_batch, s, 1, ops, 0);
	ops[0] = op_value(1, d, 0, 9);
	C("batch(wait32 flags 9)", "cuStreamBatchMemOp_v2", f_batch, s, 1, ops, 0);
	ops[0] = op_value(1, d, 0, 3);
	C("batch(wait32 NOR)", "cuStreamBatchMemOp_v2", f_batch, s, 1, ops, 0);
	ops[0] = op_value(1, d, 0, 1u << 30);
	C("batch(wait32 FLUSH)", "cuStreamBatchMemOp_v2", f_batch, s, 1, ops, 0);
	ops[0] = op_value(1, d + 1, 0, 0);
	C("batch(wait32 unaligned)", "cuStreamBatchMemOp_v2", f_batch, s, 1, ops, 0);
	ops[0] = op_value(2, 0, 1, 0);
	C("batch(write32 address 0)", "cuStreamBatchMemOp_v2", f_batch, s, 1, ops, 0);
	ops[0] = op_value(2, d, 7, 0);
	ops[1] = op_value(2, d + 2, 1, 0);
	C("batch(good then bad)", "cuStreamBatchMemOp_v2", f_batch, s, 2, ops, 0);
	C(NULL, "cuStreamSynchronize", f_stream, s);
	C(NULL, "cuMemcpyDtoH_v2", f_dtoh, &v32, d, 4);
	out("good_then_bad.value", "%x", v32);
	C("cuStreamSynchronize", "cuStreamSynchronize", f_stream, s);
	if (C("cuMemHostRegister_v2(DEVICEMAP)", "cuMemHostRegister_v2", f_hostreg, m, 4096, 2) ||
	    C(NULL, "cuMemHostGetDevicePointer_v2", f_hostdevptr, &hd, m, 0))
		return;
	release_word = m;
	*m = 0;
	ops[0] = op_value(1, hd, 5, 0);
	ops[1] = op_value(2, d, 0xabcd, 0);
	ops[2] = op_value(2, hd + 4, 9, 0);
	C("batch(wait host word, write)", "cuStreamBatchMemOp_v2", f_batch, s, 3, ops, 0);
	C("cuStreamQuery(waiting)", "cuStreamQuery", f_stream, s);
	if (pthread_create(&t, NULL, release_later, NULL))
		return;
	C("cuStreamSynchronize(released)", "cuStreamSynchronize", f_stream, s);
	pthread_join(t, NULL);
	C(NULL, "cuMemcpyDtoH_v2", f_dtoh, &v32, d, 4);
	out("after_release", "%x %u", v32, m[1]);
	C(NULL, "cuMemHostUnregister", f_ptr, m);
	C(NULL, "cuStreamDestroy_v2", f_stream, s);
	C(NULL, "cuMemFree_v2", f_dptr, d);
}

/* mmap of @len bytes of dma-buf @fd at @off: "ok" (then unmapped) or the errno. */
static void dmabuf_mmap(const char *key, int fd, size_t len, off_t off)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);

	if (m == MAP_FAILED) {
		out(key, "errno %d", errno);
		return;
	}
	out(key, "ok");
	munmap(m, len);
}

/* The exporter's name in the fd's fdinfo ("exp_name:"). */
static void dmabuf_exp_name(const char *key, int fd)
{
	char path[64], line[256], name[64] = "<none>";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "exp_name: %63s", name) == 1)
			break;
	if (f)
		fclose(f);
	out(key, "%s", name);
}

/*
 * An export at @d mmapped, where it can be: does the mapping read what a
 * copy wrote, and does a copy read what the mapping wrote?  The rows are
 * named after @key.
 */
static void dmabuf_data(const char *key, int fd, CUdeviceptr d)
{
	char k[64];
	static unsigned char a[65536], b[65536];
	unsigned char *m = mmap(NULL, sizeof(a), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED)
		return;
	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (unsigned char)(i * 31 + 7);
	if (!C(NULL, "cuMemcpyHtoD_v2", f_htod, d, a, sizeof(a))) {
		snprintf(k, sizeof(k), "%s.mmap.reads_copy", key);
		out(k, "%s", memcmp(m, a, sizeof(a)) ? "no" : "yes");
	}
	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (unsigned char)(i * 17 + 3);
	memcpy(m, a, sizeof(a));
	if (!C(NULL, "cuMemcpyDtoH_v2", f_dtoh, b, d, sizeof(b))) {
		snprintf(k, sizeof(k), "%s.copy_reads_mmap", key);
		out(k, "%s", memcmp(b, a, sizeof(a)) ? "no" : "yes");
	}
	munmap(m, sizeof(a));
}

/*
 * Allocations that are not page-sized, as ucx_perftest's buffers (the
 * message size plus 8 bytes): can a caller export the host pages around
 * one, which UCX 1.22 asks for every dma-buf registration, and how far
 * past it?  Two such allocations are made so that the second lies inside
 * the chunk the first opened.
 */
static void dmabuf_small(void)
{
	const size_t sz = 65536 + 8, pg = 4096, chunk = 2 << 20;
	CUdeviceptr s[2] = { 0, 0 };
	int fd = -1;

	if (C(NULL, "cuMemAlloc_v2", f_alloc, &s[0], sz))
		return;
	if (C(NULL, "cuMemAlloc_v2", f_alloc, &s[1], sz)) {
		C(NULL, "cuMemFree_v2", f_dptr, s[0]);
		return;
	}
	out("small.second_minus_first", "%lld", (long long)(s[1] - s[0]));
	out("small.first_mod_2MiB", "%llu", (unsigned long long)(s[0] % chunk));
	for (int i = 0; i < 2; i++) {
		CUdeviceptr lo = s[i] & ~(CUdeviceptr)(pg - 1);
		CUdeviceptr hi = (s[i] + sz + pg - 1) & ~(CUdeviceptr)(pg - 1);
		CUdeviceptr c0 = s[i] & ~(CUdeviceptr)(chunk - 1);
		char k[64];

		snprintf(k, sizeof(k), "range(small[%d], its pages)", i);
		if (!C(k, "cuMemGetHandleForAddressRange", f_rangehandle, &fd, lo, hi - lo, 1, 0))
			close(fd);
		snprintf(k, sizeof(k), "range(small[%d], its pages and one more)", i);
		if (!C(k, "cuMemGetHandleForAddressRange", f_rangehandle, &fd, lo, hi - lo + pg, 1, 0))
			close(fd);
		snprintf(k, sizeof(k), "range(small[%d], its 2 MiB)", i);
		if (!C(k, "cuMemGetHandleForAddressRange", f_rangehandle, &fd, c0, chunk, 1, 0))
			close(fd);
		snprintf(k, sizeof(k), "range(small[%d], past its 2 MiB)", i);
		if (!C(k, "cuMemGetHandleForAddressRange", f_rangehandle, &fd, c0, chunk + pg, 1, 0))
			close(fd);
	}
	C(NULL, "cuMemFree_v2", f_dptr, s[1]);
	if (!C("range(small[1] freed, its pages)", "cuMemGetHandleForAddressRange",
	       f_rangehandle, &fd, s[1] & ~(CUdeviceptr)(pg - 1),
	       ((s[1] + sz + pg - 1) & ~(CUdeviceptr)(pg - 1)) - (s[1] & ~(CUdeviceptr)(pg - 1)), 1, 0))
		close(fd);
	C(NULL, "cuMemFree_v2", f_dptr, s[0]);
}

static void s_dmabuf(void)
{
	CUdeviceptr d = 0;
	int fd = -1;
	int v = -1;

	if (setup())
		return;
	C(NULL, "cuDeviceGetAttribute", f_attr, &v, 124, dev);
	out("DMA_BUF_SUPPORTED", "%d", v);
	if (C(NULL, "cuMemAlloc_v2", f_alloc, &d, 4 << 20))
		return;
	if (!C("range(2 MiB)", "cuMemGetHandleForAddressRange", f_rangehandle, &fd, d, 2 << 20, 1, 0)) {
		out("range(2 MiB).fd", "%s", fd >= 0 ? ">=0" : "<0");
		if (fd >= 0) {
			dmabuf_exp_name("range(2 MiB).exp_name", fd);
			dmabuf_mmap("range(2 MiB).mmap", fd, 2 << 20, 0);
			dmabuf_mmap("range(2 MiB).mmap(past end)", fd, 4 << 20, 0);
			dmabuf_data("range(2 MiB)", fd, d);
			close(fd);
		}
	}
	fd = -1;
	if (!C("range(PCIe)", "cuMemGetHandleForAddressRange", f_rangehandle, &fd, d, 2 << 20, 1, 1) &&
	    fd >= 0) {
		dmabuf_mmap("range(PCIe).mmap", fd, 2 << 20, 0);
		dmabuf_mmap("range(PCIe).mmap(offset 12 KiB)", fd, 8192, 3 * 4096);
		dmabuf_mmap("range(PCIe).mmap(past end)", fd, 4 << 20, 0);
		dmabuf_mmap("range(PCIe).mmap(at end)", fd, 4096, 2 << 20);
		dmabuf_data("range(PCIe)", fd, d);
		close(fd);
	}
	C("range(unaligned start)", "cuMemGetHandleForAddressRange", f_rangehandle, &fd, d + 4096, 1 << 20, 1, 0);
	C("range(unaligned size)", "cuMemGetHandleForAddressRange", f_rangehandle, &fd, d, 4096, 1, 0);
	C("range(past end)", "cuMemGetHandleForAddressRange", f_rangehandle, &fd, d, 8 << 20, 1, 0);
	C("range(type 0)", "cuMemGetHandleForAddressRange", f_rangehandle, &fd, d, 2 << 20, 0, 0);
	C("range(flags 2)", "cuMemGetHandleForAddressRange", f_rangehandle, &fd, d, 2 << 20, 1, 2);
	C("range(NULL)", "cuMemGetHandleForAddressRange", f_rangehandle, NULL, d, 2 << 20, 1, 0);
	C(NULL, "cuMemFree_v2", f_dptr, d);
	C("range(freed)", "cuMemGetHandleForAddressRange", f_rangehandle, &fd, d, 2 << 20, 1, 0);
	dmabuf_small();
}

static void s_compute(void)
{
	void *mod = NULL;
	static const char junk[] = "not a module";

	if (setup())
		return;
	C("cuModuleLoadData(junk)", "cuModuleLoadData", f_moddata, &mod, junk);
	C("cuModuleLoadData(NULL)", "cuModuleLoadData", f_moddata, &mod, NULL);
	C("cuLaunchKernel(NULL)", "cuLaunchKernel", f_launch, NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
}

/* --- stream order, context synchronisation, sticky errors ---------------- */

typedef void (*hostfn_t)(void *);
typedef void (*streamcb_t)(CUstream, CUresult, void *);
typedef CUresult (*f_hostfunc)(CUstream, hostfn_t, void *);
typedef CUresult (*f_addcb)(CUstream, streamcb_t, void *, unsigned int);
typedef CUresult (*f_getfunc)(void **, void *, const char *);
typedef CUresult (*f_ctxapi)(CUcontext, unsigned int *);
typedef CUresult (*f_ptrattr)(void *, int, CUdeviceptr);
typedef CUresult (*f_primstate)(CUdevice, unsigned int *, int *);

#define STREAM_LEGACY		((CUstream)0x1)
#define STREAM_PER_THREAD	((CUstream)0x2)

/*
 * The order in which host functions ran and releases happened
 * (stream_order.h).  A release thread writes a word that a stream waits
 * on, after a pause long enough for anything not waiting on it to run
 * first.
 */
#include "stream_order.h"

static int cb_status = -1;

static void streamcb(CUstream s, CUresult status, void *arg)
{
	(void)s;
	cb_status = status;
	order_hostfn(arg);
}

static void release_start(struct order_release *r, volatile unsigned int *word,
			  unsigned int ms)
{
	if (order_release_start(r, word, ms))	/* nothing must wait forever */
		order_release_fn(r);
}

/*
 * A release the section makes, after what must see the word unreleased
 * (order_release_now, _arm, _hostfn with @letter): not the clock's race.
 */
static void release_prepare(struct order_release *r, volatile unsigned int *word,
			    char letter)
{
	if (order_release_prepare(r, word, letter))
		order_release_now(r);	/* nothing must wait forever */
}

/* Prints the order seen, and starts a new one. */
static void order_out(const char *key)
{
	const char *seen = order_take();

	out(key, "%s", *seen ? seen : "none");
}

#define HOSTFN(key, s, c) \
	C(key, "cuLaunchHostFunc", f_hostfunc, s, order_hostfn, (void *)(uintptr_t)(c))
/* A host function that notes the prepared letter and releases @r. */
#define RELEASE_HOSTFN(key, s, r) \
	C(key, "cuLaunchHostFunc", f_hostfunc, s, order_release_hostfn, r)

/* A page of host words, registered and mapped for stream memory operations. */
static volatile unsigned int *host_words(CUdeviceptr *hd)
{
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	memset(m, 0, 4096);
	if (C("host_words.register", "cuMemHostRegister_v2", f_hostreg, m, 4096, 2) ||
	    C(NULL, "cuMemHostGetDevicePointer_v2", f_hostdevptr, hd, m, 0))
		return NULL;
	return m;
}

/*
 * Stream order: the legacy NULL stream waits for every blocking stream of
 * its context and they for it, non-blocking streams for neither;
 * cuCtxSynchronize waits for all of them; host functions run on a driver
 * thread.
 */
static void s_order(void)
{
	CUstream s = NULL, snb = NULL;
	CUdeviceptr hd = 0, d = 0;
	volatile unsigned int *m;
	struct order_release rel;
	unsigned int fl = 99, v = 0;

	order_caller = pthread_self();
	if (setup() || !(m = host_words(&hd)) ||
	    C("cuStreamCreate(blocking)", "cuStreamCreate", f_streamcreate, &s, 0) ||
	    C("cuStreamCreate(NON_BLOCKING)", "cuStreamCreate", f_streamcreate, &snb, 1) ||
	    C(NULL, "cuMemAlloc_v2", f_alloc, &d, 4096))
		return;

	/* the NULL stream after a blocking stream: A before B; C free */
	release_prepare(&rel, &m[0], 'C');
	C("null_after_blocking.wait", "cuStreamWaitValue32_v2", f_wait32, s, hd, 1, 0);
	HOSTFN("null_after_blocking.A", s, 'A');
	HOSTFN("null_after_blocking.B", NULL, 'B');
	RELEASE_HOSTFN("null_after_blocking.C", snb, &rel);
	C("null_after_blocking.cuCtxSynchronize", "cuCtxSynchronize", f_v);
	order_out("null_after_blocking.order");
	order_release_join(&rel);

	/* a blocking stream after the NULL stream: D after R; E free */
	release_prepare(&rel, &m[1], 'E');
	C("blocking_after_null.wait", "cuStreamWaitValue32_v2", f_wait32, NULL, hd + 4, 1, 0);
	order_note('W');	/* the wait returned */
	HOSTFN("blocking_after_null.D", s, 'D');
	RELEASE_HOSTFN("blocking_after_null.E", snb, &rel);
	C("blocking_after_null.cuCtxSynchronize", "cuCtxSynchronize", f_v);
	order_out("blocking_after_null.order");
	order_release_join(&rel);

	/* a callback on the NULL stream, after a blocking stream's wait */
	C("callback.wait", "cuStreamWaitValue32_v2", f_wait32, s, hd + 8, 1, 0);
	C("callback.cuStreamAddCallback", "cuStreamAddCallback", f_addcb, NULL,
	  streamcb, (void *)(uintptr_t)'F', 0);
	release_start(&rel, &m[2], 200);
	C("callback.cuCtxSynchronize", "cuCtxSynchronize", f_v);
	order_out("callback.order");
	out("callback.status", "%s", cb_status < 0 ? "not called" : rcname(cb_status));
	order_release_join(&rel);

	/* cuCtxSynchronize waits for a non-blocking stream's queued work */
	C("ctxsync.wait", "cuStreamWaitValue32_v2", f_wait32, snb, hd + 12, 1, 0);
	HOSTFN("ctxsync.G", snb, 'G');
	C("ctxsync.write", "cuStreamWriteValue32_v2", f_wait32, snb, hd + 16, 7, 0);
	release_start(&rel, &m[3], 200);
	C("ctxsync.cuCtxSynchronize", "cuCtxSynchronize", f_v);
	order_note('S');
	order_out("ctxsync.order");
	out("ctxsync.written", "%u", m[4]);
	order_release_join(&rel);

	/* a synchronous copy to the host waits for the blocking streams */
	C("memcpy.wait", "cuStreamWaitValue32_v2", f_wait32, s, hd + 20, 1, 0);
	release_start(&rel, &m[5], 200);
	C("memcpy.cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2", f_dtoh, &v, d, 4);
	order_note('M');
	C("memcpy.cuCtxSynchronize", "cuCtxSynchronize", f_v);
	order_out("memcpy.order");
	order_release_join(&rel);

	/* the legacy and per-thread default stream handles */
	C("cuStreamQuery(LEGACY)", "cuStreamQuery", f_stream, STREAM_LEGACY);
	C("cuStreamQuery(PER_THREAD)", "cuStreamQuery", f_stream, STREAM_PER_THREAD);
	if (!C("cuStreamGetFlags(PER_THREAD)", "cuStreamGetFlags", f_streamflags,
	       STREAM_PER_THREAD, &fl))
		out("cuStreamGetFlags(PER_THREAD).value", "%u", fl);
	C("cuStreamSynchronize(PER_THREAD)", "cuStreamSynchronize", f_stream, STREAM_PER_THREAD);
	release_prepare(&rel, &m[6], 'J');
	C("per_thread.wait", "cuStreamWaitValue32_v2", f_wait32, STREAM_PER_THREAD, hd + 24, 1, 0);
	HOSTFN("per_thread.H", STREAM_PER_THREAD, 'H');
	HOSTFN("per_thread.I", NULL, 'I');
	RELEASE_HOSTFN("per_thread.J", snb, &rel);
	C("per_thread.cuCtxSynchronize", "cuCtxSynchronize", f_v);
	order_out("per_thread.order");
	order_release_join(&rel);
	release_prepare(&rel, &m[7], 'L');
	C("legacy.wait", "cuStreamWaitValue32_v2", f_wait32, STREAM_LEGACY, hd + 28, 1, 0);
	HOSTFN("legacy.K", s, 'K');
	RELEASE_HOSTFN("legacy.L", snb, &rel);
	C("legacy.cuCtxSynchronize", "cuCtxSynchronize", f_v);
	order_out("legacy.order");
	order_release_join(&rel);

	out("hostfn.on_caller", "%d", order_on_caller);
	C(NULL, "cuStreamDestroy_v2", f_stream, s);
	C(NULL, "cuStreamDestroy_v2", f_stream, snb);
	C(NULL, "cuMemFree_v2", f_dptr, d);
	C(NULL, "cuMemHostUnregister", f_ptr, (void *)m);
}

/* cuCtxDestroy with work queued on the context's stream. */
static void s_ctxdestroy(void)
{
	CUcontext c = NULL, cur = NULL;
	CUstream s = NULL;
	CUdeviceptr hd = 0;
	volatile unsigned int *m;
	struct order_release rel;

	order_caller = pthread_self();
	if (setup() ||
	    C("cuCtxCreate_v4", "cuCtxCreate_v4", f_ctxcreate4, &c, NULL, 0, dev) ||
	    !(m = host_words(&hd)) ||
	    C("cuStreamCreate", "cuStreamCreate", f_streamcreate, &s, 1))
		return;
	C("wait", "cuStreamWaitValue32_v2", f_wait32, s, hd, 1, 0);
	HOSTFN("A", s, 'A');
	release_start(&rel, &m[0], 300);
	C("cuCtxDestroy_v2", "cuCtxDestroy_v2", f_ctx, c);
	order_note('X');
	order_release_join(&rel);
	usleep(300 * 1000);
	order_out("order");
	if (!C("cuCtxGetCurrent", "cuCtxGetCurrent", f_pctx, &cur))
		out("cuCtxGetCurrent.value", "%s", cur == pctx ? "primary" :
		    cur == c ? "destroyed" : cur ? "other" : "none");
	/* last: the handle of a stream of the destroyed context */
	C("cuStreamQuery(stream of destroyed)", "cuStreamQuery", f_stream, s);
}

/* cuMemFree of memory a queued stream write targets. */
static void s_memfree(void)
{
	CUstream s = NULL;
	CUdeviceptr hd = 0, d = 0;
	volatile unsigned int *m;
	struct order_release rel;

	order_caller = pthread_self();
	if (setup() || !(m = host_words(&hd)) ||
	    C("cuStreamCreate", "cuStreamCreate", f_streamcreate, &s, 1) ||
	    C("cuMemAlloc_v2", "cuMemAlloc_v2", f_alloc, &d, 4096))
		return;
	C("wait", "cuStreamWaitValue32_v2", f_wait32, s, hd, 1, 0);
	C("write", "cuStreamWriteValue32_v2", f_wait32, s, d, 0x55, 0);
	release_start(&rel, &m[0], 300);
	C("cuMemFree_v2", "cuMemFree_v2", f_dptr, d);
	order_note('F');
	order_release_join(&rel);
	order_out("order");
	C("cuStreamSynchronize", "cuStreamSynchronize", f_stream, s);
	C("cuCtxSynchronize", "cuCtxSynchronize", f_v);
}

/*
 * Events on streams with queued work: does cuEventRecord or
 * cuStreamWaitEvent wait for the stream, what cuEventQuery and
 * cuEventElapsedTime answer before the work ahead of the record has run,
 * whether work queued after cuStreamWaitEvent waits for it, a record
 * superseded while pending, an event destroyed while pending.  Each wait
 * is released by a thread 300 ms after the calls that must see it
 * unreleased, so a call that does wait for its stream returns late rather
 * than never.
 */
static void s_event(void)
{
	CUstream s = NULL, s2 = NULL;
	CUevent e = NULL, e2 = NULL;
	CUdeviceptr hd = 0;
	volatile unsigned int *m;
	struct order_release rel;
	float ms = -1;

	order_caller = pthread_self();
	if (setup() || !(m = host_words(&hd)) ||
	    C("cuStreamCreate", "cuStreamCreate", f_streamcreate, &s, 1) ||
	    C("cuStreamCreate(2)", "cuStreamCreate", f_streamcreate, &s2, 1) ||
	    C("cuEventCreate", "cuEventCreate", f_eventcreate, &e, 0) ||
	    C("cuEventCreate(2)", "cuEventCreate", f_eventcreate, &e2, 0))
		return;

	/* a record behind a wait, and another stream waiting for it */
	release_prepare(&rel, &m[0], 0);
	C("record.wait", "cuStreamWaitValue32_v2", f_wait32, s, hd, 1, 0);
	HOSTFN("record.A", s, 'A');
	C("record.cuEventRecord", "cuEventRecord", f_eventrecord, e, s);
	order_note('E');	/* the record returned */
	C("record.cuEventQuery(pending)", "cuEventQuery", f_event, e);
	C("record.cuStreamWaitEvent", "cuStreamWaitEvent", f_waitevent, s2, e, 0);
	order_note('W');	/* the stream wait returned */
	HOSTFN("record.B", s2, 'B');
	C("record.cuStreamQuery(behind the event)", "cuStreamQuery", f_stream, s2);
	order_release_arm(&rel, 300);
	C("record.cuEventSynchronize", "cuEventSynchronize", f_event, e);
	C("record.cuEventQuery(done)", "cuEventQuery", f_event, e);
	C("record.cuStreamSynchronize", "cuStreamSynchronize", f_stream, s2);
	order_out("record.order");
	order_release_join(&rel);

	/* the time between a record at once and one behind a wait */
	release_prepare(&rel, &m[1], 0);
	C("elapsed.cuEventRecord(start)", "cuEventRecord", f_eventrecord, e, s);
	C("elapsed.wait", "cuStreamWaitValue32_v2", f_wait32, s, hd + 4, 1, 0);
	C("elapsed.cuEventRecord(end)", "cuEventRecord", f_eventrecord, e2, s);
	C("elapsed.cuEventElapsedTime_v2(end pending)", "cuEventElapsedTime_v2",
	  f_elapsed, &ms, e, e2);
	order_release_arm(&rel, 300);
	C("elapsed.cuEventSynchronize", "cuEventSynchronize", f_event, e2);
	if (!C("elapsed.cuEventElapsedTime_v2", "cuEventElapsedTime_v2",
	       f_elapsed, &ms, e, e2))
		out("elapsed.value", "%s", ms >= 150 ? ">=150 ms" : "<150 ms");
	order_release_join(&rel);

	/* recorded again, on an idle stream, while the first record waits */
	order_take();	/* the letters of the releases before */
	release_prepare(&rel, &m[2], 0);
	C("rerecord.wait", "cuStreamWaitValue32_v2", f_wait32, s, hd + 8, 1, 0);
	C("rerecord.cuEventRecord(pending)", "cuEventRecord", f_eventrecord, e, s);
	C("rerecord.cuEventRecord(idle stream)", "cuEventRecord", f_eventrecord, e, s2);
	/* complete while the first record still waits ('Q' before 'R'), or
	 * only after it ran?  (Not the first query's answer: on the H100 the
	 * new record takes a few microseconds, so that one is a race.) */
	while (C(NULL, "cuEventQuery", f_event, e) == 600 &&
	       !__atomic_load_n(&m[2], __ATOMIC_SEQ_CST))
		;
	order_note(C(NULL, "cuEventQuery", f_event, e) ? 'N' : 'Q');
	C("rerecord.cuStreamQuery(first stream)", "cuStreamQuery", f_stream, s);
	order_release_arm(&rel, 300);
	C("rerecord.cuStreamSynchronize", "cuStreamSynchronize", f_stream, s);
	order_out("rerecord.order");
	order_release_join(&rel);

	/* destroyed while its record waits */
	release_start(&rel, &m[3], 300);
	C("destroy.wait", "cuStreamWaitValue32_v2", f_wait32, s, hd + 12, 1, 0);
	C("destroy.cuEventRecord", "cuEventRecord", f_eventrecord, e2, s);
	C("destroy.cuEventDestroy_v2", "cuEventDestroy_v2", f_event, e2);
	C("destroy.cuStreamSynchronize", "cuStreamSynchronize", f_stream, s);
	order_release_join(&rel);

	C(NULL, "cuEventDestroy_v2", f_event, e);
	C(NULL, "cuStreamDestroy_v2", f_stream, s);
	C(NULL, "cuStreamDestroy_v2", f_stream, s2);
	C(NULL, "cuMemHostUnregister", f_ptr, (void *)m);
}

/*
 * The start of the sections on three streams and an event: the context,
 * the host words, three non-blocking streams and an event (NULL if any
 * failed).
 */
static volatile unsigned int *three_streams(CUdeviceptr *hd, CUstream *s,
					    CUstream *s2, CUstream *s3,
					    CUevent *e)
{
	volatile unsigned int *m;

	order_caller = pthread_self();
	if (setup() || !(m = host_words(hd)) ||
	    C("cuStreamCreate", "cuStreamCreate", f_streamcreate, s, 1) ||
	    C("cuStreamCreate(2)", "cuStreamCreate", f_streamcreate, s2, 1) ||
	    C("cuStreamCreate(3)", "cuStreamCreate", f_streamcreate, s3, 1) ||
	    C("cuEventCreate", "cuEventCreate", f_eventcreate, e, 0))
		return NULL;
	return m;
}

/*
 * Waits that captured one record of an event, the event recorded again
 * before the wait ends: does the waiting stream follow the record it
 * captured or the event's newest one?  Both ways round: a pending record
 * superseded by one that completes at once, and a completed record
 * superseded by a pending one.
 */
static void s_waitearlier(void)
{
	CUstream s = NULL, s2 = NULL, s3 = NULL;
	CUevent e = NULL;
	CUdeviceptr hd = 0;
	volatile unsigned int *m;
	struct order_release rel;

	if (!(m = three_streams(&hd, &s, &s2, &s3, &e)))
		return;

	/* the wait captured a pending record; the event then completes */
	release_prepare(&rel, &m[0], 0);
	C("pending.wait", "cuStreamWaitValue32_v2", f_wait32, s, hd, 1, 0);
	C("pending.cuEventRecord", "cuEventRecord", f_eventrecord, e, s);
	C("pending.cuStreamWaitEvent", "cuStreamWaitEvent", f_waitevent, s2, e, 0);
	HOSTFN("pending.B", s2, 'B');
	C("pending.cuEventRecord(idle stream)", "cuEventRecord", f_eventrecord, e, s3);
	C("pending.cuStreamSynchronize(idle stream)", "cuStreamSynchronize", f_stream, s3);
	C("pending.cuEventQuery", "cuEventQuery", f_event, e);
	C("pending.cuStreamQuery(waiting)", "cuStreamQuery", f_stream, s2);
	order_release_arm(&rel, 300);
	C("pending.cuStreamSynchronize", "cuStreamSynchronize", f_stream, s2);
	order_out("pending.order");
	order_release_join(&rel);
	C("pending.cuStreamSynchronize(first stream)", "cuStreamSynchronize", f_stream, s);

	/* the wait captured a completed record; the event is then pending */
	C("done.cuEventRecord(idle stream)", "cuEventRecord", f_eventrecord, e, s3);
	C("done.cuEventSynchronize", "cuEventSynchronize", f_event, e);
	C("done.cuStreamWaitEvent", "cuStreamWaitEvent", f_waitevent, s2, e, 0);
	release_prepare(&rel, &m[1], 0);
	C("done.wait", "cuStreamWaitValue32_v2", f_wait32, s, hd + 4, 1, 0);
	C("done.cuEventRecord(pending)", "cuEventRecord", f_eventrecord, e, s);
	HOSTFN("done.C", s2, 'C');
	C("done.cuStreamSynchronize", "cuStreamSynchronize", f_stream, s2);
	order_note('S');	/* the waiting stream's synchronize returned */
	order_release_arm(&rel, 300);
	C("done.cuEventSynchronize(pending)", "cuEventSynchronize", f_event, e);
	order_out("done.order");
	order_release_join(&rel);

	/* a record on an idle stream, the device idle: complete at once? */
	C("idle.cuEventRecord", "cuEventRecord", f_eventrecord, e, s3);
	C("idle.cuEventQuery(at once)", "cuEventQuery", f_event, e);
	C("idle.cuStreamSynchronize", "cuStreamSynchronize", f_stream, s3);
	C("idle.cuEventQuery(synchronized)", "cuEventQuery", f_event, e);


	C(NULL, "cuEventDestroy_v2", f_event, e);
	C(NULL, "cuStreamDestroy_v2", f_stream, s);
	C(NULL, "cuStreamDestroy_v2", f_stream, s2);
	C(NULL, "cuStreamDestroy_v2", f_stream, s3);
	C(NULL, "cuMemHostUnregister", f_ptr, (void *)m);
}

static void primary_state(const char *key)
{
	unsigned int fl = 99;
	int active = -1;

	char k[96];

	snprintf(k, sizeof(k), "%s.value", key);
	if (!C(key, "cuDevicePrimaryCtxGetState", f_primstate, dev, &fl, &active))
		out(k, "flags=%u active=%d", fl, active);
}

static void current_line(const char *key)
{
	CUcontext cur = (CUcontext)1;

	char k[96];

	snprintf(k, sizeof(k), "%s.value", key);
	if (!C(key, "cuCtxGetCurrent", f_pctx, &cur))
		out(k, "%s", cur == pctx ? "primary" : cur ? "other" : "NULL");
}

/*
 * The primary context released to no references while still current (what
 * a program's exit path meets when a library closes its resources from a
 * destructor after the program released the context): what each call
 * answers, whether any call brings the context back, what a new retain
 * gives.
 */
static void s_primrelease(void)
{
	CUcontext again = NULL;
	CUstream s = NULL;
	CUdeviceptr d = 0, d2 = 0;
	size_t fr = 0, tot = 0;
	unsigned int api = 0, mt = 0;
	CUdevice dv = -1;

	if (setup() || C("cuMemAlloc_v2", "cuMemAlloc_v2", f_alloc, &d, 4096))
		return;
	primary_state("state(retained)");
	C("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease_v2", f_dev, dev);
	primary_state("state(released)");
	current_line("current(released)");
	C("released.cuCtxGetDevice", "cuCtxGetDevice", f_pdev, &dv);
	C("released.cuCtxGetApiVersion", "cuCtxGetApiVersion", f_ctxapi, pctx, &api);
	C("released.cuCtxSynchronize", "cuCtxSynchronize", f_v);
	C("released.cuMemAlloc_v2", "cuMemAlloc_v2", f_alloc, &d2, 4096);
	C("released.cuPointerGetAttribute(earlier memory)", "cuPointerGetAttribute",
	  f_ptrattr, &mt, PA_MEMORY_TYPE, d);
	C("released.cuMemFree_v2(earlier memory)", "cuMemFree_v2", f_dptr, d);
	C("released.cuMemFree_v2(0)", "cuMemFree_v2", f_dptr, 0);
	C("released.cuMemGetInfo_v2", "cuMemGetInfo_v2", f_meminfo, &fr, &tot);
	C("released.cuStreamCreate", "cuStreamCreate", f_streamcreate, &s, 1);
	C("released.cuStreamQuery(NULL)", "cuStreamQuery", f_stream, NULL);
	C("released.cuCtxPushCurrent_v2", "cuCtxPushCurrent_v2", f_ctx, pctx);
	C("released.cuCtxPopCurrent_v2", "cuCtxPopCurrent_v2", f_pctx, &again);
	primary_state("state(after calls)");
	C("released.cuDevicePrimaryCtxRelease_v2(again)", "cuDevicePrimaryCtxRelease_v2",
	  f_dev, dev);
	if (!C("retained.cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain",
	       f_retain, &again, dev))
		out("retained.handle", "%s", again == pctx ? "same" : "other");
	primary_state("state(retained again)");
	current_line("current(retained again)");
	C("retained.cuPointerGetAttribute(earlier memory)", "cuPointerGetAttribute",
	  f_ptrattr, &mt, PA_MEMORY_TYPE, d);
	C("retained.cuMemFree_v2(earlier memory)", "cuMemFree_v2", f_dptr, d);
	if (!C("retained.cuMemAlloc_v2", "cuMemAlloc_v2", f_alloc, &d2, 4096))
		C("retained.cuMemFree_v2", "cuMemFree_v2", f_dptr, d2);
	C("retained.cuCtxSynchronize", "cuCtxSynchronize", f_v);
	C("retained.cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease_v2", f_dev, dev);
}

/*
 * cuDevicePrimaryCtxReset with work queued on a stream of the primary
 * context, the context retained and current: does it wait for the work,
 * and what is left of the context afterwards?
 */
static void s_primreset(void)
{
	CUstream s = NULL;
	CUdeviceptr hd = 0, d = 0, d2 = 0;
	volatile unsigned int *m;
	struct order_release rel;
	unsigned int mt = 0;

	order_caller = pthread_self();
	if (setup() || !(m = host_words(&hd)) ||
	    C("cuStreamCreate", "cuStreamCreate", f_streamcreate, &s, 1) ||
	    C("cuMemAlloc_v2", "cuMemAlloc_v2", f_alloc, &d, 4096))
		return;
	C("wait", "cuStreamWaitValue32_v2", f_wait32, s, hd, 1, 0);
	HOSTFN("A", s, 'A');
	release_start(&rel, &m[0], 300);
	C("cuDevicePrimaryCtxReset_v2", "cuDevicePrimaryCtxReset_v2", f_dev, dev);
	order_note('X');
	order_release_join(&rel);
	usleep(300 * 1000);
	order_out("order");
	primary_state("state(reset)");
	current_line("current(reset)");
	C("cuPointerGetAttribute(earlier memory)", "cuPointerGetAttribute",
	  f_ptrattr, &mt, PA_MEMORY_TYPE, d);
	C("cuMemFree_v2(earlier memory)", "cuMemFree_v2", f_dptr, d);
	if (!C("cuMemAlloc_v2(after)", "cuMemAlloc_v2", f_alloc, &d2, 4096))
		C("cuMemFree_v2(after)", "cuMemFree_v2", f_dptr, d2);
	C("cuCtxSynchronize(after)", "cuCtxSynchronize", f_v);
	C("cuStreamQuery(stream of reset)", "cuStreamQuery", f_stream, s);
	/* retained once more: the count the reset left, and a live context? */
	C("cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain", f_retain, &pctx, dev);
	primary_state("state(retained after reset)");
	if (!C("cuMemAlloc_v2(retained after reset)", "cuMemAlloc_v2", f_alloc, &d2, 4096))
		C("cuMemFree_v2(retained after reset)", "cuMemFree_v2", f_dptr, d2);
	C("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease_v2", f_dev, dev);
	C("cuDevicePrimaryCtxRelease_v2(2)", "cuDevicePrimaryCtxRelease_v2", f_dev, dev);
	primary_state("state(released)");
	C("cuDevicePrimaryCtxRelease_v2(3)", "cuDevicePrimaryCtxRelease_v2", f_dev, dev);
	/* a reset of a primary context nobody retains */
	C("cuDevicePrimaryCtxReset_v2(unretained)", "cuDevicePrimaryCtxReset_v2", f_dev, dev);
	primary_state("state(reset unretained)");
}

/*
 * The last cuDevicePrimaryCtxRelease with work queued on a stream of the
 * primary context: does it wait for the work?
 */
static void s_primdrain(void)
{
	CUstream s = NULL;
	CUdeviceptr hd = 0;
	volatile unsigned int *m;
	struct order_release rel;

	order_caller = pthread_self();
	if (setup() || !(m = host_words(&hd)) ||
	    C("cuStreamCreate", "cuStreamCreate", f_streamcreate, &s, 1))
		return;
	C("wait", "cuStreamWaitValue32_v2", f_wait32, s, hd, 1, 0);
	HOSTFN("A", s, 'A');
	release_start(&rel, &m[0], 300);
	C("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease_v2", f_dev, dev);
	order_note('X');
	order_release_join(&rel);
	usleep(300 * 1000);
	order_out("order");
	primary_state("state(released)");
	C("cuStreamQuery(stream of released)", "cuStreamQuery", f_stream, s);
}

/*
 * Teardown with work queued: cuStreamDestroy of a stream whose work
 * waits (does it return at once, does the work still run?), and
 * cuEventDestroy of an event another stream waits for (does that wait
 * still hold?).  Last, the handle of the destroyed stream.
 */
static void s_streamdestroy(void)
{
	CUstream s = NULL, s2 = NULL, s3 = NULL;
	CUevent e = NULL;
	CUdeviceptr hd = 0;
	volatile unsigned int *m;
	struct order_release rel;

	if (!(m = three_streams(&hd, &s, &s2, &s3, &e)))
		return;

	C("stream.wait", "cuStreamWaitValue32_v2", f_wait32, s, hd, 1, 0);
	release_prepare(&rel, &m[0], 0);
	HOSTFN("stream.A", s, 'A');
	C("stream.cuStreamDestroy_v2", "cuStreamDestroy_v2", f_stream, s);
	order_note('X');
	order_release_now(&rel);
	order_release_join(&rel);
	/* A, if it runs: waited for, not given a time (10 s at most) */
	for (int i = 0; i < 10000 && __atomic_load_n(&order_nseq, __ATOMIC_SEQ_CST) < 3; i++)
		usleep(1000);
	order_out("stream.order");

	release_prepare(&rel, &m[1], 0);
	C("event.wait", "cuStreamWaitValue32_v2", f_wait32, s2, hd + 4, 1, 0);
	C("event.cuEventRecord", "cuEventRecord", f_eventrecord, e, s2);
	C("event.cuStreamWaitEvent", "cuStreamWaitEvent", f_waitevent, s3, e, 0);
	HOSTFN("event.C", s3, 'C');
	C("event.cuEventDestroy_v2", "cuEventDestroy_v2", f_event, e);
	order_note('D');
	order_release_arm(&rel, 300);
	C("event.cuStreamSynchronize", "cuStreamSynchronize", f_stream, s3);
	order_note('S');
	order_release_join(&rel);
	order_out("event.order");
	C("event.cuStreamSynchronize(recording stream)", "cuStreamSynchronize", f_stream, s2);

	C(NULL, "cuStreamDestroy_v2", f_stream, s2);
	C(NULL, "cuStreamDestroy_v2", f_stream, s3);
	/* last: the handle of the stream destroyed above */
	C("stream.cuStreamQuery(destroyed)", "cuStreamQuery", f_stream, s);
}

/*
 * Page-locked host memory freed (cuMemFreeHost) or unregistered
 * (cuMemHostUnregister) while a queued stream write targets it: does the
 * call wait for the write, and what is the context's state afterwards?
 * One process each: a fault would leave its context unusable.
 */
static void host_teardown(int unregister)
{
	CUstream s = NULL;
	CUdeviceptr hd = 0, dt = 0;
	volatile unsigned int *m, *t = NULL;
	struct order_release rel;
	void *hp = NULL;

	order_caller = pthread_self();
	if (setup() || !(m = host_words(&hd)) ||
	    C("cuStreamCreate", "cuStreamCreate", f_streamcreate, &s, 1))
		return;
	if (unregister) {
		t = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (t == MAP_FAILED)
			return;
		memset((void *)t, 0, 4096);
		if (C("cuMemHostRegister_v2", "cuMemHostRegister_v2", f_hostreg,
		      (void *)t, 4096, 2) ||
		    C("cuMemHostGetDevicePointer_v2", "cuMemHostGetDevicePointer_v2",
		      f_hostdevptr, &dt, (void *)t, 0))
			return;
	} else {
		if (C("cuMemAllocHost_v2", "cuMemAllocHost_v2", f_allochost, &hp, 4096) ||
		    C("cuMemHostGetDevicePointer_v2", "cuMemHostGetDevicePointer_v2",
		      f_hostdevptr, &dt, hp, 0))
			return;
		t = hp;
		t[0] = 0;
	}
	C("wait", "cuStreamWaitValue32_v2", f_wait32, s, hd, 1, 0);
	C("write", "cuStreamWriteValue32_v2", f_wait32, s, dt, 0x55, 0);
	release_start(&rel, &m[0], 300);
	if (unregister)
		C("cuMemHostUnregister", "cuMemHostUnregister", f_ptr, (void *)t);
	else
		C("cuMemFreeHost", "cuMemFreeHost", f_ptr, hp);
	order_note('F');
	order_release_join(&rel);
	usleep(300 * 1000);
	order_out("order");
	if (unregister)		/* the memory is still the process's */
		out("written", "%s", t[0] == 0x55 ? "yes" : "no");
	C("cuStreamSynchronize", "cuStreamSynchronize", f_stream, s);
	C("cuCtxSynchronize", "cuCtxSynchronize", f_v);
}

static void s_hostfree(void)
{
	host_teardown(0);
}

static void s_hostunreg(void)
{
	host_teardown(1);
}

/* .target sm_90 PTX: *p = 1 */
static const char poke_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry poke(.param .u64 p)\n{\n"
	"\t.reg .u64 %rd<2>;\n\t.reg .u32 %r<2>;\n"
	"\tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, 1;\n"
	"\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n";

/*
 * A sticky error: a stream write to memory unmapped while it was queued
 * (on a GPU where the unmap waits for the write, a kernel's store to an
 * unmapped address instead), then what every call returns on that
 * context, until it is destroyed.  An error that is not sticky (bad
 * arguments) is returned once.
 */
static void s_sticky(void)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	CUmemGenericAllocationHandle h = 0;
	CUcontext c = NULL, c2 = NULL, cur = NULL;
	CUstream s = NULL, s2 = NULL;
	CUevent e = NULL;
	CUdeviceptr hd = 0, va = 0, d = 0, d2 = 0;
	volatile unsigned int *m;
	struct order_release rel;
	size_t gran = 0, fr = 0, tot = 0;
	unsigned int v = 0, api = 0;
	int a = 0;
	void *hp = NULL, *hp0 = NULL;
	CUresult r;

	order_caller = pthread_self();
	if (setup() ||
	    C("cuCtxCreate_v4", "cuCtxCreate_v4", f_ctxcreate4, &c, NULL, 0, dev) ||
	    !(m = host_words(&hd)) ||
	    C("cuStreamCreate", "cuStreamCreate", f_streamcreate, &s, 1) ||
	    C(NULL, "cuMemAlloc_v2", f_alloc, &d, 4096) ||
	    C(NULL, "cuMemAllocHost_v2", f_allochost, &hp0, 4096))
		return;
	C("nonsticky.cuMemcpyDtoH_v2(NULL src)", "cuMemcpyDtoH_v2", f_dtoh, &v, 0, 4);
	C("nonsticky.cuCtxSynchronize", "cuCtxSynchronize", f_v);
	C("nonsticky.cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2", f_dtoh, &v, d, 4);

	memset(&prop, 0, sizeof(prop));
	prop.type = 1;
	prop.location.type = 1;
	prop.location.id = dev;
	prop.allocFlags.gpuDirectRDMACapable = 1;
	acc.location = prop.location;
	acc.flags = 3;
	if (C(NULL, "cuMemGetAllocationGranularity", f_gran, &gran, &prop, 0) ||
	    C(NULL, "cuMemCreate", f_memcreate, &h, gran, &prop, 0) ||
	    C(NULL, "cuMemAddressReserve", f_reserve, &va, gran, 0, 0, 0) ||
	    C(NULL, "cuMemMap", f_map, va, gran, 0, h, 0) ||
	    C(NULL, "cuMemSetAccess", f_setaccess, va, gran, &acc, 1))
		return;
	C("fault.wait", "cuStreamWaitValue32_v2", f_wait32, s, hd, 1, 0);
	release_prepare(&rel, &m[0], 0);
	C("fault.write", "cuStreamWriteValue32_v2", f_wait32, s, va, 0x55, 0);
	C("fault.cuMemUnmap", "cuMemUnmap", f_unmap, va, gran);
	order_note('U');
	order_release_now(&rel);
	order_release_join(&rel);
	order_out("fault.order");
	r = C("fault.cuStreamSynchronize", "cuStreamSynchronize", f_stream, s);
	if (!r) {	/* the unmap waited: a kernel's store faults instead */
		void *mod = NULL, *fn = NULL;
		CUdeviceptr bad = va;
		void *params[] = { &bad };

		if (!C("kernel.cuModuleLoadData", "cuModuleLoadData", f_moddata, &mod, poke_ptx) &&
		    !C("kernel.cuModuleGetFunction", "cuModuleGetFunction", f_getfunc, &fn, mod, "poke")) {
			C("kernel.cuLaunchKernel", "cuLaunchKernel", f_launch, fn, 1, 1, 1,
			  1, 1, 1, 0, s, params, NULL);
			C("kernel.cuStreamSynchronize", "cuStreamSynchronize", f_stream, s);
		}
	}

	C("after.cuCtxSynchronize", "cuCtxSynchronize", f_v);
	C("after.cuCtxSynchronize", "cuCtxSynchronize", f_v);
	C("after.cuStreamSynchronize", "cuStreamSynchronize", f_stream, s);
	C("after.cuStreamQuery", "cuStreamQuery", f_stream, s);
	C("after.cuStreamQuery(NULL)", "cuStreamQuery", f_stream, NULL);
	C("after.cuStreamSynchronize(NULL)", "cuStreamSynchronize", f_stream, NULL);
	C("after.cuStreamCreate", "cuStreamCreate", f_streamcreate, &s2, 1);
	C("after.cuEventCreate", "cuEventCreate", f_eventcreate, &e, 0);
	C("after.cuEventRecord", "cuEventRecord", f_eventrecord, e, s);
	C("after.cuMemAlloc_v2", "cuMemAlloc_v2", f_alloc, &d2, 4096);
	C("after.cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2", f_htod, d, &v, 4);
	C("after.cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2", f_dtoh, &v, d, 4);
	C("after.cuMemsetD8_v2", "cuMemsetD8_v2", f_memset8, d, 0, 4);
	C("after.cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync_v2", f_htod_a, d, &v, 4, s);
	C("after.cuLaunchHostFunc", "cuLaunchHostFunc", f_hostfunc, s, order_hostfn, (void *)(uintptr_t)'Z');
	C("after.cuStreamWriteValue32", "cuStreamWriteValue32_v2", f_wait32, s, hd + 4, 1, 0);
	C("after.cuStreamWaitValue32", "cuStreamWaitValue32_v2", f_wait32, s, hd + 4, 0, 0);
	C("after.cuMemAllocHost_v2", "cuMemAllocHost_v2", f_allochost, &hp, 4096);
	C("after.cuPointerGetAttribute", "cuPointerGetAttribute", f_ptrattr, &cur, PA_CONTEXT, d);
	C("after.cuCtxGetDevice", "cuCtxGetDevice", f_pdev, &a);
	C("after.cuCtxGetCurrent", "cuCtxGetCurrent", f_pctx, &cur);
	C("after.cuCtxGetApiVersion", "cuCtxGetApiVersion", f_ctxapi, c, &api);
	C("after.cuCtxGetFlags", "cuCtxGetFlags", f_pi, (int *)&api);
	C("after.cuDeviceGetAttribute", "cuDeviceGetAttribute", f_attr, &a, 1, dev);
	C("after.cuMemGetInfo_v2", "cuMemGetInfo_v2", f_meminfo, &fr, &tot);
	C("after.cuMemFree_v2", "cuMemFree_v2", f_dptr, d);
	C("after.cuMemFreeHost", "cuMemFreeHost", f_ptr, hp0);
	C("after.cuMemHostUnregister", "cuMemHostUnregister", f_ptr, (void *)m);
	C("after.cuStreamDestroy_v2", "cuStreamDestroy_v2", f_stream, s);
	C("after.cuCtxSynchronize(last)", "cuCtxSynchronize", f_v);
	order_out("after.hostfn");
	/* another context is not affected */
	C("primary.cuCtxPushCurrent_v2", "cuCtxPushCurrent_v2", f_ctx, pctx);
	C("primary.cuMemAlloc_v2", "cuMemAlloc_v2", f_alloc, &d2, 4096);
	C("primary.cuMemFree_v2", "cuMemFree_v2", f_dptr, d2);
	C("primary.cuCtxSynchronize", "cuCtxSynchronize", f_v);
	C("primary.cuCtxPopCurrent_v2", "cuCtxPopCurrent_v2", f_pctx, &cur);
	C("destroy.cuCtxDestroy_v2", "cuCtxDestroy_v2", f_ctx, c);
	C("new.cuCtxCreate_v4", "cuCtxCreate_v4", f_ctxcreate4, &c2, NULL, 0, dev);
	C("new.cuMemAlloc_v2", "cuMemAlloc_v2", f_alloc, &d2, 4096);
	C("new.cuCtxSynchronize", "cuCtxSynchronize", f_v);
	C("new.cuCtxDestroy_v2", "cuCtxDestroy_v2", f_ctx, c2);
}

/*
 * cuCtxGetId (CUDA 12.0): ids are nonzero, differ between contexts, name
 * the current context for NULL; a destroyed context's call leaves the
 * output alone.  Ids are never printed, only compared.
 */
static void s_ctxid(void)
{
	unsigned long long id = 0, id2 = 0, id3 = 0;
	CUcontext c = NULL;

	C("cuCtxGetId(before init)", "cuCtxGetId", f_ctxid, NULL, &id);
	if (C(NULL, "cuInit", f_u, 0))
		return;
	C("cuCtxGetId(no context)", "cuCtxGetId", f_ctxid, NULL, &id);
	if (setup())
		return;
	if (!C("cuCtxGetId(current)", "cuCtxGetId", f_ctxid, NULL, &id))
		out("cuCtxGetId(current).value", "%s", id ? "nonzero" : "0");
	if (!C("cuCtxGetId(primary)", "cuCtxGetId", f_ctxid, pctx, &id2))
		out("cuCtxGetId(primary).same", "%s", id2 == id ? "yes" : "no");
	C("cuCtxGetId(NULL out)", "cuCtxGetId", f_ctxid, NULL, NULL);
	C("cuCtxGetId(primary, NULL out)", "cuCtxGetId", f_ctxid, pctx, NULL);
	if (C("cuCtxCreate_v4", "cuCtxCreate_v4", f_ctxcreate4, &c, NULL, 0, dev))
		return;
	if (!C("cuCtxGetId(created)", "cuCtxGetId", f_ctxid, c, &id3))
		out("cuCtxGetId(created).value", "%s",
		    id3 == id ? "same as primary" : id3 ? "other" : "0");
	C("cuCtxDestroy_v2(created)", "cuCtxDestroy_v2", f_ctx, c);
	id2 = 7;
	C("cuCtxGetId(destroyed)", "cuCtxGetId", f_ctxid, c, &id2);
	out("cuCtxGetId(destroyed).out", "%s", id2 == 7 ? "unchanged" : "written");
	C("cuCtxSetCurrent(primary)", "cuCtxSetCurrent", f_ctx, pctx);
	if (!C("cuCtxGetId(current again)", "cuCtxGetId", f_ctxid, NULL, &id2))
		out("cuCtxGetId(current again).same", "%s", id2 == id ? "yes" : "no");
}

/*
 * cuMemExportToShareableHandle and cuMemImportFromShareableHandle of a VMM
 * allocation made without shareable handle types and of one made with
 * POSIX_FILE_DESCRIPTOR (the fd, where there is one, is imported back).
 * No row exports an unknown handle: NVIDIA's library crashes on one
 * (SIGSEGV, H100 with driver 580.159.04).
 */
static void s_shareable(void)
{
	CUmemAllocationProp prop;
	CUmemGenericAllocationHandle h = 0, h2 = 0, im = 0;
	size_t g = 0;
	int fd = -1;

	if (setup())
		return;
	memset(&prop, 0, sizeof(prop));
	prop.type = 1;			/* CU_MEM_ALLOCATION_TYPE_PINNED */
	prop.location.type = 1;		/* CU_MEM_LOCATION_TYPE_DEVICE */
	prop.location.id = dev;
	C(NULL, "cuMemGetAllocationGranularity", f_gran, &g, &prop, 0);
	if (!g)
		g = 2 << 20;
	if (!C("cuMemCreate(types none)", "cuMemCreate", f_memcreate, &h, g, &prop, 0)) {
		C("export(types none, fd)", "cuMemExportToShareableHandle", f_export, &fd, h, 1, 0ULL);
		C("export(types none, type 0)", "cuMemExportToShareableHandle", f_export, &fd, h, 0, 0ULL);
		C(NULL, "cuMemRelease", f_release, h);
	}
	prop.requestedHandleTypes = 1;	/* CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR */
	if (!C("cuMemCreate(types fd)", "cuMemCreate", f_memcreate, &h2, g, &prop, 0)) {
		C("export(flags 1)", "cuMemExportToShareableHandle", f_export, &fd, h2, 1, 1ULL);
		C("export(type 0x100)", "cuMemExportToShareableHandle", f_export, &fd, h2, 0x100, 0ULL);
		C("export(NULL out)", "cuMemExportToShareableHandle", f_export, NULL, h2, 1, 0ULL);
		C("export(fd)", "cuMemExportToShareableHandle", f_export, &fd, h2, 1, 0ULL);
		if (fd >= 0 && !C("import(fd)", "cuMemImportFromShareableHandle", f_import, &im,
				  (void *)(intptr_t)fd, 1)) {
			C("import(fd).release", "cuMemRelease", f_release, im);
		}
		if (fd >= 0)
			close(fd);
		C(NULL, "cuMemRelease", f_release, h2);
	}
	C("import(NULL out)", "cuMemImportFromShareableHandle", f_import, NULL, (void *)(intptr_t)0, 1);
	C("import(type 0x100)", "cuMemImportFromShareableHandle", f_import, &im, (void *)(intptr_t)0, 0x100);
	C("import(fd -1)", "cuMemImportFromShareableHandle", f_import, &im, (void *)(intptr_t)-1, 1);
	C("import(not a CUDA fd)", "cuMemImportFromShareableHandle", f_import, &im, (void *)(intptr_t)0, 1);
}

/*
 * cuMemRangeGetAttribute of memory that is not managed (cuMemAlloc,
 * page-locked host memory) and of managed memory where the driver has it.
 */
static void s_rangeattr(void)
{
	CUdeviceptr d = 0, m = 0;
	void *hp = NULL;
	int v = 5, acc[3] = { 5, 5, 5 };

	if (setup())
		return;
	if (!C(NULL, "cuMemAlloc_v2", f_alloc, &d, 1 << 20)) {
		C("device.preferred", "cuMemRangeGetAttribute", f_rangeattr, &v, 4, 2, d, 4096);
		out("device.preferred.out", "%s", v == 5 ? "unchanged" : "written");
		C("device.preferred(size 8)", "cuMemRangeGetAttribute", f_rangeattr, &v, 8, 2, d, 4096);
		C("device.preferred(NULL data)", "cuMemRangeGetAttribute", f_rangeattr, NULL, 4, 2, d, 4096);
		C("device.preferred(count 0)", "cuMemRangeGetAttribute", f_rangeattr, &v, 4, 2, d, 0);
		C("device.attr 0", "cuMemRangeGetAttribute", f_rangeattr, &v, 4, 0, d, 4096);
		C("device.attr 99", "cuMemRangeGetAttribute", f_rangeattr, &v, 4, 99, d, 4096);
		C(NULL, "cuMemFree_v2", f_dptr, d);
	}
	if (!C(NULL, "cuMemAllocHost_v2", f_allochost, &hp, 4096)) {
		C("host.preferred", "cuMemRangeGetAttribute", f_rangeattr, &v, 4, 2,
		  (CUdeviceptr)(uintptr_t)hp, 4096);
		C(NULL, "cuMemFreeHost", f_ptr, hp);
	}
	C("null.preferred", "cuMemRangeGetAttribute", f_rangeattr, &v, 4, 2, (CUdeviceptr)0, 4096);
	if (C("cuMemAllocManaged", "cuMemAllocManaged", f_managed, &m, 1 << 20, 1))
		return;
	v = 5;
	if (!C("managed.preferred", "cuMemRangeGetAttribute", f_rangeattr, &v, 4, 2, m, 4096))
		out("managed.preferred.value", "%d", v);
	C("managed.preferred(size 8)", "cuMemRangeGetAttribute", f_rangeattr, &v, 8, 2, m, 4096);
	if (!C("managed.accessed_by(12)", "cuMemRangeGetAttribute", f_rangeattr, acc, 12, 3, m, 4096))
		out("managed.accessed_by(12).value", "%d %d %d", acc[0], acc[1], acc[2]);
	C("managed.accessed_by(6)", "cuMemRangeGetAttribute", f_rangeattr, acc, 6, 3, m, 4096);
	C(NULL, "cuMemFree_v2", f_dptr, m);
}

static const struct { const char *name; void (*fn)(void); } sections[] = {
	{ "init", s_init }, { "symbols", s_symbols }, { "procaddr", s_procaddr },
	{ "device", s_device }, { "ctx", s_ctx }, { "alloc", s_alloc },
	{ "pointer", s_pointer }, { "host", s_host }, { "copy", s_copy },
	{ "stream", s_stream }, { "vmm", s_vmm }, { "memops", s_memops },
	{ "ipc", s_ipc }, { "ipclife", s_ipclife },
	{ "batchmemop", s_batchmemop }, { "dmabuf", s_dmabuf }, { "compute", s_compute },
	{ "order", s_order }, { "ctxdestroy", s_ctxdestroy }, { "memfree", s_memfree },
	{ "sticky", s_sticky }, { "event", s_event },
	{ "waitearlier", s_waitearlier }, { "primrelease", s_primrelease },
	{ "primreset", s_primreset }, { "primdrain", s_primdrain },
	{ "streamdestroy", s_streamdestroy }, { "hostfree", s_hostfree },
	{ "hostunreg", s_hostunreg }, { "ctxid", s_ctxid },
	{ "shareable", s_shareable }, { "rangeattr", s_rangeattr },
};

/*
 * Probes: bad input that may crash a driver (NVIDIA's dereferences some NULL
 * arguments), each in a process of its own; a crash shows as
 * "probe.NAME.end = signal N".
 */
static void p_proc_null_symbol(void)
{
	void *p;

	C("rc", "cuGetProcAddress_v2", f_proc, NULL, &p, 13000, 0, NULL);
}

static void p_proc_null_pfn(void)
{
	C("rc", "cuGetProcAddress_v2", f_proc, "cuInit", NULL, 13000, 0, NULL);
}

static void p_proc_bad_flags(void)
{
	void *p;

	C("rc", "cuGetProcAddress_v2", f_proc, "cuInit", &p, 13000, 8, NULL);
}

static void p_name_len0(void)
{
	char name[8];

	C("rc", "cuDeviceGetName", f_name, name, 0, dev);
}

static void p_name_null(void)
{
	C("rc", "cuDeviceGetName", f_name, NULL, 16, dev);
}

static void p_name_dev7(void)
{
	char name[64];

	C("rc", "cuDeviceGetName", f_name, name, sizeof(name), 7);
}

static void p_uuid_null(void)
{
	C("rc", "cuDeviceGetUuid_v2", f_uuid, NULL, dev);
}

static void p_uuid_dev7(void)
{
	CUuuid u;

	C("rc", "cuDeviceGetUuid_v2", f_uuid, &u, 7);
}

static void p_totalmem_null(void)
{
	C("rc", "cuDeviceTotalMem_v2", f_totalmem, NULL, dev);
}

static void p_totalmem_dev7(void)
{
	size_t t;

	C("rc", "cuDeviceTotalMem_v2", f_totalmem, &t, 7);
}

static void p_attr_null(void)
{
	C("rc", "cuDeviceGetAttribute", f_attr, NULL, 1, dev);
}

static void p_attr_dev7(void)
{
	int v;

	C("rc", "cuDeviceGetAttribute", f_attr, &v, 1, 7);
}

static void p_attr_0(void)
{
	int v;

	C("rc", "cuDeviceGetAttribute", f_attr, &v, 0, dev);
}

static void p_attr_148(void)
{
	int v;

	C("rc", "cuDeviceGetAttribute", f_attr, &v, 148, dev);
}

static void p_meminfo_null(void)
{
	C("rc", "cuMemGetInfo_v2", f_meminfo, NULL, NULL);
}

static void p_ctxgetdevice_null(void)
{
	C("rc", "cuCtxGetDevice", f_pdev, NULL);
}

static void p_batch_null(void)
{
	CUstream s = NULL;

	if (!C(NULL, "cuStreamCreate", f_streamcreate, &s, 1))
		C("rc", "cuStreamBatchMemOp_v2", f_batch, s, 1, NULL, 0);
}

static const struct { const char *name; void (*fn)(void); } probes[] = {
	{ "cuGetProcAddress_v2(NULL symbol)", p_proc_null_symbol },
	{ "cuGetProcAddress_v2(NULL pfn)", p_proc_null_pfn },
	{ "cuGetProcAddress_v2(flags 8)", p_proc_bad_flags },
	{ "cuDeviceGetName(len 0)", p_name_len0 },
	{ "cuDeviceGetName(NULL)", p_name_null },
	{ "cuDeviceGetName(dev 7)", p_name_dev7 },
	{ "cuDeviceGetUuid_v2(NULL)", p_uuid_null },
	{ "cuDeviceGetUuid_v2(dev 7)", p_uuid_dev7 },
	{ "cuDeviceTotalMem_v2(NULL)", p_totalmem_null },
	{ "cuDeviceTotalMem_v2(dev 7)", p_totalmem_dev7 },
	{ "cuDeviceGetAttribute(NULL)", p_attr_null },
	{ "cuDeviceGetAttribute(dev 7)", p_attr_dev7 },
	{ "cuDeviceGetAttribute(0)", p_attr_0 },
	{ "cuDeviceGetAttribute(148)", p_attr_148 },
	{ "cuMemGetInfo_v2(NULL, NULL)", p_meminfo_null },
	{ "cuCtxGetDevice(NULL)", p_ctxgetdevice_null },
	{ "cuStreamBatchMemOp_v2(NULL array)", p_batch_null },
};

static int run_probe(size_t i)
{
	static char name[128];

	snprintf(name, sizeof(name), "probe.%s", probes[i].name);
	section = name;
	alarm(60);
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		out("dlopen", "failed");
		return 1;
	}
	if (setup())
		return 1;
	probes[i].fn();
	return 0;
}

/* Runs fn(i) in a child process; prints how it ended under @name. */
static int in_child(int (*fn)(size_t), size_t i, const char *name)
{
	char key[160];
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (pid == 0)
		_exit(fn(i));
	if (waitpid(pid, &st, 0) != pid) {
		perror("waitpid");
		return -1;
	}
	snprintf(key, sizeof(key), "%s.end", name);
	section = "";
	printf("%s = ", key);
	if (WIFSIGNALED(st))
		printf("signal %d\n", WTERMSIG(st));
	else
		printf("exit %d\n", WEXITSTATUS(st));
	return 0;
}

static int run_section(size_t i)
{
	section = sections[i].name;
	alarm(60);	/* a wait that is never released ends as SIGALRM */
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		out("dlopen", "failed");
		return 1;
	}
	sections[i].fn();
	return 0;
}

int main(int argc, char **argv)
{
	size_t n = sizeof(sections) / sizeof(sections[0]);
	char name[160];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2) {
		fprintf(stderr, "usage: %s all|SECTION|list\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "list")) {
		for (size_t i = 0; i < n; i++)
			puts(sections[i].name);
		for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
			printf("probe.%s\n", probes[i].name);
		return 0;
	}
	if (!strcmp(argv[1], "all")) {
		for (size_t i = 0; i < n; i++)
			if (in_child(run_section, i, sections[i].name))
				return 1;
		for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
			snprintf(name, sizeof(name), "probe.%s", probes[i].name);
			if (in_child(run_probe, i, name))
				return 1;
		}
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(argv[1], sections[i].name))
			return run_section(i);
	fprintf(stderr, "%s: no section %s\n", argv[0], argv[1]);
	return 2;
}
