// SPDX-License-Identifier: MIT
/*
 * cuda-dmabuf-mmap-test.c - the emulator's dma-buf exporter as NVIDIA ships
 * it (docs/emulator.md, "dma-bufs"), at both CUDA driver API versions the
 * knob cuda_version offers:
 *  - the knob: 13000 by default, 13030 accepted, anything else EINVAL;
 *  - 13000 (what the H100 and H200 report): the PCIe mapping type is
 *    CUDA_ERROR_NOT_SUPPORTED, and mmap of an export fails with ENOTSUPP
 *    (524), logged as NVIDIA logs it;
 *  - 13030 (a 13.3-level driver, which asks for mmap on every export):
 *    a default export mmaps, the same bytes as cuMemcpy both ways, offsets
 *    and lengths checked, and gdirect_edu attaches it meanwhile; the PCIe
 *    mapping type is accepted, mmaps too, and no importer may attach it;
 *  - the exporter's gate, through the ioctl: mmap is refused exactly for
 *    an export made without NVP2P_EMU_DMABUF_ALLOW_MMAP, whatever the
 *    mapping type;
 *  - both: a static exporter, so gdirect_edu's dynamic attachment is
 *    mapped by the dma-buf core when it attaches (the path it takes next to
 *    NVIDIA's driver), until it detaches;
 *  - cuMemFree while mmapped, munmap and close in either order: the memory
 *    stays until the last mapping and fd are gone;
 *  - an unbind with a mapped export waits until the mapping goes, the
 *    mapping working meanwhile.
 * Run by cuda-emu-dmabuf-mmap.sh with nvp2p_emu, gdirect and gdirect_edu
 * loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/btf.h>

#include <cuda.h>

#include "emu_knob.h"
#include "gdirect_edu.h"
#include "guest_file.h"
#include "guest_unbind.h"
#include "nvp2p_emu.h"
#include "tap.h"

#define MB		(1ULL << 20)
#define KNOB		"cuda_version"
#define PARAM		"/sys/module/nvp2p_emu/parameters/cuda_version"
#define ENOTSUPP_	524	/* the kernel's ENOTSUPP, which libc does not name */
#define LOGLINE		"nv_dma_buf_mmap: mmap is not allowed can_mmap[0]"

static int version;

static void fill(uint8_t *b, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed ^ (i * 29) ^ (i >> 12));
}

static int export(CUdeviceptr p, size_t size, unsigned long long flags, int *fd)
{
	*fd = -1;
	return cuMemGetHandleForAddressRange(fd, p, size,
					     CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, flags);
}

/* mmap of @fd: 0, or the errno. */
static int map_errno(int fd, size_t len, off_t off)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);

	if (m != MAP_FAILED) {
		munmap(m, len);
		return 0;
	}
	return errno;
}

static int log_has(const char *s)
{
	int n = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *buf = n > 0 ? malloc((size_t)n + 1) : NULL;
	int got = buf ? klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, n) : -1;
	int found = 0;

	if (got >= 0) {
		buf[got] = '\0';
		found = strstr(buf, s) != NULL;
	}
	free(buf);
	return found;
}

