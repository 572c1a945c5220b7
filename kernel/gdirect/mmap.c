// SPDX-License-Identifier: GPL-2.0
/*
 * CPU mappings of pinned regions and of the status area
 *
 * A region's page table entries are filled on demand, by the fault
 * handler, under the registration's semaphore and only while it is
 * PINNED; mmap() itself installs nothing.  Revocation and unpin flip the
 * state under the same semaphore and then zap every PTE of the region
 * through this file's private address space, so no mapping of a revoked
 * BAR page survives (gdrcopy#54); a fault afterwards gets SIGBUS.
 *
 * Why not io_remap_pfn_range() in mmap(): the kernel links the new VMA
 * into the address space only after ->mmap returns, so a zap running
 * between the two misses it and leaves the PTEs of put pages in place
 * (gdirect-mmaprace).  A fault, by contrast, only ever happens on a
 * linked VMA, and the semaphore orders its PTEs before the zap.
 *
 * VMAs are not copied on fork and cannot be split, so the per-region
 * mapped length stays exact.
 *
 * Write-combining mappings need the memtypes wc.c reserves at pin time.
 *
 * Where the kernel has file_operations.mmap_prepare with
 * vm_operations_struct.mapped (GD_MMAP_PREPARE, kcompat.h), a mapping is
 * set up in two steps: mmap_prepare checks it, decides its type and
 * writes the flags, protection and operations into the descriptor, all
 * before the VMA exists, and counts nothing, since the mapping may still
 * fail after it; ->mapped, once the VMA is established, looks the region
 * up again, counts the mapping and hands the VMA its reference.  Its
 * type must still be the one prepare chose, or the mapping fails.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "gdirect_internal.h"
#include "kcompat.h"

void gd_zap_cpu_mappings(struct gd_reg *r)
{
	if (!r->ctx)
		return;
	unmap_mapping_range(&r->ctx->mapping, r->mmap_base, r->size, 1);
}

static void gd_vm_open(struct vm_area_struct *vma)
{
	struct gd_reg *r = vma->vm_private_data;

	/* mremap() copies the VMA; fork does not (VM_DONTCOPY). */
	gd_reg_get(r);
	atomic64_add(vma->vm_end - vma->vm_start, &r->mapped_len);
}

#ifdef GD_MMAP_PREPARE
/*
 * vm_private_data from mmap_prepare until ->mapped: no region, only the
 * type prepare chose.  ->close sees it where ->mapped failed and the core
 * unmaps the VMA; nothing was counted then, so there is nothing to undo.
 */
#define GD_VMA_PREPARED_UC	((void *)1)
#define GD_VMA_PREPARED_WC	((void *)2)
#endif

static void gd_vm_close(struct vm_area_struct *vma)
{
	struct gd_reg *r = vma->vm_private_data;

#ifdef GD_MMAP_PREPARE
	if (r == GD_VMA_PREPARED_UC || r == GD_VMA_PREPARED_WC)
		return;
#endif
	atomic64_sub(vma->vm_end - vma->vm_start, &r->mapped_len);
	gd_reg_put(r);
}

/*
 * Fill the GPU page around the fault (16 PTEs of a 64 KiB page), or fail
 * with SIGBUS once the region is revoked or released.  Holding sem for
 * read orders these PTEs before the zap of a revocation, which flips the
 * state under sem held for write; lock order: mmap_lock, then sem.
 */
static vm_fault_t gd_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct gd_reg *r = vma->vm_private_data;
	u64 roff, pb, first, last, off, phys;
	unsigned long addr;
	vm_fault_t ret, one;

	roff = ((u64)vma->vm_pgoff << PAGE_SHIFT) - r->mmap_base;
	down_read(&r->sem);
	if (r->state != GD_PINNED) {
		up_read(&r->sem);
		return VM_FAULT_SIGBUS;
	}
	pb = gd_nv_page_bytes(r->pt);
	off = roff + (vmf->address - vma->vm_start);
	first = max_t(u64, round_down(off, pb), roff);
	last = min_t(u64, round_down(off, pb) + pb,
		     roff + (vma->vm_end - vma->vm_start));
	ret = VM_FAULT_NOPAGE;
	for (off = first; off < last; off += PAGE_SIZE) {
		addr = vma->vm_start + (off - roff);
		phys = gd_nv_page_phys(r->pt, off / pb) + (off & (pb - 1));
		one = vmf_insert_pfn_prot(vma, addr, phys >> PAGE_SHIFT,
					  vma->vm_page_prot);
		/* Only the faulting address must succeed. */
		if (addr == (vmf->address & PAGE_MASK))
			ret = one;
	}
	up_read(&r->sem);
	return ret;
}

