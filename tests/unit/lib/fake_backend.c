/* SPDX-License-Identifier: MIT */
#include "fake_backend.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_cuda.h"

#define NSLOTS 8192
#define MAX_IDS 128

struct fpin {
	bool live;
	uint64_t handle, addr, size;
	uint64_t ids[MAX_IDS];	/* allocations covered when pinned */
	unsigned nids;
	bool tainted;		/* memory in range was freed since */
};

struct fake {
	struct gd_backend b;
	struct fake_cfg cfg;
	pthread_mutex_t lock;
	uint32_t status[NSLOTS];
	struct fpin pins[NSLOTS];	/* by slot */
	struct gd_revocation ev[NSLOTS];
	unsigned nev;
	uint64_t next_handle;
	struct fake_stats st;
};

static int f_pin(struct gd_backend *b, uint64_t addr, uint64_t size,
		 struct gd_pin *out)
{
	struct fake *f = (struct fake *)b;
	int slot = -1;

	if (addr & 0xffff || size & 0xffff || !size)
		return -EINVAL;
	if (f->cfg.pin_delay_us)
		usleep(f->cfg.pin_delay_us);
	/* Like nvidia_p2p_get_pages: the range must hold live memory. */
	uint64_t ids[MAX_IDS];
	unsigned nids = 0;

	for (uint64_t a = addr; a < addr + size; a += 0x1000) {
		uint64_t id = fake_cuda_buffer_id_at(a);

		if (id && (nids == 0 || ids[nids - 1] != id) && nids < MAX_IDS)
			ids[nids++] = id;
	}
	if (!nids)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	if (f->cfg.bar_bytes && f->st.bar_used + size > f->cfg.bar_bytes) {
		f->st.enomem++;
		pthread_mutex_unlock(&f->lock);
		return -ENOMEM;
	}
	for (int i = 1; i < NSLOTS; i++)
		if (!f->pins[i].live && f->status[i] == 0) {
			slot = i;
			break;
		}
	if (slot < 0) {
		pthread_mutex_unlock(&f->lock);
		return -ENOSPC;
	}
	struct fpin *p = &f->pins[slot];

	p->live = true;
	p->handle = ++f->next_handle;
	p->addr = addr;
	p->size = size;
	memcpy(p->ids, ids, sizeof(ids));
	p->nids = nids;
	p->tainted = false;
	__atomic_store_n(&f->status[slot], GD_STATUS_PINNED, __ATOMIC_RELEASE);
	f->st.pins++;
	f->st.live++;
	f->st.bar_used += size;
	if (f->st.bar_used > f->st.bar_peak)
		f->st.bar_peak = f->st.bar_used;
	out->handle = p->handle;
	out->addr = addr;
	out->size = size;
	out->mmap_offset = (uint64_t)slot << 16;
	out->slot = slot;
	pthread_mutex_unlock(&f->lock);
	if (f->cfg.after_pin)
		f->cfg.after_pin(f->cfg.after_pin_arg);
	return 0;
}

static int f_unpin(struct gd_backend *b, uint64_t handle)
{
	struct fake *f = (struct fake *)b;

	if (f->cfg.before_unpin)
		f->cfg.before_unpin(f->cfg.before_unpin_arg);
	pthread_mutex_lock(&f->lock);
	for (int i = 1; i < NSLOTS; i++) {
		struct fpin *p = &f->pins[i];

		if (p->live && p->handle == handle) {
			p->live = false;
			f->st.unpins++;
			f->st.live--;
			/* Revoked pins already gave their BAR space back. */
			if (f->status[i] == GD_STATUS_PINNED)
				f->st.bar_used -= p->size;
			__atomic_store_n(&f->status[i], 0, __ATOMIC_RELEASE);
			pthread_mutex_unlock(&f->lock);
			return 0;
		}
	}
	f->st.bad_unpins++;
	pthread_mutex_unlock(&f->lock);
	return -EINVAL;
}

