// SPDX-License-Identifier: MIT
/*
 * gdrdrv.c - gdirect.ko's /dev/gdrdrv personality through raw
 * ioctls of include/uapi/gdrdrv.h, as NVIDIA's libgdrapi sends them: every
 * request with its documented errors, both info layouts, mapping types,
 * revocation while mapped, fork, fd passing, a pin by another thread,
 * unaligned pins refused by mmap() as gdrdrv refuses them, small pins
 * sharing one 64 KiB page,
 * mapping-type requests racing mmap(),
 * data checked against the host's backing file.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdrdrv.h"
#include "gdt.h"

#define PG	4096ULL

static int fd;

/* 0, or -errno. */
static int ioc(int f, unsigned long req, void *arg)
{
	return ioctl(f, req, arg) ? -errno : 0;
}

static int pin1(uint64_t addr, uint64_t size, uint64_t *h)
{
	struct GDRDRV_IOC_PIN_BUFFER_PARAMS p = { .addr = addr, .size = size };
	int ret = ioc(fd, GDRDRV_IOC_PIN_BUFFER, &p);

	if (!ret && h)
		*h = p.handle;
	return ret;
}

static int pin2(int f, uint64_t addr, uint64_t size, uint32_t flags,
		uint64_t *h)
{
	struct GDRDRV_IOC_PIN_BUFFER_V2_PARAMS p = {
		.addr = addr, .size = size, .flags = flags };
	int ret = ioc(f, GDRDRV_IOC_PIN_BUFFER_V2, &p);

	if (!ret && h)
		*h = p.handle;
	return ret;
}

/*
 * Request 7 as gdirect's gdrdrv.h once declared it, with the size of a
 * pointer: the driver still accepts it for libraries built from that
 * header (docs/gdrcopy.md).
 */
#define OLD_PIN_BUFFER_V2	\
	_IOWR(GDRDRV_IOCTL, 7, struct GDRDRV_IOC_PIN_BUFFER_V2_PARAMS *)

static int pin_old(uint64_t addr, uint64_t *h)
{
	struct GDRDRV_IOC_PIN_BUFFER_V2_PARAMS p = {
		.addr = addr, .size = 4096 };
	int ret = ioc(fd, OLD_PIN_BUFFER_V2, &p);

	*h = ret ? 0 : p.handle;
	return ret;
}

static int unpin(uint64_t h)
{
	struct GDRDRV_IOC_UNPIN_BUFFER_PARAMS p = { .handle = h };

	return ioc(fd, GDRDRV_IOC_UNPIN_BUFFER, &p);
}

static int cb_flag(uint64_t h, uint32_t *flag)
{
	struct GDRDRV_IOC_GET_CB_FLAG_PARAMS p = { .handle = h, .flag = 7 };
	int ret = ioc(fd, GDRDRV_IOC_GET_CB_FLAG, &p);

	*flag = p.flag;
	return ret;
}

static int info1(uint64_t h, struct GDRDRV_IOC_GET_INFO_PARAMS *i)
{
	memset(i, 0xff, sizeof(*i));
	i->handle = h;
	return ioc(fd, GDRDRV_IOC_GET_INFO, i);
}

static int info2(uint64_t h, struct GDRDRV_IOC_GET_INFO_V2_PARAMS *i)
{
	memset(i, 0xff, sizeof(*i));
	i->handle = h;
	return ioc(fd, GDRDRV_IOC_GET_INFO_V2, i);
}

static int req_type(uint64_t h, uint32_t type)
{
	struct GDRDRV_IOC_REQ_MAPPING_TYPE_PARAMS p = {
		.handle = h, .mapping_type = type };

	return ioc(fd, GDRDRV_IOC_REQ_MAPPING_TYPE, &p);
}

static void *map(int f, uint64_t h, size_t len, int flags)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, flags, f, h * PG);
}

/* mmap's errno, or 0 (and the mapping undone) if it succeeded. */
static int map_errno(int f, uint64_t h, size_t len, int flags)
{
	void *m = map(f, h, len, flags);

	if (m == MAP_FAILED)
		return errno;
	munmap(m, len);
	return 0;
}

