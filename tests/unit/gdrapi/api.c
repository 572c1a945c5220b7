// SPDX-License-Identifier: MIT
/*
 * api.c - what libgdrapi does without a device (TAP): the layout of
 * gdrapi.h against gdrcopy 2.6's (sizes, offsets, enum values, macros),
 * the version calls, the mapping-type strings, the 40-byte v1 gdr_get_info
 * symbol, the strict backend variable and the errors for bad arguments.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gdrapi.h>

#include "tap.h"

static void is(long got, long want, const char *what)
{
	char buf[160];

	snprintf(buf, sizeof(buf), "%s: %ld (want %ld)", what, got, want);
	tap_ok(got == want, "%s", buf);
}

/* gdrcopy 2.0-2.2's gdr_info, as NCCL still declares it. */
struct info_v1 {
	uint64_t va, mapped_size;
	uint32_t page_size;
	uint64_t tm_cycles;
	uint32_t cycles_per_ms;
	unsigned mapped:1, wc_mapping:1;
};
#undef gdr_get_info
int gdr_get_info(gdr_t g, gdr_mh_t handle, struct info_v1 *info);

static void layout(void)
{
	is(sizeof(gdr_info_v2_t), 48, "sizeof(gdr_info_v2_t)");
	is(sizeof(gdr_info_t), 48, "sizeof(gdr_info_t)");
	is(offsetof(gdr_info_v2_t, va), 0, "offsetof va");
	is(offsetof(gdr_info_v2_t, mapped_size), 8, "offsetof mapped_size");
	is(offsetof(gdr_info_v2_t, page_size), 16, "offsetof page_size");
	is(offsetof(gdr_info_v2_t, tm_cycles), 24, "offsetof tm_cycles");
	is(offsetof(gdr_info_v2_t, cycles_per_ms), 32, "offsetof cycles_per_ms");
	is(offsetof(gdr_info_v2_t, mapping_type), 40, "offsetof mapping_type");
	is(sizeof(struct info_v1), 40, "sizeof v1 gdr_info");
	is(sizeof(gdr_mh_t), sizeof(unsigned long), "sizeof(gdr_mh_t)");
	is(sizeof(gdr_mapping_type_t), 4, "sizeof(gdr_mapping_type_t)");
	is(GDR_MAPPING_TYPE_NONE, 0, "GDR_MAPPING_TYPE_NONE");
	is(GDR_MAPPING_TYPE_WC, 1, "GDR_MAPPING_TYPE_WC");
	is(GDR_MAPPING_TYPE_CACHING, 2, "GDR_MAPPING_TYPE_CACHING");
	is(GDR_MAPPING_TYPE_DEVICE, 3, "GDR_MAPPING_TYPE_DEVICE");
	is(GDR_MAPPING_TYPE_MAX, 4, "GDR_MAPPING_TYPE_MAX");
	is(GDR_MAP_FLAG_DEFAULT, 0, "GDR_MAP_FLAG_DEFAULT");
	is(GDR_MAP_FLAG_REQ_WC_MAPPING, 1, "GDR_MAP_FLAG_REQ_WC_MAPPING");
	is(GDR_MAP_FLAG_REQ_CACHE_MAPPING, 2, "GDR_MAP_FLAG_REQ_CACHE_MAPPING");
	is(GDR_MAP_FLAG_REQ_DEVICE_MAPPING, 3, "GDR_MAP_FLAG_REQ_DEVICE_MAPPING");
	is(GDR_PIN_FLAG_DEFAULT, 0, "GDR_PIN_FLAG_DEFAULT");
	is(GDR_PIN_FLAG_FORCE_PCIE, 1, "GDR_PIN_FLAG_FORCE_PCIE");
	is(GDR_ATTR_USE_PERSISTENT_MAPPING, 1, "GDR_ATTR_USE_PERSISTENT_MAPPING");
	is(GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE, 2, "GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE");
	is(GDR_ATTR_USING_DMA_BUF_MMAP, 3, "GDR_ATTR_USING_DMA_BUF_MMAP");
	is(GDR_ATTR_MAX, 4, "GDR_ATTR_MAX");
	is(GPU_PAGE_SHIFT, 16, "GPU_PAGE_SHIFT");
	is((long)GPU_PAGE_SIZE, 65536, "GPU_PAGE_SIZE");
	is((long)GPU_PAGE_OFFSET, 65535, "GPU_PAGE_OFFSET");
	tap_ok(GPU_PAGE_MASK == ~0xffffUL, "GPU_PAGE_MASK");
	is(MAJOR_VERSION_SHIFT, 16, "MAJOR_VERSION_SHIFT");
	is(MINOR_VERSION_MASK, 0xffff, "MINOR_VERSION_MASK");
	is(GDR_API_VERSION, (2 << 16) | 6, "GDR_API_VERSION");
	is(MINIMUM_GDRDRV_VERSION, 2 << 16, "MINIMUM_GDRDRV_VERSION");
}

