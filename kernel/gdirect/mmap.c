// SPDX-License-Identifier: GPL-2.0
/*
 * CPU mappings of pinned regions and of the status area
 *
 * A region is mapped with io_remap_pfn_range() at mmap time, under the
 * registration's semaphore and only while it is PINNED.  Revocation and
 * unpin flip the state under the same semaphore and then zap every PTE of
 * the region through this file's private address space, so no mapping of
 * a revoked BAR page survives (gdrcopy#54); touching the VMA afterwards
 * faults and gets SIGBUS.  VMAs are not copied on fork and cannot be split,
 * so the per-region mapped length stays exact.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "gdirect_internal.h"

/* Kbuild defines GD_HAVE_VM_FLAGS_SET where vm_flags became read-only. */
#ifdef GD_HAVE_VM_FLAGS_SET
#define gd_vm_flags_set(vma, f)		vm_flags_set(vma, f)
#define gd_vm_flags_clear(vma, f)	vm_flags_clear(vma, f)
#else
#define gd_vm_flags_set(vma, f)		((vma)->vm_flags |= (f))
#define gd_vm_flags_clear(vma, f)	((vma)->vm_flags &= ~(f))
#endif

void gd_zap_cpu_mappings(struct gd_reg *r)
{
	if (!r->ctx)
		return;
	unmap_mapping_range(&r->ctx->mapping,
			    (loff_t)r->handle << GD_MMAP_REGION_SHIFT,
			    r->size, 1);
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

/* Only zapped pages fault: the memory is gone. */
static vm_fault_t gd_vm_fault(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

static int gd_vm_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

static const struct vm_operations_struct gd_region_vm_ops = {
	.open		= gd_vm_open,
	.close		= gd_vm_close,
	.fault		= gd_vm_fault,
	.may_split	= gd_vm_may_split,
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
	gd_vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	return remap_vmalloc_range(vma, ctx->status, vma->vm_pgoff);
}

static int gd_remap(struct gd_reg *r, struct vm_area_struct *vma, u64 roff)
{
	struct nvidia_p2p_page_table *pt = r->pt;
	unsigned long len = vma->vm_end - vma->vm_start;
	u64 pb = gd_nv_page_bytes(pt), done = 0, in, chunk, phys;
	int ret;

	while (done < len) {
		in = (roff + done) & (pb - 1);
		chunk = min_t(u64, pb - in, len - done);
		phys = gd_nv_page_phys(pt, (roff + done) / pb) + in;
		ret = io_remap_pfn_range(vma, vma->vm_start + done,
					 phys >> PAGE_SHIFT, chunk,
					 vma->vm_page_prot);
		if (ret)
			return ret;
		done += chunk;
	}
	return 0;
}

int gd_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct gd_ctx *ctx = filp->private_data;
	unsigned long len = vma->vm_end - vma->vm_start;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 roff = off & GD_MMAP_REGION_MASK;
	struct gd_reg *r;
	int ret;

	if (!gd_is_owner(ctx->owner))
		return -EPERM;
	if (!(off >> GD_MMAP_REGION_SHIFT))
		return gd_mmap_status(ctx, vma);

	/*
	 * Shared only: a private mapping is a COW mapping, for which
	 * remap_pfn_range() rewrites vm_pgoff, and then the zap by offset
	 * would miss it and leave revoked pages mapped.
	 */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	r = gd_ctx_lookup(ctx, off >> GD_MMAP_REGION_SHIFT);
	if (!r)
		return -EINVAL;
	if (roff >= r->size || len > r->size - roff) {
		ret = -EINVAL;
		goto put;
	}

	down_read(&r->sem);
	if (r->state != GD_PINNED) {
		ret = -ESTALE;
		goto unlock;
	}
	gd_vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTCOPY | VM_DONTEXPAND |
			VM_DONTDUMP);
	if (!r->cpu_cacheable)
		vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
	ret = gd_remap(r, vma, roff);
	if (ret)
		goto unlock;
	vma->vm_private_data = r;	/* keeps the lookup's reference */
	vma->vm_ops = &gd_region_vm_ops;
	atomic64_add(len, &r->mapped_len);
	atomic64_inc(&gd_stats.mmaps);
	up_read(&r->sem);
	return 0;

unlock:
	up_read(&r->sem);
put:
	gd_reg_put(r);
	return ret;
}
