// SPDX-License-Identifier: MIT
/* provider.c - gdirect.ko and emulator information (INFO ioctls, debugfs) */
#include "provider.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <nvp2p_emu.h>
#include <uapi/gdirect_ioctl.h>

static void probe_gdirect(const struct gdcli_roots *r, struct gdcli_provider *p)
{
	struct gdirect_info info;
	char path[GDCLI_PATH_MAX];
	int fd;

	if (gdcli_path(path, sizeof(path), "%s/gdirect", r->dev))
		return;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	memset(&info, 0, sizeof(info));
	if (!ioctl(fd, GDIRECT_IOC_INFO, &info)) {
		p->have_gdirect = 1;
		p->gdirect_abi = info.abi_version;
		p->gdirect_provider = info.provider;
		p->gdirect_caps = info.caps;
		p->default_persistent = info.default_persistent;
		p->version_source = "gdirect.ko";
		p->page_table_version = info.page_table_version;
		p->dma_mapping_version = info.dma_mapping_version;
		p->persistent_api = !!(info.caps & GDIRECT_CAP_PERSISTENT);
	}
	close(fd);
}

static void probe_emu(const struct gdcli_roots *r, struct gdcli_provider *p)
{
	struct nvp2p_emu_info info;
	char path[GDCLI_PATH_MAX];
	int fd;

	if (gdcli_path(path, sizeof(path), "%s/nvp2p_emu", r->dev))
		return;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	memset(&info, 0, sizeof(info));
	if (!ioctl(fd, NVP2P_EMU_IOC_INFO, &info)) {
		p->have_emu = 1;
		p->emu_abi = info.abi_version;
		p->mem_size = info.mem_size;
		p->mem_used = info.mem_used;
		p->bar1_total = info.bar1_size;
		p->bar1_reserved = info.bar1_reserved;
		p->bar1_used = info.bar1_used;
		snprintf(p->emu_bdf, sizeof(p->emu_bdf), "%04x:%02x:%02x.%x",
			 info.pci_domain & 0xffff, info.pci_bus & 0xff,
			 (info.pci_devfn >> 3) & 0x1f, info.pci_devfn & 7);
		if (!p->version_source) {
			p->version_source = "nvp2p_emu";
			p->page_table_version = info.page_table_version;
			p->dma_mapping_version = info.dma_mapping_version;
			p->persistent_api = !!info.persistent_api;
		}
	}
	close(fd);
}

static int emu_counter(const struct gdcli_roots *r, const char *name,
		       uint64_t *v)
{
	return gdcli_read_emu_counter(r, name, v, NULL);
}

static void probe_emu_debugfs(const struct gdcli_roots *r,
			      struct gdcli_provider *p)
{
	uint64_t total, reserved, used;

	if (gdcli_read_emu_counter(r, "bar1_total", &total,
				   &p->emu_counters_in) ||
	    emu_counter(r, "bar1_reserved", &reserved) ||
	    emu_counter(r, "bar1_used", &used))
		return;
	p->have_emu_debugfs = 1;
	if (p->have_emu)
		return;	/* the ioctl's snapshot is consistent; keep it */
	p->bar1_total = total;
	p->bar1_reserved = reserved;
	p->bar1_used = used;
	emu_counter(r, "mem_total", &p->mem_size);
	emu_counter(r, "mem_used", &p->mem_used);
}

static void probe_driver(const struct gdcli_roots *r, struct gdcli_provider *p)
{
	static const char *const mods[] = { "nvidia", "nvp2p_emu" };
	char path[GDCLI_PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		if (gdcli_path(path, sizeof(path), "%s/module/%s", r->sysfs,
			       mods[i]) ||
		    access(path, F_OK))
			continue;
		snprintf(p->driver_name, sizeof(p->driver_name), "%s", mods[i]);
		/* nvidia.ko has MODULE_VERSION; the emulator only a srcversion. */
		if (gdcli_path(path, sizeof(path), "%s/module/%s/version",
			       r->sysfs, mods[i]) ||
		    gdcli_read_str(path, p->driver_version,
				   sizeof(p->driver_version))) {
			if (!gdcli_path(path, sizeof(path),
					"%s/module/%s/srcversion",
					r->sysfs, mods[i]) &&
			    !gdcli_read_str(path, p->driver_version + 4,
					 sizeof(p->driver_version) - 4))
				memcpy(p->driver_version, "src ", 4);
		}
		return;
	}
}

void gdcli_provider_probe(const struct gdcli_roots *r, struct gdcli_provider *p)
{
	memset(p, 0, sizeof(*p));
	p->persistent_api = -1;
	probe_gdirect(r, p);
	probe_emu(r, p);
	probe_emu_debugfs(r, p);
	probe_driver(r, p);
	if (!strcmp(p->driver_name, "nvp2p_emu") && !p->driver_version[0] && p->have_emu)
		snprintf(p->driver_version, sizeof(p->driver_version), "emulator ABI %u",
			 p->emu_abi);
}
