// SPDX-License-Identifier: MIT
/*
 * educap.c - pins a peer driver makes for a user count
 * against that user's cap: with max_pins_per_user=USER_CAP, gdirect_edu
 * (whose cache would hold 8) pins USER_CAP ranges for this process, and
 * the next pin, the next transfer to an uncached range and a pin of the
 * process's own on /dev/gdirect all fail with EDQUOT; an unpin or a close
 * of the edu file gives the count back.  Flags gdirect_edu does not know
 * are EINVAL.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "gdirect_edu.h"
#include "gdt.h"

#define USER_CAP	4

static int efd;

static int kpin(uint64_t addr, uint32_t flags)
{
	struct gdedu_pin p = { .gpu_addr = addr, .size = GDT_KB64,
			       .flags = flags };

	return ioctl(efd, GDEDU_IOC_PIN, &p) ? -errno : 0;
}

static int kunpin(uint64_t addr)
{
	struct gdedu_unpin u = { .gpu_addr = addr };

	return ioctl(efd, GDEDU_IOC_UNPIN, &u) ? -errno : 0;
}

static int xfer(uint64_t gpu, void *buf, size_t len)
{
	struct gdedu_xfer x = { .gpu_addr = gpu, .buf = (uintptr_t)buf,
				.size = len, .dir = GDEDU_TO_GPU };

	return ioctl(efd, GDEDU_IOC_XFER, &x) ? -errno : 0;
}

static void body(void)
{
	struct gdirect_pin p;
	uint8_t data[16] = { 1, 2, 3 };
	CUdeviceptr buf;
	int n = 0, gfd, ret;

	if (!tap_ok(gdt_cuda_init() == 0, "CUDA context"))
		return;
	buf = gdt_alloc(8 * GDT_KB64);
	efd = open(GDEDU_DEVICE, O_RDWR);
	gfd = open("/dev/gdirect", O_RDWR);
	if (!tap_ok(buf && efd >= 0 && gfd >= 0,
		    "allocate, open " GDEDU_DEVICE " and /dev/gdirect"))
		return;

	ret = kpin(buf, 1U << 1);
	tap_ok(ret == -EINVAL, "a pin flag gdirect_edu does not know: EINVAL (%d)",
	       ret);
	while (n < USER_CAP + 1 && !kpin(buf + n * GDT_KB64, 0))
		n++;
	tap_ok(n == USER_CAP, "%d pins through gdirect_edu (max_pins_per_user=%d)",
	       n, USER_CAP);
	ret = kpin(buf + 6 * GDT_KB64, 0);
	tap_ok(ret == -EDQUOT, "one more through gdirect_edu: EDQUOT (%d)", ret);
	ret = xfer(buf + 7 * GDT_KB64, data, sizeof(data));
	tap_ok(ret == -EDQUOT, "a transfer that must pin: EDQUOT (%d)", ret);
	ret = gdt_pin(gfd, buf, GDT_KB64, 0, NULL);
	tap_ok(ret == -EDQUOT,
	       "a pin on /dev/gdirect counts with them: EDQUOT (%d)", ret);
	ret = kunpin(buf);
	tap_ok(!ret && !gdt_pin(gfd, buf, GDT_KB64, 0, &p),
	       "an unpin through gdirect_edu makes room (%d)", ret);
	tap_ok(!gdt_unpin(gfd, p.handle), "unpin it on /dev/gdirect");
	close(efd);
	n = 0;
	for (int i = 0; i < USER_CAP; i++)
		n += !gdt_pin(gfd, buf, GDT_KB64, 0, NULL);
	tap_ok(n == USER_CAP, "closing the edu file gives its pins back (%d)", n);
	close(gfd);
	gdt_free(buf);
}

int main(void)
{
	return gdt_main("max_pins_per_user=4", 1, body);	/* USER_CAP */
}
