/* SPDX-License-Identifier: MIT */
/*
 * tool_nvml.h - BAR1 usage of a real GPU through NVML, loaded at run time
 *
 * libnvidia-ml.so.1 (or the file named by GDIRECT_LIBNVML) is dlopen'ed:
 * the tool neither links against nor needs NVML headers, and runs where no
 * NVIDIA driver is installed.
 */
#ifndef GDTOOL_NVML_H
#define GDTOOL_NVML_H

#include <stdint.h>

struct gdcli_nvml_bar1 {
	uint64_t total, used, free;
};

/*
 * BAR1 usage of the GPU at PCI address bdf: 0, -ENOENT when NVML cannot be
 * loaded, -EIO when it fails (why in err, if not NULL).
 */
int gdcli_nvml_bar1(const char *bdf, struct gdcli_nvml_bar1 *bar1, char *err,
		    int errlen);

/* Driver version as NVML reports it: 0 or negative as above. */
int gdcli_nvml_driver_version(char *buf, int len);

#endif
