// SPDX-License-Identifier: GPL-2.0
/*
 * dmabuf.c - edu DMA through an imported dma-buf
 *
 * The other way a GPU buffer reaches a peer driver: instead of pinning it
 * through nv-p2p, the user exports it as a dma-buf
 * (cuMemGetHandleForAddressRange) and hands us the fd.  We import it the
 * way RDMA drivers do for device memory: a dynamic attachment that allows
 * peer to peer, pinned (we cannot follow a move) and mapped once, under
 * the reservation lock; the sg table holds edu's DMA addresses.  With a
 * static exporter (NVIDIA's, the emulator's) the dma-buf core has already
 * mapped the dma-buf when the attach returns (on kernels with
 * dma_buf_attachment.sgt: 6.18 has none and maps at the map), pin does
 * nothing, and the map returns that table, which stays until the
 * detach.  Closing the fd afterwards is fine: the attachment holds the
 * dma-buf.  DETACH, closing our file or removing the device unmaps and
 * lets it go.
 *
 * Locks: the file lock, then the dma-buf's reservation lock.
 */
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "gdedu_internal.h"

/* 6.13 took the namespace as a string; probed. */
#if defined(KC_CONFTEST) && !defined(KC_HAVE_MODULE_IMPORT_NS_STRING)
MODULE_IMPORT_NS(DMA_BUF);
#else
MODULE_IMPORT_NS("DMA_BUF");
#endif

/* The memory is pinned: the exporter may not move it, so no notice comes. */
static void gdedu_move_notify(struct dma_buf_attachment *attach)
{
	struct gdedu_dmabuf *d = attach->importer_priv;

	WRITE_ONCE(d->moved, true);
}

/* 7.x renamed move_notify invalidate_mappings; probed. */
static const struct dma_buf_attach_ops gdedu_importer_ops = {
	.allow_peer2peer = true,
#if defined(KC_CONFTEST) && !defined(KC_HAVE_DMA_BUF_INVALIDATE_MAPPINGS)
	.move_notify = gdedu_move_notify,
#else
	.invalidate_mappings = gdedu_move_notify,
#endif
};

/* Unmap (if mapped), unpin and let the dma-buf go. */
static void gdedu_dmabuf_free(struct gdedu_dmabuf *d)
{
	struct dma_buf *buf = d->attach->dmabuf;

	dma_resv_lock(buf->resv, NULL);
	if (d->sgt)
		dma_buf_unmap_attachment(d->attach, d->sgt, DMA_BIDIRECTIONAL);
	dma_buf_unpin(d->attach);
	dma_resv_unlock(buf->resv);
	dma_buf_detach(buf, d->attach);
	dma_buf_put(buf);
	list_del(&d->node);
	kfree(d);
}

int gdedu_dmabuf_attach(struct gdedu_file *f, struct gdedu_dmabuf_attach *a)
{
	struct gdedu_dmabuf *d;
	struct dma_buf *buf;
	struct sg_table *sgt;
	int ret;

	lockdep_assert_held(&f->lock);
	if (f->nr_dmabufs >= GDEDU_MAX_DMABUFS)
		return -ENOSPC;
	buf = dma_buf_get(a->fd);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	d = kzalloc(sizeof(*d), GFP_KERNEL_ACCOUNT);
	if (!d) {
		ret = -ENOMEM;
		goto err_put;
	}
	d->attach = dma_buf_dynamic_attach(buf, &f->edu->pdev->dev,
					   &gdedu_importer_ops, d);
	if (IS_ERR(d->attach)) {
		ret = PTR_ERR(d->attach);
		goto err_free;
	}
#if defined(KC_CONFTEST) && defined(KC_HAVE_DMA_BUF_ATTACHMENT_SGT)
	/*
	 * A static exporter's table, made by the core at attach time; a
	 * kernel without dma_buf_attachment.sgt (6.18 on, probed) makes
	 * none, and the map below asks the exporter.
	 */
	if (d->attach->sgt)
		a->flags |= GDEDU_DMABUF_MAPPED_AT_ATTACH;
#elif defined(KC_CONFTEST)
	a->flags |= GDEDU_DMABUF_NO_ATTACH_MAP;
#endif
	dma_resv_lock(buf->resv, NULL);
	ret = dma_buf_pin(d->attach);
	if (ret) {
		dma_resv_unlock(buf->resv);
		goto err_detach;
	}
	sgt = dma_buf_map_attachment(d->attach, DMA_BIDIRECTIONAL);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		dma_buf_unpin(d->attach);
		dma_resv_unlock(buf->resv);
		goto err_detach;
	}
	d->sgt = sgt;
	dma_resv_unlock(buf->resv);

	d->id = ++f->next_dmabuf_id;
	d->size = buf->size;
	list_add_tail(&d->node, &f->dmabufs);
	f->nr_dmabufs++;
	a->id = d->id;
	a->size = d->size;
	a->dma0 = sg_dma_address(sgt->sgl);
	a->nents = sgt->nents;
	return 0;

