// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dmabuf.c - dma-buf export of GPU memory (cuMemGetHandleForAddressRange)
 *
 * Built in the open licence flavours only: dma_buf_export() is GPL-only,
 * so NVIDIA's proprietary driver cannot export dma-bufs either, and the
 * emulator's proprietary flavour answers the ioctl with -EOPNOTSUPP.
 *
 * A dma-buf covers a range of one allocation, 4 KiB-aligned.  It holds a
 * reference of the allocation: cuMemFree of exported memory succeeds, and
 * the memory stays until the dma-buf goes (its fd closed and every importer
 * detached), as with a persistent pin.  The memory is BAR2, with no struct
 * pages: importers must accept peer-to-peer (attach->peer2peer), and get an
 * sg table of DMA addresses only (dma_map_resource() for the importer's
 * device), one entry per 64 KiB GPU page or part of one.  The memory never
 * moves, so pin and unpin are no-ops and nothing is ever moved under an
 * importer.
 *
 * Each dma-buf holds the device, as NVIDIA's exporter holds the GPU (a
 * usage count its remove waits on): an importer may hold DMA addresses of
 * BAR2 for as long as its attachment lives, so an unbind waits in
 * emu_remove() until the last dma-buf is released.
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "emu.h"
#include "nvp2p_emu.h"

MODULE_IMPORT_NS(DMA_BUF);

struct emu_dmabuf {
	struct emu_dev *e;		/* its device, held until release */
	struct emu_alloc *alloc;	/* a reference */
	u64 offset;			/* of the range in the allocation */
	u64 size;
};

static int emu_dmabuf_attach(struct dma_buf *buf,
			     struct dma_buf_attachment *attach)
{
	/* BAR memory: only an importer that can do peer to peer */
	return attach->peer2peer ? 0 : -EOPNOTSUPP;
}

static int emu_dmabuf_pin(struct dma_buf_attachment *attach)
{
	return 0;	/* GPU memory of ours never moves */
}

static void emu_dmabuf_unpin(struct dma_buf_attachment *attach)
{
}

static void emu_dmabuf_unmap_sgt(struct dma_buf_attachment *attach,
				 struct sg_table *sgt, unsigned int mapped,
				 enum dma_data_direction dir)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (i == mapped)
			break;
		dma_unmap_resource(attach->dev, sg_dma_address(sg),
				   sg_dma_len(sg), dir, DMA_ATTR_SKIP_CPU_SYNC);
	}
	sg_free_table(sgt);
	kfree(sgt);
}

static struct sg_table *emu_dmabuf_map(struct dma_buf_attachment *attach,
				       enum dma_data_direction dir)
{
	struct emu_dmabuf *b = attach->dmabuf->priv;
	u64 phys, end, at, len;
	struct scatterlist *sg;
	struct sg_table *sgt;
	unsigned int n, i = 0;
	dma_addr_t dma;
	int ret;

	dma_resv_assert_held(attach->dmabuf->resv);
	/* Being unbound: no new mappings, while the old ones drain. */
	if (READ_ONCE(b->e->gone))
		return ERR_PTR(-ENODEV);
	phys = b->e->mem_phys + b->alloc->mem_offset + b->offset;
	end = phys + b->size;
	n = (ALIGN(end, EMU_PAGE_SIZE) - ALIGN_DOWN(phys, EMU_PAGE_SIZE)) >>
	    EMU_PAGE_SHIFT;
	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	ret = sg_alloc_table(sgt, n, GFP_KERNEL);
	if (ret)
		goto err_free;
	/* DMA addresses only: there are no struct pages behind BAR2 */
	for (sg = sgt->sgl, at = phys; at < end; at += len, sg = sg_next(sg)) {
		len = min_t(u64, end - at, EMU_PAGE_SIZE - (at & (EMU_PAGE_SIZE - 1)));
		dma = dma_map_resource(attach->dev, at, len, dir,
				       DMA_ATTR_SKIP_CPU_SYNC);
		if (dma_mapping_error(attach->dev, dma)) {
			emu_dmabuf_unmap_sgt(attach, sgt, i, dir);
			return ERR_PTR(-EIO);
		}
		sg_dma_address(sg) = dma;
		sg_dma_len(sg) = len;
		i++;
	}
	return sgt;

err_free:
	kfree(sgt);
	return ERR_PTR(ret);
}

