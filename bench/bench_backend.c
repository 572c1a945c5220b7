/* SPDX-License-Identifier: MIT */
#include "bench_backend.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

/* libgdirect's internal backend contract (lib/src/pin_backend.h). */
#include "../lib/src/pin_backend.h"

/* Enough for the largest benchmark (65536 regions) several times over. */
#define NSLOTS (1u << 18)

struct slot {
	uint64_t addr, size;
};

struct tb {
	struct gd_backend gd;		/* first: gd_backend * <-> tb * */
	pthread_mutex_t lock;
	struct tb_cfg cfg;
	struct tb_counters st;
	uint32_t *status;		/* per slot, as gdirect.ko's status page */
	struct slot *slots;
	uint32_t *free_slots;		/* stack */
	uint32_t nfree;
	_Atomic unsigned in_flight;
};

uint64_t tb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void tb_sleep_until(uint64_t t_ns)
{
	struct timespec ts = { (time_t)(t_ns / 1000000000ull),
			       (long)(t_ns % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void cost(uint64_t ns)
{
	if (ns)
		tb_sleep_until(tb_now_ns() + ns);
}

int tb_pin(struct tb *t, uint64_t addr, uint64_t size, uint64_t *handle)
{
	uint64_t t0 = tb_now_ns(), pin_ns;
	uint32_t s;

	pthread_mutex_lock(&t->lock);
	if (t->cfg.refuse_free && t->cfg.bar_bytes &&
	    t->st.bar_used + size > t->cfg.bar_bytes) {
		t->st.enomem++;
		pthread_mutex_unlock(&t->lock);
		return -ENOMEM;
	}
	pin_ns = t->cfg.pin_ns;
	pthread_mutex_unlock(&t->lock);
	atomic_fetch_add(&t->in_flight, 1);
	cost(pin_ns);
	atomic_fetch_sub(&t->in_flight, 1);

	pthread_mutex_lock(&t->lock);
	if (t->cfg.bar_bytes && t->st.bar_used + size > t->cfg.bar_bytes) {
		t->st.enomem++;
		pthread_mutex_unlock(&t->lock);
		return -ENOMEM;
	}
	if (!t->nfree) {
		pthread_mutex_unlock(&t->lock);
		return -ENOSPC;
	}
	s = t->free_slots[--t->nfree];
	t->slots[s] = (struct slot){ addr, size };
	__atomic_store_n(&t->status[s], GD_STATUS_PINNED, __ATOMIC_RELEASE);
	t->st.pins++;
	t->st.live++;
	t->st.pin_ns_total += tb_now_ns() - t0;
	t->st.bar_used += size;
	if (t->st.bar_used > t->st.bar_peak)
		t->st.bar_peak = t->st.bar_used;
	pthread_mutex_unlock(&t->lock);
	*handle = (uint64_t)s + 1;
	return 0;
}

int tb_unpin(struct tb *t, uint64_t handle)
{
	uint32_t s = (uint32_t)(handle - 1);
	uint64_t unpin_ns;

	if (handle == 0 || handle > NSLOTS)
		return -EINVAL;
	pthread_mutex_lock(&t->lock);
	if (t->status[s] != GD_STATUS_PINNED) {
		pthread_mutex_unlock(&t->lock);
		return -EINVAL;
	}
	unpin_ns = t->cfg.unpin_ns;
	pthread_mutex_unlock(&t->lock);
	cost(unpin_ns);
	pthread_mutex_lock(&t->lock);
	__atomic_store_n(&t->status[s], 0, __ATOMIC_RELEASE);
	t->st.bar_used -= t->slots[s].size;
	t->st.unpins++;
	t->st.live--;
	t->free_slots[t->nfree++] = s;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

void tb_set_costs(struct tb *t, uint64_t pin_ns, uint64_t unpin_ns)
{
	pthread_mutex_lock(&t->lock);
	t->cfg.pin_ns = pin_ns;
	t->cfg.unpin_ns = unpin_ns;
	pthread_mutex_unlock(&t->lock);
}

void tb_set_budget(struct tb *t, uint64_t bar_bytes)
{
	pthread_mutex_lock(&t->lock);
	t->cfg.bar_bytes = bar_bytes;
	pthread_mutex_unlock(&t->lock);
}

void tb_counters(struct tb *t, struct tb_counters *c)
{
	pthread_mutex_lock(&t->lock);
	*c = t->st;
	pthread_mutex_unlock(&t->lock);
}

void tb_reset_counters(struct tb *t)
{
	pthread_mutex_lock(&t->lock);
	t->st.pins = t->st.unpins = t->st.enomem = t->st.pin_ns_total = 0;
	t->st.bar_peak = t->st.bar_used;
	pthread_mutex_unlock(&t->lock);
}

unsigned tb_pins_in_flight(struct tb *t)
{
	return atomic_load(&t->in_flight);
}

/* ---- as libgdirect's pinning backend ------------------------------------ */

static int gd_pin(struct gd_backend *b, uint64_t addr, uint64_t size,
		  struct gd_pin *out)
{
	uint64_t h;
	int rc = tb_pin((struct tb *)b, addr, size, &h);

	if (rc)
		return rc;
	*out = (struct gd_pin){ .handle = h, .addr = addr, .size = size,
				.mmap_offset = (h - 1) << 16,
				.slot = (uint32_t)(h - 1) };
	return 0;
}

static int gd_unpin(struct gd_backend *b, uint64_t handle)
{
	return tb_unpin((struct tb *)b, handle);
}

static void *gd_map(struct gd_backend *b, const struct gd_pin *p)
{
	(void)b;
	(void)p;
	errno = ENOTSUP;	/* the benchmark never copies */
	return NULL;
}

static void gd_unmap(struct gd_backend *b, void *addr, size_t len)
{
	(void)b;
	(void)addr;
	(void)len;
}

static int gd_read_events(struct gd_backend *b, struct gd_revocation *ev,
			  int max)
{
	(void)b;
	(void)ev;
	(void)max;
	return 0;	/* nothing is ever revoked here */
}

static void gd_destroy(struct gd_backend *b)
{
	(void)b;	/* owned by the benchmark: tb_free() */
}

static const struct gd_backend_ops tb_gd_ops = {
	.name = "bench",
	.pin = gd_pin,
	.unpin = gd_unpin,
	.map = gd_map,
	.unmap = gd_unmap,
	.read_events = gd_read_events,
	.destroy = gd_destroy,
};

struct gd_backend *tb_gd_backend(struct tb *t)
{
	return &t->gd;
}

/* ---- life ---------------------------------------------------------------- */

struct tb *tb_new(const struct tb_cfg *cfg)
{
	struct tb *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->status = calloc(NSLOTS, sizeof(*t->status));
	t->slots = calloc(NSLOTS, sizeof(*t->slots));
	t->free_slots = calloc(NSLOTS, sizeof(*t->free_slots));
	if (!t->status || !t->slots || !t->free_slots) {
		tb_free(t);
		return NULL;
	}
	/* Low slots on top of the stack: a small run touches few pages. */
	for (uint32_t i = 0; i < NSLOTS; i++)
		t->free_slots[i] = NSLOTS - 1 - i;
	t->nfree = NSLOTS;
	t->cfg = *cfg;
	pthread_mutex_init(&t->lock, NULL);
	t->gd.ops = &tb_gd_ops;
	t->gd.status = t->status;
	t->gd.nslots = NSLOTS;
	t->gd.event_fd = -1;
	return t;
}

void tb_free(struct tb *t)
{
	if (!t)
		return;
	free(t->status);
	free(t->slots);
	free(t->free_slots);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