err_detach:
	dma_buf_detach(buf, d->attach);
err_free:
	kfree(d);
err_put:
	dma_buf_put(buf);
	return ret;
}

static struct gdedu_dmabuf *gdedu_dmabuf_find(struct gdedu_file *f, u32 id)
{
	struct gdedu_dmabuf *d;

	lockdep_assert_held(&f->lock);
	list_for_each_entry(d, &f->dmabufs, node)
		if (d->id == id)
			return d;
	return NULL;
}

int gdedu_dmabuf_detach(struct gdedu_file *f, u32 id)
{
	struct gdedu_dmabuf *d = gdedu_dmabuf_find(f, id);

	if (!d)
		return -ENOENT;
	gdedu_dmabuf_free(d);
	f->nr_dmabufs--;
	return 0;
}

/* Every dma-buf of @f: its file closes. */
void gdedu_dmabuf_detach_all(struct gdedu_file *f)
{
	struct gdedu_dmabuf *d, *tmp;

	lockdep_assert_held(&f->lock);
	list_for_each_entry_safe(d, tmp, &f->dmabufs, node)
		gdedu_dmabuf_free(d);
	f->nr_dmabufs = 0;
}

/* The device goes: no DMA mapping for it may stay. */
void gdedu_dmabuf_unmap_all(struct gdedu_file *f)
{
	struct gdedu_dmabuf *d;

	lockdep_assert_held(&f->lock);
	list_for_each_entry(d, &f->dmabufs, node) {
		if (!d->sgt)
			continue;
		dma_resv_lock(d->attach->dmabuf->resv, NULL);
		dma_buf_unmap_attachment(d->attach, d->sgt, DMA_BIDIRECTIONAL);
		dma_resv_unlock(d->attach->dmabuf->resv);
		d->sgt = NULL;
	}
}

/* The DMA address of byte @off and how many bytes follow it in its entry. */
static int gdedu_dmabuf_addr(struct gdedu_dmabuf *d, u64 off, u64 *dma,
			     u64 *avail)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_dma_sg(d->sgt, sg, i) {
		if (off < sg_dma_len(sg)) {
			*dma = sg_dma_address(sg) + off;
			*avail = sg_dma_len(sg) - off;
			return 0;
		}
		off -= sg_dma_len(sg);
	}
	return -EINVAL;
}

int gdedu_dmabuf_xfer(struct gdedu_file *f, const struct gdedu_dmabuf_xfer *x)
{
	struct gdedu_dmabuf *d = gdedu_dmabuf_find(f, x->id);
	u64 done = 0, dma, avail;
	void *kbuf;
	u32 len;
	int ret = 0;

	if (!d)
		return -ENOENT;
	if (!d->sgt || READ_ONCE(d->moved))
		return -ESTALE;
	if (x->offset > d->size || x->size > d->size - x->offset)
		return -EINVAL;
	kbuf = kmalloc(EDU_CHUNK, GFP_KERNEL);
	if (!kbuf)
		return -ENOMEM;
	while (done < x->size) {
		ret = gdedu_dmabuf_addr(d, x->offset + done, &dma, &avail);
		if (ret)
			break;
		len = min3(x->size - done, avail, (u64)EDU_CHUNK);
		if (x->dir == GDEDU_TO_GPU) {
			if (copy_from_user(kbuf, u64_to_user_ptr(x->buf + done), len)) {
				ret = -EFAULT;
				break;
			}
			ret = edu_dma_to_gpu(f->edu, dma, kbuf, len);
		} else {
			ret = edu_dma_from_gpu(f->edu, dma, kbuf, len);
			if (!ret && copy_to_user(u64_to_user_ptr(x->buf + done), kbuf, len))
				ret = -EFAULT;
		}
		if (ret)
			break;
		f->stats.chunks++;
		done += len;
	}
	kfree(kbuf);
	return ret;
}
