// SPDX-License-Identifier: MIT
/*
 * cmd_info.c - gdirect info: what GPUDirect RDMA would run on, and how well
 *
 * Gathers everything first (GPUs, provider, BAR1, IOMMU, the path to a peer)
 * and then prints it as text or JSON, so both say the same.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uapi/gdirect_ioctl.h>

#include "iommu.h"
#include "json.h"
#include "tool_nvml.h"
#include "pci.h"
#include "provider.h"
#include "tool.h"
#include "topology.h"

#define MAX_GPUS 64
#define MAX_WARN 8

struct gpu_report {
	struct gdcli_gpu gpu;
	const char *bar1_source;	/* "nvml", "emulator", NULL: unknown */
	char bar1_error[128];
	uint64_t bar1_total, bar1_reserved, bar1_used, bar1_free;
	int have_reserved;
	struct gdcli_iommu iommu;
	int have_path;
	struct gdcli_path path;
};

struct report {
	struct gdcli_provider prov;
	struct gdcli_iommu iommu;		/* system default */
	int ngpus;
	struct gpu_report gpus[MAX_GPUS];
	const char *peer;
	struct gdcli_pcidev peer_dev;
	struct gdcli_iommu peer_iommu;
	const char *warn[MAX_WARN];
	int nwarn;
};

static void warn(struct report *rep, const char *w)
{
	int i;

	if (!w)
		return;
	for (i = 0; i < rep->nwarn; i++)
		if (!strcmp(rep->warn[i], w))
			return;
	if (rep->nwarn < MAX_WARN)
		rep->warn[rep->nwarn++] = w;
}

static void gather_bar1(struct report *rep, struct gpu_report *g)
{
	const struct gdcli_provider *p = &rep->prov;

	if (g->gpu.kind == GDCLI_GPU_NVIDIA) {
		struct gdcli_nvml_bar1 b;

		if (!gdcli_nvml_bar1(g->gpu.pci.bdf, &b, g->bar1_error,
				     sizeof(g->bar1_error))) {
			g->bar1_source = "nvml";
			g->bar1_total = b.total;
			g->bar1_used = b.used;
			g->bar1_free = b.free;
		}
		return;
	}
	/* The emulator drives one device; its counters are that device's. */
	if ((p->have_emu && !strcmp(p->emu_bdf, g->gpu.pci.bdf)) ||
	    (!p->have_emu && p->have_emu_debugfs)) {
		g->bar1_source = p->have_emu ? "emulator" :
				 !strcmp(p->emu_counters_in, "procfs") ?
				 "emulator-procfs" : "emulator-debugfs";
		g->bar1_total = p->bar1_total;
		g->bar1_reserved = p->bar1_reserved;
		g->have_reserved = 1;
		g->bar1_used = p->bar1_used;
		g->bar1_free = p->bar1_total > p->bar1_reserved + p->bar1_used ?
			       p->bar1_total - p->bar1_reserved - p->bar1_used : 0;
	} else {
		snprintf(g->bar1_error, sizeof(g->bar1_error),
			 "emulator counters unavailable (no /dev/nvp2p_emu, no debugfs or procfs counters, or not root)");
	}
}