static void emu_dmabuf_unmap(struct dma_buf_attachment *attach,
			     struct sg_table *sgt, enum dma_data_direction dir)
{
	emu_dmabuf_unmap_sgt(attach, sgt, sgt->orig_nents, dir);
}

/*
 * The last reference went: the fd is closed and no importer is left.  The
 * device lets an unbind waiting for it go on; its struct stays until
 * module unload, which this dma-buf's module reference holds off.
 */
static void emu_dmabuf_release(struct dma_buf *buf)
{
	struct emu_dmabuf *b = buf->priv;
	struct emu_dev *e = b->e;
	bool last;

	mutex_lock(&e->lock);
	emu_alloc_put(b->alloc);
	last = !--e->nr_dmabufs;
	mutex_unlock(&e->lock);
	kfree(b);
	if (last)
		wake_up_all(&e->dmabufs_gone);
}

static const struct dma_buf_ops emu_dmabuf_ops = {
	.attach = emu_dmabuf_attach,
	.pin = emu_dmabuf_pin,
	.unpin = emu_dmabuf_unpin,
	.map_dma_buf = emu_dmabuf_map,
	.unmap_dma_buf = emu_dmabuf_unmap,
	.release = emu_dmabuf_release,
};

/**
 * emu_dmabuf_export() - a dma-buf for a range of the caller's memory
 * @f: the caller's open file
 * @va: start of the range, 4 KiB-aligned
 * @size: bytes, 4 KiB-aligned, > 0, inside the allocation holding @va
 * @buf: out: the dma-buf
 * @fd: out: a file descriptor reserved for it, not yet installed
 *
 * The caller tells user space the fd, then installs it with
 * emu_dmabuf_install(), or gives both back with emu_dmabuf_abort(): an fd
 * installed before user space could learn its number would leak.
 *
 * Return: 0; -EINVAL for a range outside the caller's allocations or not
 * aligned; -ENOMEM; the error of dma_buf_export() or of getting an fd.
 */
int emu_dmabuf_export(struct emu_file *f, u64 va, u64 size,
		      struct dma_buf **buf, int *fd)
{
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct emu_alloc *a, *found = NULL;
	struct emu_dmabuf *b;
	int ret;

	if (!size || !IS_ALIGNED(va | size, SZ_4K) || va + size < va)
		return -EINVAL;
	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return -ENOMEM;
	mutex_lock(&emu->lock);
	list_for_each_entry(a, &f->allocs, node) {
		if (va >= a->va && size <= a->size && va - a->va <= a->size - size) {
			kref_get(&a->ref);
			emu->nr_dmabufs++;
			found = a;
			break;
		}
	}
	mutex_unlock(&emu->lock);
	if (!found) {
		kfree(b);
		return -EINVAL;
	}
	b->e = emu;
	b->alloc = found;
	b->offset = va - found->va;
	b->size = size;

	info.ops = &emu_dmabuf_ops;
	info.size = size;
	info.flags = O_RDWR | O_CLOEXEC;
	info.priv = b;
	*buf = dma_buf_export(&info);
	if (IS_ERR(*buf)) {
		ret = PTR_ERR(*buf);
		goto err_put;
	}
	ret = get_unused_fd_flags(O_CLOEXEC);
	if (ret < 0) {
		dma_buf_put(*buf);	/* releases b and its reference */
		return ret;
	}
	*fd = ret;
	return 0;

err_put:
	mutex_lock(&emu->lock);
	emu_alloc_put(found);
	emu->nr_dmabufs--;
	mutex_unlock(&emu->lock);
	kfree(b);
	return ret;
}

/* Publish the fd emu_dmabuf_export() reserved: it owns the dma-buf now. */
void emu_dmabuf_install(struct dma_buf *buf, int fd)
{
	fd_install(fd, buf->file);
}

/* Give back what emu_dmabuf_export() returned, when user space was not told. */
void emu_dmabuf_abort(struct dma_buf *buf, int fd)
{
	put_unused_fd(fd);
	dma_buf_put(buf);
}
