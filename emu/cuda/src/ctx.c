// SPDX-License-Identifier: MIT
/*
 * ctx.c - the device and its contexts
 *
 * One device, ordinal 0: the ivshmem "GPU".  Contexts own the memory
 * allocated in them; destroying one (or releasing the primary context for
 * the last time) frees that memory, which revokes third-party pins as
 * cuCtxDestroy does with the NVIDIA driver.  After a sticky error
 * (stream.c) the calls that only read a context's state (cuCtxGetDevice,
 * cuCtxGetFlags, cuCtxGetApiVersion, the context stack) still answer, as
 * on the H100; cuCtxCreate returns the error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_emu_internal.h"
#include "nvp2p_emu.h"

__thread struct CUctx_st *emu_current_ctx;

/*
 * The checks every device query makes, in the real driver's order: bad
 * arguments (INVALID_VALUE) before an uninitialised driver, then the
 * device ordinal (INVALID_DEVICE).
 */
static CUresult emu_dev_args(bool bad_args, CUdevice dev)
{
	CUresult r = emu_check_init();

	if (bad_args)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	return dev != 0 ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuDeviceGetCount(int *count)
{
	CUresult r = emu_check_init();

	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	*count = 1;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	CUresult r = emu_dev_args(!device, ordinal);

	if (r)
		return r;
	*device = 0;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	CUresult r = emu_dev_args(!name || len <= 0, dev);

	if (r)
		return r;
	snprintf(name, (size_t)len, "gdirect emulated GPU (ivshmem %04x:%02x:%02x.%x)",
		 emu.pci_domain, emu.pci_bus, emu.pci_devfn >> 3, emu.pci_devfn & 7);
	return CUDA_SUCCESS;
}

#define MACHINE INT32_MIN
static const int h100_attrs[] = {
#include "h100_attrs.inc"
};

/*
 * What the emulator cannot do, it does not claim: these attributes differ
 * from the H100's, each listed in tests/conformance/cuda_emu/differences.txt.
 */
static int emu_attr_override(int attrib, int *pi)
{
	switch (attrib) {
	case 124:	/* DMA_BUF_SUPPORTED: the open licence flavours */
		*pi = !!(emu.caps & NVP2P_EMU_CAP_DMABUF);
		return 1;
	/*
	 * PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES: 1 on Grace Hopper,
	 * where the GPU shares the CPU's page tables over C2C; the emulator
	 * of a coherent platform says so (gdrcopy's tests read it), and the
	 * H100 behind PCIe, 0.
	 */
	case 100:
		*pi = !!(emu.caps & NVP2P_EMU_CAP_COHERENT);
		return 1;
	case 83:	/* MANAGED_MEMORY: no managed memory */
	case 89:	/* CONCURRENT_MANAGED_ACCESS */
	case 103:	/* HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: no export */
	case 115:	/* MEMORY_POOLS_SUPPORTED: no stream-ordered allocator */
	case 119:	/* MEMPOOL_SUPPORTED_HANDLE_TYPES */
	case 128:	/* HANDLE_TYPE_FABRIC_SUPPORTED */
	case 141:	/* HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED */
	case 142:	/* HOST_NUMA_MEMORY_POOLS_SUPPORTED */
	case 144:	/* HOST_MEMORY_POOLS_SUPPORTED */
	case 145:	/* HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED */
		*pi = 0;
		return 1;
	}
	return 0;
}

/* The machine's own values: the ivshmem device's PCI location. */
static int machine_attr(int attrib)
{
	switch (attrib) {
	case 13: return 1980000;		/* CLOCK_RATE, kHz */
	case 33: return (int)emu.pci_bus;	/* PCI_BUS_ID */
	case 34: return (int)(emu.pci_devfn >> 3);	/* PCI_DEVICE_ID */
	case 36: return 2619000;		/* MEMORY_CLOCK_RATE, kHz */
	case 50: return (int)emu.pci_domain;	/* PCI_DOMAIN_ID */
	case 85: return 0;			/* MULTI_GPU_BOARD_GROUP_ID */
	case 131: return -1;			/* NUMA_ID */
	case 134: return -1;			/* HOST_NUMA_ID */
	case 140: return 0;			/* GPU_PCI_SUBSYSTEM_ID */
	}
	return 0;
}

/* Every CUdevice_attribute of CUDA 13.0, answered as the H100 answers. */
EMU_EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib,
					 CUdevice dev)
{
	CUresult r = emu_dev_args(!pi, dev);
	int a = (int)attrib;

	if (r)
		return r;
	if (a <= 0 || a >= (int)(sizeof(h100_attrs) / sizeof(h100_attrs[0])))
		return CUDA_ERROR_INVALID_VALUE;
	if (emu_attr_override(a, pi))
		return CUDA_SUCCESS;
	*pi = h100_attrs[a] == MACHINE ? machine_attr(a) : h100_attrs[a];
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	CUresult r = emu_dev_args(!uuid, dev);

	if (r)
		return r;
	memcpy(uuid->bytes, emu.uuid, sizeof(uuid->bytes));
	return CUDA_SUCCESS;
}

