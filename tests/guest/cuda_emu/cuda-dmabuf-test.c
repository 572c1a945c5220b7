// SPDX-License-Identifier: MIT
/*
 * cuda-dmabuf-test.c - cuMemGetHandleForAddressRange(DMA_BUF_FD): the
 * emulator exports GPU memory as a dma-buf and gdirect_edu, a peer driver,
 * imports it and has edu DMA through its sg table; the GPU, the host's
 * backing file and a DMA back read the data.  Then the teardown orders a
 * user can get wrong: the fd closed while attached, the memory freed while
 * exported.  Run by cuda-emu-dmabuf.sh, with nvp2p_emu, gdirect and
 * gdirect_edu loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cuda.h>

#include "gdirect_edu.h"
#include "gpumem.h"
#include "emu_knob.h"
#include "tap.h"

#define MB (1ULL << 20)
#define LEN 5000u

static int edu_fd;

static int attach(int fd, struct gdedu_dmabuf_attach *a)
{
	memset(a, 0, sizeof(*a));
	a->fd = fd;
	return ioctl(edu_fd, GDEDU_IOC_DMABUF_ATTACH, a) ? -errno : 0;
}

static int xfer(uint32_t id, uint32_t dir, uint64_t off, void *buf, uint64_t size)
{
	struct gdedu_dmabuf_xfer x = { .id = id, .dir = dir, .offset = off,
				       .buf = (uintptr_t)buf, .size = size };

	return ioctl(edu_fd, GDEDU_IOC_DMABUF_XFER, &x) ? -errno : 0;
}

static int detach(uint32_t id)
{
	struct gdedu_dmabuf_detach d = { .id = id };

	return ioctl(edu_fd, GDEDU_IOC_DMABUF_DETACH, &d) ? -errno : 0;
}

static void fill(uint8_t *b, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed ^ (i * 13));
}

int main(void)
{
	struct gdedu_dmabuf_attach a;
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr d, d2, s;
	size_t s_page = 0;
	uint8_t pat[LEN], back[LEN];
	uint64_t used0, off;
	int fd = -1, fd2 = -1, v = -1, pipefd[2];

	edu_fd = open(GDEDU_DEVICE, O_RDWR);
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx) || cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev)) {
		tap_plan(1);
		tap_ok(0, "CUDA context and DMA_BUF_SUPPORTED");
		return tap_done();
	}
	if (v == 0) {
		/* the proprietary licence flavour: dma_buf_export is GPL-only */
		tap_plan(4);
		tap_ok(access("/proc/driver/nvp2p_emu", F_OK) == 0,
		       "DMA_BUF_SUPPORTED is 0 only in the proprietary flavour (/proc/driver/nvp2p_emu)");
		tap_ok(edu_fd >= 0, "gdirect_edu bound to edu");
		tap_ok(cuMemAlloc(&d, 2 * MB) == 0 &&
		       cuMemGetHandleForAddressRange(&fd, d, 2 * MB, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) ==
		       CUDA_ERROR_NOT_SUPPORTED && cuMemFree(d) == 0,
		       "DMA_BUF_SUPPORTED is 0 and the export CUDA_ERROR_NOT_SUPPORTED (proprietary flavour: no dma-buf export)");
		tap_ok(attach(0, &a) == -EOPNOTSUPP, "gdirect_edu built for it imports no dma-buf: -EOPNOTSUPP");
		return tap_done();
	}
	tap_plan(29);
	tap_ok(access("/proc/driver/nvp2p_emu", F_OK) != 0,
	       "DMA_BUF_SUPPORTED is 1 in the open flavour (no /proc/driver/nvp2p_emu)");
	tap_ok(edu_fd >= 0, "gdirect_edu bound to edu");
	tap_ok(v == 1, "DMA_BUF_SUPPORTED is 1 (open licence flavour)");
	used0 = emu_stat_u64("mem_used");
	tap_ok(cuMemAlloc(&d, 4 * MB) == 0 && cuMemsetD8(d, 0, 4 * MB) == 0, "allocate 4 MiB");

	/* the driver's argument checks */
	tap_ok(cuMemGetHandleForAddressRange(NULL, d, 2 * MB, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) == CUDA_ERROR_INVALID_VALUE,
	       "a NULL handle: CUDA_ERROR_INVALID_VALUE");
	tap_ok(cuMemGetHandleForAddressRange(&fd, d, 2 * MB, (CUmemRangeHandleType)0, 0) == CUDA_ERROR_INVALID_VALUE,
	       "handle type 0: CUDA_ERROR_INVALID_VALUE");
	tap_ok(cuMemGetHandleForAddressRange(&fd, d, 2 * MB, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 2) == CUDA_ERROR_INVALID_VALUE,
	       "flags 2: CUDA_ERROR_INVALID_VALUE");
	tap_ok(cuMemGetHandleForAddressRange(&fd, d, 8 * MB, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) == CUDA_ERROR_INVALID_VALUE,
	       "past the allocation's end: CUDA_ERROR_INVALID_VALUE");
	tap_ok(cuMemGetHandleForAddressRange(&fd, d + 100, 4096, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) == CUDA_ERROR_INVALID_VALUE,
	       "a start not 4 KiB-aligned: CUDA_ERROR_INVALID_VALUE");
	if (!tap_ok(cuMemGetHandleForAddressRange(&fd2, d + 4096, MB, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) == 0 && fd2 >= 0,
		    "a 1 MiB range at 4 KiB into the allocation (as the H100 allows)"))
		return tap_done();
	if (!tap_ok(cuMemGetHandleForAddressRange(&fd, d, 2 * MB, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) == 0 &&
		    fd >= 0, "a dma-buf of the first 2 MiB"))
		return tap_done();
	tap_ok(lseek(fd, 0, SEEK_END) == (off_t)(2 * MB), "its size is 2 MiB");

	/* a peer driver imports it and DMAs through it */
	if (pipe(pipefd) == 0) {
		tap_ok(attach(pipefd[0], &a) == -EINVAL, "attaching an fd that is no dma-buf: -EINVAL");
		close(pipefd[0]);
		close(pipefd[1]);
	} else {
		tap_ok(0, "pipe");
	}
	if (!tap_ok(attach(fd, &a) == 0 && a.size == 2 * MB && a.nents == 32,
		    "gdirect_edu attaches it: 2 MiB in %u sg entries", a.nents))
		return tap_done();
	off = a.dma0 - guest_bar2_start();
	fill(pat, sizeof(pat), 0x5a);
	tap_ok(xfer(a.id, GDEDU_TO_GPU, 3 * 65536 - 1000, pat, LEN) == 0,
	       "edu DMAs %u bytes into GPU memory through the sg table, across a 64 KiB page", LEN);
	tap_ok(cuMemcpyDtoH(back, d + 3 * 65536 - 1000, LEN) == 0 && !memcmp(pat, back, LEN), "the GPU reads them back");
	tap_ok(guest_host_has(off + 3 * 65536 - 1000, pat, LEN), "the host's backing file holds them");
	memset(back, 0, sizeof(back));
	tap_ok(xfer(a.id, GDEDU_FROM_GPU, 3 * 65536 - 1000, back, LEN) == 0 && !memcmp(pat, back, LEN),
	       "and edu DMAs them back out");
	tap_ok(xfer(a.id, GDEDU_TO_GPU, 2 * MB - 10, pat, 11) == -EINVAL, "a transfer past the dma-buf's end: -EINVAL");

	/* teardown: the fd closed while attached, the memory freed while exported */
	close(fd);
	fill(pat, sizeof(pat), 0x33);
	tap_ok(xfer(a.id, GDEDU_TO_GPU, 0, pat, LEN) == 0 && cuMemcpyDtoH(back, d, LEN) == 0 && !memcmp(pat, back, LEN),
	       "with its fd closed, the attachment still DMAs");
	tap_ok(cuMemFree(d) == 0, "cuMemFree of exported memory succeeds");
	tap_ok(emu_stat_u64("mem_used") == used0 + 4 * MB, "the memory stays while exported (%llu bytes over the start)",
	       (unsigned long long)(emu_stat_u64("mem_used") - used0));
	fill(pat, sizeof(pat), 0x77);
	tap_ok(xfer(a.id, GDEDU_TO_GPU, 4096, pat, LEN) == 0 && guest_host_has(off + 4096, pat, LEN),
	       "and edu still DMAs into it, host-checked");
	tap_ok(cuMemAlloc(&d2, 4 * MB) == 0 && cuMemAlloc(&s, 4096) == 0 &&
	       guest_host_has(off + 4096, pat, LEN),
	       "new (zeroed) allocations do not get the exported memory: edu's data is intact");
	/* the small one's page: 64 KiB, or 2 MiB with CUDA_EMU_PLACEMENT=h100 */
	tap_ok(cuPointerGetAttribute(&s_page, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, s) == 0 &&
	       (s_page == 65536 || s_page == 2 * MB), "the 4 KiB allocation lies in a page of %zu bytes", s_page);
	tap_ok(detach(a.id) == 0 && detach(a.id) == -ENOENT, "detach; again: -ENOENT");
	tap_ok(emu_stat_u64("mem_used") == used0 + 4 * MB + 4 * MB + s_page,
	       "still held by the other dma-buf's fd (1 MiB of it)");
	close(fd2);
	tap_ok(emu_stat_u64("mem_used") == used0 + 4 * MB + s_page, "its fd closed, the freed memory is back");
	tap_ok(cuMemFree(d2) == 0 && cuMemFree(s) == 0 && emu_stat_u64("mem_used") == used0, "all GPU memory is back");
	close(edu_fd);
	return tap_done();
}
