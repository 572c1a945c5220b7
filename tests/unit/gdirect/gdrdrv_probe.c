// SPDX-License-Identifier: MIT
/*
 * gdrdrv_probe.c - print the binary interface that a gdrdrv.h declares
 *
 * gdrdrv-peer.sh compiles this file twice, once with -include of
 * gdrcopy's own header from its release tarball and once with ours
 * (include/uapi/gdrdrv.h), runs both and compares the output line by line.
 * Each line is "name value": every request number, every structure's size
 * and every member's offset, the version constants, the enumerations and
 * the flags.  A name that one header lacks fails that compilation, so the
 * comparison cannot pass by leaving a line out.  The header comes from the
 * command line, because the two must not see each other.
 */
#include <stddef.h>
#include <stdio.h>

#define P(name)		printf("%s %#llx\n", #name, (unsigned long long)(name))
#define SZ(s)		printf("sizeof(%s) %zu\n", #s, sizeof(struct s))
#define OFF(s, m)	printf("offsetof(%s,%s) %zu\n", #s, #m, \
			       offsetof(struct s, m))

int main(void)
{
	P(GDRDRV_IOCTL);
	P(GDRDRV_MAJOR_VERSION_SHIFT);
	P(GDRDRV_MAJOR_VERSION);
	P(GDRDRV_MINOR_VERSION);
	P(GDRDRV_VERSION);
	P(MINIMUM_GDR_API_MAJOR_VERSION);
	P(MINIMUM_GDR_API_MINOR_VERSION);
	P(MINIMUM_GDR_API_VERSION);
	P(GDRDRV_MINIMUM_VERSION_WITH_GET_INFO_V2);
	P(GDRDRV_MINIMUM_VERSION_WITH_GET_ATTR);
	P(GDRDRV_MINIMUM_VERSION_WITH_PIN_BUFFER_V2);
	P(GDRDRV_MINIMUM_VERSION_WITH_REQ_MAPPING_TYPE);

	P(GDRDRV_IOC_PIN_BUFFER);
	P(GDRDRV_IOC_UNPIN_BUFFER);
	P(GDRDRV_IOC_GET_CB_FLAG);
	P(GDRDRV_IOC_GET_INFO);
	P(GDRDRV_IOC_GET_INFO_V2);
	P(GDRDRV_IOC_GET_ATTR);
	P(GDRDRV_IOC_PIN_BUFFER_V2);
	P(GDRDRV_IOC_REQ_MAPPING_TYPE);
	P(GDRDRV_IOC_GET_VERSION);

	P(GDR_MR_NONE);
	P(GDR_MR_WC);
	P(GDR_MR_CACHING);
	P(GDR_MR_DEVICE);
	P(GDRDRV_ATTR_USE_PERSISTENT_MAPPING);
	P(GDRDRV_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE);
	P(GDRDRV_PIN_BUFFER_FLAG_DEFAULT);
	P(GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE);
	P(sizeof(gdr_hnd_t));

	SZ(GDRDRV_IOC_PIN_BUFFER_PARAMS);
	OFF(GDRDRV_IOC_PIN_BUFFER_PARAMS, addr);
	OFF(GDRDRV_IOC_PIN_BUFFER_PARAMS, size);
	OFF(GDRDRV_IOC_PIN_BUFFER_PARAMS, p2p_token);
	OFF(GDRDRV_IOC_PIN_BUFFER_PARAMS, va_space);
	OFF(GDRDRV_IOC_PIN_BUFFER_PARAMS, handle);

	SZ(GDRDRV_IOC_UNPIN_BUFFER_PARAMS);
	OFF(GDRDRV_IOC_UNPIN_BUFFER_PARAMS, handle);

	SZ(GDRDRV_IOC_GET_CB_FLAG_PARAMS);
	OFF(GDRDRV_IOC_GET_CB_FLAG_PARAMS, handle);
	OFF(GDRDRV_IOC_GET_CB_FLAG_PARAMS, flag);

	SZ(GDRDRV_IOC_GET_INFO_PARAMS);
	OFF(GDRDRV_IOC_GET_INFO_PARAMS, handle);
	OFF(GDRDRV_IOC_GET_INFO_PARAMS, va);
	OFF(GDRDRV_IOC_GET_INFO_PARAMS, mapped_size);
	OFF(GDRDRV_IOC_GET_INFO_PARAMS, page_size);
	OFF(GDRDRV_IOC_GET_INFO_PARAMS, tsc_khz);
	OFF(GDRDRV_IOC_GET_INFO_PARAMS, tm_cycles);
	OFF(GDRDRV_IOC_GET_INFO_PARAMS, mapped);
	OFF(GDRDRV_IOC_GET_INFO_PARAMS, wc_mapping);

	SZ(GDRDRV_IOC_GET_INFO_V2_PARAMS);
	OFF(GDRDRV_IOC_GET_INFO_V2_PARAMS, handle);
	OFF(GDRDRV_IOC_GET_INFO_V2_PARAMS, va);
	OFF(GDRDRV_IOC_GET_INFO_V2_PARAMS, mapped_size);
	OFF(GDRDRV_IOC_GET_INFO_V2_PARAMS, page_size);
	OFF(GDRDRV_IOC_GET_INFO_V2_PARAMS, tsc_khz);
	OFF(GDRDRV_IOC_GET_INFO_V2_PARAMS, tm_cycles);
	OFF(GDRDRV_IOC_GET_INFO_V2_PARAMS, mapping_type);

	SZ(GDRDRV_IOC_GET_ATTR_PARAMS);
	OFF(GDRDRV_IOC_GET_ATTR_PARAMS, attr);
	OFF(GDRDRV_IOC_GET_ATTR_PARAMS, val);

	SZ(GDRDRV_IOC_PIN_BUFFER_V2_PARAMS);
	OFF(GDRDRV_IOC_PIN_BUFFER_V2_PARAMS, addr);
	OFF(GDRDRV_IOC_PIN_BUFFER_V2_PARAMS, size);
	OFF(GDRDRV_IOC_PIN_BUFFER_V2_PARAMS, flags);
	OFF(GDRDRV_IOC_PIN_BUFFER_V2_PARAMS, pad);
	OFF(GDRDRV_IOC_PIN_BUFFER_V2_PARAMS, handle);

	SZ(GDRDRV_IOC_REQ_MAPPING_TYPE_PARAMS);
	OFF(GDRDRV_IOC_REQ_MAPPING_TYPE_PARAMS, handle);
	OFF(GDRDRV_IOC_REQ_MAPPING_TYPE_PARAMS, mapping_type);

	SZ(GDRDRV_IOC_GET_VERSION_PARAMS);
	OFF(GDRDRV_IOC_GET_VERSION_PARAMS, gdrdrv_version);
	OFF(GDRDRV_IOC_GET_VERSION_PARAMS, minimum_gdr_api_version);
	return 0;
}
