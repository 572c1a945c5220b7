/* SPDX-License-Identifier: MIT */
/*
 * nv-p2p.h - the NVIDIA peer-to-peer kernel API, as exported by nvp2p_emu.ko
 *
 * This header declares the same ABI as the NVIDIA driver's nv-p2p.h: the same
 * struct layouts, version numbers, enums and prototypes, so a third-party
 * driver builds unchanged against either.  It is written from the public
 * documentation ("GPUDirect RDMA", NVIDIA, chapter 13.3) and the published
 * layout of the structures; see docs/emulator.md.
 *
 * The typedefs (nvidia_p2p_page_table_t, ...) are part of that ABI: drivers
 * and the guide's own samples use them, so they stay despite kernel style.
 *
 * The page-table version is chosen at build time:
 *   default                       0x00020000 (driver 580 and later, has flags)
 *   -DNVP2P_EMU_PAGE_TABLE_V1     0x00010002 (drivers 515 to 575, no flags)
 *   -DNVP2P_EMU_TEGRA             the Tegra interface instead (13.4.2;
 *                                 nv-p2p-tegra.h)
 */
#ifndef _NV_P2P_H_
#define _NV_P2P_H_

#ifdef NVP2P_EMU_TEGRA
#include "nv-p2p-tegra.h"
#else

#include <linux/types.h>

struct pci_dev;

/* Version words: major in the high 16 bits, minor in the low 16 bits. */
#define NVIDIA_P2P_MAJOR_VERSION_MASK	0xffff0000
#define NVIDIA_P2P_MINOR_VERSION_MASK	0x0000ffff

#define NVIDIA_P2P_MAJOR_VERSION(v) \
	(((v) & NVIDIA_P2P_MAJOR_VERSION_MASK) >> 16)
#define NVIDIA_P2P_MINOR_VERSION(v) \
	(((v) & NVIDIA_P2P_MINOR_VERSION_MASK))

#define NVIDIA_P2P_MAJOR_VERSION_MATCHES(p, v) \
	(NVIDIA_P2P_MAJOR_VERSION((p)->version) == NVIDIA_P2P_MAJOR_VERSION(v))

/*
 * A structure is compatible when its major version matches and its minor
 * version is at least the one this header was written against.
 */
#define NVIDIA_P2P_VERSION_COMPATIBLE(p, v) \
	(NVIDIA_P2P_MAJOR_VERSION_MATCHES(p, v) && \
	 (NVIDIA_P2P_MINOR_VERSION((p)->version) >= \
	  (NVIDIA_P2P_MINOR_VERSION(v))))

enum {
	NVIDIA_P2P_ARCHITECTURE_TESLA = 0,
	NVIDIA_P2P_ARCHITECTURE_FERMI,
	NVIDIA_P2P_ARCHITECTURE_CURRENT = NVIDIA_P2P_ARCHITECTURE_FERMI
};

#define NVIDIA_P2P_PARAMS_VERSION	0x00010001

enum {
	NVIDIA_P2P_PARAMS_ADDRESS_INDEX_GPU = 0,
	NVIDIA_P2P_PARAMS_ADDRESS_INDEX_THIRD_PARTY_DEVICE,
	NVIDIA_P2P_PARAMS_ADDRESS_INDEX_MAX =
		NVIDIA_P2P_PARAMS_ADDRESS_INDEX_THIRD_PARTY_DEVICE
};

#define NVIDIA_P2P_GPU_UUID_LEN	16

typedef struct nvidia_p2p_params {
	uint32_t version;
	uint32_t architecture;
	union nvidia_p2p_mailbox_addresses {
		struct {
			uint64_t wmb_addr;
			uint64_t wmb_data;
			uint64_t rreq_addr;
			uint64_t rcomp_addr;
			uint64_t reserved[2];
		} fermi;
	} addresses[NVIDIA_P2P_PARAMS_ADDRESS_INDEX_MAX + 1];
} nvidia_p2p_params_t;

/* The persistent get/put entry points exist (driver 525.105.17, 535.14+). */
#define NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API

