// SPDX-License-Identifier: MIT
/*
 * cuda-ipc-test.c - CUDA IPC between two processes of the guest.
 *
 * The exporter allocates and fills GPU memory, pins it through nv-p2p (the
 * selftest driver, slot 0) and starts a second process (fork + exec of this
 * program with "import").  The importer opens the handles, reads the data,
 * writes its own, pins its mapping (slot 1: the same GPU pages), DMAs into
 * it with edu, and closes.  The importer sends its results to the exporter
 * over a pipe ('R' ok/not ok lines) and asks it to act at fixed points
 * ('S' n, answered once done), so that the whole is one TAP stream.
 *
 * Lifetime rules checked: the exporter's cuMemFree revokes only its own
 * pins; the importer keeps the memory and its pin until it closes the
 * handle; the last close revokes the importer's pin and frees the memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#include "nvp2p_selftest_calls.h"
#include "gpumem.h"
#include "emu_knob.h"
#include "tap.h"

#define MB (1ULL << 20)
#define KB64 (64ULL << 10)
#define EDU_OFF (MB + 4096 + 7)
#define EDU_LEN 3000u

struct handles {
	CUipcMemHandle big, small, interior, freed;
	CUipcEventHandle event;
};

static int st_fd = -1;
static int to_parent = -1, from_parent = -1;	/* the importer's ends */

/* The selftest driver's calls (nvp2p_selftest_calls.h) on st_fd. */
static int pin(uint32_t slot, uint64_t va, uint64_t len)
{
	return st_call_pin(st_fd, (struct st_pin){ .slot = slot,
						   .mode = ST_PIN_CALLBACK,
						   .va = va, .len = len });
}

static struct st_slot_info info(uint32_t slot)
{
	return st_call_info(st_fd, slot);
}

static int dma_map(uint32_t slot)
{
	return st_call_dma(st_fd, ST_IOC_DMA_MAP, slot, ST_DMA_EDU);
}

static int edu(uint32_t slot, uint64_t off, uint32_t len, uint32_t seed)
{
	return st_call_edu(st_fd, slot, off, len, seed);
}

static void fill(uint8_t *b, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed + i * 7);
}

/* --- the importer ---------------------------------------------------------- */