static int exp_name_is(int fd, const char *name)
{
	char path[64], buf[512], want[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	snprintf(want, sizeof(want), "exp_name:\t%s\n", name);
	return !guest_read(path, buf, sizeof(buf)) && strstr(buf, want);
}

static int edu_attach(int efd, int fd, struct gdedu_dmabuf_attach *a)
{
	memset(a, 0, sizeof(*a));
	a->fd = fd;
	return ioctl(efd, GDEDU_IOC_DMABUF_ATTACH, a) ? -errno : 0;
}

static int edu_detach(int efd, uint32_t id)
{
	struct gdedu_dmabuf_detach d = { .id = id };

	return ioctl(efd, GDEDU_IOC_DMABUF_DETACH, &d) ? -errno : 0;
}

/*
 * Whether the running kernel's struct dma_buf_attachment has the member
 * sgt, read from its BTF (/sys/kernel/btf/vmlinux): 1, 0, or -1 where the
 * BTF cannot be read or holds a kind this parser does not know.  It is the
 * fact gdirect_edu's build probe (DMA_BUF_ATTACHMENT_SGT,
 * scripts/kconftest.sh) decides GDEDU_DMABUF_NO_ATTACH_MAP by, observed
 * on the kernel that runs rather than the headers the module was built
 * against, so that a probe that answers wrongly fails the test.
 */
static int attach_has_sgt(void)
{
	int fd = open("/sys/kernel/btf/vmlinux", O_RDONLY), ans = -1;
	size_t n = 0, cap = 1 << 22;
	char *b = malloc(cap);
	const struct btf_header *h = (const void *)b;
	const char *strs;
	size_t at, end, extra, vlen;
	ssize_t got;

	if (fd < 0 || !b)
		goto out;
	while ((got = read(fd, b + n, cap - n)) > 0) {
		n += (size_t)got;
		if (n == cap) {
			char *nb = realloc(b, cap *= 2);

			if (!nb)
				goto out;
			b = nb;
			h = (const void *)b;
		}
	}
	if (got < 0 || n < sizeof(*h) || h->magic != BTF_MAGIC ||
	    (size_t)h->hdr_len + h->type_off + h->type_len > n ||
	    (size_t)h->hdr_len + h->str_off + h->str_len > n)
		goto out;
	strs = b + h->hdr_len + h->str_off;
	at = h->hdr_len + h->type_off;
	end = at + h->type_len;
	while (at + sizeof(struct btf_type) <= end) {
		const struct btf_type *t = (const void *)(b + at);
		int kind = BTF_INFO_KIND(t->info);

		vlen = BTF_INFO_VLEN(t->info);
		switch (kind) {
		case BTF_KIND_INT:
			extra = sizeof(uint32_t);
			break;
		case BTF_KIND_ARRAY:
			extra = sizeof(struct btf_array);
			break;
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION:
			extra = vlen * sizeof(struct btf_member);
			break;
		case BTF_KIND_ENUM:
			extra = vlen * sizeof(struct btf_enum);
			break;
		case BTF_KIND_FUNC_PROTO:
			extra = vlen * sizeof(struct btf_param);
			break;
		case BTF_KIND_VAR:
			extra = sizeof(struct btf_var);
			break;
		case BTF_KIND_DATASEC:
			extra = vlen * sizeof(struct btf_var_secinfo);
			break;
		case BTF_KIND_DECL_TAG:
			extra = sizeof(struct btf_decl_tag);
			break;
		case BTF_KIND_ENUM64:
			extra = vlen * sizeof(struct btf_enum64);
			break;
		case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE: case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT: case BTF_KIND_FUNC:
		case BTF_KIND_FLOAT: case BTF_KIND_TYPE_TAG:
			extra = 0;
			break;
		default:	/* its size unknown: nothing after it is read */
			goto out;
		}
		if (at + sizeof(*t) + extra > end)
			goto out;
		if (kind == BTF_KIND_STRUCT && t->name_off < h->str_len &&
		    !strcmp(strs + t->name_off, "dma_buf_attachment")) {
			const struct btf_member *m = (const void *)(t + 1);

			ans = 0;
			for (size_t i = 0; i < vlen; i++)
				if (m[i].name_off < h->str_len &&
				    !strcmp(strs + m[i].name_off, "sgt"))
					ans = 1;
			goto out;
		}
		at += sizeof(*t) + extra;
	}
out:
	if (fd >= 0)
		close(fd);
	free(b);
	return ans;
}

/*
 * Without BTF, the same from the running kernel's release: 1, 0, or -1.
 * dma_buf_attachment.sgt is in Debian's 5.10 and 6.1 headers and in
 * upstream's through 6.12, and gone from a 6.18 kernel's BTF and sid's
 * 7.2 headers.  The upstream commit that removed it was not identified,
 * so 6.13 to 6.17 are left unknown.
 */
static int attach_has_sgt_by_release(void)
{
	struct utsname u;
	int maj, min;

	if (uname(&u) || sscanf(u.release, "%d.%d", &maj, &min) != 2)
		return -1;
	if (maj < 6 || (maj == 6 && min <= 12))
		return 1;
	if (maj > 6 || (maj == 6 && min >= 18))
		return 0;
	return -1;
}

/* gdirect_edu's importer on the static exporter (a default export). */
static void importer(CUdeviceptr d)
{
	struct gdedu_dmabuf_attach a;
	int efd = open(GDEDU_DEVICE, O_RDWR), fd, r, sgt;
	uint64_t maps0 = emu_stat_u64("dmabuf_maps");
	const char *how;
	/* The two flags that say when the kernel mapped it; others may come. */
	const uint32_t how_mapped = GDEDU_DMABUF_MAPPED_AT_ATTACH |
				    GDEDU_DMABUF_NO_ATTACH_MAP;

	if (!tap_ok(efd >= 0 && export(d, 2 * MB, 0, &fd) == CUDA_SUCCESS,
		    "gdirect_edu is bound; a default export of 2 MiB")) {
		if (efd >= 0)
			close(efd);
		return;
	}
	r = edu_attach(efd, fd, &a);
	/*
	 * A kernel whose dma_buf_attachment has sgt maps a static exporter's
	 * dma-buf for a dynamic importer at attach; one without (6.18, 7.2)
	 * maps it at the first map, and gdirect_edu says so.  The flags must match
	 * what the running kernel is, not merely agree with each other.
	 */
	sgt = attach_has_sgt();
	how = "BTF";
	if (sgt < 0) {
		tap_diag("the kernel's BTF does not say whether dma_buf_attachment has sgt (no /sys/kernel/btf/vmlinux, no such struct, or a kind this test cannot read): its release decides");
		sgt = attach_has_sgt_by_release();
		how = "release";
	}
	if (sgt < 0)
		tap_ok(r == 0 && !(a.flags & GDEDU_DMABUF_NO_ATTACH_MAP) !=
				 !(a.flags & GDEDU_DMABUF_MAPPED_AT_ATTACH),
		       "gdirect_edu attaches it, dynamic and peer to peer, mapped at attach or saying not (%d, flags %#x; the kernel's dma_buf_attachment unknown)",
		       r, a.flags);
	else if (!sgt)
		tap_ok(r == 0 && (a.flags & how_mapped) == GDEDU_DMABUF_NO_ATTACH_MAP,
		       "gdirect_edu attaches it, dynamic and peer to peer: this kernel (no dma_buf_attachment.sgt, by its %s) maps at the first map, not at attach (%d, flags %#x)",
		       how, r, a.flags);
	else
		tap_ok(r == 0 && (a.flags & how_mapped) == GDEDU_DMABUF_MAPPED_AT_ATTACH,
		       "gdirect_edu attaches it, dynamic and peer to peer: the core had mapped it at attach (dma_buf_attachment.sgt, by the kernel's %s) (%d, flags %#x)",
		       how, r, a.flags);
	tap_ok(emu_stat_u64("dmabuf_maps") == maps0 + 1,
	       "the exporter made one mapping for it (dmabuf_maps %llu)",
	       (unsigned long long)emu_stat_u64("dmabuf_maps"));
	close(fd);
	tap_ok(edu_detach(efd, a.id) == 0 && emu_stat_u64("dmabuf_maps") == maps0,
	       "the detach unmaps it (dmabuf_maps back to %llu)", (unsigned long long)maps0);
	close(efd);
}

/*
 * A default export at 13030: what the mapping reads and writes, and an
 * importer attached while it is mapped.
 */
static void default_mmap(CUdeviceptr d)
{
	static uint8_t pat[MB], back[MB];
	struct gdedu_dmabuf_attach a;
	size_t size = MB;
	CUdeviceptr r = d + 64 * 1024;	/* an interior range */
	uint8_t *m, *m2;
	int fd, efd, e;

	if (!tap_ok(export(r, size, 0, &fd) == CUDA_SUCCESS && fd >= 0,
		    "a default export of 1 MiB at 64 KiB into the allocation"))
		return;
	tap_ok(exp_name_is(fd, "nv_dmabuf"), "its fdinfo says exp_name nv_dmabuf");
	fill(pat, size, 0x3c);
	cuMemsetD8(d, 0, 4 * MB);
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!tap_ok(m != MAP_FAILED, "mmap of the whole default export (%s)",
		    m == MAP_FAILED ? strerror(errno) : "ok")) {
		close(fd);
		return;
	}
	tap_ok(cuMemcpyHtoD(r, pat, size) == 0 && !memcmp(m, pat, size),
	       "the mapping reads what cuMemcpyHtoD wrote");
	fill(pat, size, 0xa5);
	memcpy(m, pat, size);
	tap_ok(cuMemcpyDtoH(back, r, size) == 0 && !memcmp(back, pat, size),
	       "cuMemcpyDtoH reads what the mapping wrote");
	tap_ok(cuMemcpyDtoH(back, d, 64 * 1024) == 0 && !back[0] && !memcmp(back, back + 1, 64 * 1024 - 1),
	       "the 64 KiB before the range stay zero");
	m2 = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 3 * 4096);
	tap_ok(m2 != MAP_FAILED && !memcmp(m2, pat + 3 * 4096, 8192),
	       "an mmap at offset 12 KiB maps those bytes");
	if (m2 != MAP_FAILED)
		munmap(m2, 8192);
	tap_ok(map_errno(fd, size + 4096, 0) == EINVAL, "an mmap longer than the export: EINVAL");
	tap_ok(map_errno(fd, 4096, (off_t)size) == EINVAL, "an mmap at the export's end: EINVAL");
	tap_ok(map_errno(fd, 8192, (off_t)size - 4096) == EINVAL, "an mmap across the export's end: EINVAL");
	efd = open(GDEDU_DEVICE, O_RDWR);
	e = efd >= 0 ? edu_attach(efd, fd, &a) : -EBADF;
	tap_ok(e == 0, "gdirect_edu attaches the mmapped default export (%d)", e);
	if (e == 0)
		tap_ok(edu_detach(efd, a.id) == 0, "and detaches it");
	if (efd >= 0)
		close(efd);
	munmap(m, size);
	close(fd);
}