static void versions_and_strings(void)
{
	static const char *const want[] = {
		"None", "Write Combining", "Caching", "Device",
	};
	const char *s = NULL;
	int major = -1, minor = -1;

	gdr_runtime_get_version(&major, &minor);
	tap_ok(major == 2 && minor == 6, "gdr_runtime_get_version: 2.6");
	/* NVSHMEM: same major, minor at least the one it was built with. */
	tap_ok(major == GDR_API_MAJOR_VERSION && minor >= GDR_API_MINOR_VERSION,
	   "the runtime version satisfies NVSHMEM's and NCCL's checks");
	for (int t = 0; t < 4; t++) {
		s = NULL;
		tap_ok(gdr_get_mapping_type_string((gdr_mapping_type_t)t, &s) == 0 &&
		   s && !strcmp(s, want[t]), "%s", want[t]);
	}
	is(gdr_get_mapping_type_string(GDR_MAPPING_TYPE_MAX, &s), EINVAL,
	   "GDR_MAPPING_TYPE_MAX has no string");
	is(gdr_get_mapping_type_string((gdr_mapping_type_t)-1, &s), EINVAL,
	   "mapping type -1 has no string");
	is(gdr_get_mapping_type_string(GDR_MAPPING_TYPE_WC, NULL), EINVAL,
	   "NULL string pointer");
}

static void bad_arguments(void)
{
	gdr_mh_t h = { 0 }, junk = { 12345 };
	gdr_info_v2_t info;
	struct info_v1 info1;
	static uint64_t zeros[64];
	char buf[16];
	void *va = NULL;
	int v, major, minor;

	is(gdr_close(NULL), EINVAL, "gdr_close(NULL)");
	is(gdr_pin_buffer(NULL, 0x10000, 65536, 0, 0, &h), EINVAL, "pin on NULL");
	is(gdr_pin_buffer_v2(NULL, 0x10000, 65536, 0, &h), EINVAL, "pin_v2 on NULL");
	is(gdr_unpin_buffer(NULL, h), EINVAL, "unpin on NULL");
	is(gdr_get_callback_flag(NULL, h, &v), EINVAL, "get_callback_flag on NULL");
	is(gdr_get_info_v2(NULL, h, &info), EINVAL, "get_info_v2 on NULL");
	is(gdr_get_info(NULL, h, &info1), EINVAL, "v1 get_info on NULL");
	is(gdr_map(NULL, h, &va, 65536), EINVAL, "map on NULL");
	is(gdr_map_v2(NULL, h, &va, 65536, 0), EINVAL, "map_v2 on NULL");
	is(gdr_unmap(NULL, h, va, 65536), EINVAL, "unmap on NULL");
	is(gdr_driver_get_version(NULL, &major, &minor), EINVAL, "driver_get_version on NULL");
	is(gdr_get_attribute(NULL, GDR_ATTR_USE_PERSISTENT_MAPPING, &v), EINVAL,
	   "get_attribute on NULL");
	is(gdr_copy_to_mapping(h, buf, buf, 1), EINVAL, "copy_to_mapping, null handle");
	is(gdr_copy_from_mapping(h, buf, buf, 1), EINVAL, "copy_from_mapping, null handle");
	/* A handle that points at no pin of ours (zeroed memory). */
	junk.h = (unsigned long)zeros;
	is(gdr_copy_to_mapping(junk, buf, buf, 1), EINVAL, "copy_to_mapping, foreign handle");
}

static void open_errors(void)
{
	gdr_t g;

	setenv("GDIRECT_GDRAPI_BACKEND", "gdirrect", 1);
	errno = 0;
	g = gdr_open();
	tap_ok(!g && errno == EINVAL, "GDIRECT_GDRAPI_BACKEND=gdirrect (a typo): gdr_open fails, EINVAL");
	if (g)
		gdr_close(g);
	setenv("GDIRECT_GDRAPI_BACKEND", "GDRDRV", 1);
	errno = 0;
	g = gdr_open();
	tap_ok(!g && errno == EINVAL, "GDIRECT_GDRAPI_BACKEND=GDRDRV (case matters): EINVAL");
	if (g)
		gdr_close(g);
	setenv("GDIRECT_GDRAPI_BACKEND", "gdrdrv", 1);
	if (access("/dev/gdrdrv", F_OK) == 0) {
		tap_skip("no /dev/gdrdrv: gdr_open returns NULL, ENOENT", "/dev/gdrdrv exists here");
	} else {
		errno = 0;
		g = gdr_open();
		tap_ok(!g && errno == ENOENT, "no /dev/gdrdrv: gdr_open returns NULL, ENOENT");
		if (g)
			gdr_close(g);
	}
	unsetenv("GDIRECT_GDRAPI_BACKEND");
}

int main(void)
{
	layout();
	versions_and_strings();
	bad_arguments();
	open_errors();
	return tap_done();
}
