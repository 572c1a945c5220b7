// SPDX-License-Identifier: MIT
/*
 * regions.c - /proc/driver/gdirect/regions with many owners
 *
 * OWNERS processes pin, in rounds (one pin per owner per round, so that
 * each owner's registrations are spread through the list), 1 to 6
 * registrations of 1 to 3 64 KiB pages each: 420 in all, more than one
 * batch of the kernel's copy (256).  The file must then list
 * every owner once, in the order of its first pin, with a summary whose
 * count and bytes are those of its registrations, followed by exactly
 * those, in the order they were made; the totals must be what was pinned.
 * Read in small pieces, the file must say the same.  The checker itself
 * is shown to catch a planted error (one region too many in a summary).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdt.h"
#include "guest_harness.h"

#define OWNERS		120
#define MAX_PER_OWNER	6
#define MEM_BYTES	(8ULL << 20)
#define MEM_PAGES	(MEM_BYTES / GDT_KB64)

struct expect {
	int n;
	uint64_t addr[MAX_PER_OWNER], size[MAX_PER_OWNER];
};

static struct gdt_owners o;
static struct expect want[OWNERS];

/* The whole file, read @chunk bytes per read(); malloc'd, or NULL. */
static char *slurp(size_t chunk)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap + 1);
	int fd = open("/proc/driver/gdirect/regions", O_RDONLY);
	ssize_t n = 0;

	while (buf && fd >= 0) {
		if (cap - len < chunk) {
			char *b = realloc(buf, 2 * cap + 1);

			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
		n = read(fd, buf + len, chunk);
		if (n <= 0)
			break;
		len += n;
	}
	if (fd >= 0)
		close(fd);
	if (!buf || fd < 0 || n < 0) {
		free(buf);
		return NULL;
	}
	buf[len] = 0;
	return buf;
}

static int owner_of(pid_t tgid)
{
	for (int i = 0; i < OWNERS; i++)
		if (o.pid[i] == tgid)
			return i;
	return -1;
}

/*
 * Check @text against want[]: 0, or -1 with the first difference as a
 * diagnostic.  Lines of processes other than ours are counted, not checked.
 */
static int check_text(char *text)
{
	int cur = -1, next_owner = 0, seen[OWNERS] = { 0 }, got = 0;
	unsigned long long n = 0, bytes = 0, cb, sum_bytes = 0, lines = 0;
	char *save, *line;

	for (line = strtok_r(text, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long h, addr, size, pages, phys;
		char state[16], mode[16];
		long long mapped;
		int tgid;

		/* The summary before must match the lines that followed it. */
		if (cur >= 0 && (!line || !strncmp(line, "process ", 8))) {
			if (lines != n || sum_bytes != bytes ||
			    (int)n != want[cur].n || got != want[cur].n) {
				tap_diag("process %d: summary %llu regions %llu bytes, %llu lines of %llu bytes, pinned %d",
					 o.pid[cur], n, bytes, lines, sum_bytes,
					 want[cur].n);
				return -1;
			}
			cur = -1;
		}
		if (!line)
			break;
		if (sscanf(line, "process %d regions %llu bytes %llu callbacks %llu",
			   &tgid, &n, &bytes, &cb) == 4) {
			cur = owner_of(tgid);
			if (cur < 0)
				continue;
			if (seen[cur]++ || cur != next_owner || cb) {
				tap_diag("process %d: listed %d times, as owner %d of %d expected, callbacks %llu",
					 tgid, seen[cur], cur, next_owner, cb);
				return -1;
			}
			next_owner++;
			lines = sum_bytes = 0;
			got = 0;
			continue;
		}
		if (sscanf(line, "  handle %llu addr %llx size %llx pages %llu state %15s mode %15s mapped %lld phys %llx",
			   &h, &addr, &size, &pages, state, mode, &mapped,
			   &phys) != 8) {
			tap_diag("not understood: '%s'", line);
			return -1;
		}
		if (cur < 0)
			continue;
		lines++;
		sum_bytes += size;
		if (got >= want[cur].n || want[cur].addr[got] != addr ||
		    want[cur].size[got] != size || pages != size / GDT_KB64 ||
		    strcmp(state, "pinned") || !h || !phys) {
			tap_diag("process %d: line %d is '%s'", o.pid[cur], got,
				 line);
			return -1;
		}
		got++;
	}
	if (next_owner != OWNERS) {
		tap_diag("%d of %d owners listed", next_owner, OWNERS);
		return -1;
	}
	return 0;
}

static void body(void)
{
	int total = 0, ret = 0, pinned = 0;
	uint64_t page = 0, bytes = 0;
	char *text, *small, *bad;

	if (!tap_ok(!gdt_owners_start(&o, OWNERS, MEM_BYTES),
		    "%d owner processes", OWNERS))
		goto out;
	for (int i = 0; i < OWNERS; i++)
		total += 1 + i % MAX_PER_OWNER;
	/* Round j: the j-th pin of every owner that makes that many. */
	for (int j = 0; j < MAX_PER_OWNER && !ret; j++) {
		for (int i = 0; i < OWNERS && !ret; i++) {
			uint64_t size = (1 + (i + j) % 3) * GDT_KB64;
			uint64_t addr = o.va + page * GDT_KB64;

			if (j > i % MAX_PER_OWNER)
				continue;
			page = (page + 1) % (MEM_PAGES - 3);
			ret = gdt_owner_pin(&o, i, addr, size, 0, 1);
			want[i].addr[want[i].n] = addr;
			want[i].size[want[i].n++] = size;
			bytes += size;
			pinned++;
		}
	}
	if (!tap_ok(!ret && pinned == total, "%d registrations by %d owners (%d)",
		    pinned, OWNERS, ret))
		goto out;
	tap_ok(gdt_gd_stat("live_regions") == total &&
	       gdt_gd_stat("live_bytes") == (int64_t)bytes,
	       "gdirect counts %d regions of %llu bytes", total,
	       (unsigned long long)bytes);

	text = slurp(1 << 16);
	small = slurp(100);
	if (!tap_ok(text && small, "regions read whole and 100 bytes at a time"))
		goto out_free;
	tap_ok(!strcmp(text, small), "both reads say the same (%zu bytes)",
	       strlen(text));
	bad = strdup(text);
	tap_ok(!check_text(text),
	       "every owner once, in order, its summary matching its registrations");

	/* Plant one region too many in a summary: the checker must see it. */
	if (bad) {
		char *p = strstr(bad, "process ");
		unsigned long long n;

		while (p && (owner_of(atoi(p + 8)) < 0))
			p = strstr(p + 1, "process ");
		p = p ? strstr(p, " regions ") : NULL;
		if (p && sscanf(p, " regions %llu", &n) == 1 && n < 9) {
			p[9] = '0' + n + 1;
			tap_ok(check_text(bad), "the check fails on a planted error");
		} else {
			tap_skip("planted error", "no summary of ours to change");
		}
	}
	free(bad);
out_free:
	free(text);
	free(small);
out:
	gdt_owners_stop(&o);
	tap_ok(gdt_quiet(), "every pin gone with its owner");
}

int main(void)
{
	return gdt_main(NULL, 0, body);
}