static int gd_vm_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

#ifdef GD_MMAP_PREPARE
static int gd_vm_mapped(unsigned long start, unsigned long end, pgoff_t pgoff,
			const struct file *file, void **priv);
#endif

static const struct vm_operations_struct gd_region_vm_ops = {
	.open		= gd_vm_open,
	.close		= gd_vm_close,
	.fault		= gd_vm_fault,
	.GD_VM_OPS_MAY_SPLIT = gd_vm_may_split,
#ifdef GD_MMAP_PREPARE
	.mapped		= gd_vm_mapped,
#endif
};

/*
 * Decide a mapping's type into *@wc and, with @commit, count it; without,
 * only say whether it could be made now.  With @expect, the decision must
 * be *@expect or the mapping is refused with -EBUSY, counting nothing.
 * Shared (@claim NULL): the type GDIRECT_IOC_MAP_TYPE chose, else the page
 * table's, read where the mapping is counted: MAP_TYPE, refused while
 * mapped_len is not 0, then cannot change the type between the two, so
 * the region's live mappings share one type.  Else the mapping must be
 * the region's only one and @claim decides, with r->lock held, so that
 * the decision and the claim of mapped_len are one step for whoever reads
 * both under r->lock.  Lock order: sem, then lock.
 */
static int gd_mmap_account(struct gd_reg *r, u64 roff, unsigned long len,
			   gd_mmap_claim_fn claim, bool commit,
			   const bool *expect, bool *wc)
{
	int ret = 0;

	if (roff >= r->size || len > r->size - roff)
		return -EINVAL;
	down_read(&r->sem);
	if (r->state != GD_PINNED) {
		ret = -ESTALE;
		goto unlock;
	}
	spin_lock(&r->lock);
	if (claim) {
		if (atomic64_read(&r->mapped_len))
			ret = -EBUSY;
		else
			ret = claim(r, wc);
	} else {
		*wc = r->map_type == GDIRECT_MAP_WC ||
		      (r->map_type == GDIRECT_MAP_NATURAL && !r->cpu_cacheable);
	}
	if (!ret && expect && *expect != *wc)
		ret = -EBUSY;
	if (!ret && commit) {
#ifdef GDIRECT_DEBUG_KNOBS
		/* Every live mapping of a region must have one type. */
		if (!claim && atomic64_read(&r->mapped_len) &&
		    r->dbg_wc != *wc)
			atomic64_inc(&gd_stats.dbg_map_type_mismatch);
		r->dbg_wc = *wc;
#endif
		atomic64_add(len, &r->mapped_len);
		atomic64_inc(&gd_stats.mmaps);
	}
	spin_unlock(&r->lock);
unlock:
	up_read(&r->sem);
	return ret;
}

#ifdef GD_MMAP_PREPARE
static int gd_mmap_status_prepare(struct gd_ctx *ctx,
				  struct vm_area_desc *desc)
{
	unsigned long len = vma_desc_size(desc);
	u64 off = (u64)desc->pgoff << PAGE_SHIFT;

