// SPDX-License-Identifier: MIT
/* pci.c - PCI devices from sysfs, and the GPUs among them */
#include "pci.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PCI_VENDOR_NVIDIA	0x10de
#define PCI_VENDOR_REDHAT_QUMRANET 0x1af4
#define PCI_DEVICE_IVSHMEM	0x1110
#define PCI_CAP_ID_EXP		0x10

int gdcli_is_bdf(const char *s)
{
	static const char pat[] = "xxxx:xx:xx.x";
	size_t i;

	if (strlen(s) != sizeof(pat) - 1)
		return 0;
	for (i = 0; i < sizeof(pat) - 1; i++) {
		if (pat[i] == 'x' ? !isxdigit((unsigned char)s[i]) : s[i] != pat[i])
			return 0;
	}
	return 1;
}

int gdcli_pcie_type(const unsigned char *cfg, size_t len)
{
	unsigned int pos, guard;

	/* Status register bit 4: a capability list exists. */
	if (len < 64 || !(cfg[6] & 0x10))
		return -1;
	pos = cfg[0x34] & ~3u;
	for (guard = 0; pos >= 0x40 && pos + 3 < len && guard < 48; guard++) {
		if (cfg[pos] == PCI_CAP_ID_EXP)
			return (cfg[pos + 2] >> 4) & 0xf;
		pos = cfg[pos + 1] & ~3u;
	}
	return -1;
}

static unsigned int read_hex(const char *dir, const char *name)
{
	char p[GDCLI_PATH_MAX];
	uint64_t v = 0;

	if (gdcli_path(p, sizeof(p), "%s/%s", dir, name) ||
	    gdcli_read_u64(p, &v))
		return 0;
	return (unsigned int)v;
}

int gdcli_pci_read(const struct gdcli_roots *r, const char *bdf,
		   struct gdcli_pcidev *d)
{
	char dir[GDCLI_PATH_MAX], p[GDCLI_PATH_MAX];
	unsigned char cfg[256];
	ssize_t len;
	int fd;

	memset(d, 0, sizeof(*d));
	if (!gdcli_is_bdf(bdf))
		return -EINVAL;
	if (gdcli_path(dir, sizeof(dir), "%s/bus/pci/devices/%s", r->sysfs,
		       bdf))
		return -ENAMETOOLONG;
	if (access(dir, F_OK))
		return -ENOENT;
	snprintf(d->bdf, sizeof(d->bdf), "%s", bdf);
	d->vendor = read_hex(dir, "vendor");
	d->device = read_hex(dir, "device");
	d->class_code = read_hex(dir, "class");
	if (!gdcli_path(p, sizeof(p), "%s/driver", dir))
		gdcli_link_name(p, d->driver, sizeof(d->driver));
	d->numa_node = -1;
	if (!gdcli_path(p, sizeof(p), "%s/numa_node", dir))
		gdcli_read_int(p, &d->numa_node);
	d->pcie_type = -1;
	if (!gdcli_path(p, sizeof(p), "%s/config", dir)) {
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			len = pread(fd, cfg, sizeof(cfg), 0);
			if (len > 0)
				d->pcie_type = gdcli_pcie_type(cfg,
							       (size_t)len);
			close(fd);
		}
	}
	return 0;
}

static int is_gpu(const struct gdcli_pcidev *d, enum gdcli_gpu_kind *kind)
{
	unsigned int base = d->class_code >> 16, sub = (d->class_code >> 8) & 0xff;

	/* VGA (0x0300) or 3D controller (0x0302): data-centre GPUs are 3D. */
	if (d->vendor == PCI_VENDOR_NVIDIA && base == 0x03 &&
	    (sub == 0x00 || sub == 0x02)) {
		*kind = GDCLI_GPU_NVIDIA;
		return 1;
	}
	if (d->vendor == PCI_VENDOR_REDHAT_QUMRANET &&
	    d->device == PCI_DEVICE_IVSHMEM && !strcmp(d->driver, "nvp2p_emu")) {
		*kind = GDCLI_GPU_EMULATED;
		return 1;
	}
	return 0;
}

static int cmp_gpu(const void *a, const void *b)
{
	return strcmp(((const struct gdcli_gpu *)a)->pci.bdf,
		      ((const struct gdcli_gpu *)b)->pci.bdf);
}

int gdcli_find_gpus(const struct gdcli_roots *r, struct gdcli_gpu *out, int max)
{
	char dir[GDCLI_PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d;

	if (gdcli_path(dir, sizeof(dir), "%s/bus/pci/devices", r->sysfs))
		return 0;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		struct gdcli_pcidev pd;
		enum gdcli_gpu_kind kind;

		if (!gdcli_is_bdf(de->d_name) ||
		    gdcli_pci_read(r, de->d_name, &pd))
			continue;
		if (is_gpu(&pd, &kind)) {
			out[n].pci = pd;
			out[n].kind = kind;
			n++;
		}
	}
	closedir(d);
	qsort(out, (size_t)n, sizeof(*out), cmp_gpu);
	return n;
}