static void test_version_attr(void)
{
	struct GDRDRV_IOC_GET_VERSION_PARAMS v = { 0, 0 };
	struct GDRDRV_IOC_GET_ATTR_PARAMS a;
	struct stat st = { 0 };

	tap_ok(stat("/dev/gdrdrv", &st) == 0 && S_ISCHR(st.st_mode) &&
	       (st.st_mode & 0777) == 0660, "/dev/gdrdrv, mode %o",
	       st.st_mode & 0777);
	tap_ok(!ioc(fd, GDRDRV_IOC_GET_VERSION, &v) &&
	       v.gdrdrv_version == 0x20006 &&
	       v.minimum_gdr_api_version == 0x20000,
	       "GET_VERSION: driver %#x, minimum library %#x",
	       v.gdrdrv_version, v.minimum_gdr_api_version);
	a.attr = GDRDRV_ATTR_USE_PERSISTENT_MAPPING;
	a.val = 7;
	tap_ok(!ioc(fd, GDRDRV_IOC_GET_ATTR, &a) && a.val == 0,
	       "GET_ATTR USE_PERSISTENT_MAPPING 0 (use_persistent=N)");
	a.attr = GDRDRV_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE;
	a.val = 7;
	tap_ok(!ioc(fd, GDRDRV_IOC_GET_ATTR, &a) && a.val == 0,
	       "GET_ATTR SUPPORT_PIN_FLAG_FORCE_PCIE 0");
	a.attr = GDRDRV_ATTR_MAX;
	tap_ok(ioc(fd, GDRDRV_IOC_GET_ATTR, &a) == -EINVAL,
	       "GET_ATTR unknown attribute: EINVAL");
	a.attr = 0;
	tap_ok(ioc(fd, GDRDRV_IOC_GET_ATTR, &a) == -EINVAL,
	       "GET_ATTR attribute 0: EINVAL");
	tap_ok(ioc(fd, GDRDRV_IOC_GET_VERSION, NULL) == -EFAULT,
	       "GET_VERSION with a NULL pointer: EFAULT");
	tap_ok(ioc(fd, _IOWR('G', 1, struct GDRDRV_IOC_GET_VERSION_PARAMS),
		   &v) == -EINVAL, "another magic: EINVAL");
	tap_ok(ioc(fd, _IOWR(GDRDRV_IOCTL, 9, void *), &v) == -ENOTTY,
	       "unknown request 9: ENOTTY");
}