/* The PCIe mapping type at 13030: it mmaps, and no importer attaches it. */
static void pcie_export(CUdeviceptr d)
{
	static uint8_t pat[MB];
	struct gdedu_dmabuf_attach a;
	size_t size = MB;
	uint8_t *m;
	int fd, efd, e;

	if (!tap_ok(export(d, size, CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE, &fd) == CUDA_SUCCESS &&
		    fd >= 0, "[13030] the PCIe mapping type is accepted"))
		return;
	fill(pat, size, 0x5a);
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	tap_ok(m != MAP_FAILED && cuMemcpyHtoD(d, pat, size) == 0 && !memcmp(m, pat, size),
	       "[13030] its mmap reads what cuMemcpyHtoD wrote");
	if (m != MAP_FAILED)
		munmap(m, size);
	efd = open(GDEDU_DEVICE, O_RDWR);
	e = efd >= 0 ? edu_attach(efd, fd, &a) : -EBADF;
	tap_ok(e == -ENOTSUPP_, "no importer attaches the PCIe mapping type (not a coherent GPU): errno %d, want 524",
	       -e);
	if (efd >= 0)
		close(efd);
	close(fd);
}

/*
 * The exporter's gate through its ioctl, the library aside: mmap is
 * refused exactly for an export made without NVP2P_EMU_DMABUF_ALLOW_MMAP,
 * whatever the mapping type; unknown flags are EINVAL.
 */