static int gather(struct report *rep, const struct gdcli_roots *r)
{
	struct gdcli_gpu *gpus = calloc(MAX_GPUS, sizeof(*gpus));
	int i, err;

	if (!gpus)
		return -ENOMEM;
	gdcli_provider_probe(r, &rep->prov);
	gdcli_iommu_probe(r, NULL, &rep->iommu);
	rep->ngpus = gdcli_find_gpus(r, gpus, MAX_GPUS);
	if (rep->peer) {
		err = gdcli_pci_read(r, rep->peer, &rep->peer_dev);
		if (err) {
			fprintf(stderr, "gdirect: no PCI device %s%s\n", rep->peer,
				err == -EINVAL ? " (want DDDD:BB:DD.F)" : "");
			free(gpus);
			return err;
		}
		gdcli_iommu_probe(r, rep->peer, &rep->peer_iommu);
		warn(rep, rep->peer_iommu.warning);
	}
	for (i = 0; i < rep->ngpus; i++) {
		struct gpu_report *g = &rep->gpus[i];

		g->gpu = gpus[i];
		gather_bar1(rep, g);
		gdcli_iommu_probe(r, g->gpu.pci.bdf, &g->iommu);
		warn(rep, g->iommu.warning);
		if (rep->peer &&
		    !gdcli_topology(r, g->gpu.pci.bdf, rep->peer, &g->path)) {
			g->have_path = 1;
			warn(rep, g->path.warning);
		}
	}
	if (!rep->ngpus)
		warn(rep, "no GPU found (NVIDIA display/3D device, or ivshmem bound to nvp2p_emu)");
	if (!rep->prov.version_source)
		warn(rep, "neither /dev/gdirect nor /dev/nvp2p_emu answered: page-table version unknown");
	free(gpus);
	return 0;
}

static const char *kind_text(const struct gdcli_gpu *g)
{
	return g->kind == GDCLI_GPU_NVIDIA ? "NVIDIA GPU" :
	       "emulated GPU (ivshmem, nvp2p_emu)";
}

static const char *provider_text(uint32_t p)
{
	switch (p) {
	case GDIRECT_PROVIDER_EMULATOR: return "nvp2p_emu.ko";
	case GDIRECT_PROVIDER_NVIDIA:   return "nvidia.ko";
	}
	return "unknown";
}

static void print_text(const struct report *rep)
{
	const struct gdcli_provider *p = &rep->prov;
	char b1[32], b2[32], b3[32], b4[32];
	int i, h;

	printf("gdirect %s\n", GDIRECT_VERSION);
	printf("driver          %s%s%s%s\n", p->driver_name[0] ? p->driver_name : "none loaded",
	       p->driver_version[0] ? " (" : "", p->driver_version,
	       p->driver_version[0] ? ")" : "");
	if (p->have_gdirect)
		printf("gdirect.ko      ABI %u, provider %s, default %s pins\n", p->gdirect_abi,
		       provider_text(p->gdirect_provider),
		       p->default_persistent ? "persistent" : "callback");
	else
		printf("gdirect.ko      not loaded (no /dev/gdirect)\n");
	if (p->version_source) {
		printf("page table      0x%08x (%u.%u), from %s\n", p->page_table_version,
		       p->page_table_version >> 16, p->page_table_version & 0xffff,
		       p->version_source);
		printf("dma mapping     0x%08x\n", p->dma_mapping_version);
		printf("persistent API  %s\n", p->persistent_api ? "yes" : "no");
	} else {
		printf("page table      unknown (neither /dev/gdirect nor /dev/nvp2p_emu)\n");
	}
	printf("IOMMU           %s (%s)\n",
	       gdcli_iommu_mode_text(rep->iommu.mode), rep->iommu.basis);
	printf("GPUs            %d\n", rep->ngpus);
	for (i = 0; i < rep->ngpus; i++) {
		const struct gpu_report *g = &rep->gpus[i];

		printf("\nGPU %s  %s [%04x:%04x], driver %s, NUMA node %d\n", g->gpu.pci.bdf,
		       kind_text(&g->gpu), g->gpu.pci.vendor, g->gpu.pci.device,
		       g->gpu.pci.driver[0] ? g->gpu.pci.driver : "none", g->gpu.pci.numa_node);
		if (g->bar1_source) {
			printf("  BAR1          total %s, used %s, free %s",
			       gdcli_fmt_bytes(g->bar1_total, b1, sizeof(b1)),
			       gdcli_fmt_bytes(g->bar1_used, b2, sizeof(b2)),
			       gdcli_fmt_bytes(g->bar1_free, b3, sizeof(b3)));
			if (g->have_reserved)
				printf(", reserved %s",
				       gdcli_fmt_bytes(g->bar1_reserved, b4,
						       sizeof(b4)));
			printf("  [%s]\n", g->bar1_source);
		} else {
			printf("  BAR1          unknown: %s\n", g->bar1_error);
		}
		printf("  IOMMU         %s (%s)\n",
		       gdcli_iommu_mode_text(g->iommu.mode), g->iommu.basis);
		if (g->have_path) {
			printf("  path to %s  %s\n", rep->peer,
			       gdcli_path_class_text(g->path.cls));
			printf("    ");
			for (h = 0; h < g->path.nhops; h++)
				printf("%s%s", h ? " -> " : "", g->path.hops[h]);
			printf("\n    %s\n", g->path.basis);
		}
	}
	if (rep->peer) {
		printf("\npeer %s  [%04x:%04x] class 0x%06x, driver %s, NUMA node %d\n",
		       rep->peer, rep->peer_dev.vendor, rep->peer_dev.device,
		       rep->peer_dev.class_code,
		       rep->peer_dev.driver[0] ? rep->peer_dev.driver : "none",
		       rep->peer_dev.numa_node);
		printf("  IOMMU         %s (%s)\n",
		       gdcli_iommu_mode_text(rep->peer_iommu.mode),
		       rep->peer_iommu.basis);
	}
	if (rep->nwarn)
		printf("\n");
	for (i = 0; i < rep->nwarn; i++)
		printf("warning: %s\n", rep->warn[i]);
}