/* The same UUID: there is no MIG on the emulated GPU. */
#undef cuDeviceGetUuid
EMU_EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	return cuDeviceGetUuid_v2(uuid, dev);
}

EMU_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	CUresult r = emu_dev_args(!bytes, dev);

	if (r)
		return r;
	*bytes = emu.mem_size;
	return CUDA_SUCCESS;
}

/*
 * Retains, releases and resets of the primary context, one at a time: a
 * destroy drains the context's streams without emu.lock, and a retain
 * meanwhile must not see its new memory or streams go with it.  A host
 * function (on the stream worker) does not take it: CUDA forbids it to
 * call the driver, and a destroy that waits for it would wait forever.
 * So a retain waits for a destroy's drain: queued work that waits for a
 * word only the retaining thread would write after its retain never ends
 * (as on a GPU, where that thread may not use the device during the
 * release either).
 */
static pthread_mutex_t primary_life = PTHREAD_MUTEX_INITIALIZER;

static void primary_life_lock(void)
{
	if (!emu_on_worker())
		pthread_mutex_lock(&primary_life);
}

static void primary_life_unlock(void)
{
	if (!emu_on_worker())
		pthread_mutex_unlock(&primary_life);
}

/* The next context id, under emu.lock: ids count from 1 and are never
 * reused, as cuCtxGetId's are "unique for the life of the program". */
static unsigned long long next_ctx_id = 1;

EMU_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUresult r = emu_dev_args(!pctx, dev);

	if (r)
		return r;
	primary_life_lock();
	pthread_mutex_lock(&emu.lock);
	emu.primary_refs++;
	if (emu.primary.destroyed || !emu.primary.id)
		emu.primary.id = next_ctx_id++;
	emu.primary.destroyed = false;
	pthread_mutex_unlock(&emu.lock);
	primary_life_unlock();
	*pctx = &emu.primary;
	return CUDA_SUCCESS;
}

/*
 * Destroys the primary context as the H100 does on its last release and on
 * cuDevicePrimaryCtxReset (tests/conformance/cuda_emu, sections primdrain
 * and primreset): the work queued on its streams runs to its end first,
 * then its streams and memory go.  The handle stays, and stays current
 * where it was: calls that need it answer CUDA_ERROR_CONTEXT_IS_DESTROYED
 * until the next retain brings it back.  The reference count is the
 * caller's business (a reset leaves it).  Called under primary_life.  From
 * a host function, where nothing waits for the queues (stream.c), the
 * work queued behind it is not drained: it faults when it runs.
 */
static void primary_destroy(void)
{
	pthread_mutex_lock(&emu.lock);
	if (emu.primary.destroyed) {
		pthread_mutex_unlock(&emu.lock);
		return;
	}
	pthread_mutex_unlock(&emu.lock);
	emu_ctx_streams_destroy(&emu.primary);
	pthread_mutex_lock(&emu.lock);
	emu_free_ctx_allocs(&emu.primary);
	emu.primary.destroyed = true;
	pthread_mutex_unlock(&emu.lock);
}

EMU_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	CUresult r = emu_check_init();
	bool last;

	if (r)
		return r;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	primary_life_lock();
	pthread_mutex_lock(&emu.lock);
	if (!emu.primary_refs) {
		pthread_mutex_unlock(&emu.lock);
		primary_life_unlock();
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	last = --emu.primary_refs == 0;
	pthread_mutex_unlock(&emu.lock);
	if (last)
		primary_destroy();
	primary_life_unlock();
	return CUDA_SUCCESS;
}

/*
 * The per-thread context stack: cuCtxCreate and cuCtxPushCurrent push,
 * cuCtxPopCurrent pops, cuCtxSetCurrent replaces the top (NULL pops), and
 * cuCtxDestroy pops the context if it is this thread's current one.
 */
#define CTX_STACK_MAX 64
static __thread struct CUctx_st *ctx_stack[CTX_STACK_MAX];
static __thread unsigned int ctx_depth;

static void stack_changed(void)
{
	emu_current_ctx = ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
}

static CUresult ctx_push(struct CUctx_st *ctx)
{
	if (ctx_depth == CTX_STACK_MAX)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ctx_stack[ctx_depth++] = ctx;
	stack_changed();
	return CUDA_SUCCESS;
}