static void raw_gate(void)
{
	static const struct { uint32_t flags; int err; const char *what; } c[] = {
		{ 0, ENOTSUPP_, "flags 0: mmap errno 524" },
		{ NVP2P_EMU_DMABUF_PCIE, ENOTSUPP_, "PCIe type alone: mmap errno 524" },
		{ NVP2P_EMU_DMABUF_ALLOW_MMAP, 0, "ALLOW_MMAP alone: mmap succeeds" },
		{ NVP2P_EMU_DMABUF_PCIE | NVP2P_EMU_DMABUF_ALLOW_MMAP, 0,
		  "PCIe type and ALLOW_MMAP: mmap succeeds" },
	};
	size_t size = 2 * MB;
	int efd = open(NVP2P_EMU_DEVICE, O_RDWR);
	void *va = mmap(NULL, size + 64 * 1024, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct nvp2p_emu_alloc al = { .size = size };
	struct nvp2p_emu_dmabuf req;
	struct nvp2p_emu_free fr;

	al.va = ((uint64_t)(uintptr_t)va + 0xffff) & ~0xffffULL;
	if (!tap_ok(efd >= 0 && va != MAP_FAILED && !ioctl(efd, NVP2P_EMU_IOC_ALLOC, &al),
		    "[ioctl] an allocation of 2 MiB on %s", NVP2P_EMU_DEVICE))
		goto out;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int e = -1;

		req = (struct nvp2p_emu_dmabuf){ .va = al.va, .size = size, .flags = c[i].flags };
		if (!ioctl(efd, NVP2P_EMU_IOC_DMABUF, &req)) {
			e = map_errno(req.fd, size, 0);
			close(req.fd);
		}
		tap_ok(e == c[i].err, "[ioctl] %s (got %d)", c[i].what, e);
	}
	req = (struct nvp2p_emu_dmabuf){ .va = al.va, .size = size, .flags = 1U << 2 };
	tap_ok(ioctl(efd, NVP2P_EMU_IOC_DMABUF, &req) && errno == EINVAL, "[ioctl] flag 4: EINVAL");
	fr.va = al.va;
	tap_ok(!ioctl(efd, NVP2P_EMU_IOC_FREE, &fr), "[ioctl] free");
out:
	if (va != MAP_FAILED)
		munmap(va, size + 64 * 1024);
	if (efd >= 0)
		close(efd);
}

