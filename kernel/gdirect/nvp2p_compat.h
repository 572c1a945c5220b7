/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place that knows which nv-p2p flavour we build on
 *
 * Desktop (dGPU): nv-p2p.h of the NVIDIA driver or include/nvidia/nv-p2p.h
 * (the same interface), whichever the build put on the include path.
 * Tegra (GDIRECT_TEGRA): the 13.4 interface, from the board's
 * <linux/nv-p2p.h> (with GDIRECT_TEGRA_SYSTEM_HEADER) or from
 * include/nvidia/nv-p2p-tegra.h, which nv-p2p.h includes when the build
 * asks for it.
 * The rest of the module calls NVIDIA only through the gd_nv_*() helpers
 * below, and names its types and constants.
 */
#ifndef GDIRECT_NVP2P_COMPAT_H
#define GDIRECT_NVP2P_COMPAT_H

#include <linux/dma-direction.h>
#include <linux/mm.h>
#include <linux/pci.h>

#if defined(GDIRECT_TEGRA) && defined(GDIRECT_TEGRA_SYSTEM_HEADER)
#include <linux/nv-p2p.h>
#else
#include "nv-p2p.h"
#endif
#include <linux/err.h>
#include <linux/slab.h>

/*
 * The provider (GDIRECT_PROVIDER_*, which the INFO ioctl reports) is named
 * by the build: Kbuild for an NVIDIA driver it finds, the caller for a
 * provider whose symbols it passes (scripts/build-modules.sh).  The module
 * guesses none, so that a build against the wrong provider fails here.
 */
#ifndef GDIRECT_PROVIDER
#error "GDIRECT_PROVIDER is not set: build through kernel/gdirect/Kbuild"
#endif

#if defined(NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API) && !defined(GDIRECT_TEGRA)
#define GD_HAVE_PERSISTENT	1
#else
#define GD_HAVE_PERSISTENT	0
#endif

/* Both interfaces free what a free callback was handed the same way. */
static inline int gd_nv_free_page_table(struct nvidia_p2p_page_table *pt)
{
	return nvidia_p2p_free_page_table(pt);
}

static inline int gd_nv_free_dma_mapping(struct nvidia_p2p_dma_mapping *dma)
{
	return nvidia_p2p_free_dma_mapping(dma);
}

#if GD_HAVE_PERSISTENT
/* Token-less pins with no free callback (pin.c, use_persistent). */
static inline int gd_nv_get_pages_persistent(u64 va, u64 len,
					     struct nvidia_p2p_page_table **pt)
{
	return nvidia_p2p_get_pages_persistent(va, len, pt,
					       NVIDIA_P2P_FLAGS_DEFAULT);
}

static inline int gd_nv_put_pages_persistent(u64 va,
					     struct nvidia_p2p_page_table *pt)
{
	return nvidia_p2p_put_pages_persistent(va, pt, 0);
}
#endif

#ifdef GDIRECT_TEGRA

/*
 * L4T's put_pages works on the table it is given, whoever registered it:
 * a stale pointer reaches any process's new table ("no get_pages beside
 * put_pages", pin.c).
 */
#define GD_PUT_PER_PROCESS	0

static inline int gd_nv_get_pages(u64 token, u32 va_space, u64 va, u64 len,
				  struct nvidia_p2p_page_table **pt,
				  void (*cb)(void *data), void *data)
{
	if (token || va_space)
		return -EINVAL;	/* Tegra has no tokens */
	return nvidia_p2p_get_pages(va, len, pt, cb, data);
}

static inline int gd_nv_put_pages(u64 token, u32 va_space, u64 va,
				  struct nvidia_p2p_page_table *pt)
{
	/* On Tegra this also runs our free callback, synchronously. */
	return nvidia_p2p_put_pages(pt);
}

static inline int gd_nv_dma_map(struct pci_dev *peer,
				struct nvidia_p2p_page_table *pt,
				struct nvidia_p2p_dma_mapping **dma)
{
	return nvidia_p2p_dma_map_pages(&peer->dev, pt, dma, DMA_BIDIRECTIONAL);
}

static inline int gd_nv_dma_unmap(struct pci_dev *peer,
				  struct nvidia_p2p_page_table *pt,
				  struct nvidia_p2p_dma_mapping *dma)
{
	return nvidia_p2p_dma_unmap_pages(dma);
}

static inline u64 gd_nv_page_phys(struct nvidia_p2p_page_table *pt, u32 i)
{
	return page_to_phys(pt->pages[i]);
}

/*
 * One bus address per 64 KiB page of @len bytes, from the mapping's runs
 * (hw_address[i], hw_len[i]), which may be of any length: a page may span
 * runs whose bus addresses follow each other.  An array kvmalloc'ed with
 * @gfp, or an ERR_PTR: -EIO for a mapping shorter than @len or a page that
 * is not contiguous in bus space.
 */
