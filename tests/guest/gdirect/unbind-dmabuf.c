// SPDX-License-Identifier: MIT
/*
 * unbind-dmabuf.c - the emulated GPU unbound while a dma-buf
 * of its memory is exported and imported by gdirect_edu (docs/emulator.md,
 * "dma-bufs"): as NVIDIA's exporter holds the GPU, the unbind waits while
 * the importer holds the dma-buf; meanwhile the importer's DMA addresses
 * still reach the BAR (host-checked), and the unbind ends once the
 * importer detaches.  Then the device binds again.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gdirect_edu.h"
#include "gdt.h"
#include "gpumem.h"
#include "guest_harness.h"
#include "guest_unbind.h"

#define LEN	3000

static char bdf[256];
static int to_child[2], from_child[2];

/*
 * The exporter and importer: a dma-buf of 2 MiB of GPU memory, attached
 * by gdirect_edu and its fd closed.  Reports 'r' (ready, or 'e'); on 'x'
 * DMAs through the attachment and reports 'y' or 'n'; on 'd' detaches,
 * reports 'y' or 'n', and exits.
 */
static void importer(void)
{
	struct gdedu_dmabuf_attach a = { 0 };
	struct gdedu_dmabuf_xfer x = { 0 };
	struct gdedu_dmabuf_detach d = { 0 };
	uint8_t pat[LEN];
	CUdeviceptr buf;
	uint64_t off;
	int efd, fd = -1, ok;

	for (int i = 0; i < LEN; i++)
		pat[i] = (uint8_t)(i * 7 + 1);
	efd = open(GDEDU_DEVICE, O_RDWR);
	if (efd < 0 || gdt_cuda_init() ||
	    cuDeviceGetAttribute(&ok, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
				 0) != CUDA_SUCCESS)
		goto err;
	if (!ok) {
		guest_pipe_put(from_child[1], 's');	/* the proprietary flavour */
		_exit(0);
	}
	buf = gdt_alloc(2 * GDT_MB);
	if (!buf ||
	    cuMemGetHandleForAddressRange(&fd, buf, 2 * GDT_MB,
					  CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
					  0) != CUDA_SUCCESS)
		goto err;
	a.fd = fd;
	if (ioctl(efd, GDEDU_IOC_DMABUF_ATTACH, &a))
		goto err;
	close(fd);
	/* From the driver's sysfs folder, which the unbind empties first. */
	off = a.dma0 - guest_bar2_start() + 4096;
	guest_pipe_put(from_child[1], 'r');
	for (;;) {
		switch (guest_pipe_get(to_child[0], 60000)) {
		case 'x':
			x = (struct gdedu_dmabuf_xfer){ .id = a.id,
				.dir = GDEDU_TO_GPU, .offset = 4096,
				.buf = (uintptr_t)pat, .size = LEN };
			ok = !ioctl(efd, GDEDU_IOC_DMABUF_XFER, &x) &&
			     guest_host_has(off, pat, LEN);
			guest_pipe_put(from_child[1], ok ? 'y' : 'n');
			break;
		case 'd':
			d.id = a.id;
			ok = !ioctl(efd, GDEDU_IOC_DMABUF_DETACH, &d);
			guest_pipe_put(from_child[1], ok ? 'y' : 'n');
			_exit(0);
		default:
			_exit(1);
		}
	}
err:
	guest_pipe_fail(from_child[1]);
}

static void unbinder(void)
{
	_exit(guest_write(GUEST_EMU_DRV "unbind", bdf) ? 1 : 0);
}

/* Has @pid exited within @ms?  Its status in *@status. */
static void body(void)
{
	pid_t imp, unb;
	int status = -1, waiting, c;

	if (!tap_ok(!guest_emu_bdf(bdf, sizeof(bdf)) && !pipe(to_child) && !pipe(from_child),
		    "emulated GPU bound at %s", bdf))
		return;
	imp = fork();
	if (imp == 0)
		importer();
	c = guest_pipe_get(from_child[0], 30000);
	if (c == 's') {
		waitpid(imp, NULL, 0);
		tap_skip("unbind with a dma-buf exported",
			 "DMA_BUF_SUPPORTED is 0: this flavour exports no dma-buf");
		return;
	}
	if (!tap_ok(imp > 0 && c == 'r',
		    "a dma-buf of GPU memory, attached by gdirect_edu, its fd closed (%c)",
		    c > 0 ? c : '?')) {
		if (imp > 0)
			kill(imp, SIGKILL);
		return;
	}
	unb = fork();
	if (unb == 0)
		unbinder();
	waiting = unb > 0 && !guest_exited_within(unb, 1500, &status);
	tap_ok(waiting, "the unbind waits while the importer holds the dma-buf");
	guest_pipe_put(to_child[1], 'x');
	tap_ok(guest_pipe_get(from_child[0], 10000) == 'y',
	       "meanwhile the importer's DMA reaches the BAR (host-checked)");
	guest_pipe_put(to_child[1], 'd');
	tap_ok(guest_pipe_get(from_child[0], 10000) == 'y', "the importer detaches");
	waitpid(imp, NULL, 0);
	if (waiting && !guest_exited_within(unb, 10000, &status)) {
		tap_ok(0, "the unbind ends once the dma-buf is released");
		return;	/* a stuck unbind cannot be undone */
	}
	tap_ok(WIFEXITED(status) && !WEXITSTATUS(status),
	       "the unbind ends once the dma-buf is released (status %#x)",
	       status);
	tap_ok(!guest_write(GUEST_EMU_DRV "bind", bdf), "bind again once unused");
}

int main(void)
{
	return gdt_main(NULL, 1, body);
}