	if (off >= GDIRECT_STATUS_BYTES || len > GDIRECT_STATUS_BYTES - off)
		return -EINVAL;
	if (vma_desc_test(desc, VMA_WRITE_BIT))
		return -EACCES;
	vma_desc_clear_flags(desc, VMA_MAYWRITE_BIT);
	/* VM_IO: as in the .mmap below, so that MADV_DOFORK cannot copy it. */
	vma_desc_set_flags(desc, VMA_IO_BIT, VMA_DONTCOPY_BIT,
			   VMA_DONTEXPAND_BIT, VMA_DONTDUMP_BIT);
	mmap_action_map_kernel_pages_full(desc,
					  &ctx->status_pages[desc->pgoff]);
	return 0;
}

/**
 * gd_mmap_region_prepare() - describe a mapping of a pinned region
 * @r: the region, with a reference the caller keeps and puts
 * @desc: the mapping's descriptor, before its VMA exists
 * @roff: offset of the mapping's start in the region
 * @claim: NULL to share the region with other mappings, else the mapping
 *	must be the region's only one, and @claim decides whether and how
 *	it is made (gd_mmap_account())
 *
 * Decides the type and writes the flags, protection and operations into
 * @desc; the mapping is counted and takes its own reference in ->mapped,
 * which finds the region again from the file and the offset.  Sleeps.
 *
 * Return: 0, -EINVAL (not shared, out of range), -EBUSY, @claim's error,
 * or -ESTALE when the region is no longer pinned.
 */
int gd_mmap_region_prepare(struct gd_reg *r, struct vm_area_desc *desc,
			   u64 roff, gd_mmap_claim_fn claim)
{
	bool wc = false;
	int ret;

	/* Shared only, as gd_mmap_region() says. */
	if (!vma_desc_test(desc, VMA_SHARED_BIT))
		return -EINVAL;
	ret = gd_mmap_account(r, roff, vma_desc_size(desc), claim, false,
			      NULL, &wc);
	if (ret)
		return ret;
	vma_desc_set_flags(desc, VMA_IO_BIT, VMA_PFNMAP_BIT, VMA_DONTCOPY_BIT,
			   VMA_DONTEXPAND_BIT, VMA_DONTDUMP_BIT);
	if (wc)
		desc->page_prot = gd_pgprot_writecombine(desc->page_prot);
	desc->private_data = wc ? GD_VMA_PREPARED_WC : GD_VMA_PREPARED_UC;
	desc->vm_ops = &gd_region_vm_ops;
	return 0;
}

/*
 * The region a mapping of @ctx at @pgoff names, with a reference, its
 * offset in the region and the claim its device makes; NULL when none.
 */
static struct gd_reg *gd_mmap_find(struct gd_ctx *ctx, unsigned long pgoff,
				   u64 *roff, gd_mmap_claim_fn *claim)
{
	u64 off = (u64)pgoff << PAGE_SHIFT;

	if (ctx->gdrdrv) {
		*roff = 0;
		*claim = gd_gdr_claim;
		return gd_gdr_find(ctx, pgoff);
	}
	*roff = off & (BIT_ULL(ctx->mmap_shift) - 1);
	*claim = NULL;
	return gd_ctx_lookup(ctx, off >> ctx->mmap_shift);
}

/*
 * The VMA is established: count the mapping, in the type prepare chose,
 * and give the VMA the lookup's reference.  An error here has the core
 * unmap the VMA, calling ->close with prepare's private data.
 */
static int gd_vm_mapped(unsigned long start, unsigned long end, pgoff_t pgoff,
			const struct file *file, void **priv)
{
	struct gd_ctx *ctx = file->private_data;
	bool expect = *priv == GD_VMA_PREPARED_WC, wc = false;
	gd_mmap_claim_fn claim;
	struct gd_reg *r;
	u64 roff;
	int ret;

	r = gd_mmap_find(ctx, pgoff, &roff, &claim);
	if (!r)
		return -EINVAL;
	ret = gd_mmap_account(r, roff, end - start, claim, true, &expect, &wc);
	if (ret) {
		gd_reg_put(r);
		/* gdrdrv answers EINVAL for any refused mapping. */
		return claim ? -EINVAL : ret;
	}
	*priv = r;
	return 0;
}

