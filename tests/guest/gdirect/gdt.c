// SPDX-License-Identifier: MIT
/*
 * gdt.c - helpers shared by gdirect's guest tests; see gdt.h.
 */
#include "gdt.h"
#include "emu_knob.h"
#include "guest_cuda.h"
#include "guest_fault.h"
#include "guest_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "gpumem.h"
#include "nvp2p_emu.h"
#include "tap.h"

/* Modules (tests/include/guest_harness.h) */

static int loaded_emu, loaded_gd, loaded_edu;

/* Load @name unless loaded; 0, or -1.  *@ours: this process loaded it. */
static int load(const char *name, const char *params, int *ours)
{
	int ret = guest_module_load(name, params);

	if (ret > 0)
		*ours = 1;
	return ret < 0 ? -1 : 0;
}

int gdt_setup(const char *params, int edu)
{
	if (load("nvp2p_emu", "bar1_size_mb=64 bar1_reserve_mb=8", &loaded_emu) ||
	    load("gdirect", params, &loaded_gd) ||
	    (edu && load("gdirect_edu", NULL, &loaded_edu)))
		return -1;
	gdt_emu_knob("callback_delay_ms", "0");
	gdt_emu_knob("unmap_delay_ms", "0");
	gdt_emu_knob("map_return_delay_ms", "0");
	gdt_emu_knob("map_entry_delay_ms", "0");
	gdt_emu_knob("expect_misuse", "0");
	gdt_emu_knob("pin_latency_us", "0");
	gdt_emu_knob("fail_next", "0 5");	/* disarm */
	return 0;
}

int gdt_teardown(void)
{
	int rc = 0;

	gdt_emu_knob("callback_delay_ms", "0");
	gdt_emu_knob("unmap_delay_ms", "0");
	gdt_emu_knob("map_return_delay_ms", "0");
	gdt_emu_knob("map_entry_delay_ms", "0");
	gdt_emu_knob("expect_misuse", "0");
	if (loaded_edu)
		rc |= guest_sh("rmmod gdirect_edu");
	if (loaded_gd)
		rc |= guest_sh("rmmod gdirect");
	if (loaded_emu)
		rc |= guest_sh("rmmod nvp2p_emu");
	loaded_edu = loaded_gd = loaded_emu = 0;
	return rc;
}

int gdt_main(const char *params, int edu, void (*body)(void))
{
	int status;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (gdt_setup(params, edu)) {
		gdt_teardown();
		tap_skip("gdirect guest test", "modules could not be loaded");
		return tap_done();
	}
	status = guest_run_body(body);
	tap_ok(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "test process ended normally (status %#x)", status);
	tap_ok(gdt_quiet(), "nothing pinned after the test process exited");
	tap_ok(gdt_teardown() == 0, "modules unload");
	return tap_done();
}

/* CUDA */

int gdt_cuda_init(void)
{
	return guest_cuda_init();
}