/*
 * cuMemFree while mapped; close and munmap in both orders: the memory
 * stays until the last of them.
 */
static void lifetime(void)
{
	uint64_t used0 = emu_stat_u64("mem_used"), bufs0 = emu_stat_u64("dmabufs");
	CUdeviceptr d, d2;
	uint8_t pat[4096];
	uint8_t *m, *m2;
	int fd, fd2;

	if (!tap_ok(cuMemAlloc(&d, 4 * MB) == 0 && export(d, 2 * MB, 0, &fd) == 0 &&
		    export(d + 2 * MB, 2 * MB, 0, &fd2) == 0,
		    "two default exports of one 4 MiB allocation"))
		return;
	m = mmap(NULL, 2 * MB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	m2 = mmap(NULL, 2 * MB, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, 0);
	if (!tap_ok(m != MAP_FAILED && m2 != MAP_FAILED, "both mmapped"))
		return;
	fill(pat, sizeof(pat), 0x11);
	memcpy(m + 4096, pat, sizeof(pat));
	tap_ok(cuMemFree(d) == 0, "cuMemFree of the mmapped memory succeeds");
	tap_ok(emu_stat_u64("mem_used") == used0 + 4 * MB && emu_stat_u64("dmabufs") == bufs0 + 2,
	       "the memory stays (mem_used +%llu, dmabufs %llu)",
	       (unsigned long long)(emu_stat_u64("mem_used") - used0),
	       (unsigned long long)emu_stat_u64("dmabufs"));
	tap_ok(!memcmp(m + 4096, pat, sizeof(pat)), "and the mapping still reads it");
	tap_ok(cuMemAlloc(&d2, 4 * MB) == 0 && cuMemsetD8(d2, 0, 4 * MB) == 0 &&
	       !memcmp(m + 4096, pat, sizeof(pat)),
	       "a new allocation does not get it: the mapped bytes are intact");
	close(fd);
	tap_ok(emu_stat_u64("mem_used") == used0 + 8 * MB && emu_stat_u64("dmabufs") == bufs0 + 2,
	       "first export: fd closed, still mmapped: the memory stays");
	munmap(m, 2 * MB);
	tap_ok(emu_stat_u64("dmabufs") == bufs0 + 1 && emu_stat_u64("mem_used") == used0 + 8 * MB,
	       "munmapped too: that dma-buf is released; the other holds the allocation");
	munmap(m2, 2 * MB);
	tap_ok(emu_stat_u64("dmabufs") == bufs0 + 1 && emu_stat_u64("mem_used") == used0 + 8 * MB,
	       "second export: munmapped, its fd still open: the memory stays");
	close(fd2);
	tap_ok(emu_stat_u64("dmabufs") == bufs0 && emu_stat_u64("mem_used") == used0 + 4 * MB,
	       "its fd closed: the freed allocation is back");
	tap_ok(cuMemFree(d2) == 0 && emu_stat_u64("mem_used") == used0, "all GPU memory is back");
}

static void at_version(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr d;
	int v = -1, fd = -1, pcie, r;

	if (!tap_ok(cuInit(0) == 0 && cuDeviceGet(&dev, 0) == 0 &&
		    cuDevicePrimaryCtxRetain(&ctx, dev) == 0 && cuCtxSetCurrent(ctx) == 0,
		    "[%d] a CUDA context", version))
		return;
	r = cuDriverGetVersion(&v);
	tap_ok(r == 0 && v == version, "[%d] cuDriverGetVersion: %d", version, v);
	if (!tap_ok(cuMemAlloc(&d, 4 * MB) == 0, "[%d] allocate 4 MiB", version))
		return;
	tap_ok(export(d, 2 * MB, 2, &fd) == CUDA_ERROR_INVALID_VALUE &&
	       export(d, 2 * MB, 3, &fd) == CUDA_ERROR_INVALID_VALUE,
	       "[%d] flags 2 and 3: CUDA_ERROR_INVALID_VALUE", version);
	pcie = export(d, 2 * MB, CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE, &fd);
	if (version == 13000)
		tap_ok(pcie == CUDA_ERROR_NOT_SUPPORTED,
		       "[13000] the PCIe mapping type: CUDA_ERROR_NOT_SUPPORTED (got %d)", pcie);
	else
		tap_ok(pcie == CUDA_SUCCESS && fd >= 0, "[13030] the PCIe mapping type: an fd (got %d)", pcie);
	if (fd >= 0)
		close(fd);
	if (!tap_ok(export(d, 2 * MB, 0, &fd) == 0, "[%d] a default export", version))
		return;
	if (version == 13000) {
		tap_ok(map_errno(fd, 2 * MB, 0) == ENOTSUPP_,
		       "[13000] mmap of a default export: errno 524 (ENOTSUPP)");
		tap_ok(log_has(LOGLINE), "[13000] the kernel log says \"%s\"", LOGLINE);
	} else {
		tap_ok(map_errno(fd, 2 * MB, 0) == 0, "[13030] mmap of a default export succeeds");
	}
	tap_ok(map_errno(fd, 4 * MB, 0) == EINVAL,
	       "[%d] mmap of a default export past its size: EINVAL (the dma-buf core's check)", version);
	close(fd);
	importer(d);
	if (version == 13030) {
		default_mmap(d);
		pcie_export(d);
		lifetime();
	}
	tap_ok(cuMemFree(d) == 0, "[%d] free", version);
}

static int to_child[2], from_child[2];

/*
 * A process with a default export mmapped and its fd closed: 'r' when ready;
 * on 'x' writes and reads the mapping ('y'/'n'); on 'u' munmaps and exits.
 */
static void holder(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr d;
	uint8_t pat[4096];
	uint8_t *m;
	int fd;

	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx) || cuMemAlloc(&d, 2 * MB) || export(d, 2 * MB, 0, &fd))
		goto err;
	m = mmap(NULL, 2 * MB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		goto err;
	close(fd);
	guest_pipe_put(from_child[1], 'r');
	for (;;) {
		switch (guest_pipe_get(to_child[0], 60000)) {
		case 'x':
			fill(pat, sizeof(pat), 0x6b);
			memcpy(m + 8192, pat, sizeof(pat));
			guest_pipe_put(from_child[1], memcmp(m + 8192, pat, sizeof(pat)) ? 'n' : 'y');
			break;
		case 'u':
			munmap(m, 2 * MB);
			_exit(0);
		default:
			_exit(1);
		}
	}
err:
	guest_pipe_fail(from_child[1]);
}

