/* SPDX-License-Identifier: MIT */
/*
 * nvp2p_selftest_calls.h - user space's calls of nvp2p_selftest.ko's
 * ioctls (nvp2p_selftest.h), for the guest programs that drive it.
 *
 * Each takes the open /dev/nvp2p_selftest and returns what the nv-p2p call
 * in the kernel returned (.ret), or -errno * 1000 when the ioctl itself
 * failed, so that the two can never be taken for each other.
 * st_call_info() returns the slot's state (all zero past .slot if the
 * ioctl failed).
 */
#ifndef NVP2P_SELFTEST_CALLS_H
#define NVP2P_SELFTEST_CALLS_H

#include <errno.h>
#include <stdint.h>
#include <sys/ioctl.h>

#include "nvp2p_selftest.h"

static inline int st_call_pin(int fd, struct st_pin p)
{
	if (ioctl(fd, ST_IOC_PIN, &p))
		return -errno * 1000;
	return p.ret;
}

static inline int st_call_put(int fd, struct st_put p)
{
	if (ioctl(fd, ST_IOC_PUT, &p))
		return -errno * 1000;
	return p.ret;
}

static inline struct st_slot_info st_call_info(int fd, uint32_t slot)
{
	struct st_slot_info i = { .slot = slot };

	if (ioctl(fd, ST_IOC_INFO, &i))
		i = (struct st_slot_info){ .slot = slot };
	return i;
}

/* @cmd: ST_IOC_DMA_MAP or ST_IOC_DMA_UNMAP. */
static inline int st_call_dma(int fd, unsigned long cmd, uint32_t slot,
			      uint32_t mode)
{
	struct st_dma d = { .slot = slot, .mode = mode };

	if (ioctl(fd, cmd, &d))
		return -errno * 1000;
	return d.ret;
}

/* edu writes st_pattern(@seed, i) to @len bytes at @off of the slot's pin. */
static inline int st_call_edu(int fd, uint32_t slot, uint64_t off,
			      uint32_t len, uint32_t seed)
{
	struct st_edu e = { .slot = slot, .offset = off, .len = len,
			    .seed = seed };

	if (ioctl(fd, ST_IOC_EDU, &e))
		return -errno * 1000;
	return e.ret;
}

static inline int st_call_misc(int fd, uint32_t which)
{
	struct st_misc m = { .which = which };

	if (ioctl(fd, ST_IOC_MISC, &m))
		return -errno * 1000;
	return m.ret;
}

#endif /* NVP2P_SELFTEST_CALLS_H */
