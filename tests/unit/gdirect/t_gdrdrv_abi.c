// SPDX-License-Identifier: MIT
/*
 * t_gdrdrv_abi - include/uapi/gdrdrv.h against gdrcopy 2.6's interface
 *
 * The request numbers, structure sizes and field offsets below are facts of
 * gdrcopy's gdrdrv (NVIDIA's libgdrapi sends exactly these bytes); they are
 * written out as literals so that a change to the header fails the build.
 * The run-time part prints them as TAP for the log.
 */
#include <stddef.h>
#include <stdio.h>

#include "gdrdrv.h"
#include "tap.h"

#define SZ(t)		sizeof(struct t)
#define OFF(t, f)	offsetof(struct t, f)

/* LP64 only: the pointer-size encodings below assume 8-byte pointers. */
_Static_assert(sizeof(void *) == 8, "LP64 expected");

_Static_assert(GDRDRV_IOCTL == 0xDA, "magic");
_Static_assert(GDRDRV_VERSION == 0x20006, "driver version 2.6");
_Static_assert(MINIMUM_GDR_API_VERSION == 0x20000, "minimum library 2.0");

/* 1 and 7 encode sizeof(struct), 40 and 32; the others sizeof(pointer). */
_Static_assert(GDRDRV_IOC_PIN_BUFFER == 0xC028DA01u, "PIN_BUFFER");
_Static_assert(GDRDRV_IOC_UNPIN_BUFFER == 0xC008DA02u, "UNPIN_BUFFER");
_Static_assert(GDRDRV_IOC_GET_CB_FLAG == 0xC008DA03u, "GET_CB_FLAG");
_Static_assert(GDRDRV_IOC_GET_INFO == 0xC008DA04u, "GET_INFO");
_Static_assert(GDRDRV_IOC_GET_INFO_V2 == 0xC008DA05u, "GET_INFO_V2");
_Static_assert(GDRDRV_IOC_GET_ATTR == 0xC008DA06u, "GET_ATTR");
_Static_assert(GDRDRV_IOC_PIN_BUFFER_V2 == 0xC020DA07u, "PIN_BUFFER_V2");
_Static_assert(GDRDRV_IOC_REQ_MAPPING_TYPE == 0xC008DA08u, "REQ_MAPPING_TYPE");
_Static_assert(GDRDRV_IOC_GET_VERSION == 0xC008DAFFu, "GET_VERSION");

_Static_assert(SZ(GDRDRV_IOC_PIN_BUFFER_PARAMS) == 40, "pin size");
_Static_assert(OFF(GDRDRV_IOC_PIN_BUFFER_PARAMS, size) == 8, "pin.size");
_Static_assert(OFF(GDRDRV_IOC_PIN_BUFFER_PARAMS, p2p_token) == 16, "pin.tok");
_Static_assert(OFF(GDRDRV_IOC_PIN_BUFFER_PARAMS, va_space) == 24, "pin.vas");
_Static_assert(OFF(GDRDRV_IOC_PIN_BUFFER_PARAMS, handle) == 32, "pin.handle");

_Static_assert(SZ(GDRDRV_IOC_UNPIN_BUFFER_PARAMS) == 8, "unpin size");

_Static_assert(SZ(GDRDRV_IOC_GET_CB_FLAG_PARAMS) == 16, "cb size");
_Static_assert(OFF(GDRDRV_IOC_GET_CB_FLAG_PARAMS, flag) == 8, "cb.flag");

_Static_assert(SZ(GDRDRV_IOC_GET_INFO_PARAMS) == 48, "info size");
_Static_assert(OFF(GDRDRV_IOC_GET_INFO_PARAMS, va) == 8, "info.va");
_Static_assert(OFF(GDRDRV_IOC_GET_INFO_PARAMS, mapped_size) == 16, "info.ms");
_Static_assert(OFF(GDRDRV_IOC_GET_INFO_PARAMS, page_size) == 24, "info.ps");
_Static_assert(OFF(GDRDRV_IOC_GET_INFO_PARAMS, tsc_khz) == 28, "info.tsc");
_Static_assert(OFF(GDRDRV_IOC_GET_INFO_PARAMS, tm_cycles) == 32, "info.tm");
_Static_assert(OFF(GDRDRV_IOC_GET_INFO_PARAMS, mapped) == 40, "info.mapped");
_Static_assert(OFF(GDRDRV_IOC_GET_INFO_PARAMS, wc_mapping) == 44, "info.wc");