/* The fake's "GPU memory" is host memory: the BAR mapping is the memory. */
static void *f_map(struct gd_backend *b, const struct gd_pin *p)
{
	struct fake *f = (struct fake *)b;
	void *m;

	if (!f->cfg.real_maps)
		return (void *)(uintptr_t)p->addr;
	m = mmap(NULL, p->size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	madvise(m, p->size, MADV_DONTFORK);
	return m;
}

static void f_unmap(struct gd_backend *b, void *addr, size_t len)
{
	struct fake *f = (struct fake *)b;

	if (f->cfg.real_maps)
		munmap(addr, len);
}

static int f_read_events(struct gd_backend *b, struct gd_revocation *ev, int max)
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

static void f_destroy(struct gd_backend *b)
{
	struct fake *f = (struct fake *)b;

	fake_cuda_set_free_listener(NULL, NULL);
	/* Every test checks this: a context unpins everything it pinned. */
	if (f->st.live || f->st.bad_unpins) {
		fprintf(stderr, "fake backend: %lu pins left, %lu bad unpins\n",
			f->st.live, f->st.bad_unpins);
		abort();
	}
	pthread_mutex_destroy(&f->lock);
	free(f);
}

static const struct gd_backend_ops fake_ops = {
	.name = "fake",
	.pin = f_pin,
	.unpin = f_unpin,
	.map = f_map,
	.unmap = f_unmap,
	.read_events = f_read_events,
	.destroy = f_destroy,
};

int fake_backend_revoke(struct gd_backend *b, uint64_t addr, uint64_t len)
{
	struct fake *f = (struct fake *)b;
	int n = 0;

	pthread_mutex_lock(&f->lock);
	for (int i = 1; i < NSLOTS; i++) {
		struct fpin *p = &f->pins[i];

		if (!p->live || f->status[i] != GD_STATUS_PINNED ||
		    p->addr >= addr + len || addr >= p->addr + p->size)
			continue;
		__atomic_store_n(&f->status[i], GD_STATUS_REVOKED,
				 __ATOMIC_RELEASE);
		f->st.bar_used -= p->size;
		f->ev[f->nev++] = (struct gd_revocation){ p->handle, p->addr,
							  p->size, (uint32_t)i };
		n++;
	}
	pthread_mutex_unlock(&f->lock);
	return n;
}

static void on_free(uint64_t base, uint64_t size, void *arg)
{
	struct fake *f = arg;

	pthread_mutex_lock(&f->lock);
	for (int i = 1; i < NSLOTS; i++) {
		struct fpin *p = &f->pins[i];

		if (p->live && p->addr < base + size && base < p->addr + p->size)
			p->tainted = true;
	}
	pthread_mutex_unlock(&f->lock);
	if (f->cfg.revoke_on_free)
		fake_backend_revoke(&f->b, base, size);
}

struct gd_backend *fake_backend_new(const struct fake_cfg *cfg)
{
	struct fake *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->cfg = *cfg;
	pthread_mutex_init(&f->lock, NULL);
	f->b.ops = &fake_ops;
	f->b.status = f->status;
	f->b.nslots = NSLOTS;
	f->b.event_fd = -1;
	f->b.persistent = cfg->persistent;
	fake_cuda_set_free_listener(on_free, f);
	return &f->b;
}

void fake_backend_stats(struct gd_backend *b, struct fake_stats *st)
{
	struct fake *f = (struct fake *)b;

	pthread_mutex_lock(&f->lock);
	*st = f->st;
	pthread_mutex_unlock(&f->lock);
}

bool fake_backend_pin_covers(struct gd_backend *b, uint64_t h, uint64_t id)
{
	struct fake *f = (struct fake *)b;
	bool yes = false;

	pthread_mutex_lock(&f->lock);
	for (int i = 1; i < NSLOTS && !yes; i++)
		if (f->pins[i].live && f->pins[i].handle == h)
			for (unsigned k = 0; k < f->pins[i].nids; k++)
				yes |= f->pins[i].ids[k] == id;
	pthread_mutex_unlock(&f->lock);
	return yes;
}


bool fake_backend_pin_fresh(struct gd_backend *b, uint64_t h, uint64_t a)
{
	struct fake *f = (struct fake *)b;
	bool yes = false;

	pthread_mutex_lock(&f->lock);
	for (int i = 1; i < NSLOTS; i++) {
		struct fpin *p = &f->pins[i];

		if (p->live && p->handle == h)
			yes = !p->tainted && p->addr <= a && a < p->addr + p->size;
	}
	pthread_mutex_unlock(&f->lock);
	return yes && fake_cuda_buffer_id_at(a) != 0;
}
