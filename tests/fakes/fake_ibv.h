/* SPDX-License-Identifier: MIT */
/*
 * fake_ibv.h - a fake of the libibverbs calls libgdirect's verbs cache
 * makes (ibv_reg_mr, ibv_reg_mr_iova2, ibv_reg_dmabuf_mr, ibv_dereg_mr,
 * ibv_get_device_name), for tests linked against the static library: the
 * definitions below take the place of libibverbs' at link time.
 *
 * It has two devices (fibv_dev[0], [1]) with a protection domain each
 * (fibv_pd[0], [1]) and a third domain on device 0 (fibv_pd[2]).  A
 * registration allocates an ibv_mr and counts it; nothing is pinned and
 * nothing is read.  The dma-buf probe (fd -1) answers EBADF while dma-buf
 * is on (the default) and EOPNOTSUPP otherwise; a dma-buf registration
 * checks that its descriptor is open.  A device refuses a registration
 * with ENOMEM while it holds fibv.limit[device] regions (0: no limit).
 * fibv.on_reg, when set, runs inside every registration, before it
 * succeeds: what another thread may do meanwhile.  Everything is under
 * one lock, so that threads may register at once.
 */
#ifndef FAKE_IBV_H
#define FAKE_IBV_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>

struct fibv_state {
	pthread_mutex_t lock;
	unsigned long regs, regs_dmabuf, deregs, probes;
	long live[2];			/* regions held, per device */
	long live_pd[3];		/* regions held, per domain */
	unsigned long limit[2];		/* refuse at this many (0: never) */
	int dmabuf_off;			/* the probe answers EOPNOTSUPP */
	void (*on_reg)(uint64_t addr, uint64_t len);
	unsigned int dereg_delay_us;	/* each ibv_dereg_mr sleeps this long */
	uint32_t keys;
};

static struct fibv_state fibv = { .lock = PTHREAD_MUTEX_INITIALIZER };
static struct ibv_device fibv_dev[2];
static struct ibv_context fibv_ctx[2] = {
	{ .device = &fibv_dev[0] }, { .device = &fibv_dev[1] },
};
static struct ibv_pd fibv_pd[3] = {
	{ .context = &fibv_ctx[0] }, { .context = &fibv_ctx[1] },
	{ .context = &fibv_ctx[0] },
};

static inline int fibv_devi(const struct ibv_pd *pd)
{
	return pd->context == &fibv_ctx[1];
}

static inline void fibv_reset(void)
{
	pthread_mutex_lock(&fibv.lock);
	fibv.regs = fibv.regs_dmabuf = fibv.deregs = fibv.probes = 0;
	memset(fibv.limit, 0, sizeof(fibv.limit));
	fibv.dmabuf_off = 0;
	fibv.on_reg = NULL;
	pthread_mutex_unlock(&fibv.lock);
}

/* Regions registered and not deregistered, on every device. */
static inline long fibv_live(void)
{
	long n;

	pthread_mutex_lock(&fibv.lock);
	n = fibv.live[0] + fibv.live[1];
	pthread_mutex_unlock(&fibv.lock);
	return n;
}

static inline unsigned long fibv_regs(void)
{
	unsigned long n;

	pthread_mutex_lock(&fibv.lock);
	n = fibv.regs + fibv.regs_dmabuf;
	pthread_mutex_unlock(&fibv.lock);
	return n;
}

static struct ibv_mr *fibv_reg(struct ibv_pd *pd, uint64_t addr,
			       size_t length, int access, bool dmabuf)
{
	void (*hook)(uint64_t, uint64_t);
	struct ibv_mr *mr;
	int d = fibv_devi(pd);

	pthread_mutex_lock(&fibv.lock);
	hook = fibv.on_reg;
	pthread_mutex_unlock(&fibv.lock);
	if (hook)
		hook(addr, length);
	pthread_mutex_lock(&fibv.lock);
	if (fibv.limit[d] && (unsigned long)fibv.live[d] >= fibv.limit[d]) {
		pthread_mutex_unlock(&fibv.lock);
		errno = ENOMEM;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		pthread_mutex_unlock(&fibv.lock);
		errno = ENOMEM;
		return NULL;
	}
	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = (void *)(uintptr_t)addr;
	mr->length = length;
	mr->lkey = mr->rkey = ++fibv.keys;
	(void)access;
	if (dmabuf)
		fibv.regs_dmabuf++;
	else
		fibv.regs++;
	fibv.live[d]++;
	fibv.live_pd[pd - fibv_pd]++;
	pthread_mutex_unlock(&fibv.lock);
	return mr;
}

struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
			    int access)
{
	return fibv_reg(pd, (uintptr_t)addr, length, access, false);
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t iova, unsigned int access)
{
	(void)iova;
	return fibv_reg(pd, (uintptr_t)addr, length, (int)access, false);
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				 size_t length, uint64_t iova, int fd,
				 int access)
{
	struct stat st;
	int off;

	(void)offset;
	pthread_mutex_lock(&fibv.lock);
	off = fibv.dmabuf_off;
	if (fd == -1)
		fibv.probes++;
	pthread_mutex_unlock(&fibv.lock);
	if (off) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (fd < 0 || fstat(fd, &st)) {
		errno = EBADF;
		return NULL;
	}
	return fibv_reg(pd, iova, length, access, true);
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	unsigned int us = __atomic_load_n(&fibv.dereg_delay_us, __ATOMIC_RELAXED);

	if (us)
		usleep(us);
	pthread_mutex_lock(&fibv.lock);
	fibv.deregs++;
	fibv.live[fibv_devi(mr->pd)]--;
	fibv.live_pd[mr->pd - fibv_pd]--;
	pthread_mutex_unlock(&fibv.lock);
	free(mr);
	return 0;
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device == &fibv_dev[1] ? "fake1" : "fake0";
}

#endif