static inline u64 *gd_nv_dma_pages(struct nvidia_p2p_dma_mapping *dma,
				   u64 len, gfp_t gfp)
{
	u64 n = len >> 16, p, eoff = 0, *bus;
	u32 e = 0;

	bus = kvmalloc_array(n, sizeof(*bus), gfp);
	if (!bus)
		return ERR_PTR(-ENOMEM);
	for (p = 0; p < n; p++) {
		u64 need = SZ_64K, next = 0;

		while (need) {
			u64 at, take;

			while (e < dma->entries && eoff == dma->hw_len[e]) {
				e++;
				eoff = 0;
			}
			if (e == dma->entries)
				goto bad;
			at = dma->hw_address[e] + eoff;
			if (need == SZ_64K)
				bus[p] = at;
			else if (at != next)
				goto bad;
			take = min_t(u64, dma->hw_len[e] - eoff, need);
			next = at + take;
			eoff += take;
			need -= take;
		}
	}
	return bus;
bad:
	kvfree(bus);
	return ERR_PTR(-EIO);
}

/* Runs, not pages: gdirect keeps its own per-page array (gd_reg.bus). */
static inline const u64 *gd_nv_dma_addrs(struct nvidia_p2p_dma_mapping *dma)
{
	return NULL;
}

static inline bool gd_nv_page_size_ok(struct nvidia_p2p_page_table *pt)
{
	return pt->page_size == NVIDIA_P2P_PAGE_SIZE_4KB ||
	       pt->page_size == NVIDIA_P2P_PAGE_SIZE_64KB;
}

static inline u64 gd_nv_page_bytes(struct nvidia_p2p_page_table *pt)
{
	return pt->page_size == NVIDIA_P2P_PAGE_SIZE_4KB ? SZ_4K : SZ_64K;
}

static inline bool gd_nv_cpu_cacheable(struct nvidia_p2p_page_table *pt)
{
	return true;	/* 13.4.3: default cudaHostAlloc memory is cached */
}

#else /* desktop */

/*
 * A token-less put_pages finds its table among the calling process's
 * registrations only (RmP2PGetInfoWithoutToken() in NVIDIA's p2p.c).
 */
#define GD_PUT_PER_PROCESS	1

static inline int gd_nv_get_pages(u64 token, u32 va_space, u64 va, u64 len,
				  struct nvidia_p2p_page_table **pt,
				  void (*cb)(void *data), void *data)
{
	return nvidia_p2p_get_pages(token, va_space, va, len, pt, cb, data);
}

static inline int gd_nv_put_pages(u64 token, u32 va_space, u64 va,
				  struct nvidia_p2p_page_table *pt)
{
	return nvidia_p2p_put_pages(token, va_space, va, pt);
}

static inline int gd_nv_dma_map(struct pci_dev *peer,
				struct nvidia_p2p_page_table *pt,
				struct nvidia_p2p_dma_mapping **dma)
{
	return nvidia_p2p_dma_map_pages(peer, pt, dma);
}

static inline int gd_nv_dma_unmap(struct pci_dev *peer,
				  struct nvidia_p2p_page_table *pt,
				  struct nvidia_p2p_dma_mapping *dma)
{
	return nvidia_p2p_dma_unmap_pages(peer, pt, dma);
}

static inline u64 gd_nv_page_phys(struct nvidia_p2p_page_table *pt, u32 i)
{
	return pt->pages[i]->physical_address;
}

/* Desktop mappings are per 64 KiB page already: NULL, use gd_nv_dma_addrs. */
static inline u64 *gd_nv_dma_pages(struct nvidia_p2p_dma_mapping *dma,
				   u64 len, gfp_t gfp)
{
	return dma->entries == len >> 16 ? NULL : ERR_PTR(-EIO);
}

static inline const u64 *gd_nv_dma_addrs(struct nvidia_p2p_dma_mapping *dma)
{
	return dma->dma_addresses;
}

/* nvidia_p2p_dma_map_pages() BUG()s on anything but 64 or 128 KiB. */
static inline bool gd_nv_page_size_ok(struct nvidia_p2p_page_table *pt)
{
	return pt->page_size == NVIDIA_P2P_PAGE_SIZE_64KB;
}

static inline u64 gd_nv_page_bytes(struct nvidia_p2p_page_table *pt)
{
	return SZ_64K;
}

/* Only a 2.x table has the flags word; a 1.x one is never cacheable. */
static inline bool gd_nv_cpu_cacheable(struct nvidia_p2p_page_table *pt)
{
#ifdef NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE
	return pt->flags & NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE;
#else
	return false;
#endif
}

#endif /* GDIRECT_TEGRA */

#endif /* GDIRECT_NVP2P_COMPAT_H */