_Static_assert(SZ(GDRDRV_IOC_GET_INFO_V2_PARAMS) == 48, "info2 size");
_Static_assert(OFF(GDRDRV_IOC_GET_INFO_V2_PARAMS, va) == 8, "info2.va");
_Static_assert(OFF(GDRDRV_IOC_GET_INFO_V2_PARAMS, mapped_size) == 16, "i2.ms");
_Static_assert(OFF(GDRDRV_IOC_GET_INFO_V2_PARAMS, page_size) == 24, "i2.ps");
_Static_assert(OFF(GDRDRV_IOC_GET_INFO_V2_PARAMS, tsc_khz) == 28, "i2.tsc");
_Static_assert(OFF(GDRDRV_IOC_GET_INFO_V2_PARAMS, tm_cycles) == 32, "i2.tm");
_Static_assert(OFF(GDRDRV_IOC_GET_INFO_V2_PARAMS, mapping_type) == 40, "i2.mt");

_Static_assert(SZ(GDRDRV_IOC_GET_ATTR_PARAMS) == 8, "attr size");
_Static_assert(OFF(GDRDRV_IOC_GET_ATTR_PARAMS, val) == 4, "attr.val");

_Static_assert(SZ(GDRDRV_IOC_PIN_BUFFER_V2_PARAMS) == 32, "pin2 size");
_Static_assert(OFF(GDRDRV_IOC_PIN_BUFFER_V2_PARAMS, size) == 8, "pin2.size");
_Static_assert(OFF(GDRDRV_IOC_PIN_BUFFER_V2_PARAMS, flags) == 16, "pin2.flags");
_Static_assert(OFF(GDRDRV_IOC_PIN_BUFFER_V2_PARAMS, pad) == 20, "pin2.pad");
_Static_assert(OFF(GDRDRV_IOC_PIN_BUFFER_V2_PARAMS, handle) == 24, "pin2.h");

_Static_assert(SZ(GDRDRV_IOC_REQ_MAPPING_TYPE_PARAMS) == 16, "req size");
_Static_assert(OFF(GDRDRV_IOC_REQ_MAPPING_TYPE_PARAMS, mapping_type) == 8,
	       "req.mapping_type");

_Static_assert(SZ(GDRDRV_IOC_GET_VERSION_PARAMS) == 8, "version size");
_Static_assert(OFF(GDRDRV_IOC_GET_VERSION_PARAMS, minimum_gdr_api_version) == 4,
	       "version.min");

_Static_assert(GDR_MR_NONE == 0 && GDR_MR_WC == 1 && GDR_MR_CACHING == 2 &&
	       GDR_MR_DEVICE == 3, "mapping types");
_Static_assert(GDRDRV_ATTR_USE_PERSISTENT_MAPPING == 1 &&
	       GDRDRV_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE == 2, "attributes");
_Static_assert(GDRDRV_PIN_BUFFER_FLAG_DEFAULT == 0 &&
	       GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE == 1, "pin flags");
_Static_assert(sizeof(gdr_hnd_t) == 8, "handle");

/* The assertions above are the checks (the build fails); these lines log. */
static void show(const char *name, unsigned long v)
{
	tap_ok(1, "%s = %#lx", name, v);
}

int main(void)
{
	show("GDRDRV_IOC_PIN_BUFFER", GDRDRV_IOC_PIN_BUFFER);
	show("GDRDRV_IOC_UNPIN_BUFFER", GDRDRV_IOC_UNPIN_BUFFER);
	show("GDRDRV_IOC_GET_CB_FLAG", GDRDRV_IOC_GET_CB_FLAG);
	show("GDRDRV_IOC_GET_INFO", GDRDRV_IOC_GET_INFO);
	show("GDRDRV_IOC_GET_INFO_V2", GDRDRV_IOC_GET_INFO_V2);
	show("GDRDRV_IOC_GET_ATTR", GDRDRV_IOC_GET_ATTR);
	show("GDRDRV_IOC_PIN_BUFFER_V2", GDRDRV_IOC_PIN_BUFFER_V2);
	show("GDRDRV_IOC_REQ_MAPPING_TYPE", GDRDRV_IOC_REQ_MAPPING_TYPE);
	show("GDRDRV_IOC_GET_VERSION", GDRDRV_IOC_GET_VERSION);
	show("GDRDRV_VERSION", GDRDRV_VERSION);
	return tap_done();
}