int gdt_open_gdirect(volatile uint32_t **status)
{
	int fd = open("/dev/gdirect", O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (!tap_ok(fd >= 0, "open /dev/gdirect"))
		return -1;
	*status = mmap(NULL, GDIRECT_STATUS_BYTES, PROT_READ, MAP_SHARED, fd,
		       GDIRECT_STATUS_OFFSET);
	if (!tap_ok(*status != MAP_FAILED, "mmap the status area read-only")) {
		close(fd);
		return -1;
	}
	return fd;
}

int gdt_body_open(int *fd, volatile uint32_t **status, void (*first)(void),
		  size_t size, unsigned int shift, struct gdt_buffer *b)
{
	if (!tap_ok(gdt_cuda_init() == 0, "CUDA context on the emulated GPU"))
		return -1;
	*fd = gdt_open_gdirect(status);
	if (*fd < 0)
		return -1;
	if (first)
		first();
	b->gpu = gdt_alloc(size);
	b->pattern = malloc(size);
	for (size_t i = 0; b->pattern && i < size; i++)
		b->pattern[i] = (uint8_t)(i * 7 + (i >> shift));
	tap_ok(b->gpu && b->pattern &&
	       cuMemcpyHtoD(b->gpu, b->pattern, size) == CUDA_SUCCESS,
	       "cuMemAlloc + cuMemcpyHtoD %zu MiB", size >> 20);
	return 0;
}

void gdt_body_close(int fd, volatile uint32_t *status, struct gdt_buffer *b)
{
	gdt_free(b->gpu);
	free(b->pattern);
	munmap((void *)status, GDIRECT_STATUS_BYTES);
	tap_ok(close(fd) == 0 && gdt_quiet(), "close: nothing left pinned");
	tap_ok(gdt_gd_stat("live_regions") == 0, "gdirect: no live regions");
}

int gdt_run_child(const char *name, void (*fn)(void))
{
	int st = tap_run_child(fn);

	if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	tap_ok(0, "%s: its process ended normally (status %#x)", name, st);
	return -1;
}

static void (*own_test)(void);
static const char *own_dev;
static int *own_fd;
static volatile uint32_t **own_status;

/* The child of gdt_run_own(): its own context and file, then the test. */
static void own_body(void)
{
	volatile uint32_t *st = NULL;
	int fd;

	if (gdt_cuda_init()) {
		tap_ok(0, "CUDA context in the test's own process");
		return;
	}
	/* /dev/gdirect as gdt_open_gdirect() opens it, non-blocking. */
	fd = open(own_dev, O_RDWR | O_CLOEXEC | (own_status ? O_NONBLOCK : 0));
	if (fd >= 0 && own_status)
		st = mmap(NULL, GDIRECT_STATUS_BYTES, PROT_READ, MAP_SHARED, fd,
			  GDIRECT_STATUS_OFFSET);
	if (fd < 0 || st == MAP_FAILED) {
		tap_ok(0, "%s opened%s in the test's own process: %s", own_dev,
		       own_status ? " and mapped" : "", strerror(errno));
		return;
	}
	*own_fd = fd;
	if (own_status)
		*own_status = st;
	own_test();
}

int gdt_run_own(const char *name, void (*test)(void), const char *dev,
		int *fd, volatile uint32_t **status)
{
	own_test = test;
	own_dev = dev;
	own_fd = fd;
	own_status = status;
	return gdt_run_child(name, own_body);
}

CUdeviceptr gdt_alloc(size_t size)
{
	CUdeviceptr p = 0;
	unsigned int one = 1;

	if (cuMemAlloc(&p, size) != CUDA_SUCCESS)
		return 0;
	/* Guide 12.2 step 1: synchronous memory operations on this buffer. */
	cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p);
	return p;
}

int gdt_free(CUdeviceptr p)
{
	return cuMemFree(p) == CUDA_SUCCESS ? 0 : -1;
}

uint64_t gdt_region_phys(uint64_t handle)
{
	return guest_region_phys(handle);
}

int gdt_mem_offset(CUdeviceptr p, uint64_t *off)
{
	if (guest_mem_offset(p, off)) {
		tap_diag("gdt_mem_offset: cannot pin %#llx", (unsigned long long)p);
		return -1;
	}
	return 0;
}

int gdt_host_has(uint64_t off, const void *data, size_t len)
{
	return guest_host_has(off, data, len);
}

/* The emulator's counters and knobs (emu_knob.h), gdirect's statistics */

uint64_t gdt_emu(const char *name)
{
	return emu_stat_u64(name);
}

int gdt_coherent(void)
{
	return emu_stat_u64("coherent") == 1;
}

int gdt_emu_wait(const char *name, uint64_t value, unsigned int ms)
{
	return emu_wait_stat(name, value, ms);
}

void gdt_emu_knob(const char *name, const char *value)
{
	/* No such knob (no emulator loaded): nothing to set. */
	if (emu_knob_set(name, value) && errno != ENOENT)
		tap_diag("write %s to knob %s: %s", value, name, strerror(errno));
}

