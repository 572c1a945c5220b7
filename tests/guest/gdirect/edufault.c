// SPDX-License-Identifier: MIT
/*
 * edufault.c - a revocation must not wait on a user page fault
 *
 * The free callback runs under the NVIDIA driver's global lock and waits
 * for every DMA bracket (gdirect_dma_begin/end) of the region.  A driver
 * that touches user memory inside a bracket makes that wait depend on a
 * page fault: userfaultfd, FUSE, or CUDA managed memory, whose fault
 * handler needs the very lock the callback holds.  Here the user buffer of
 * an edu transfer is a userfaultfd page; while its fault is pending, the
 * GPU memory is freed from another thread.  The free must complete before
 * the fault is resolved (a 20 s bound detects the hang; the fault is
 * resolved afterwards either way, so the test always ends).
 */
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gdirect_edu.h"
#include "gdt.h"

static int efd;
static CUdeviceptr gpu;
static void *ubuf;
static int xfer_ret, free_ret;

static void *xfer(void *arg)
{
	struct gdedu_xfer x = {
		.gpu_addr = gpu, .buf = (uintptr_t)ubuf, .size = 64,
		.dir = GDEDU_TO_GPU,
	};

	(void)arg;
	xfer_ret = ioctl(efd, GDEDU_IOC_XFER, &x) ? -errno : 0;
	return NULL;
}

static void *freer(void *arg)
{
	(void)arg;
	free_ret = gdt_free(gpu);
	return NULL;
}

static void body(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	struct uffdio_copy copy = { 0 };
	static char page[4096] __attribute__((aligned(4096)));
	struct uffd_msg msg;
	struct pollfd pfd;
	struct timespec ts;
	pthread_t tx, tf;
	int uffd, freed;

	if (gdt_cuda_init()) {
		tap_ok(0, "CUDA context");
		return;
	}
	efd = open(GDEDU_DEVICE, O_RDWR);
	gpu = gdt_alloc(GDT_KB64);
	if (!tap_ok(efd >= 0 && gpu, "open gdirect_edu, allocate 64 KiB"))
		return;
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		tap_skip("user page fault inside a DMA bracket",
			 "no userfaultfd in this kernel");
		return;
	}
	ubuf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg.range.start = (uintptr_t)ubuf;
	reg.range.len = 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (!tap_ok(ubuf != MAP_FAILED && !ioctl(uffd, UFFDIO_REGISTER, &reg),
		    "userfaultfd registered on the transfer's buffer"))
		return;

	pthread_create(&tx, NULL, xfer, NULL);
	pfd.fd = uffd;
	pfd.events = POLLIN;
	if (!tap_ok(poll(&pfd, 1, 60000) == 1 &&
		    read(uffd, &msg, sizeof(msg)) == sizeof(msg) &&
		    msg.event == UFFD_EVENT_PAGEFAULT,
		    "the transfer faults on its user buffer"))
		return;

	/* The transfer is now stopped in its fault; free the GPU memory. */
	pthread_create(&tf, NULL, freer, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 20;
	freed = pthread_timedjoin_np(tf, NULL, &ts) == 0;
	tap_ok(freed, "the free completes while the user fault is pending");

	memset(page, 0x42, sizeof(page));
	copy.dst = (uintptr_t)ubuf;
	copy.src = (uintptr_t)page;
	copy.len = 4096;
	tap_ok(ioctl(uffd, UFFDIO_COPY, &copy) == 0, "resolve the fault");
	if (!freed)
		pthread_join(tf, NULL);
	pthread_join(tx, NULL);
	tap_ok(free_ret == 0, "cuMemFree succeeded");
	tap_diag("transfer returned %d", xfer_ret);
	close(uffd);
	close(efd);
}

int main(void)
{
	return gdt_main(NULL, 1, body);
}
