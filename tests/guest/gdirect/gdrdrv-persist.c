// SPDX-License-Identifier: MIT
/*
 * gdrdrv-persist.c - /dev/gdrdrv with use_persistent=1 and
 * dev_mode=0600: GET_ATTR says persistent, tokens are refused as gdrdrv
 * refuses them, a pin survives cuMemFree and its flag is never set.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gdrdrv.h"
#include "gdt.h"

static void persistent(void)
{
	struct GDRDRV_IOC_PIN_BUFFER_PARAMS p = { 0 };
	struct GDRDRV_IOC_GET_CB_FLAG_PARAMS cb = { 0 };
	struct GDRDRV_IOC_GET_ATTR_PARAMS a = {
		.attr = GDRDRV_ATTR_USE_PERSISTENT_MAPPING };
	struct GDRDRV_IOC_UNPIN_BUFFER_PARAMS u;
	struct stat st = { 0 };
	volatile uint32_t *m;
	CUdeviceptr buf;
	int fd;

	tap_ok(stat("/dev/gdrdrv", &st) == 0 && (st.st_mode & 0777) == 0600,
	       "dev_mode=0600: /dev/gdrdrv mode %o", st.st_mode & 0777);
	if (!tap_ok(gdt_cuda_init() == 0, "CUDA context"))
		return;
	fd = open("/dev/gdrdrv", O_RDWR);
	buf = gdt_alloc(GDT_KB64);
	tap_ok(!ioctl(fd, GDRDRV_IOC_GET_ATTR, &a) && a.val == 1,
	       "GET_ATTR USE_PERSISTENT_MAPPING 1");
	p.addr = buf;
	p.size = GDT_KB64;
	p.p2p_token = 1;
	tap_errno(ioctl(fd, GDRDRV_IOC_PIN_BUFFER, &p), EINVAL,
		  "PIN_BUFFER with a token in persistent mode");
	p.p2p_token = 0;
	p.va_space = 1;
	tap_errno(ioctl(fd, GDRDRV_IOC_PIN_BUFFER, &p), EINVAL,
		  "PIN_BUFFER with a va_space in persistent mode");
	p.va_space = 0;
	if (!tap_ok(!ioctl(fd, GDRDRV_IOC_PIN_BUFFER, &p), "token-less PIN"))
		return;
	cuMemsetD8(buf, 0x22, GDT_KB64);
	m = mmap(NULL, GDT_KB64, PROT_READ, MAP_SHARED, fd, p.handle * 4096);
	gdt_free(buf);
	cb.handle = p.handle;
	tap_ok(!ioctl(fd, GDRDRV_IOC_GET_CB_FLAG, &cb) && cb.flag == 0,
	       "cuMemFree: flag stays 0 (persistent)");
	tap_ok(m != MAP_FAILED && !gdt_faults(m, 0) && m[3] == 0x22222222,
	       "the mapping stays readable");
	if (m != MAP_FAILED)
		munmap((void *)m, GDT_KB64);
	u.handle = p.handle;
	tap_ok(!ioctl(fd, GDRDRV_IOC_UNPIN_BUFFER, &u) && gdt_quiet(),
	       "UNPIN releases the persistent pin");
	close(fd);
}

int main(void)
{
	return gdt_main("use_persistent=1 dev_mode=0600", 0, persistent);
}