CUresult emu_ctx_live(void)
{
	CUresult r = emu_check_init();

	if (r)
		return r;
	if (!emu_current_ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	/*
	 * A destroyed context left current, a primary one released to no
	 * references included: the H100 answers CONTEXT_IS_DESTROYED
	 * (cuMemAlloc, cuIpcCloseMemHandle; tests/reference/gpu-logs/ctx-released-h100.txt).
	 */
	if (emu_current_ctx->destroyed)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	return CUDA_SUCCESS;
}

CUresult emu_sticky(void)
{
	return __atomic_load_n(&emu.sticky, __ATOMIC_ACQUIRE);
}

CUresult emu_need_ctx(void)
{
	CUresult r = emu_ctx_live();

	return r ? r : emu_sticky();
}

/* cuCtxCreate flags: CU_CTX_SCHED_* (one of them) and the flag bits. */
#define CTX_FLAGS_VALID 0xffu

EMU_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params,
				   unsigned int flags, CUdevice dev)
{
	CUresult r = emu_check_init();
	struct CUctx_st *ctx;
	unsigned int sched = flags & 7;

	if (!pctx || params || (flags & ~CTX_FLAGS_VALID) ||
	    (sched != 0 && sched != 1 && sched != 2 && sched != 4))
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	r = emu_sticky();
	if (r)
		return r;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ctx->dev = dev;
	ctx->flags = flags;
	r = ctx_push(ctx);
	if (r) {
		free(ctx);
		return r;
	}
	pthread_mutex_lock(&emu.lock);
	ctx->id = next_ctx_id++;
	ctx->next = emu.ctxs;
	emu.ctxs = ctx;
	pthread_mutex_unlock(&emu.lock);
	*pctx = ctx;
	return CUDA_SUCCESS;
}

/*
 * cuCtxCreate_v2 is the three-argument cuCtxCreate of CUDA 3.2 to 12.x,
 * which NVIDIA's driver still exports and cuGetProcAddress still returns
 * for those versions; programs that load the driver by version (perftest)
 * ask for it.  It is cuCtxCreate_v4 without creation parameters.
 */
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
EMU_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags,
				   CUdevice dev)
{
	return cuCtxCreate_v4(pctx, NULL, flags, dev);
}

EMU_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	CUresult r = emu_check_init();

	if (r)
		return r;
	if (!ctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (ctx->primary)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&emu.lock);
	if (ctx->destroyed) {
		pthread_mutex_unlock(&emu.lock);
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	}
	pthread_mutex_unlock(&emu.lock);
	/* its queued work runs to its end, then its streams go */
	emu_ctx_streams_destroy(ctx);
	pthread_mutex_lock(&emu.lock);
	emu_free_ctx_allocs(ctx);
	ctx->destroyed = true;
	pthread_mutex_unlock(&emu.lock);
	if (emu_current_ctx == ctx) {
		ctx_depth--;
		stack_changed();
	}
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
	CUresult r = emu_check_init();

	if (r)
		return r;
	if (!ctx) {
		if (ctx_depth)
			ctx_depth--;
	} else if (ctx_depth) {
		ctx_stack[ctx_depth - 1] = ctx;
	} else {
		return ctx_push(ctx);
	}
	stack_changed();
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	CUresult r = emu_check_init();

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	*pctx = emu_current_ctx;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	CUresult r = emu_check_init();

	if (r)
		return r;
	if (!ctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (ctx->destroyed && !ctx->primary)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	return ctx_push(ctx);
}

EMU_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
	CUresult r = emu_check_init();

	if (r)
		return r;
	if (!ctx_depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (pctx)
		*pctx = ctx_stack[ctx_depth - 1];
	ctx_depth--;
	stack_changed();
	return CUDA_SUCCESS;
}

/* cuCtxGetDevice_v2: of ctx, or of the current context when ctx is NULL. */
EMU_EXPORT CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	CUresult r = emu_check_init();

	if (r)
		return r;
	if (!ctx) {
		/* A destroyed primary context left current still names its
		 * device, as on the H100 (conformance: primrelease). */
		r = emu_ctx_live();
		if (r && !(r == CUDA_ERROR_CONTEXT_IS_DESTROYED &&
			   emu_current_ctx->primary))
			return r;
		ctx = emu_current_ctx;
	} else if (ctx->destroyed) {
		return ctx->primary ? CUDA_ERROR_INVALID_CONTEXT :
				      CUDA_ERROR_CONTEXT_IS_DESTROYED;
	}
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	*device = ctx->dev;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
	return cuCtxGetDevice_v2(device, NULL);
}

/*
 * Waits for the work queued on every stream of the context; after a fault
 * too, for the callbacks behind it (emu_ctx_synchronize), before it
 * returns the sticky error.
 */
EMU_EXPORT CUresult cuCtxSynchronize(void)
{
	CUresult r = emu_ctx_live();

	return r ? r : emu_ctx_synchronize(emu_current_ctx);
}

