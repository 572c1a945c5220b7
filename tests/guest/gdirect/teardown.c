// SPDX-License-Identifier: MIT
/*
 * teardown.c - process exit in both teardown orders (guide
 * 11.3): the NVIDIA (emulator) file closed before ours, and ours before
 * it; with and without a delay inside the free callback; with mappings
 * live; and by SIGKILL in the middle of pinning.  After each exit nothing
 * may stay pinned and the BAR1 budget must be whole again.
 *
 * At exit the kernel drops files in descriptor order, and the final
 * release of each runs from task work, last dropped first.  So the file
 * opened last is released first; cuInit() opens the emulator's file.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdt.h"

enum order { OURS_FIRST, NVIDIA_FIRST };

/* The exiting process: pin NPINS regions, map half, then exit or hang. */
static void child(enum order order, int npins, int hang)
{
	struct gdirect_pin p;
	CUdeviceptr buf;
	int fd = -1;

	if (order == NVIDIA_FIRST)
		fd = open("/dev/gdirect", O_RDWR);
	if (gdt_cuda_init())
		_exit(3);
	if (order == OURS_FIRST)
		fd = open("/dev/gdirect", O_RDWR);
	if (fd < 0)
		_exit(4);
	buf = gdt_alloc(npins * GDT_KB64);
	if (!buf)
		_exit(5);
	for (int i = 0; i < npins; i++) {
		if (gdt_pin(fd, buf + i * GDT_KB64, GDT_KB64, 0, &p))
			_exit(6);
		if (i & 1)
			mmap(NULL, GDT_KB64, PROT_READ | PROT_WRITE, MAP_SHARED,
			     fd, p.mmap_offset);
	}
	if (hang) {
		/* Keep pinning and unpinning until killed. */
		for (;;) {
			if (!gdt_pin(fd, buf, 2 * GDT_KB64, 0, &p))
				gdt_unpin(fd, p.handle);
		}
	}
	_exit(0);		/* no unpin, no close: the kernel tidies up */
}

static void one(enum order order, int delay_ms, int kill_it)
{
	const char *name = order == OURS_FIRST ? "gdirect fd first" :
						 "NVIDIA fd first";
	int64_t unpins = gdt_gd_stat("unpins");
	uint64_t callbacks = gdt_emu("callbacks");
	char delay[16];
	int status;
	pid_t pid;

	snprintf(delay, sizeof(delay), "%d", delay_ms);
	gdt_emu_knob("callback_delay_ms", delay);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		child(order, 8, kill_it);
	if (kill_it) {
		usleep(300000 + (gdt_rand() % 200000));
		kill(pid, SIGKILL);
	}
	waitpid(pid, &status, 0);
	tap_ok(kill_it ? WIFSIGNALED(status) :
			 WIFEXITED(status) && !WEXITSTATUS(status),
	       "%s, callback delay %d ms%s: child ended (status %#x)", name,
	       delay_ms, kill_it ? ", killed while pinning" : "", status);
	tap_ok(gdt_quiet() && gdt_emu("allocations") == 0,
	       "%s, delay %d%s: no pins, no BAR1, no allocations left", name,
	       delay_ms, kill_it ? ", killed" : "");
	if (kill_it)
		return;
	tap_diag("%s: %lld unpins, %llu callbacks", name,
		 (long long)(gdt_gd_stat("unpins") - unpins),
		 (unsigned long long)(gdt_emu("callbacks") - callbacks));
	if (order == OURS_FIRST)
		tap_ok(gdt_gd_stat("unpins") >= unpins + 8 &&
		       gdt_emu("callbacks") == callbacks,
		       "%s: gdirect put the pages, no callback fired", name);
	else
		tap_ok(gdt_emu("callbacks") == callbacks + 8,
		       "%s: all 8 pins revoked by callbacks", name);
}

static void body(void)
{
	for (int delay = 0; delay <= 20; delay += 20) {
		one(OURS_FIRST, delay, 0);
		one(NVIDIA_FIRST, delay, 0);
	}
	for (int i = 0; i < 4; i++)
		one(i & 1 ? NVIDIA_FIRST : OURS_FIRST, i < 2 ? 0 : 5, 1);
	gdt_emu_knob("callback_delay_ms", "0");
	tap_ok(gdt_gd_stat("orphaned") == 0, "no registration left orphaned");
}

int main(void)
{
	return gdt_main(NULL, 0, body);
}