int64_t gdt_gd_stat(const char *name)
{
	char buf[2048], *p;
	size_t n = strlen(name);

	if (guest_read("/proc/driver/gdirect/stats", buf, sizeof(buf)))
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, n) && p[n] == ' ')
			return strtoll(p + n + 1, NULL, 0);
	return -1;
}

static int no_live_regions(void)
{
	return gdt_gd_stat("live_regions") == 0;
}

int gdt_quiet(void)
{
	if (emu_wait_quiet(10000, no_live_regions))
		return 1;
	tap_diag("live_regions %lld", (long long)gdt_gd_stat("live_regions"));
	return 0;
}

static void *release_fn(void *p)
{
	struct gdt_release *r = p;

	for (int i = 0; i < 30000 && gdt_gd_stat(r->stat) < r->value; i++)
		usleep(1000);
	r->seen = gdt_gd_stat(r->stat) >= r->value;
	gdt_emu_knob(r->knob, "0");
	return NULL;
}

int gdt_release_when(struct gdt_release *r, const char *knob,
		     const char *stat, int64_t value)
{
	r->knob = knob;
	r->stat = stat;
	r->value = value;
	r->seen = 0;
	r->started = !pthread_create(&r->t, NULL, release_fn, r);
	if (!r->started)
		gdt_emu_knob(knob, "0");	/* nothing must wait a minute */
	return r->started ? 0 : -1;
}

int gdt_release_join(struct gdt_release *r)
{
	if (r->started)
		pthread_join(r->t, NULL);
	r->started = 0;
	return r->seen;
}

