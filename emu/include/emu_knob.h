/* SPDX-License-Identifier: MIT */
/*
 * emu_knob.h - the emulator's counters and knobs, in the guest
 *
 * debugfs /sys/kernel/debug/nvp2p_emu/ for the open licence flavour,
 * /proc/driver/nvp2p_emu/ for the proprietary one (a module licensed
 * "NVIDIA" may not use debugfs); the same names and formats in both.
 *
 * emu_knob_path(): the file of a counter or knob.
 * emu_stat_u64(): a counter's value; UINT64_MAX when it cannot be read, so
 * that a check for 0 fails rather than passes without an emulator.
 * emu_knob_set(): write a knob.
 * emu_wait_quiet(): wait for no pins and no BAR1 bytes left.
 * emu_wait_stat(): wait for a counter to reach a value (a call seen inside
 * a window a delay knob holds open).
 */
#ifndef GUEST_EMU_KNOB_H
#define GUEST_EMU_KNOB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "guest_file.h"

#define EMU_KNOB_PROC	"/proc/driver/nvp2p_emu"
#define EMU_KNOB_DEBUGFS	"/sys/kernel/debug/nvp2p_emu"

/* The path of counter or knob @name of the bound emulator. */
static inline void emu_knob_path(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", access(EMU_KNOB_PROC, F_OK) == 0 ?
		 EMU_KNOB_PROC : EMU_KNOB_DEBUGFS, name);
}

/* Counter @name (its first number), or UINT64_MAX if it cannot be read. */
static inline uint64_t emu_stat_u64(const char *name)
{
	char path[128], buf[64], *end;
	unsigned long long v;

	emu_knob_path(path, sizeof(path), name);
	if (guest_read(path, buf, sizeof(buf)))
		return UINT64_MAX;
	v = strtoull(buf, &end, 0);
	return end == buf ? UINT64_MAX : (uint64_t)v;
}

/* Write @value to knob @name: 0, or -1 with errno (ENOENT: no such knob). */
static inline int emu_knob_set(const char *name, const char *value)
{
	char path[128];

	emu_knob_path(path, sizeof(path), name);
	return guest_write(path, value);
}

/*
 * Wait up to @ms milliseconds, polling every 10 ms, until the emulator holds
 * no pins and no BAR1 bytes (unpins may trail a process's exit) and @also,
 * where not NULL, says the caller's own state is quiet too.  1 then; else
 * prints the two counters as a TAP diagnostic ("# ...") and returns 0.
 */
static inline int emu_wait_quiet(unsigned int ms, int (*also)(void))
{
	for (unsigned int waited = 0; ; waited += 10) {
		if (emu_stat_u64("pins") == 0 && emu_stat_u64("bar1_used") == 0 &&
		    (!also || also()))
			return 1;
		if (waited >= ms)
			break;
		usleep(10000);
	}
	printf("# not quiet after %u ms: pins %llu bar1_used %llu\n", ms,
	       (unsigned long long)emu_stat_u64("pins"),
	       (unsigned long long)emu_stat_u64("bar1_used"));
	fflush(stdout);
	return 0;
}

/*
 * Wait up to @ms milliseconds, polling every millisecond, until counter
 * @name is at least @value: 1 then; 0 after @ms, or at once if the counter
 * cannot be read.
 */
static inline int emu_wait_stat(const char *name, uint64_t value, unsigned int ms)
{
	for (unsigned int waited = 0; ; waited++) {
		uint64_t v = emu_stat_u64(name);

		if (v == UINT64_MAX)
			return 0;
		if (v >= value)
			return 1;
		if (waited >= ms)
			return 0;
		usleep(1000);
	}
}

#endif