static void test_pin_errors(CUdeviceptr buf, size_t size)
{
	struct GDRDRV_IOC_PIN_BUFFER_PARAMS *ro;
	uint64_t h = 0;

	tap_ok(pin1(buf, 0, NULL) == -EINVAL, "PIN_BUFFER size 0: EINVAL");
	tap_ok(pin1(UINT64_MAX - 100, 200, NULL) == -EINVAL,
	       "PIN_BUFFER wrapping range: EINVAL");
	tap_ok(pin1(0x10000, 4096, NULL) == -EINVAL,
	       "PIN_BUFFER of memory that is not GPU memory: EINVAL");
	tap_ok(pin1(buf, size + GDT_KB64, NULL) == -EINVAL,
	       "PIN_BUFFER past the end of the allocation: EINVAL");
	tap_ok(pin2(fd, buf, 4096, GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE, NULL) ==
	       -EINVAL, "PIN_BUFFER_V2 FORCE_PCIE (unsupported): EINVAL");
	tap_ok(pin2(fd, buf, 4096, 0x100, NULL) == -EINVAL,
	       "PIN_BUFFER_V2 unknown flag: EINVAL");
	tap_ok(pin2(fd, buf, 0, 0, NULL) == -EINVAL,
	       "PIN_BUFFER_V2 size 0: EINVAL");
	tap_ok(ioc(fd, GDRDRV_IOC_PIN_BUFFER, NULL) == -EFAULT,
	       "PIN_BUFFER NULL: EFAULT");
	tap_ok(ioc(fd, GDRDRV_IOC_PIN_BUFFER_V2, NULL) == -EFAULT,
	       "PIN_BUFFER_V2 NULL: EFAULT");
	tap_ok(GDRDRV_IOC_PIN_BUFFER_V2 != OLD_PIN_BUFFER_V2 &&
	       !pin_old(buf, &h) && h && !unpin(h),
	       "PIN_BUFFER_V2 in gdirect's old pointer-sized encoding: pinned");
	gdt_emu_knob("fail_next", "1 12");
	tap_ok(pin2(fd, buf, 4096, 0, NULL) == -ENOMEM,
	       "PIN_BUFFER_V2 when the provider fails with ENOMEM");
	tap_ok(ioc(fd, GDRDRV_IOC_PIN_BUFFER, (void *)8) == -EFAULT,
	       "PIN_BUFFER from a bad pointer: EFAULT");
	/* A pin whose answer cannot be written back leaves nothing. */
	ro = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		  -1, 0);
	if (ro != MAP_FAILED) {
		ro->addr = buf;
		ro->size = 4096;
		mprotect(ro, PG, PROT_READ);
		tap_ok(ioc(fd, GDRDRV_IOC_PIN_BUFFER, ro) == -EFAULT &&
		       gdt_emu("pins") == 0,
		       "PIN_BUFFER into a read-only answer: EFAULT, not pinned");
		munmap(ro, PG);
	}
	tap_ok(!pin1(buf, 4096, &h) && h != 0, "PIN_BUFFER works after that");
	unpin(h);
}

static void test_handles(void)
{
	struct GDRDRV_IOC_GET_INFO_PARAMS i;
	uint32_t flag;

	tap_ok(unpin(0) == -EINVAL, "UNPIN handle 0: EINVAL");
	tap_ok(unpin(UINT64_MAX) == -EINVAL, "UNPIN huge handle: EINVAL");
	tap_ok(unpin(12345) == -EINVAL, "UNPIN unknown handle: EINVAL");
	tap_ok(cb_flag(12345, &flag) == -EINVAL,
	       "GET_CB_FLAG unknown handle: EINVAL");
	tap_ok(info1(12345, &i) == -EINVAL, "GET_INFO unknown handle: EINVAL");
	tap_ok(req_type(12345, GDR_MR_WC) == -EINVAL,
	       "REQ_MAPPING_TYPE unknown handle: EINVAL");
	tap_ok(ioc(fd, GDRDRV_IOC_UNPIN_BUFFER, NULL) == -EFAULT &&
	       ioc(fd, GDRDRV_IOC_GET_CB_FLAG, NULL) == -EFAULT &&
	       ioc(fd, GDRDRV_IOC_GET_INFO, NULL) == -EFAULT &&
	       ioc(fd, GDRDRV_IOC_GET_INFO_V2, NULL) == -EFAULT &&
	       ioc(fd, GDRDRV_IOC_GET_ATTR, NULL) == -EFAULT &&
	       ioc(fd, GDRDRV_IOC_REQ_MAPPING_TYPE, NULL) == -EFAULT,
	       "NULL arguments: EFAULT");
	tap_ok(map_errno(fd, 12345, PG, MAP_SHARED) == EINVAL,
	       "mmap of an unknown handle: EINVAL");
}

/*
 * A pin at +100 (not 64 KiB aligned): its info says the page, and mmap()
 * refuses it with EINVAL, as gdrdrv 2.6 does ("offset != 0 is not
 * supported"; gdrcopy's sanity.cpp expects the refusal).  The same bytes
 * pinned from the page's start are mapped, and reached at map + 100.
 */