static void unbind_mapped(void)
{
	char bdf[64];
	pid_t h, u;
	int status = -1, waiting;

	if (!tap_ok(!guest_emu_bdf(bdf, sizeof(bdf)) && !pipe(to_child) && !pipe(from_child),
		    "[unbind] emulated GPU bound at %s", bdf))
		return;
	fflush(stdout);
	h = fork();
	if (h == 0)
		holder();
	if (!tap_ok(h > 0 && guest_pipe_get(from_child[0], 30000) == 'r',
		    "[unbind] another process mmaps a default export and closes its fd")) {
		if (h > 0)
			kill(h, SIGKILL);
		return;
	}
	u = fork();
	if (u == 0)
		_exit(guest_write(GUEST_EMU_DRV "unbind", bdf) ? 1 : 0);
	waiting = u > 0 && !guest_exited_within(u, 1500, &status);
	tap_ok(waiting, "[unbind] the unbind waits while the export is mmapped");
	guest_pipe_put(to_child[1], 'x');
	tap_ok(guest_pipe_get(from_child[0], 10000) == 'y', "[unbind] meanwhile the mapping reads and writes");
	guest_pipe_put(to_child[1], 'u');
	waitpid(h, NULL, 0);
	if (waiting && !guest_exited_within(u, 10000, &status)) {
		tap_ok(0, "[unbind] the unbind ends once the mapping goes");
		return;	/* a stuck unbind cannot be undone */
	}
	tap_ok(WIFEXITED(status) && !WEXITSTATUS(status),
	       "[unbind] the unbind ends once the mapping goes (status %#x)", status);
	tap_ok(!guest_write(GUEST_EMU_DRV "bind", bdf), "[unbind] bind again once unused");
}