int gd_mmap_prepare(struct vm_area_desc *desc)
{
	struct gd_ctx *ctx = desc->file->private_data;
	u64 off = (u64)desc->pgoff << PAGE_SHIFT;
	gd_mmap_claim_fn claim;
	struct gd_reg *r;
	u64 roff;
	int ret;

	if (!gd_is_owner(&ctx->owner))
		return -EPERM;
	if (!(off >> ctx->mmap_shift))
		return gd_mmap_status_prepare(ctx, desc);
	r = gd_mmap_find(ctx, desc->pgoff, &roff, &claim);
	if (!r)
		return -EINVAL;
	gd_dbg_delay(&gd_dbg_mmap_type_delay_ms);
	ret = gd_mmap_region_prepare(r, desc, roff, claim);
	/* ->mapped takes the VMA's own reference. */
	gd_reg_put(r);
	return ret;
}
#else
static int gd_mmap_status(struct gd_ctx *ctx, struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;

	if (off >= GDIRECT_STATUS_BYTES || len > GDIRECT_STATUS_BYTES - off)
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EACCES;
	gd_vm_flags_clear(vma, VM_MAYWRITE);
	/*
	 * VM_IO: madvise(MADV_DOFORK) would otherwise clear VM_DONTCOPY, and
	 * an inherited copy, holding the file, would move its final release
	 * into the child, where the owner's pins can only be orphaned.
	 */
	gd_vm_flags_set(vma, VM_IO | VM_DONTCOPY | VM_DONTEXPAND |
			VM_DONTDUMP);
	return remap_vmalloc_range(vma, ctx->status, vma->vm_pgoff);
}

/**
 * gd_mmap_region() - set up a VMA over a pinned region; faults fill it
 * @r: the region, with a reference the VMA takes over on success
 * @vma: the new VMA
 * @roff: offset of the VMA's start in the region
 * @claim: NULL to share the region with other mappings, in the type
 *	GDIRECT_IOC_MAP_TYPE chose (write-combining, or the VMA's own cached
 *	protection), read under r->lock where mapped_len grows; else the
 *	mapping must be the region's only one, and @claim decides whether and
 *	how it is made (0 and the write-combining choice in its @wc, or an
 *	errno), called with r->lock held and the region unmapped, so that the
 *	decision and the claim of mapped_len are one step for whoever reads
 *	both under r->lock
 *
 * Return: 0, -EINVAL (not shared, out of range), -EBUSY, @claim's error, or
 * -ESTALE when the region is no longer pinned (revoked, or being released).
 */
int gd_mmap_region(struct gd_reg *r, struct vm_area_struct *vma, u64 roff,
		   gd_mmap_claim_fn claim)
{
	bool wc = false;
	int ret;

	/*
	 * Shared only: a private mapping is a COW mapping, whose private
	 * copies of BAR pages the zap would not reach, and into which
	 * vmf_insert_pfn_prot() refuses to insert PFNMAP pages.
	 */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	ret = gd_mmap_account(r, roff, vma->vm_end - vma->vm_start, claim,
			      true, NULL, &wc);
	if (ret)
		return ret;
	gd_vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTCOPY | VM_DONTEXPAND |
			VM_DONTDUMP);
	if (wc)
		vma->vm_page_prot = gd_pgprot_writecombine(vma->vm_page_prot);
	vma->vm_private_data = r;
	vma->vm_ops = &gd_region_vm_ops;
	return 0;
}

int gd_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct gd_ctx *ctx = filp->private_data;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	struct gd_reg *r;
	int ret;

	if (!gd_is_owner(&ctx->owner))
		return -EPERM;
	if (!(off >> ctx->mmap_shift))
		return gd_mmap_status(ctx, vma);

	r = gd_ctx_lookup(ctx, off >> ctx->mmap_shift);
	if (!r)
		return -EINVAL;
	gd_dbg_delay(&gd_dbg_mmap_type_delay_ms);
	/* The lookup's reference goes to the VMA. */
	ret = gd_mmap_region(r, vma, off & (BIT_ULL(ctx->mmap_shift) - 1),
			     NULL);
	if (ret)
		gd_reg_put(r);
	return ret;
}
#endif
