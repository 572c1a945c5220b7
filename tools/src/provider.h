/* SPDX-License-Identifier: MIT */
/*
 * provider.h - what the nv-p2p provider and gdirect.ko say about themselves
 *
 * The page-table version and the persistent API come from gdirect.ko
 * (GDIRECT_IOC_INFO on /dev/gdirect) when it is loaded, else from the
 * emulator's control device (NVP2P_EMU_IOC_INFO on /dev/nvp2p_emu); the
 * emulator also reports its BAR1 budget, else its debugfs counters do.
 */
#ifndef GDTOOL_PROVIDER_H
#define GDTOOL_PROVIDER_H

#include <stdint.h>

#include "sysfs.h"

struct gdcli_provider {
	/* gdirect.ko */
	int have_gdirect;
	uint32_t gdirect_abi, gdirect_provider, gdirect_caps, default_persistent;
	/* the emulator */
	int have_emu;			/* control device answered */
	int have_emu_debugfs;		/* counters read from debugfs or procfs */
	const char *emu_counters_in;	/* "debugfs" or "procfs" */
	uint32_t emu_abi;
	char emu_bdf[16];		/* its PCI device, "" if unknown */
	uint64_t mem_size, mem_used;
	uint64_t bar1_total, bar1_reserved, bar1_used;
	/* either */
	const char *version_source;	/* "gdirect.ko", "nvp2p_emu", or NULL */
	uint32_t page_table_version, dma_mapping_version;
	int persistent_api;		/* 1 yes, 0 no, -1 unknown */
	/* driver version: /sys/module/{nvidia,nvp2p_emu} */
	char driver_name[32];		/* "nvidia", "nvp2p_emu", "" */
	char driver_version[64];
};

void gdcli_provider_probe(const struct gdcli_roots *r,
			  struct gdcli_provider *p);

#endif
