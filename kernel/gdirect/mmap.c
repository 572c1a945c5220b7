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

static void gd_vm_close(struct vm_area_struct *vma)
{
	struct gd_reg *r = vma->vm_private_data;

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

static const struct vm_operations_struct gd_region_vm_ops = {
	.open		= gd_vm_open,
	.close		= gd_vm_close,
	.fault		= gd_vm_fault,
	.GD_VM_OPS_MAY_SPLIT = gd_vm_may_split,
};

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
	unsigned long len = vma->vm_end - vma->vm_start;
	bool wc = false;
	int ret = 0;

	/*
	 * Shared only: a private mapping is a COW mapping, whose private
	 * copies of BAR pages the zap would not reach, and into which
	 * vmf_insert_pfn_prot() refuses to insert PFNMAP pages.
	 */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (roff >= r->size || len > r->size - roff)
		return -EINVAL;

	down_read(&r->sem);
	if (r->state != GD_PINNED) {
		ret = -ESTALE;
		goto unlock;
	}
	if (claim) {
		/* Lock order: sem, then lock. */
		spin_lock(&r->lock);
		if (atomic64_read(&r->mapped_len))
			ret = -EBUSY;
		else
			ret = claim(r, &wc);
		if (!ret)
			atomic64_set(&r->mapped_len, len);
		spin_unlock(&r->lock);
		if (ret)
			goto unlock;
	} else {
		/*
		 * GDIRECT_IOC_MAP_TYPE's choice, else the page table's, read
		 * where the mapping is counted: MAP_TYPE, refused while
		 * mapped_len is not 0, then cannot change the type between
		 * the two, so the region's live mappings share one type.
		 */
		spin_lock(&r->lock);
		wc = r->map_type == GDIRECT_MAP_WC ||
		     (r->map_type == GDIRECT_MAP_NATURAL && !r->cpu_cacheable);
#ifdef GDIRECT_DEBUG_KNOBS
		/* Every live mapping of a region must have one type. */
		if (atomic64_read(&r->mapped_len) && r->dbg_wc != wc)
			atomic64_inc(&gd_stats.dbg_map_type_mismatch);
		r->dbg_wc = wc;
#endif
		atomic64_add(len, &r->mapped_len);
		spin_unlock(&r->lock);
	}
	gd_vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTCOPY | VM_DONTEXPAND |
			VM_DONTDUMP);
	if (wc)
		vma->vm_page_prot = gd_pgprot_writecombine(vma->vm_page_prot);
	vma->vm_private_data = r;
	vma->vm_ops = &gd_region_vm_ops;
	atomic64_inc(&gd_stats.mmaps);
unlock:
	up_read(&r->sem);
	return ret;
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