/* Flags of nvidia_p2p_get_pages_persistent(). */
#define NVIDIA_P2P_FLAGS_DEFAULT		0
#define NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING	1

int nvidia_p2p_init_mapping(uint64_t p2p_token,
			    struct nvidia_p2p_params *params,
			    void (*destroy_callback)(void *data),
			    void *data);

int nvidia_p2p_destroy_mapping(uint64_t p2p_token);

enum nvidia_p2p_page_size_type {
	NVIDIA_P2P_PAGE_SIZE_4KB = 0,
	NVIDIA_P2P_PAGE_SIZE_64KB,
	NVIDIA_P2P_PAGE_SIZE_128KB,
	NVIDIA_P2P_PAGE_SIZE_COUNT
};

typedef struct nvidia_p2p_page {
	uint64_t physical_address;
	union nvidia_p2p_request_registers {
		struct {
			uint32_t wreqmb_h;
			uint32_t rreqmb_h;
			uint32_t rreqmb_0;
			uint32_t reserved[3];
		} fermi;
	} registers;
} nvidia_p2p_page_t;

#ifdef NVP2P_EMU_PAGE_TABLE_V1
#define NVIDIA_P2P_PAGE_TABLE_VERSION	0x00010002
#else
#define NVIDIA_P2P_PAGE_TABLE_VERSION	0x00020000
/* page_table->flags: the memory may be mapped cacheable by the CPU. */
#define NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE	0x1
#endif

#define NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(p) \
	NVIDIA_P2P_VERSION_COMPATIBLE(p, NVIDIA_P2P_PAGE_TABLE_VERSION)

typedef struct nvidia_p2p_page_table {
	uint32_t version;
	uint32_t page_size; /* enum nvidia_p2p_page_size_type */
	struct nvidia_p2p_page **pages;
	uint32_t entries;
	uint8_t *gpu_uuid;
#ifndef NVP2P_EMU_PAGE_TABLE_V1
	uint32_t flags;
#endif
} nvidia_p2p_page_table_t;

int nvidia_p2p_get_pages(uint64_t p2p_token, uint32_t va_space,
			 uint64_t virtual_address, uint64_t length,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data);

int nvidia_p2p_get_pages_persistent(uint64_t virtual_address,
				    uint64_t length,
				    struct nvidia_p2p_page_table **page_table,
				    uint32_t flags);

#define NVIDIA_P2P_DMA_MAPPING_VERSION	0x00020003

#define NVIDIA_P2P_DMA_MAPPING_VERSION_COMPATIBLE(p) \
	NVIDIA_P2P_VERSION_COMPATIBLE(p, NVIDIA_P2P_DMA_MAPPING_VERSION)

struct pci_dev;

typedef struct nvidia_p2p_dma_mapping {
	uint32_t version;
	enum nvidia_p2p_page_size_type page_size_type;
	uint32_t entries;
	uint64_t *dma_addresses;
	void *private;
	struct pci_dev *pci_dev;
} nvidia_p2p_dma_mapping_t;

int nvidia_p2p_dma_map_pages(struct pci_dev *peer,
			     struct nvidia_p2p_page_table *page_table,
			     struct nvidia_p2p_dma_mapping **dma_mapping);

int nvidia_p2p_dma_unmap_pages(struct pci_dev *peer,
			       struct nvidia_p2p_page_table *page_table,
			       struct nvidia_p2p_dma_mapping *dma_mapping);

int nvidia_p2p_put_pages(uint64_t p2p_token, uint32_t va_space,
			 uint64_t virtual_address,
			 struct nvidia_p2p_page_table *page_table);

int nvidia_p2p_put_pages_persistent(uint64_t virtual_address,
				    struct nvidia_p2p_page_table *page_table,
				    uint32_t flags);

int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table);

int nvidia_p2p_free_dma_mapping(struct nvidia_p2p_dma_mapping *dma_mapping);

#endif /* NVP2P_EMU_TEGRA */
#endif /* _NV_P2P_H_ */