static void test_unaligned(CUdeviceptr buf, uint64_t boff)
{
	struct GDRDRV_IOC_GET_INFO_V2_PARAMS i2;
	struct GDRDRV_IOC_GET_INFO_PARAMS i1;
	uint8_t data[1000], back[1000];
	uint64_t h = 0;
	uint32_t flag = 7;
	uint8_t *m;

	if (!tap_ok(!pin1(buf + 100, 1000, &h) && h, "PIN_BUFFER 1000 bytes at +100"))
		return;
	tap_ok(!info1(h, &i1) && i1.handle == h && i1.va == buf &&
	       i1.mapped_size == GDT_KB64 && i1.page_size == 65536 &&
	       i1.tsc_khz == 0 && i1.tm_cycles == 0 && !i1.mapped &&
	       !i1.wc_mapping, "GET_INFO: va 64 KiB-aligned, one page, unmapped");
	tap_ok(!info2(h, &i2) && i2.va == buf && i2.mapped_size == GDT_KB64 &&
	       i2.page_size == 65536 && i2.mapping_type == GDR_MR_NONE,
	       "GET_INFO_V2: mapping type NONE");
	tap_ok(!cb_flag(h, &flag) && flag == 0, "GET_CB_FLAG 0");
	tap_ok(map_errno(fd, h, GDT_KB64, MAP_SHARED) == EINVAL &&
	       map_errno(fd, h, PG, MAP_SHARED) == EINVAL,
	       "mmap of the pin at +100: EINVAL, as gdrdrv");
	tap_ok(!info2(h, &i2) && i2.mapping_type == GDR_MR_NONE,
	       "the refused mmap left it unmapped");
	tap_ok(unpin(h) == 0, "UNPIN_BUFFER of the pin at +100");
	if (!tap_ok(!pin1(buf, 1100, &h) && h,
		    "PIN_BUFFER the same bytes from the page's start"))
		return;

	tap_ok(map_errno(fd, h, GDT_KB64, MAP_PRIVATE) == EINVAL,
	       "private mapping: EINVAL");
	tap_ok(map_errno(fd, h, 2 * GDT_KB64, MAP_SHARED) == EINVAL,
	       "mapping longer than the pin: EINVAL");
	tap_ok(map_errno(fd, h + 1, PG, MAP_SHARED) == EINVAL,
	       "mapping at an offset inside the pin: EINVAL");
	m = map(fd, h, GDT_KB64, MAP_SHARED);
	if (!tap_ok(m != MAP_FAILED, "mmap at handle << PAGE_SHIFT"))
		goto out;
	for (size_t k = 0; k < sizeof(data); k++)
		data[k] = (uint8_t)(k * 13 + 5);
	memcpy(m + 100, data, sizeof(data));
	cuMemcpyDtoH(back, buf + 100, sizeof(back));
	tap_ok(!memcmp(back, data, sizeof(data)),
	       "stores at map + (addr - va) reach the pinned bytes");
	tap_ok(gdt_host_has(boff + 100, data, sizeof(data)),
	       "the host's backing file has them");
	/* The region's own type: cached where the pages are cacheable. */
	tap_ok(!info1(h, &i1) && i1.mapped == 1 &&
	       i1.wc_mapping == (uint32_t)!gdt_coherent(),
	       "GET_INFO: mapped, %s", gdt_coherent() ? "cached" : "write-combining");
	tap_ok(!info2(h, &i2) && i2.mapping_type ==
	       (gdt_coherent() ? GDR_MR_CACHING : GDR_MR_WC),
	       "GET_INFO_V2: mapping type %s", gdt_coherent() ? "CACHING" : "WC");
	tap_ok(map_errno(fd, h, GDT_KB64, MAP_SHARED) == EINVAL,
	       "a second mapping of the handle: EINVAL");
	tap_ok(req_type(h, GDR_MR_WC) == -EBUSY,
	       "REQ_MAPPING_TYPE while mapped: EBUSY");
	munmap(m, GDT_KB64);
	tap_ok(!info2(h, &i2) && i2.mapping_type == GDR_MR_NONE &&
	       !info1(h, &i1) && !i1.mapped, "unmapped again after munmap");

	tap_ok(req_type(h, 4) == -EINVAL, "REQ_MAPPING_TYPE 4: EINVAL");
	if (gdt_coherent())
		tap_ok(!req_type(h, GDR_MR_CACHING),
		       "REQ_MAPPING_TYPE CACHING of CPU-cacheable pages");
	else
		tap_ok(req_type(h, GDR_MR_CACHING) == -EOPNOTSUPP,
		       "REQ_MAPPING_TYPE CACHING of uncacheable BAR pages: EOPNOTSUPP");
	tap_ok(req_type(h, GDR_MR_DEVICE) == -EOPNOTSUPP,
	       "REQ_MAPPING_TYPE DEVICE (no device mappings here): EOPNOTSUPP");
	tap_ok(!info2(h, &i2) && i2.mapping_type == GDR_MR_NONE,
	       "a refused request maps nothing");
	tap_ok(!req_type(h, GDR_MR_WC), "REQ_MAPPING_TYPE WC");
	m = map(fd, h, PG, MAP_SHARED);
	tap_ok(m != MAP_FAILED && !info2(h, &i2) && i2.mapping_type == GDR_MR_WC &&
	       !memcmp(m + 100, data, 100), "mapped WC as requested, one page");
	if (m != MAP_FAILED)
		munmap(m, PG);
out:
	tap_ok(unpin(h) == 0, "UNPIN_BUFFER");
	tap_ok(unpin(h) == -EINVAL, "UNPIN_BUFFER again: EINVAL");
	tap_ok(info1(h, &i1) == -EINVAL && cb_flag(h, &flag) == -EINVAL,
	       "GET_INFO, GET_CB_FLAG of an unpinned handle: EINVAL");
}