static void json_iommu(struct gdcli_json *j, const char *key,
		       const struct gdcli_iommu *io)
{
	gdcli_json_obj(j, key);
	gdcli_json_str(j, "mode", gdcli_iommu_mode_id(io->mode));
	gdcli_json_str(j, "text", gdcli_iommu_mode_text(io->mode));
	if (io->group >= 0)
		gdcli_json_int(j, "group", io->group);
	if (io->domain_type[0])
		gdcli_json_str(j, "domain_type", io->domain_type);
	gdcli_json_int(j, "units", io->units);
	gdcli_json_str(j, "basis", io->basis);
	gdcli_json_end(j, '}');
}

static void print_json(const struct report *rep)
{
	const struct gdcli_provider *p = &rep->prov;
	struct gdcli_json j;
	char hex[16];
	int i, h;

	gdcli_json_init(&j, stdout);
	gdcli_json_obj(&j, NULL);
	gdcli_json_str(&j, "tool_version", GDIRECT_VERSION);
	gdcli_json_obj(&j, "driver");
	gdcli_json_str(&j, "name", p->driver_name[0] ? p->driver_name : NULL);
	gdcli_json_str(&j, "version",
		       p->driver_version[0] ? p->driver_version : NULL);
	gdcli_json_end(&j, '}');
	gdcli_json_obj(&j, "gdirect_ko");
	gdcli_json_bool(&j, "loaded", p->have_gdirect);
	if (p->have_gdirect) {
		gdcli_json_u64(&j, "abi_version", p->gdirect_abi);
		gdcli_json_str(&j, "provider",
			       provider_text(p->gdirect_provider));
		gdcli_json_bool(&j, "default_persistent",
				(int)p->default_persistent);
	}
	gdcli_json_end(&j, '}');
	gdcli_json_obj(&j, "nv_p2p");
	gdcli_json_str(&j, "source", p->version_source);
	if (p->version_source) {
		snprintf(hex, sizeof(hex), "0x%08x", p->page_table_version);
		gdcli_json_str(&j, "page_table_version", hex);
		snprintf(hex, sizeof(hex), "0x%08x", p->dma_mapping_version);
		gdcli_json_str(&j, "dma_mapping_version", hex);
		gdcli_json_bool(&j, "persistent_api", p->persistent_api);
	}
	gdcli_json_end(&j, '}');
	json_iommu(&j, "iommu", &rep->iommu);
	gdcli_json_arr(&j, "gpus");
	for (i = 0; i < rep->ngpus; i++) {
		const struct gpu_report *g = &rep->gpus[i];

		gdcli_json_obj(&j, NULL);
		gdcli_json_str(&j, "bdf", g->gpu.pci.bdf);
		gdcli_json_str(&j, "kind", g->gpu.kind == GDCLI_GPU_NVIDIA ?
			       "nvidia" : "emulated");
		snprintf(hex, sizeof(hex), "0x%04x", g->gpu.pci.vendor);
		gdcli_json_str(&j, "vendor", hex);
		snprintf(hex, sizeof(hex), "0x%04x", g->gpu.pci.device);
		gdcli_json_str(&j, "device", hex);
		gdcli_json_str(&j, "driver",
			       g->gpu.pci.driver[0] ? g->gpu.pci.driver : NULL);
		gdcli_json_int(&j, "numa_node", g->gpu.pci.numa_node);
		gdcli_json_obj(&j, "bar1");
		gdcli_json_str(&j, "source", g->bar1_source);
		if (g->bar1_source) {
			gdcli_json_u64(&j, "total", g->bar1_total);
			if (g->have_reserved)
				gdcli_json_u64(&j, "reserved",
					       g->bar1_reserved);
			gdcli_json_u64(&j, "used", g->bar1_used);
			gdcli_json_u64(&j, "free", g->bar1_free);
		} else {
			gdcli_json_str(&j, "error", g->bar1_error);
		}
		gdcli_json_end(&j, '}');
		json_iommu(&j, "iommu", &g->iommu);
		if (g->have_path) {
			gdcli_json_obj(&j, "path_to_peer");
			gdcli_json_str(&j, "class",
				       gdcli_path_class_id(g->path.cls));
			gdcli_json_str(&j, "text",
				       gdcli_path_class_text(g->path.cls));
			gdcli_json_str(&j, "common", g->path.common);
			gdcli_json_arr(&j, "hops");
			for (h = 0; h < g->path.nhops; h++)
				gdcli_json_str(&j, NULL, g->path.hops[h]);
			gdcli_json_end(&j, ']');
			gdcli_json_str(&j, "basis", g->path.basis);
			gdcli_json_str(&j, "warning", g->path.warning);
			gdcli_json_end(&j, '}');
		}
		gdcli_json_end(&j, '}');
	}
	gdcli_json_end(&j, ']');
	if (rep->peer) {
		gdcli_json_obj(&j, "peer");
		gdcli_json_str(&j, "bdf", rep->peer);
		snprintf(hex, sizeof(hex), "0x%04x", rep->peer_dev.vendor);
		gdcli_json_str(&j, "vendor", hex);
		snprintf(hex, sizeof(hex), "0x%04x", rep->peer_dev.device);
		gdcli_json_str(&j, "device", hex);
		gdcli_json_str(&j, "driver", rep->peer_dev.driver[0] ?
			       rep->peer_dev.driver : NULL);
		gdcli_json_int(&j, "numa_node", rep->peer_dev.numa_node);
		json_iommu(&j, "iommu", &rep->peer_iommu);
		gdcli_json_end(&j, '}');
	}
	gdcli_json_arr(&j, "warnings");
	for (i = 0; i < rep->nwarn; i++)
		gdcli_json_str(&j, NULL, rep->warn[i]);
	gdcli_json_end(&j, ']');
	gdcli_json_end(&j, '}');
	gdcli_json_done(&j);
}

int gdcli_cmd_info(int argc, char **argv, struct gdcli_roots *r)
{
	static const struct option opts[] = {
		GDCLI_COMMON_LONGOPTS,
		{ "peer", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct report *rep;
	int c, json = 0, err;

	rep = calloc(1, sizeof(*rep));
	if (!rep)
		return 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:", opts, NULL)) != -1) {
		if (gdcli_common_opt(c, optarg, r))
			continue;
		switch (c) {
		case OPT_JSON: json = 1; break;
		case 'p': rep->peer = optarg; break;
		case OPT_HELP:
			printf("usage: gdirect info [--json] [--peer DDDD:BB:DD.F] [--sysfs DIR] [--proc DIR] [--dev DIR]\n");
			free(rep);
			return 0;
		default:
			free(rep);
			return 2;
		}
	}
	err = gather(rep, r);
	if (!err) {
		if (json)
			print_json(rep);
		else
			print_text(rep);
	}
	free(rep);
	return err ? 1 : 0;
}
