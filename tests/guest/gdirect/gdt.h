/* SPDX-License-Identifier: MIT */
/*
 * gdt.h - helpers shared by gdirect's guest tests (tests/guest/gdirect/)
 *
 * Module loading, GPU memory through the CUDA driver API subset, the
 * emulator's counters and knobs, gdirect's own counters, and a fault
 * probe.  The tests print TAP with tests/include/tap.h, included here
 * (tap_ok, tap_diag, tap_skip, tap_errno, tap_done: the plan last).
 */
#ifndef GDT_H
#define GDT_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "gdirect_ioctl.h"
#include "tap.h"

#define GDT_KB64	(64ULL << 10)
#define GDT_MB		(1ULL << 20)

/*
 * Load nvp2p_emu (64 MiB BAR1, 8 MiB reserved), gdirect with PARAMS (may
 * be NULL) and, if EDU, gdirect_edu; whatever was not loaded already.
 * Returns 0, or prints why and returns -1 (gdt_main then reports a skip).
 */
int gdt_setup(const char *params, int edu);
/* Unload what gdt_setup() loaded; returns 0 when every rmmod succeeded. */
int gdt_teardown(void);

/*
 * Run a test: load the modules, run BODY in a child process (BODY makes
 * its own CUDA context, with gdt_cuda_init(), if it needs one), then in the parent check that nothing is left
 * pinned once the child is gone, and unload the modules (the emulator can
 * go only after the child's CUDA file is closed).  Returns main's status.
 */
int gdt_main(const char *params, int edu, void (*body)(void));

/* CUDA: one context for the process (call again after fork; guest_cuda.h). */
int gdt_cuda_init(void);
CUdeviceptr gdt_alloc(size_t size);
int gdt_free(CUdeviceptr p);
/* Offset of @p in the GPU's memory (the host's backing file). */
int gdt_mem_offset(CUdeviceptr p, uint64_t *off);
/* Does the host see @len bytes of @data at @off of GPU memory? */
int gdt_host_has(uint64_t off, const void *data, size_t len);

/*
 * Open /dev/gdirect and map its status area read-only, as TAP checks;
 * returns the fd with *status set, or -1.
 */
int gdt_open_gdirect(volatile uint32_t **status);

/*
 * The opening and closing of a test body over one buffer of GPU memory
 * (gdirect-api, gdirect-tegra), as TAP checks.
 * gdt_body_open(): a CUDA context, then gdt_open_gdirect() into *@fd and
 * *@status, then @first() (if not NULL), then *@b: @size bytes of GPU
 * memory holding a pattern.  Returns 0, or -1 when /dev/gdirect could not
 * be had (nothing more was done; the checks that failed say why).
 * gdt_body_close(): free *@b, unmap the status area, close @fd, and check
 * that nothing is left pinned and no region is live.
 */
struct gdt_buffer {
	CUdeviceptr gpu;	/* 0 if the allocation failed */
	uint8_t *pattern;	/* byte i = i * 7 + (i >> shift); malloc'd */
};
int gdt_body_open(int *fd, volatile uint32_t **status, void (*first)(void),
		  size_t size, unsigned int shift, struct gdt_buffer *b);
void gdt_body_close(int fd, volatile uint32_t *status, struct gdt_buffer *b);

/*
 * Run @fn, a stretch of checks, in a child process of its own (tap.h's
 * tap_run_child()), so that whatever it still holds when a check fails or
 * it crashes (pins, mappings, its CUDA context) goes with the child, and
 * the next stretch starts from the caller's state.  Its lines count as
 * the caller's; no line of its own unless the child did not exit 0 (then
 * one failed line naming @name).  Returns 0 when the child exited 0.
 * The caller must not have made a CUDA context: a child of a process
 * that did cannot use CUDA (emu/cuda/src/init.c), as with NVIDIA's.
 */
int gdt_run_child(const char *name, void (*fn)(void));
/*
 * gdt_run_child() for a test that pins: the child first makes its own
 * CUDA context and opens its own file of @dev into *@fd and, if @status
 * is not NULL, maps /dev/gdirect's status area into *@status, the file
 * then non-blocking as gdt_open_gdirect() opens it (no lines
 * unless that fails), then runs @test.
 */