int gdt_kt_run(const char *what, uint64_t addr, uint64_t size)
{
	char cmd[80];
	int fd = open(GDT_KT_DIR "run", O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	snprintf(cmd, sizeof(cmd), "%s %llx %llx", what,
		 (unsigned long long)addr, (unsigned long long)size);
	if (write(fd, cmd, strlen(cmd)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* ioctls */

int gdt_pin(int fd, uint64_t addr, uint64_t size, uint32_t flags,
	    struct gdirect_pin *out)
{
	struct gdirect_pin p = { .addr = addr, .size = size, .flags = flags };

	if (ioctl(fd, GDIRECT_IOC_PIN, &p))
		return -errno;
	if (out)
		*out = p;
	return 0;
}

int gdt_unpin(int fd, uint64_t handle)
{
	struct gdirect_unpin u = { .handle = handle };

	return ioctl(fd, GDIRECT_IOC_UNPIN, &u) ? -errno : 0;
}

int gdt_region_info(int fd, uint64_t handle, struct gdirect_region_info *ri)
{
	memset(ri, 0, sizeof(*ri));
	ri->handle = handle;
	return ioctl(fd, GDIRECT_IOC_REGION_INFO, ri) ? -errno : 0;
}

int gdt_faults(volatile void *p, int write)
{
	return guest_faults(p, write);
}

/* xorshift64*: reproducible across runs */
static __thread uint64_t rng = 0x9e3779b97f4a7c15ULL;

void gdt_srand(uint64_t seed)
{
	rng = seed ? seed : 1;
}

uint64_t gdt_rand(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

/* SCM_RIGHTS */

int gdt_send_fd(int sock, int f)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, c = 'f';
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &f, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

int gdt_recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int f = -1;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		memcpy(&f, CMSG_DATA(cm), sizeof(int));
	return f;
}

/* Owner processes (gdt_owners_start) */

struct gdt_own_cmd {
	uint64_t addr, size, stride;
	uint32_t count;		/* 0: close the file and exit */
};

static void owner_child(int cmd, int ack, uint64_t token, uint32_t va_space)
{
	int fd = open("/dev/gdirect", O_RDWR);
	struct gdt_own_cmd c;

	while (read(cmd, &c, sizeof(c)) == sizeof(c) && c.count) {
		int ret = fd < 0 ? -ENODEV : 0;

		for (uint32_t k = 0; !ret && k < c.count; k++) {
			struct gdirect_pin p = {
				.addr = c.addr + k * c.stride, .size = c.size,
				.p2p_token = token, .va_space = va_space,
			};

			if (ioctl(fd, GDIRECT_IOC_PIN, &p))
				ret = -errno;
		}
		if (write(ack, &ret, sizeof(ret)) != sizeof(ret))
			break;
	}
	_exit(0);	/* the file's release unpins, in this process */
}

int gdt_owners_start(struct gdt_owners *o, int n, uint64_t size)
{
	struct nvp2p_emu_tokens t = { 0 };
	struct nvp2p_emu_alloc a = { .size = size };
	struct rlimit rl;
	uint8_t *va;

	memset(o, 0, sizeof(*o));
	o->mfd = open(NVP2P_EMU_DEVICE, O_RDWR | O_CLOEXEC);
	va = mmap(NULL, size + GDT_KB64, PROT_NONE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (o->mfd < 0 || va == MAP_FAILED) {
		tap_diag("gdt_owners_start: no emulator file or no VA");
		return -1;
	}
	a.va = ((uintptr_t)va + GDT_KB64 - 1) & ~(GDT_KB64 - 1);
	if (ioctl(o->mfd, NVP2P_EMU_IOC_ALLOC, &a) ||
	    ioctl(o->mfd, NVP2P_EMU_IOC_TOKENS, &t)) {
		tap_diag("gdt_owners_start: emulator memory: %s", strerror(errno));
		return -1;
	}
	o->va = a.va;
	o->size = size;
	/* Two pipe ends per child; root may raise its own limit. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 2ULL * n + 64) {
		rl.rlim_cur = 2ULL * n + 64;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			tap_diag("gdt_owners_start: RLIMIT_NOFILE: %s", strerror(errno));
	}
	o->pid = calloc(n, sizeof(*o->pid));
	o->cmd = calloc(n, sizeof(*o->cmd));
	o->ack = calloc(n, sizeof(*o->ack));
	if (!o->pid || !o->cmd || !o->ack)
		return -1;
	for (int i = 0; i < n; i++) {
		int c[2], k[2];

		if (pipe(c)) {
			tap_diag("gdt_owners_start: pipe: %s", strerror(errno));
			return -1;
		}
		if (pipe(k)) {
			close(c[0]);
			close(c[1]);
			tap_diag("gdt_owners_start: pipe: %s", strerror(errno));
			return -1;
		}
		o->pid[i] = fork();
		if (o->pid[i] == 0) {
			/* Only our own pipe ends: the others' EOF is theirs. */
			for (int j = 0; j < i; j++) {
				close(o->cmd[j]);
				close(o->ack[j]);
			}
			close(c[1]);
			close(k[0]);
			owner_child(c[0], k[1], t.p2p_token, t.va_space);
		}
		close(c[0]);
		close(k[1]);
		o->cmd[i] = c[1];
		o->ack[i] = k[0];
		o->n = i + 1;
		if (o->pid[i] < 0) {
			tap_diag("gdt_owners_start: fork: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

int gdt_owner_pin(struct gdt_owners *o, int i, uint64_t addr, uint64_t size,
		  uint64_t stride, uint32_t count)
{
	struct gdt_own_cmd c = {
		.addr = addr, .size = size, .stride = stride, .count = count,
	};
	int ret;

	if (!count)
		return 0;
	if (write(o->cmd[i], &c, sizeof(c)) != sizeof(c) ||
	    read(o->ack[i], &ret, sizeof(ret)) != sizeof(ret))
		return -EPIPE;
	return ret;
}

void gdt_owners_stop(struct gdt_owners *o)
{
	for (int i = 0; i < o->n; i++) {
		close(o->cmd[i]);
		close(o->ack[i]);
	}
	for (int i = 0; i < o->n; i++)
		if (o->pid[i] > 0)
			waitpid(o->pid[i], NULL, 0);
	if (o->mfd >= 0)
		close(o->mfd);
	free(o->pid);
	free(o->cmd);
	free(o->ack);
	memset(o, 0, sizeof(*o));
	o->mfd = -1;
}