int main(void)
{
	static const char *const bad[] = { "0", "12000", "13001", "13020", "13030x", "130300", "-13000" };
	char buf[32];
	unsigned int i, refused = 0;

	if (access("/proc/driver/nvp2p_emu", F_OK) == 0)
		tap_skip_all("the proprietary flavour exports no dma-buf");
	tap_ok(emu_stat_u64(KNOB) == 13000, "the knob cuda_version is 13000 by default");
	tap_ok(!guest_read(PARAM, buf, sizeof(buf)) && atoi(buf) == 13000,
	       "so is the module parameter");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refused += emu_knob_set(KNOB, bad[i]) && errno == EINVAL &&
			   guest_write(PARAM, bad[i]) && errno == EINVAL;
	tap_ok(refused == i && emu_stat_u64(KNOB) == 13000,
	       "%u of %u other values refused with EINVAL, knob and parameter", refused, i);

	version = 13000;
	tap_ok(tap_run_child(at_version) == 0, "at 13000: the checks ran to their end");
	if (!tap_ok(emu_knob_set(KNOB, "13030") == 0 && emu_stat_u64(KNOB) == 13030,
		    "the knob takes 13030"))
		return tap_done();
	version = 13030;
	tap_ok(tap_run_child(at_version) == 0, "at 13030: the checks ran to their end");
	raw_gate();
	unbind_mapped();
	tap_ok(emu_knob_set(KNOB, "13000") == 0 && emu_stat_u64(KNOB) == 13000,
	       "back to 13000");
	tap_ok(emu_stat_u64("allocations") == 0 && emu_stat_u64("bar1_used") == 0 &&
	       emu_stat_u64("dmabufs") == 0 && emu_stat_u64("dmabuf_maps") == 0,
	       "nothing left: 0 allocations, 0 BAR1 bytes, 0 dma-bufs, 0 mappings");
	return tap_done();
}