int gdt_run_own(const char *name, void (*test)(void), const char *dev,
		int *fd, volatile uint32_t **status);
/* The same on /dev/gdirect, for a test's fd and status globals. */
#define GDT_RUN_OWN(fn) gdt_run_own(#fn, fn, "/dev/gdirect", &fd, &status)

/* Bus address of the first page of our registration HANDLE; 0 if none. */
uint64_t gdt_region_phys(uint64_t handle);

/* Emulator counters and knobs (emu/include/emu_knob.h). */
uint64_t gdt_emu(const char *name);
/*
 * 1 if the emulated GPU is a coherent platform's (knob coherent, the
 * coherent lane): its page tables are CPU-cacheable.
 */
int gdt_coherent(void);
/* emu_wait_stat(): wait up to @ms for counter @name to reach @value. */
int gdt_emu_wait(const char *name, uint64_t value, unsigned int ms);
void gdt_emu_knob(const char *name, const char *value);
/* gdirect /proc/driver/gdirect/stats counter. */
int64_t gdt_gd_stat(const char *name);
/* Wait up to 10 s for no pins and no BAR1 use; 1 if clean. */
int gdt_quiet(void);

/*
 * A thread that ends the emulator's delay @knob (writes 0) once gdirect's
 * counter @stat reaches @value, or after 30 s: for a window the test holds
 * open with a long delay while the call it races blocks inside it, so
 * that the window closes when the race is seen, not when a clock says.
 * gdt_release_join(): 1 if @stat reached @value.
 */
struct gdt_release {
	pthread_t t;
	const char *knob, *stat;
	int64_t value;
	int started, seen;
};
int gdt_release_when(struct gdt_release *r, const char *knob,
		     const char *stat, int64_t value);
int gdt_release_join(struct gdt_release *r);

/*
 * Run gdirect_kapitest's scenario @what on [addr, addr + size) (its debugfs
 * file "run"; the outcome is in GDT_KT_DIR "result"): 0 or -errno.
 */
#define GDT_KT_DIR	"/sys/kernel/debug/gdirect_kapitest/"
int gdt_kt_run(const char *what, uint64_t addr, uint64_t size);

/* gdirect ioctls: 0 or -errno. */
int gdt_pin(int fd, uint64_t addr, uint64_t size, uint32_t flags,
	    struct gdirect_pin *out);
int gdt_unpin(int fd, uint64_t handle);
int gdt_region_info(int fd, uint64_t handle, struct gdirect_region_info *ri);

/* 1 if reading (or writing, if WRITE) *p faults (tests/include/guest_fault.h). */
int gdt_faults(volatile void *p, int write);

/* Pass an fd over a unix socket (SCM_RIGHTS): 0 or -1; the fd or -1. */
int gdt_send_fd(int sock, int fd);
int gdt_recv_fd(int sock);

/*
 * Owner processes for /proc/driver/gdirect/regions (gdirect-regions,
 * gdirect-regionsbench): @n children, each with its own /dev/gdirect file,
 * that pin on command with the legacy tokens of memory from the emulator
 * (this process's, gdt_owners_start()) and keep their pins until
 * gdt_owners_stop().  A child costs a process and a file's status area.
 * gdt_owner_pin(): child @i pins @count ranges of @size bytes, the k-th at
 * @addr + k * @stride; returns 0 or the first -errno.
 */
struct gdt_owners {
	int n;
	pid_t *pid;
	int *cmd, *ack;		/* pipes to and from each child */
	int mfd;		/* the emulator's file holding the memory */
	uint64_t va, size;	/* the memory */
};
int gdt_owners_start(struct gdt_owners *o, int n, uint64_t size);
int gdt_owner_pin(struct gdt_owners *o, int i, uint64_t addr, uint64_t size,
		  uint64_t stride, uint32_t count);
void gdt_owners_stop(struct gdt_owners *o);

/* Deterministic random numbers. */
uint64_t gdt_rand(void);
void gdt_srand(uint64_t seed);

#endif /* GDT_H */