/*
 * Small pins in one 64 KiB page: distinct handles, disjoint offsets; the
 * one not at the page's start is not mapped (as gdrdrv); two at the start
 * are mapped, both the whole page.
 */
static void test_shared_page(CUdeviceptr buf, uint64_t boff)
{
	uint64_t h1 = 0, h2 = 0;
	uint8_t *m1, *m2;
	uint32_t a = 0x11223344, b = 0x55667788;

	if (!tap_ok(!pin2(fd, buf, 256, 0, &h1) &&
		    !pin2(fd, buf + 8192, 512, 0, &h2),
		    "two PIN_BUFFER_V2 of small buffers in one 64 KiB page"))
		return;
	tap_ok(h1 != h2 && (h2 >= h1 + GDT_KB64 / PG || h1 >= h2 + GDT_KB64 / PG),
	       "handles %llu, %llu: offset ranges do not overlap",
	       (unsigned long long)h1, (unsigned long long)h2);
	tap_ok(map_errno(fd, h2, GDT_KB64, MAP_SHARED) == EINVAL,
	       "the pin at +8192 is not mapped: EINVAL, as gdrdrv");
	if (!tap_ok(!unpin(h2) && !pin2(fd, buf, 512, 0, &h2) && h2 != h1,
		    "a second small pin at the page's start, its own handle"))
		h2 = 0;
	m1 = map(fd, h1, GDT_KB64, MAP_SHARED);
	m2 = map(fd, h2, GDT_KB64, MAP_SHARED);
	if (tap_ok(m1 != MAP_FAILED && m2 != MAP_FAILED, "both mapped")) {
		memcpy(m1 + 256, &a, 4);
		memcpy(m2 + 8192, &b, 4);
		tap_ok(!memcmp(m2 + 256, &a, 4) && !memcmp(m1 + 8192, &b, 4),
		       "each mapping sees the other's store (same page)");
		tap_ok(gdt_host_has(boff + 256, &a, 4) &&
		       gdt_host_has(boff + 8192, &b, 4),
		       "the host's backing file has both");
	}
	if (m1 != MAP_FAILED)
		munmap(m1, GDT_KB64);
	if (m2 != MAP_FAILED)
		munmap(m2, GDT_KB64);
	tap_ok(!unpin(h1) && (!h2 || !unpin(h2)), "both unpinned");
}

static uint64_t thread_handle;
static int thread_ret;

static void *thread_pin(void *arg)
{
	thread_ret = pin2(fd, *(CUdeviceptr *)arg, GDT_KB64, 0, &thread_handle);
	return NULL;
}