static int result(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int result(int cond, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	line[0] = 'R';
	line[1] = cond ? '1' : '0';
	va_start(ap, fmt);
	n = vsnprintf(line + 2, sizeof(line) - 3, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n > (int)sizeof(line) - 4)
		n = (int)sizeof(line) - 4;
	line[2 + n] = '\n';
	if (write(to_parent, line, (size_t)n + 3) < 0)
		_exit(2);
	return cond;
}

/* Ask the exporter to do step @n and wait until it has. */
static void step(int n)
{
	char line[8], c;

	snprintf(line, sizeof(line), "S%d\n", n);
	if (write(to_parent, line, strlen(line)) < 0 ||
	    read(from_parent, &c, 1) != 1)
		_exit(2);
}

static int importer(void)
{
	struct handles h;
	CUipcMemHandle zero;
	CUipcEventHandle zev;
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr o = 0, o2 = 0, oi = 0, os = 0, base = 0, mine = 0;
	CUevent ev = NULL;
	uint8_t want[4096], got[4096], pat[EDU_LEN];
	unsigned int rdma = 9, legacy = 9;
	size_t size = 0;
	uint64_t used;

	if (read(from_parent, &h, sizeof(h)) != (ssize_t)sizeof(h))
		return 2;
	st_fd = open("/dev/nvp2p_selftest", O_RDWR);
	if (!result(cuInit(0) == CUDA_SUCCESS && cuDeviceGet(&dev, 0) == 0 &&
		    cuDevicePrimaryCtxRetain(&ctx, dev) == 0 && cuCtxSetCurrent(ctx) == 0,
		    "importer: CUDA context"))
		return 1;
	memset(&zero, 0, sizeof(zero));
	memset(&zev, 0, sizeof(zev));
	result(cuIpcOpenMemHandle(&o, h.big, 0) == CUDA_ERROR_INVALID_VALUE,
	       "open with flags 0: CUDA_ERROR_INVALID_VALUE (LAZY_ENABLE_PEER_ACCESS is required)");
	result(cuIpcOpenMemHandle(&o, h.big, 2) == CUDA_ERROR_INVALID_VALUE, "open with flags 2: CUDA_ERROR_INVALID_VALUE");
	result(cuIpcOpenMemHandle(&o, zero, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_ERROR_INVALID_VALUE,
	       "open of a zeroed handle: CUDA_ERROR_INVALID_VALUE");
	result(cuIpcOpenMemHandle(&o, h.freed, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_ERROR_NOT_PERMITTED,
	       "open of freed memory's handle: CUDA_ERROR_NOT_PERMITTED");
	result(cuIpcOpenMemHandle(NULL, h.big, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_ERROR_INVALID_VALUE,
	       "open into NULL: CUDA_ERROR_INVALID_VALUE");

	used = emu_stat_u64("mem_used");
	if (!result(cuIpcOpenMemHandle(&o, h.big, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_SUCCESS,
		    "open the 2 MiB allocation's handle"))
		return 1;
	result(emu_stat_u64("mem_used") == used, "opening charges no GPU memory (%llu used)",
	       (unsigned long long)emu_stat_u64("mem_used"));
	fill(want, sizeof(want), 0x42);
	result(cuMemcpyDtoH(got, o, sizeof(got)) == 0 && !memcmp(want, got, sizeof(got)),
	       "the importer reads the exporter's data");
	result(cuMemGetAddressRange(&base, &size, o + 5) == 0 && base == o && size == 2 * MB,
	       "its address range is the allocation (%zu bytes)", size);
	result(cuPointerGetAttribute(&rdma, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, o) == 0 && rdma == 0 &&
	       cuPointerGetAttribute(&legacy, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, o) == 0 && legacy == 0,
	       "opened memory reads as not RDMA-capable and not IPC-capable, as on the H100");
	result(cuIpcOpenMemHandle(&o2, h.big, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == 0 && o2 == o,
	       "opening it again returns the same address (counted)");
	result(cuIpcOpenMemHandle(&oi, h.interior, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == 0 && oi == o,
	       "the interior pointer's handle opens the same allocation");
	result(cuMemFree(o) == CUDA_ERROR_INVALID_VALUE, "cuMemFree of opened memory: CUDA_ERROR_INVALID_VALUE");
	result(cuIpcCloseMemHandle(o + 4096) == CUDA_ERROR_INVALID_VALUE, "close of an interior pointer: CUDA_ERROR_INVALID_VALUE");
	result(cuMemAlloc(&mine, 4096) == 0 && cuIpcCloseMemHandle(mine) == CUDA_ERROR_INVALID_VALUE && cuMemFree(mine) == 0,
	       "close of memory never opened: CUDA_ERROR_INVALID_VALUE");
	result(cuIpcGetMemHandle(&zero, o) == CUDA_ERROR_INVALID_VALUE, "opened memory cannot be exported again");

	fill(want, sizeof(want), 0x99);
	result(cuMemcpyHtoD(o + MB, want, sizeof(want)) == 0, "the importer writes 4 KiB at 1 MiB");
	step(1);	/* the exporter reads them */

	/* nv-p2p: the importer pins its own mapping of the pages */
	result(pin(1, o, 2 * MB) == 0 && info(1).live, "the importer pins its mapping through nv-p2p");
	result(info(1).phys0 == info(0).phys0 && info(1).entries == 32,
	       "both pins name the same GPU pages (0x%llx)", (unsigned long long)info(1).phys0);
	result(dma_map(1) == 0 && edu(1, EDU_OFF, EDU_LEN, 61) == 0, "edu DMAs 3000 bytes through the importer's pin");
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = st_pattern(61, i);
	result(cuMemcpyDtoH(got, o + EDU_OFF, EDU_LEN) == 0 && !memcmp(pat, got, EDU_LEN),
	       "the importer reads edu's pattern");
	result(guest_host_has(info(1).phys0 - guest_bar2_start() + EDU_OFF, pat, EDU_LEN),
	       "the host's backing file holds edu's pattern");
	step(2);	/* the exporter reads the pattern and frees its memory */

	result(info(0).callbacks == 1 && !info(0).live, "the exporter's free revoked its own pin");
	result(info(1).live && info(1).callbacks == 0, "the importer's pin stays");
	fill(want, sizeof(want), 0x42);
	result(cuMemcpyDtoH(got, o, sizeof(got)) == 0 && !memcmp(want, got, sizeof(got)),
	       "the memory outlives the exporter's cuMemFree");
	result(cuIpcCloseMemHandle(o) == 0 && cuIpcCloseMemHandle(o) == 0 && info(1).live,
	       "two of three closes keep the mapping and the pin");
	result(cuIpcCloseMemHandle(o) == 0 && !info(1).live && info(1).callbacks == 1,
	       "the last close revokes the importer's pin");
	result(cuIpcCloseMemHandle(o) == CUDA_ERROR_INVALID_VALUE, "closing again: CUDA_ERROR_INVALID_VALUE");
	result(cuMemcpyDtoH(got, o, 16) == CUDA_ERROR_INVALID_VALUE, "the closed address is gone");
	result(cuIpcOpenMemHandle(&o, h.big, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_ERROR_NOT_PERMITTED,
	       "with nobody holding it, the handle is CUDA_ERROR_NOT_PERMITTED");

	/* a 4 KiB allocation that shares its page with others */
	fill(want, sizeof(want), 0x44);
	result(cuIpcOpenMemHandle(&os, h.small, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == 0 &&
	       cuMemGetAddressRange(&base, &size, os) == 0 && base == os && size == 4096,
	       "a small allocation opens as itself (4096 bytes)");
	result(cuMemcpyDtoH(got, os, sizeof(got)) == 0 && !memcmp(want, got, sizeof(got)),
	       "and holds its own data, not its neighbour's");
	result(cuIpcCloseMemHandle(os) == 0, "closed");

	/* events */
	result(cuIpcOpenEventHandle(&ev, zev) == CUDA_ERROR_MAP_FAILED, "open of a zeroed event handle: CUDA_ERROR_MAP_FAILED");
	result(cuIpcOpenEventHandle(NULL, h.event) == CUDA_ERROR_INVALID_VALUE, "open of an event into NULL: CUDA_ERROR_INVALID_VALUE");
	result(cuIpcOpenEventHandle(&ev, h.event) == 0 && cuEventQuery(ev) == 0 &&
	       cuEventSynchronize(ev) == 0 && cuStreamWaitEvent(NULL, ev, 0) == 0,
	       "the exporter's event opens; query, synchronize and stream wait succeed");
	result(cuEventDestroy(ev) == 0, "the opened event is destroyed");
	step(3);	/* the exporter checks that all memory is back */
	return 0;
}

/* --- the exporter ---------------------------------------------------------- */

static int exporter(void)
{
	struct handles h;
	CUipcMemHandle x, y;
	CUipcEventHandle eh;
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr d, s, f, o;
	CUevent e, e2;
	uint8_t buf[4096], got[4096], pat[EDU_LEN];
	int down[2], up[2], st = 0;
	uint64_t used0;
	size_t s_page = 0;	/* bytes of the page s lies in */
	char line[300];
	FILE *in;
	pid_t pid;

	tap_plan(62);
	st_fd = open("/dev/nvp2p_selftest", O_RDWR);
	if (!tap_ok(st_fd >= 0, "selftest driver bound to edu") ||
	    !tap_ok(cuInit(0) == CUDA_SUCCESS && cuDeviceGet(&dev, 0) == 0 &&
		    cuDevicePrimaryCtxRetain(&ctx, dev) == 0 && cuCtxSetCurrent(ctx) == 0,
		    "exporter: CUDA context"))
		return tap_done();
	used0 = emu_stat_u64("mem_used");
	/* s's page: 64 KiB, or 2 MiB with CUDA_EMU_PLACEMENT=h100 */
	tap_ok(cuMemAlloc(&d, 2 * MB) == 0 && cuMemAlloc(&s, 4096) == 0 && cuMemAlloc(&f, 4096) == 0 &&
	       cuPointerGetAttribute(&s_page, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, s) == 0 &&
	       (s_page == 64 * 1024 || s_page == 2 * MB),
	       "allocate 2 MiB and two 4 KiB (these in a page of %zu bytes)", s_page);
	fill(buf, sizeof(buf), 0x42);
	for (uint64_t off = 0; off < 2 * MB; off += sizeof(buf))
		cuMemcpyHtoD(d + off, buf, sizeof(buf));
	fill(buf, sizeof(buf), 0x44);
	cuMemcpyHtoD(s, buf, sizeof(buf));

	tap_ok(cuIpcGetMemHandle(NULL, d) == CUDA_ERROR_INVALID_VALUE, "cuIpcGetMemHandle into NULL: CUDA_ERROR_INVALID_VALUE");
	tap_ok(cuIpcGetMemHandle(&x, (CUdeviceptr)(uintptr_t)buf) == CUDA_ERROR_INVALID_VALUE, "of a host pointer: CUDA_ERROR_INVALID_VALUE");
	tap_ok(cuIpcGetMemHandle(&h.big, d) == 0 && cuIpcGetMemHandle(&h.interior, d + 4096) == 0 &&
	       !memcmp(&h.big, &h.interior, sizeof(x)), "an interior pointer gives the allocation's handle");
	tap_ok(cuIpcGetMemHandle(&x, d) == 0 && cuIpcGetMemHandle(&y, d) == 0 && !memcmp(&x, &y, sizeof(x)),
	       "the same handle at every call");
	tap_ok(cuIpcGetMemHandle(&h.small, s) == 0 && memcmp(&h.small, &h.big, sizeof(x)), "a 4 KiB allocation has its own handle");
	tap_ok(cuIpcGetMemHandle(&h.freed, f) == 0 && cuMemFree(f) == 0 &&
	       cuIpcGetMemHandle(&x, f) == CUDA_ERROR_INVALID_VALUE, "after cuMemFree: CUDA_ERROR_INVALID_VALUE");
	tap_ok(cuIpcOpenMemHandle(&o, h.big, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_ERROR_INVALID_CONTEXT,
	       "opening its own handle: CUDA_ERROR_INVALID_CONTEXT");
	tap_ok(cuIpcCloseMemHandle(d) == CUDA_ERROR_INVALID_VALUE, "closing its own allocation: CUDA_ERROR_INVALID_VALUE");
	tap_ok(pin(0, d, 2 * MB) == 0 && info(0).live, "the exporter pins its 2 MiB through nv-p2p");

	tap_ok(cuEventCreate(&e2, CU_EVENT_INTERPROCESS) == CUDA_ERROR_INVALID_VALUE,
	       "an interprocess event with timing: CUDA_ERROR_INVALID_VALUE");
	tap_ok(cuEventCreate(&e2, 0) == 0 && cuIpcGetEventHandle(&eh, e2) == CUDA_ERROR_INVALID_HANDLE &&
	       cuEventDestroy(e2) == 0, "handle of a plain event: CUDA_ERROR_INVALID_HANDLE");
	tap_ok(cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING) == 0 &&
	       cuIpcGetEventHandle(&h.event, e) == 0 && cuEventRecord(e, NULL) == 0, "an interprocess event and its handle");
	tap_ok(cuIpcGetEventHandle(NULL, e) == CUDA_ERROR_INVALID_VALUE, "event handle into NULL: CUDA_ERROR_INVALID_VALUE");
	tap_ok(cuIpcOpenEventHandle(&e2, h.event) == CUDA_ERROR_INVALID_CONTEXT, "opening its own event: CUDA_ERROR_INVALID_CONTEXT");

	if (pipe(down) || pipe(up))
		return tap_done();
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char a[16], b[16];

		close(down[1]);
		close(up[0]);
		snprintf(a, sizeof(a), "%d", down[0]);
		snprintf(b, sizeof(b), "%d", up[1]);
		execl("/proc/self/exe", "cuda-ipc-test", "import", a, b, (char *)NULL);
		_exit(127);
	}
	close(down[0]);
	close(up[1]);
	tap_ok(pid > 0 && write(down[1], &h, sizeof(h)) == (ssize_t)sizeof(h), "the importer started (fork + exec)");
	in = fdopen(up[0], "r");
	while (in && fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0] == 'R') {
			tap_ok(line[1] == '1', "%s", line + 2);
			continue;
		}
		if (line[0] != 'S')
			continue;
		switch (atoi(line + 1)) {
		case 1:
			fill(buf, sizeof(buf), 0x99);
			tap_ok(cuMemcpyDtoH(got, d + MB, sizeof(got)) == 0 && !memcmp(buf, got, sizeof(got)),
			       "the exporter reads what the importer wrote");
			break;
		case 2:
			for (size_t i = 0; i < sizeof(pat); i++)
				pat[i] = st_pattern(61, i);
			tap_ok(cuMemcpyDtoH(got, d + EDU_OFF, EDU_LEN) == 0 && !memcmp(pat, got, EDU_LEN),
			       "the exporter reads edu's pattern too");
			tap_ok(cuMemFree(d) == 0, "the exporter frees the memory while it is opened");
			break;
		case 3:
			tap_ok(emu_stat_u64("mem_used") == used0 + s_page,
			       "only the exporter's small page is left (%llu bytes over the start)",
			       (unsigned long long)(emu_stat_u64("mem_used") - used0));
			break;
		}
		if (write(down[1], "g", 1) != 1)
			break;
	}
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the importer exited normally (status 0x%x)", st);
	tap_ok(cuMemFree(s) == 0 && cuEventDestroy(e) == 0 && emu_stat_u64("mem_used") == used0,
	       "all GPU memory is back");
	return tap_done();
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "import")) {
		from_parent = atoi(argv[2]);
		to_parent = atoi(argv[3]);
		return importer();
	}
	return exporter();
}
