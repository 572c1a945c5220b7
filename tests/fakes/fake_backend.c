/* SPDX-License-Identifier: MIT */
/* fake_backend.c - the fake pinning backend (fake_backend.h has its contract). */
#include "fake_backend.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define DEFAULT_SLOTS 8192
#define MAX_IDS 128

struct fpin {
	bool live;
	bool tainted;		/* memory in range was freed since */
	unsigned nids;
	uint64_t handle, addr, size;
};

struct fake {
	struct gdl_backend b;	/* first: gdl_backend * <-> fake * */
	struct fake_cfg cfg;
	pthread_mutex_t lock;
	uint32_t nslots;
	uint32_t *status;	/* by slot, as gdirect.ko's status page */
	struct fpin *pins;	/* by slot; slot 0 is never used */
	uint64_t *ids;		/* MAX_IDS per slot, with buffer_id_at only */
	uint32_t *free_slots;	/* a stack, low slots on top */
	uint32_t nfree;
	struct gdl_revocation *ev;
	unsigned nev;
	uint64_t next_gen;
	struct fake_stats st;
	_Atomic unsigned in_flight;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Slept, not spun: on a 2-core machine a spinning pin would take the core
 * the other threads are measured on. */
static void cost(uint64_t ns)
{
	struct timespec ts;
	uint64_t t;

	if (!ns)
		return;
	t = now_ns() + ns;
	ts = (struct timespec){ (time_t)(t / 1000000000ull),
				(long)(t % 1000000000ull) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* The slot of a live pin with handle h, or 0; under lock. */
static uint32_t slot_of(struct fake *f, uint64_t h)
{
	uint32_t s = (uint32_t)h;

	return s && s < f->nslots && f->pins[s].live && f->pins[s].handle == h ?
	       s : 0;
}

static bool over_budget(struct fake *f, uint64_t size)
{
	return f->cfg.bar_bytes && f->st.bar_used + size > f->cfg.bar_bytes;
}

static int f_pin(struct gdl_backend *b, uint64_t addr, uint64_t size,
		 struct gdl_pin *out)
{
	struct fake *f = (struct fake *)b;
	uint64_t t0 = now_ns(), pin_ns, ids[MAX_IDS];
	unsigned nids = 0;
	uint32_t slot;

	if (addr & 0xffff || size & 0xffff || !size)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	if (f->cfg.refuse_free && over_budget(f, size)) {
		f->st.enomem++;
		pthread_mutex_unlock(&f->lock);
		return -ENOMEM;
	}
	pin_ns = f->cfg.pin_ns;
	pthread_mutex_unlock(&f->lock);
	atomic_fetch_add(&f->in_flight, 1);
	cost(pin_ns);
	atomic_fetch_sub(&f->in_flight, 1);
	/* Like nvidia_p2p_get_pages: the range must hold live memory. */
	if (f->cfg.buffer_id_at) {
		for (uint64_t a = addr; a < addr + size; a += 0x1000) {
			uint64_t id = f->cfg.buffer_id_at(a);

			if (id && (nids == 0 || ids[nids - 1] != id) &&
			    nids < MAX_IDS)
				ids[nids++] = id;
		}
		if (!nids)
			return -EINVAL;
	}
	pthread_mutex_lock(&f->lock);
	if (over_budget(f, size)) {
		f->st.enomem++;
		pthread_mutex_unlock(&f->lock);
		return -ENOMEM;
	}
	if (!f->nfree) {
		pthread_mutex_unlock(&f->lock);
		return -ENOSPC;
	}
	slot = f->free_slots[--f->nfree];
	struct fpin *p = &f->pins[slot];

	/* The generation keeps a stale handle from naming the slot's next pin. */
	*p = (struct fpin){ .live = true, .nids = nids, .addr = addr, .size = size,
			    .handle = (++f->next_gen << 32) | slot };
	if (f->ids)
		memcpy(&f->ids[(size_t)slot * MAX_IDS], ids, nids * sizeof(ids[0]));
	__atomic_store_n(&f->status[slot], GDL_STATUS_PINNED, __ATOMIC_RELEASE);
	f->st.pins++;
	f->st.live++;
	f->st.pin_ns_total += now_ns() - t0;
	f->st.bar_used += size;
	if (f->st.bar_used > f->st.bar_peak)
		f->st.bar_peak = f->st.bar_used;
	*out = (struct gdl_pin){
		.handle = p->handle, .addr = addr, .size = size,
		.mmap_offset = (uint64_t)slot << 16, .slot = slot,
	};
	pthread_mutex_unlock(&f->lock);
	if (f->cfg.after_pin)
		f->cfg.after_pin(f->cfg.after_pin_arg);
	return 0;
}

static int f_unpin(struct gdl_backend *b, uint64_t handle)
{
	struct fake *f = (struct fake *)b;
	uint64_t unpin_ns;
	uint32_t s;

	if (f->cfg.before_unpin)
		f->cfg.before_unpin(f->cfg.before_unpin_arg);
	pthread_mutex_lock(&f->lock);
	unpin_ns = f->cfg.unpin_ns;
	pthread_mutex_unlock(&f->lock);
	cost(unpin_ns);
	pthread_mutex_lock(&f->lock);
	s = slot_of(f, handle);
	if (!s) {
		f->st.bad_unpins++;
		pthread_mutex_unlock(&f->lock);
		return -EINVAL;
	}
	f->pins[s].live = false;
	f->st.unpins++;
	f->st.live--;
	/* Revoked pins already gave their BAR space back. */
	if (f->status[s] == GDL_STATUS_PINNED)
		f->st.bar_used -= f->pins[s].size;
	__atomic_store_n(&f->status[s], 0, __ATOMIC_RELEASE);
	f->free_slots[f->nfree++] = s;
	pthread_mutex_unlock(&f->lock);
	return 0;
}

/* The fake's "GPU memory" is host memory: the BAR mapping is the memory. */
static void *f_map(struct gdl_backend *b, const struct gdl_pin *p)
{
	struct fake *f = (struct fake *)b;
	void *m;

	if (f->cfg.no_maps) {
		errno = ENOTSUP;
		return NULL;
	}
	if (!f->cfg.real_maps)
		return (void *)(uintptr_t)p->addr;
	m = mmap(NULL, p->size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	madvise(m, p->size, MADV_DONTFORK);
	return m;
}

static void f_unmap(struct gdl_backend *b, void *addr, size_t len)
{
	struct fake *f = (struct fake *)b;

	if (f->cfg.real_maps)
		munmap(addr, len);
}

static int f_read_events(struct gdl_backend *b, struct gdl_revocation *ev,
			 int max)
{
	struct fake *f = (struct fake *)b;
	int n;

	pthread_mutex_lock(&f->lock);
	n = (int)f->nev < max ? (int)f->nev : max;
	memcpy(ev, f->ev, n * sizeof(*ev));
	memmove(f->ev, f->ev + n, (f->nev - n) * sizeof(*ev));
	f->nev -= n;
	pthread_mutex_unlock(&f->lock);
	return n;
}

void fake_backend_free(struct gdl_backend *b)
{
	struct fake *f = (struct fake *)b;

	if (!f)
		return;
	if (f->cfg.set_free_listener)
		f->cfg.set_free_listener(NULL, NULL);
	pthread_mutex_destroy(&f->lock);
	free(f->status);
	free(f->pins);
	free(f->ids);
	free(f->free_slots);
	free(f->ev);
	free(f);
}

static void f_destroy(struct gdl_backend *b)
{
	struct fake *f = (struct fake *)b;

	if (f->cfg.shared)
		return;
	/* Every test checks this: a context unpins everything it pinned. */
	if (f->st.live || f->st.bad_unpins) {
		fprintf(stderr, "fake backend: %lu pins left, %lu bad unpins\n",
			f->st.live, f->st.bad_unpins);
		abort();
	}
	fake_backend_free(b);
}

static const struct gdl_backend_ops fake_ops = {
	.name = "fake",
	.pin = f_pin,
	.unpin = f_unpin,
	.map = f_map,
	.unmap = f_unmap,
	.read_events = f_read_events,
	.destroy = f_destroy,
};

int fake_backend_revoke(struct gdl_backend *b, uint64_t addr, uint64_t len)
{
	struct fake *f = (struct fake *)b;
	int n = 0;

	pthread_mutex_lock(&f->lock);
	for (uint32_t i = 1; i < f->nslots; i++) {
		struct fpin *p = &f->pins[i];

		if (!p->live || f->status[i] != GDL_STATUS_PINNED ||
		    p->addr >= addr + len || addr >= p->addr + p->size)
			continue;
		__atomic_store_n(&f->status[i], GDL_STATUS_REVOKED,
				 __ATOMIC_RELEASE);
		f->st.bar_used -= p->size;
		f->ev[f->nev++] = (struct gdl_revocation){ p->handle, p->addr,
							  p->size, i };
		n++;
	}
	pthread_mutex_unlock(&f->lock);
	return n;
}

static void on_free(uint64_t base, uint64_t size, void *arg)
{
	struct fake *f = arg;

	pthread_mutex_lock(&f->lock);
	for (uint32_t i = 1; i < f->nslots; i++) {
		struct fpin *p = &f->pins[i];

		if (p->live && p->addr < base + size && base < p->addr + p->size)
			p->tainted = true;
	}
	pthread_mutex_unlock(&f->lock);
	if (f->cfg.revoke_on_free)
		fake_backend_revoke(&f->b, base, size);
}

struct gdl_backend *fake_backend_new(const struct fake_cfg *cfg)
{
	struct fake *f = calloc(1, sizeof(*f));
	uint32_t n = cfg->nslots ? cfg->nslots : DEFAULT_SLOTS;

	if (!f)
		return NULL;
	f->cfg = *cfg;
	f->nslots = n;
	pthread_mutex_init(&f->lock, NULL);
	f->status = calloc(n, sizeof(*f->status));
	f->pins = calloc(n, sizeof(*f->pins));
	f->free_slots = calloc(n, sizeof(*f->free_slots));
	f->ev = calloc(n, sizeof(*f->ev));
	if (cfg->buffer_id_at)
		f->ids = calloc((size_t)n * MAX_IDS, sizeof(*f->ids));
	if (!f->status || !f->pins || !f->free_slots || !f->ev ||
	    (cfg->buffer_id_at && !f->ids)) {
		f->cfg.set_free_listener = NULL;
		fake_backend_free(&f->b);
		return NULL;
	}
	for (uint32_t i = 1; i < n; i++)
		f->free_slots[f->nfree++] = n - i;
	f->b.ops = &fake_ops;
	f->b.status = f->status;
	f->b.nslots = n;
	f->b.event_fd = -1;
	f->b.persistent = cfg->persistent;
	if (cfg->set_free_listener)
		cfg->set_free_listener(on_free, f);
	return &f->b;
}

void fake_backend_stats(struct gdl_backend *b, struct fake_stats *st)
{
	struct fake *f = (struct fake *)b;

	pthread_mutex_lock(&f->lock);
	*st = f->st;
	pthread_mutex_unlock(&f->lock);
}

void fake_backend_reset_stats(struct gdl_backend *b)
{
	struct fake *f = (struct fake *)b;

	pthread_mutex_lock(&f->lock);
	f->st.pins = f->st.unpins = f->st.enomem = 0;
	f->st.pin_ns_total = 0;
	f->st.bar_peak = f->st.bar_used;
	pthread_mutex_unlock(&f->lock);
}

void fake_backend_set_costs(struct gdl_backend *b, uint64_t pin_ns,
			    uint64_t unpin_ns)
{
	struct fake *f = (struct fake *)b;

	pthread_mutex_lock(&f->lock);
	f->cfg.pin_ns = pin_ns;
	f->cfg.unpin_ns = unpin_ns;
	pthread_mutex_unlock(&f->lock);
}

void fake_backend_set_budget(struct gdl_backend *b, uint64_t bar_bytes)
{
	struct fake *f = (struct fake *)b;

	pthread_mutex_lock(&f->lock);
	f->cfg.bar_bytes = bar_bytes;
	pthread_mutex_unlock(&f->lock);
}

unsigned fake_backend_pins_in_flight(struct gdl_backend *b)
{
	return atomic_load(&((struct fake *)b)->in_flight);
}

bool fake_backend_pin_covers(struct gdl_backend *b, uint64_t h, uint64_t id)
{
	struct fake *f = (struct fake *)b;
	bool yes = false;
	uint32_t s;

	pthread_mutex_lock(&f->lock);
	s = slot_of(f, h);
	for (unsigned k = 0; s && f->ids && k < f->pins[s].nids; k++)
		yes |= f->ids[(size_t)s * MAX_IDS + k] == id;
	pthread_mutex_unlock(&f->lock);
	return yes;
}

bool fake_backend_pin_fresh(struct gdl_backend *b, uint64_t h, uint64_t a)
{
	struct fake *f = (struct fake *)b;
	bool yes = false;
	uint32_t s;

	pthread_mutex_lock(&f->lock);
	s = slot_of(f, h);
	if (s)
		yes = !f->pins[s].tainted && f->pins[s].addr <= a &&
		      a < f->pins[s].addr + f->pins[s].size;
	pthread_mutex_unlock(&f->lock);
	return yes && f->cfg.buffer_id_at && f->cfg.buffer_id_at(a) != 0;
}
