// SPDX-License-Identifier: MIT
/*
 * threads.c - one gdr_t used by several threads at once (TAP;
 * suites unit and tsan).  gdrcopy's library is not thread-safe; ours
 * keeps its list of pins under a lock.  The library's own code runs here,
 * linked statically, over a fake backend: pins are counted, and mappings
 * are mmaps of a memfd, so map, copy and unmap do real work.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gdrapi_internal.h"
#include "tap.h"

#define THREADS 8
#define ROUNDS 200
#define KB64 (64UL << 10)

static atomic_long pinned, unpinned, next_handle = 1;

static int f_pin(struct gdr *g, struct gdr_memh *m, unsigned long addr,
		 size_t size, uint64_t token, uint32_t va_space, uint32_t flags)
{
	(void)g; (void)token; (void)va_space; (void)flags;
	m->khandle = (uint64_t)atomic_fetch_add(&next_handle, 1);
	m->va = addr & ~(KB64 - 1);
	m->size = ((addr + size + KB64 - 1) & ~(KB64 - 1)) - m->va;
	m->mmap_offset = 0;
	atomic_fetch_add(&pinned, 1);
	return 0;
}

static int f_unpin(struct gdr *g, struct gdr_memh *m)
{
	(void)g; (void)m;
	atomic_fetch_add(&unpinned, 1);
	return 0;
}

static int f_cb_flag(struct gdr *g, struct gdr_memh *m, int *flag)
{
	(void)g; (void)m;
	*flag = 0;
	return 0;
}

static int f_map_type(struct gdr *g, struct gdr_memh *m, int flags,
		      gdr_mapping_type_t *type)
{
	(void)g; (void)m; (void)flags;
	*type = GDR_MAPPING_TYPE_WC;
	return 0;
}

static int f_version(struct gdr *g, int *major, int *minor)
{
	(void)g;
	*major = 2;
	*minor = 6;
	return 0;
}

static int f_attr(struct gdr *g, gdr_attr_t a, int *v)
{
	(void)g; (void)a;
	*v = 0;
	return 0;
}

static void f_close(struct gdr *g)
{
	close(g->fd);
}

static const struct gdr_backend_ops fake_ops = {
	.name = "fake", .pin = f_pin, .unpin = f_unpin, .cb_flag = f_cb_flag,
	.map_type = f_map_type, .driver_version = f_version, .attr = f_attr,
	.close = f_close,
};

struct worker {
	gdr_t g;
	int id, bad;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	unsigned char out[100], in[100];

	for (int r = 0; r < ROUNDS; r++) {
		unsigned long addr = 0x100000000UL + ((unsigned long)w->id * ROUNDS + r) * KB64 + 12;
		gdr_info_t info;
		gdr_mh_t mh;
		void *map;
		int flag;

		if (gdr_pin_buffer(w->g, addr, 100, 0, 0, &mh)) {
			w->bad++;
			continue;
		}
		w->bad += gdr_get_info(w->g, mh, &info) != 0 || info.va != (addr & ~(KB64 - 1));
		w->bad += gdr_get_callback_flag(w->g, mh, &flag) != 0 || flag != 0;
		if (gdr_map(w->g, mh, &map, KB64) == 0) {
			/* Each thread its own 100 bytes of the shared memfd. */
			char *p = (char *)map + w->id * 128;

			memset(out, w->id + r, sizeof(out));
			w->bad += gdr_copy_to_mapping(mh, p, out, sizeof(out)) != 0;
			w->bad += gdr_copy_from_mapping(mh, in, p, sizeof(in)) != 0 ||
				  memcmp(in, out, sizeof(in)) != 0;
			w->bad += gdr_unmap(w->g, mh, map, KB64) != 0;
		} else {
			w->bad++;
		}
		w->bad += gdr_unpin_buffer(w->g, mh) != 0;
		/* A handle unpinned is gone. */
		w->bad += gdr_unpin_buffer(w->g, mh) != EINVAL;
	}
	return NULL;
}

int main(void)
{
	struct worker w[THREADS];
	pthread_t t[THREADS];
	struct gdr *g = gdrapi_new();
	int bad = 0;
	gdr_mh_t left;

	if (!g)
		return 1;
	g->ops = &fake_ops;
	g->fd = memfd_create("gdrapi-test", MFD_CLOEXEC);
	if (g->fd < 0 || ftruncate(g->fd, KB64)) {
		tap_diag("memfd: %s", strerror(errno));
		tap_skip_all("no memfd here");
	}
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ g, i, 0 };
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		bad += w[i].bad;
	}
	tap_diag("%d threads x %d rounds: %d failures", THREADS, ROUNDS, bad);
	tap_ok(bad == 0, "pin, info, flag, map, copies, unmap, unpin from 8 threads on one gdr_t");
	tap_ok(atomic_load(&pinned) == THREADS * ROUNDS && atomic_load(&unpinned) == THREADS * ROUNDS,
	   "every pin reached the backend once, every unpin once");
	tap_ok(g->pins.next == &g->pins && g->pins.prev == &g->pins, "the list of pins is empty");
	tap_ok(gdr_pin_buffer(g, 0x200000000UL, 1, 0, 0, &left) == 0 && gdr_close(g) == 0 &&
	   atomic_load(&unpinned) == THREADS * ROUNDS + 1, "gdr_close unpins what is left");
	return tap_done();
}