/*
 * The names of the first versions, exported as NVIDIA's library does: entry
 * points of their own (cuGetProcAddress tells them from the current ones).
 */
#undef cuCtxDestroy
#undef cuCtxPushCurrent
#undef cuCtxPopCurrent
#undef cuDevicePrimaryCtxRelease
EMU_EXPORT CUresult cuCtxDestroy(CUcontext ctx)
{
	return cuCtxDestroy_v2(ctx);
}

EMU_EXPORT CUresult cuCtxPushCurrent(CUcontext ctx)
{
	return cuCtxPushCurrent_v2(ctx);
}

EMU_EXPORT CUresult cuCtxPopCurrent(CUcontext *pctx)
{
	return cuCtxPopCurrent_v2(pctx);
}

EMU_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
	return cuDevicePrimaryCtxRelease_v2(dev);
}

/* PCI bus id as NVIDIA's library writes it: "dddd:bb:dd.f", upper case. */
EMU_EXPORT CUresult cuDeviceGetPCIBusId(char *busid, int len, CUdevice dev)
{
	CUresult r = emu_dev_args(!busid || len < 13, dev);

	if (r)
		return r;
	snprintf(busid, (size_t)len, "%04X:%02X:%02X.%X", emu.pci_domain,
		 emu.pci_bus, emu.pci_devfn >> 3, emu.pci_devfn & 7);
	return CUDA_SUCCESS;
}

/* "[domain:]bus:device.function", hexadecimal. */
EMU_EXPORT CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *busid)
{
	CUresult r = emu_check_init();
	unsigned int d = 0, b, s, f;
	char tail;

	if (!dev || !busid)
		return CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	if (sscanf(busid, "%x:%x:%x.%x%c", &d, &b, &s, &f, &tail) != 4) {
		d = 0;
		if (sscanf(busid, "%x:%x.%x%c", &b, &s, &f, &tail) != 3)
			return CUDA_ERROR_INVALID_VALUE;
	}
	if (d != emu.pci_domain || b != emu.pci_bus ||
	    s != emu.pci_devfn >> 3 || f != (emu.pci_devfn & 7))
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = 0;
	return CUDA_SUCCESS;
}

/* Contexts made through the API of CUDA 3.2 and later report 3020. */
EMU_EXPORT CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
	CUresult r = emu_check_init();

	if (r)
		return r;
	if (!ctx) {
		r = emu_ctx_live();
		if (r)
			return r;
	} else if (ctx->destroyed) {
		return ctx->primary ? CUDA_ERROR_INVALID_CONTEXT :
				      CUDA_ERROR_CONTEXT_IS_DESTROYED;
	}
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = 3020;
	return CUDA_SUCCESS;
}

/*
 * cuCtxGetId: the id of ctx, or of the current context when ctx is NULL.
 * It only reads the context's state, so it answers after a sticky error
 * too, and checks the context as cuCtxGetApiVersion does.
 */
EMU_EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
	CUresult r = emu_check_init();

	if (r)
		return r;
	if (!ctx) {
		r = emu_ctx_live();
		if (r)
			return r;
		ctx = emu_current_ctx;
	} else if (ctx->destroyed) {
		return ctx->primary ? CUDA_ERROR_INVALID_CONTEXT :
				      CUDA_ERROR_CONTEXT_IS_DESTROYED;
	}
	if (!ctxId)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&emu.lock);
	*ctxId = ctx->id;
	pthread_mutex_unlock(&emu.lock);
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuCtxGetFlags(unsigned int *flags)
{
	CUresult r = emu_ctx_live();

	if (r)
		return r;
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = emu_current_ctx->flags;
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags,
					       int *active)
{
	CUresult r = emu_dev_args(!flags || !active, dev);

	if (r)
		return r;
	pthread_mutex_lock(&emu.lock);
	*flags = emu.primary.flags;
	*active = emu.primary_refs > 0 && !emu.primary.destroyed;
	pthread_mutex_unlock(&emu.lock);
	return CUDA_SUCCESS;
}

EMU_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
	CUresult r = emu_check_init();
	unsigned int sched = flags & 7;

	if (r)
		return r;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if ((flags & ~CTX_FLAGS_VALID) ||
	    (sched != 0 && sched != 1 && sched != 2 && sched != 4))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&emu.lock);
	emu.primary.flags = flags;
	pthread_mutex_unlock(&emu.lock);
	return CUDA_SUCCESS;
}

/*
 * Destroys the primary context whatever its count (primary_destroy); the
 * count stays, so each retain still needs its release, and the next retain
 * brings the context back.  Of a context nobody retains: nothing to do.
 */
EMU_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	CUresult r = emu_check_init();

	if (r)
		return r;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	primary_life_lock();
	primary_destroy();
	primary_life_unlock();
	return CUDA_SUCCESS;
}