static void test_thread(CUdeviceptr buf)
{
	pthread_t t;
	uint32_t flag = 7;

	if (!tap_ok(!pthread_create(&t, NULL, thread_pin, &buf) &&
		    !pthread_join(t, NULL), "thread ran"))
		return;
	tap_ok(thread_ret == 0, "a thread of the opener pins: %d", thread_ret);
	tap_ok(!thread_ret && !cb_flag(thread_handle, &flag) && flag == 0 &&
	       !unpin(thread_handle), "the main thread uses and unpins it");
}

static void test_fork(CUdeviceptr buf)
{
	struct GDRDRV_IOC_GET_VERSION_PARAMS v;
	uint64_t h = 0;
	uint8_t *m;
	int st = 0;
	pid_t pid;

	if (!tap_ok(!pin2(fd, buf, GDT_KB64, 0, &h), "pin before fork"))
		return;
	m = map(fd, h, GDT_KB64, MAP_SHARED);
	tap_ok(m != MAP_FAILED, "mapped before fork");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int bad = 0;

		bad |= ioc(fd, GDRDRV_IOC_GET_VERSION, &v) != -EACCES;
		bad |= pin2(fd, buf, GDT_KB64, 0, NULL) != -EACCES;
		bad |= unpin(h) != -EACCES;
		bad |= map_errno(fd, h, GDT_KB64, MAP_SHARED) != EACCES;
		bad |= m != MAP_FAILED && !gdt_faults(m, 0);
		_exit(bad);
	}
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "fork: the child gets EACCES for ioctl and mmap, no mapping");
	tap_ok(m != MAP_FAILED && !gdt_faults(m, 1) && !unpin(h),
	       "the parent keeps its mapping and handle");
	if (m != MAP_FAILED)
		munmap(m, GDT_KB64);
}

/* An fd passed to another process is useless there, and leaks nothing. */
static void test_fd_passing(CUdeviceptr buf)
{
	int sv[2], st = 0, f;
	uint64_t h = 0;
	pid_t pid;

	if (!tap_ok(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair"))
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct GDRDRV_IOC_GET_VERSION_PARAMS v;
		int rf, bad = 0;

		close(sv[0]);
		rf = gdt_recv_fd(sv[1]);
		if (rf < 0)
			_exit(2);
		bad |= ioc(rf, GDRDRV_IOC_GET_VERSION, &v) != -EACCES;
		bad |= pin2(rf, buf, GDT_KB64, 0, NULL) != -EACCES;
		bad |= map_errno(rf, 1, GDT_KB64, MAP_SHARED) != EACCES;
		close(rf);
		_exit(bad);
	}
	close(sv[1]);
	f = open("/dev/gdrdrv", O_RDWR | O_CLOEXEC);
	tap_ok(f >= 0 && !pin2(f, buf, GDT_KB64, 0, &h),
	       "a second /dev/gdrdrv with a pin");
	tap_ok(f >= 0 && !gdt_send_fd(sv[0], f), "sent over a unix socket");
	waitpid(pid, &st, 0);
	close(sv[0]);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "the receiver gets EACCES for ioctl, pin and mmap");
	tap_ok(f >= 0 && !close(f) && gdt_emu("pins") == 0,
	       "the owner's close releases the pin");
}

/*
 * REQ_MAPPING_TYPE and GET_INFO from one thread while another maps and
 * unmaps: a request is either seen by the next mapping or refused with
 * EBUSY, and GET_INFO sees a region unmapped or mapped with its type.
 * The requester keeps the last accepted type under race_mu, which the
 * mapper takes only after its mmap() returned: by then no request can be
 * accepted until munmap, so the mapping's type must be that one's.
 * BAR pages behind PCIe are not cacheable: a CACHING request is refused
 * with EOPNOTSUPP (mapped or not, EBUSY first while mapped) and leaves the
 * last accepted type in place; NONE and WC map WC.  On a coherent platform
 * every request is accepted, and NONE maps CACHING.  Either way every
 * mmap() must succeed.
 */
#define RACE_REQS	4000

