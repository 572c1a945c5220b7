/* SPDX-License-Identifier: MIT */
/*
 * emu_knob.h - where the emulator's counters and knobs are, in the guest
 *
 * debugfs /sys/kernel/debug/nvp2p_emu/ for the open licence flavour,
 * /proc/driver/nvp2p_emu/ for the proprietary one (a module licensed
 * "NVIDIA" may not use debugfs); the same names and formats in both.
 */
#ifndef GUEST_EMU_KNOB_H
#define GUEST_EMU_KNOB_H

#include <stdio.h>
#include <unistd.h>

#define EMU_KNOB_PROC	"/proc/driver/nvp2p_emu"
#define EMU_KNOB_DEBUGFS	"/sys/kernel/debug/nvp2p_emu"

/* The path of counter or knob @name of the bound emulator. */
static inline void emu_knob_path(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", access(EMU_KNOB_PROC, F_OK) == 0 ?
		 EMU_KNOB_PROC : EMU_KNOB_DEBUGFS, name);
}

#endif
