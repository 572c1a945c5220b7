// SPDX-License-Identifier: MIT
/*
 * gdirect-regionsbench.c - the cost of reading /proc/driver/gdirect/regions
 * and what it does to other threads' pins and unpins
 *
 * Not a test (no t- prefix): docs/performance.md runs it by name and quotes
 * its figures.  OWNERS processes (default 1024) hold REGIONS registrations
 * (default 8192) between them, each owner's pins made one after the other
 * (so each owner's registrations are adjacent in gdirect's list), all of
 * 64 KiB pages of one 32 MiB emulator allocation, pinned with its legacy
 * tokens as an unprivileged user may.  Then, READS times, this process
 * reads the whole file while a thread pins and unpins 64 KiB in a loop;
 * printed: the read's time and size, and the worst pin and unpin latency
 * of that thread during the read against the same thread with no reader.
 * Nothing here passes or fails on time; the checks are that the setup
 * worked and that the file lists every registration.
 *
 * Usage: gdirect-regionsbench [REGIONS [OWNERS [READS]]]
 * Memory: each owner is a process with a /dev/gdirect file (256 KiB of
 * status area), so 1024 owners want a guest of 2 GiB (run.py --mem-mb).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdt.h"
#include "guest_harness.h"
#include "pinlat.h"

#define MEM_BYTES	(32ULL << 20)
#define MEM_PAGES	(MEM_BYTES / GDT_KB64)

static unsigned long regions = 8192, owners = 1024, reads = 3;

struct lat {
	pthread_t t;
	int fd;
	uint64_t addr;
	volatile int stop;
	int failed;
	struct pinlat s;
};

static void *lat_thread(void *arg)
{
	struct lat *l = arg;

	while (!l->stop) {
		double pin, unpin;
		int ret = pinlat_pair(l->fd, l->addr, GDT_KB64, &pin, &unpin);

		if (ret < 0) {
			l->failed++;
			break;
		}
		if (ret)
			l->failed++;
		pinlat_add(&l->s, pin, unpin);
	}
	return NULL;
}

static int lat_start(struct lat *l, int fd, uint64_t addr)
{
	memset(l, 0, sizeof(*l));
	l->fd = fd;
	l->addr = addr;
	return pthread_create(&l->t, NULL, lat_thread, l);
}

static void lat_stop(struct lat *l)
{
	l->stop = 1;
	pthread_join(l->t, NULL);
}

/* Read the whole file: its bytes, and its process and handle lines. */
static double read_regions(size_t *bytes, unsigned long *procs,
			   unsigned long *handles)
{
	static char buf[1 << 16];
	char line[256];
	size_t ll = 0;
	double t0 = guest_now_ms(), t;
	int fd = open("/proc/driver/gdirect/regions", O_RDONLY);
	ssize_t n;

	*bytes = 0;
	*procs = *handles = 0;
	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		*bytes += n;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (ll < sizeof(line) - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = 0;
			ll = 0;
			if (!strncmp(line, "process ", 8))
				(*procs)++;
			else if (!strncmp(line, "  handle ", 9))
				(*handles)++;
		}
	}
	t = guest_now_ms() - t0;
	close(fd);
	return n < 0 ? -1 : t;
}

static int parse(const char *s, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno || end == s || *end || !*v ? -1 : 0;
}

static void body(void)
{
	struct gdt_owners o;
	unsigned long made = 0;
	struct lat l;
	int fd, ret = 0;
	double t0, quiet_pin, quiet_unpin;

	if (!tap_ok(!gdt_owners_start(&o, owners, MEM_BYTES),
		    "%lu owner processes started", owners))
		goto out;
	t0 = guest_now_ms();
	for (unsigned long i = 0; i < owners && !ret; i++) {
		unsigned long k = regions / owners + (i < regions % owners);

		/* Page by page through the allocation, wrapping at its end. */
		while (k && !ret) {
			uint64_t page = made % MEM_PAGES;
			uint32_t c = k < MEM_PAGES - page ? k : MEM_PAGES - page;

			ret = gdt_owner_pin(&o, i, o.va + page * GDT_KB64,
					    GDT_KB64, GDT_KB64, c);
			made += c;
			k -= c;
		}
	}
	if (!tap_ok(!ret, "%lu registrations made by %lu owners in %.1f s (%d)",
		    regions, owners, (guest_now_ms() - t0) / 1e3, ret))
		goto out;

	fd = open("/dev/gdirect", O_RDWR);
	if (!tap_ok(fd >= 0, "a file for the pin/unpin thread"))
		goto out;

	/* The thread alone first: its latencies with no reader. */
	if (lat_start(&l, fd, o.va))
		goto out_fd;
	usleep(2000 * 1000);
	lat_stop(&l);
	tap_ok(!l.failed && l.s.pairs, "pin/unpin thread with no reader: %lu pairs",
	       l.s.pairs);
	quiet_pin = l.s.pin_max;
	quiet_unpin = l.s.unpin_max;
	tap_diag("no reader: pin mean %.3f ms max %.3f ms, unpin mean %.3f ms max %.3f ms (%lu pairs in 2 s)",
		 l.s.pin_sum / l.s.pairs, l.s.pin_max, l.s.unpin_sum / l.s.pairs,
		 l.s.unpin_max, l.s.pairs);

	for (unsigned long r = 0; r < reads; r++) {
		unsigned long procs, handles;
		size_t bytes;
		double ms;

		if (lat_start(&l, fd, o.va))
			break;
		usleep(100 * 1000);
		ms = read_regions(&bytes, &procs, &handles);
		lat_stop(&l);
		tap_ok(ms >= 0 && procs >= owners && handles >= regions,
		       "read %lu: %lu process and %lu handle lines", r + 1,
		       procs, handles);
		tap_diag("read %lu: %.1f ms for %zu bytes (%lu regions, %lu owners); during it %lu pin/unpin pairs, worst pin %.2f ms (%.0fx no reader), worst unpin %.2f ms (%.0fx)",
			 r + 1, ms, bytes, regions, owners, l.s.pairs, l.s.pin_max,
			 quiet_pin > 0 ? l.s.pin_max / quiet_pin : 0,
			 l.s.unpin_max,
			 quiet_unpin > 0 ? l.s.unpin_max / quiet_unpin : 0);
	}
out_fd:
	close(fd);
out:
	gdt_owners_stop(&o);
}

int main(int argc, char **argv)
{
	if ((argc > 1 && parse(argv[1], &regions)) ||
	    (argc > 2 && parse(argv[2], &owners)) ||
	    (argc > 3 && parse(argv[3], &reads)) || argc > 4 ||
	    owners > regions) {
		fprintf(stderr, "usage: %s [REGIONS [OWNERS [READS]]] (OWNERS <= REGIONS)\n",
			argv[0]);
		return 2;
	}
	return gdt_main(NULL, 0, body);
}