static pthread_mutex_t race_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t race_last = GDR_MR_NONE;
static int race_done;
static uint64_t race_h;
static unsigned int race_accepted, race_busy, race_unsupported, race_bad;

static uint32_t race_natural = GDR_MR_WC;	/* what NONE maps */

/* The type a mapping takes after request @t was the last accepted. */
static uint32_t race_type(uint32_t t)
{
	return t == GDR_MR_NONE ? race_natural : t;
}

static void *race_requester(void *arg)
{
	static const uint32_t types[] = {
		GDR_MR_WC, GDR_MR_CACHING, GDR_MR_NONE, GDR_MR_CACHING };
	uint32_t x = 2463534242u;
	struct GDRDRV_IOC_GET_INFO_V2_PARAMS i2;
	struct GDRDRV_IOC_GET_INFO_PARAMS i1;
	int ret;

	(void)arg;
	for (unsigned int k = 0; k <= RACE_REQS; k++) {
		/*
		 * Types in no period the two loops could lock into; the last
		 * is WC, so that the mapper ends mapped.
		 */
		uint32_t t;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		t = k == RACE_REQS ? GDR_MR_WC : types[x >> 30];

		pthread_mutex_lock(&race_mu);
		ret = req_type(race_h, t);
		if (!ret) {
			race_last = t;
			race_accepted++;
		} else if (ret == -EBUSY) {
			race_busy++;
			if (k == RACE_REQS)
				k--;	/* retry the last one */
		} else if (ret == -EOPNOTSUPP && t == GDR_MR_CACHING &&
			   race_natural == GDR_MR_WC) {
			race_unsupported++;
		} else {
			race_bad++;
		}
		if (info2(race_h, &i2) ||
		    (i2.mapping_type != GDR_MR_NONE &&
		     i2.mapping_type != race_type(race_last)))
			race_bad++;
		pthread_mutex_unlock(&race_mu);
		/* Unlocked: a WC mapping behind PCIe, any type here else. */
		if (info1(race_h, &i1) || i1.mapped > 1 ||
		    i1.wc_mapping > i1.mapped ||
		    (race_natural == GDR_MR_WC && i1.wc_mapping != i1.mapped))
			race_bad++;
	}
	__atomic_store_n(&race_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_type_race(CUdeviceptr buf)
{
	struct GDRDRV_IOC_GET_INFO_V2_PARAMS i2;
	unsigned int maps = 0, bad = 0, last_ok = 0;
	pthread_t t;
	void *m;

	race_natural = gdt_coherent() ? GDR_MR_CACHING : GDR_MR_WC;
	if (!tap_ok(!pin2(fd, buf, GDT_KB64, 0, &race_h) &&
		    !req_type(race_h, GDR_MR_NONE), "pin 64 KiB for the race"))
		return;
	if (!tap_ok(!pthread_create(&t, NULL, race_requester, NULL),
		    "requester thread started"))
		goto out;
	while (!last_ok) {
		int done = __atomic_load_n(&race_done, __ATOMIC_ACQUIRE);

		m = map(fd, race_h, PG, MAP_SHARED);
		if (m == MAP_FAILED) {
			/* Every type a request can leave maps. */
			bad++;
			break;
		}
		pthread_mutex_lock(&race_mu);
		if (info2(race_h, &i2) ||
		    i2.mapping_type != race_type(race_last))
			bad++;
		pthread_mutex_unlock(&race_mu);
		munmap(m, PG);
		maps++;
		/* A mapping after the requester's final WC: done. */
		last_ok = done;
	}
	pthread_join(t, NULL);
	tap_ok(!bad && !race_bad,
	       "type race: every mapping of the last accepted type, GET_INFO never between (%u+%u bad; %u maps, %u requests accepted, %u EBUSY, %u EOPNOTSUPP)",
	       bad, race_bad, maps, race_accepted, race_busy,
	       race_unsupported);
	if (race_natural == GDR_MR_WC)
		tap_ok(maps && race_accepted && race_busy && race_unsupported,
		       "type race: the threads met (a request busy) and CACHING was refused");
	else
		tap_ok(maps && race_accepted && race_busy && !race_unsupported,
		       "type race: the threads met (a request busy) and every type was accepted");
out:
	tap_ok(unpin(race_h) == 0, "UNPIN the raced handle");
}

/* cuMemFree while mapped: the flag flips and the mapping faults. */
static void test_revoke(void)
{
	CUdeviceptr buf = gdt_alloc(4 * GDT_KB64);
	struct GDRDRV_IOC_GET_INFO_PARAMS i1;
	uint64_t callbacks = gdt_emu("callbacks"), h = 0;
	uint32_t flag = 7;
	volatile uint8_t *m;

	if (!tap_ok(buf && !pin2(fd, buf, 3 * GDT_KB64, 0, &h),
		    "pin 192 KiB for revocation"))
		return;
	m = map(fd, h, 3 * GDT_KB64, MAP_SHARED);
	tap_ok(m != MAP_FAILED && !gdt_faults(m, 0) && !cb_flag(h, &flag) &&
	       flag == 0, "mapped, readable, flag 0");
	tap_ok(gdt_free(buf) == 0 && gdt_emu("callbacks") == callbacks + 1,
	       "cuMemFree: the free callback ran");
	tap_ok(!cb_flag(h, &flag) && flag == 1, "GET_CB_FLAG 1");
	if (m != MAP_FAILED) {
		tap_ok(gdt_faults(m, 0) && gdt_faults(m + GDT_KB64, 1) &&
		       gdt_faults(m + 2 * GDT_KB64 + 4000, 0),
		       "the revoked mapping faults on read and write");
		munmap((void *)m, 3 * GDT_KB64);
	}
	tap_ok(!info1(h, &i1) && i1.mapped_size == 3 * GDT_KB64 && !i1.mapped,
	       "GET_INFO still answers");
	tap_ok(map_errno(fd, h, GDT_KB64, MAP_SHARED) == EINVAL,
	       "mmap of a revoked handle: EINVAL");
	tap_ok(gdt_emu("pins") == 0 && gdt_emu("bar1_used") == 0,
	       "the provider released the pages");
	tap_ok(unpin(h) == 0, "UNPIN of a revoked handle");
}

/* The tests on one buffer, in one process. */
static void shared(void)
{
	const size_t size = 4 * GDT_KB64;
	CUdeviceptr buf;
	uint64_t boff = 0;

	if (!tap_ok(gdt_cuda_init() == 0, "CUDA context on the emulated GPU"))
		return;
	fd = open("/dev/gdrdrv", O_RDWR | O_CLOEXEC);
	if (!tap_ok(fd >= 0, "open /dev/gdrdrv"))
		return;
	buf = gdt_alloc(size);
	if (!tap_ok(buf && (buf & (GDT_KB64 - 1)) == 0 &&
		    !gdt_mem_offset(buf, &boff), "cuMemAlloc 256 KiB"))
		return;
	cuMemsetD8(buf, 0, size);

	test_version_attr();
	test_pin_errors(buf, size);
	test_handles();
	test_unaligned(buf, boff);
	test_shared_page(buf, boff);
	test_thread(buf);
	test_fork(buf);
	test_fd_passing(buf);
	test_type_race(buf);
	gdt_free(buf);
	tap_ok(close(fd) == 0 && gdt_quiet(), "close: nothing left pinned");
	tap_ok(gdt_emu("pins") == 0 && gdt_emu("bar1_used") == 0 &&
	       gdt_gd_stat("live_regions") == 0,
	       "0 pins, 0 BAR1 bytes, no live regions");
}

/*
 * The revocation frees its own buffer under a pin: in a process of its
 * own, with its own CUDA context and /dev/gdrdrv file, so that a failure
 * cannot leave the pin to another test.  This process makes no CUDA
 * context, so its children can.
 */
static void body(void)
{
	gdt_run_child("shared", shared);
	gdt_run_own("test_revoke", test_revoke, "/dev/gdrdrv", &fd, NULL);
}

int main(void)
{
	return gdt_main(NULL, 0, body);
}
