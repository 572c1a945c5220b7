// SPDX-License-Identifier: GPL-2.0
/*
 * An example third-party DMA driver for qemu's edu device
 *
 * It does what a NIC or frame-grabber driver does with GPUDirect RDMA: its
 * user hands it a GPU buffer, it pins the buffer through gdirect's
 * in-kernel API, and its DMA engine reads and writes GPU memory peer to
 * peer at the DMA addresses nv-p2p mapped for it.  See gdirect_edu.h.
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "gdedu_internal.h"

unsigned int gdedu_max_pins = 8;
module_param_named(max_pins, gdedu_max_pins, uint, 0644);
MODULE_PARM_DESC(max_pins, "Cached pins per open file before the least recently used is dropped (default: 8)");

static unsigned int gdedu_dma_bits = 64;
module_param_named(dma_bits, gdedu_dma_bits, uint, 0444);
MODULE_PARM_DESC(dma_bits, "DMA address bits of the edu device, as qemu's dma_mask property (default: 64; qemu's own default is 28)");

static struct edu_dev *gdedu_dev;

static void gdedu_dev_free(struct kref *ref)
{
	kfree(container_of(ref, struct edu_dev, ref));
}

static int gdedu_open(struct inode *inode, struct file *filp)
{
	struct edu_dev *edu = container_of(filp->private_data, struct edu_dev,
					   misc);
	struct gdedu_file *f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);

	if (!f)
		return -ENOMEM;
	kref_get(&edu->ref);
	f->edu = edu;
	f->owner_tgid = current->tgid;
	f->owner_start = current->group_leader->start_time;
	mutex_init(&f->lock);
	INIT_LIST_HEAD(&f->cache);
	INIT_LIST_HEAD(&f->dmabufs);
	atomic64_set(&f->invalidations, 0);
	filp->private_data = f;
	mutex_lock(&edu->files_lock);
	list_add_tail(&f->node, &edu->files);
	mutex_unlock(&edu->files_lock);
	return 0;
}

static int gdedu_release(struct inode *inode, struct file *filp)
{
	struct gdedu_file *f = filp->private_data;

	/* Flush before unlinking, so a remove() meanwhile sees our pins. */
	mutex_lock(&f->lock);
	gdedu_flush(f);
	gdedu_dmabuf_detach_all(f);
	mutex_unlock(&f->lock);
	mutex_lock(&f->edu->files_lock);
	list_del(&f->node);
	mutex_unlock(&f->edu->files_lock);
	kref_put(&f->edu->ref, gdedu_dev_free);
	kfree(f);
	return 0;
}

static int gdedu_ioc_pin(struct gdedu_file *f, void __user *arg)
{
	struct gdirect_pin_params p = { 0 };
	struct gdedu_entry *e;
	struct gdedu_pin up;
	const u64 *dma;
	int ret;

	if (copy_from_user(&up, arg, sizeof(up)))
		return -EFAULT;
	if (up.flags & ~GDEDU_PIN_PERSISTENT)
		return -EINVAL;
	p.addr = up.gpu_addr;
	p.size = up.size;
	/*
	 * The pin has a peer (gdedu_pin() sets it): gdirect maps a persistent
	 * pin and, without GDEDU_PIN_PERSISTENT, pairs it with a callback
	 * pin.  With tokens, which the persistent API does not take, the
	 * mapped pin has the callback (gdirect_kapi.h, "Peer pins").
	 */
	p.p2p_token = up.p2p_token;
	p.va_space = up.va_space;
	p.flags = up.flags;
	if (up.owner_pid && up.owner_pid != task_tgid_vnr(current)) {
#ifdef GDIRECT_PROPRIETARY
		/*
		 * find_get_pid() and put_pid() are GPL-only, and a module on
		 * top of NVIDIA's proprietary driver may use none: no pinning
		 * for another process there (docs/driver.md).
		 */
		return -EOPNOTSUPP;
#else
		p.owner = find_get_pid(up.owner_pid);
		if (!p.owner)
			return -ESRCH;
#endif
	}
	ret = gdedu_pin(f, &p, &e);
#ifndef GDIRECT_PROPRIETARY
	put_pid(p.owner);
#endif
	if (ret)
		return ret;
	up.pinned_addr = e->start;
	up.pinned_size = e->size;
	ret = gdirect_dma_begin(e->region);
	if (!ret) {
		ret = gdirect_region_dma_addrs(e->region, &dma, &up.entries);
		gdirect_dma_end(e->region);
	}
	if (ret)
		return ret;
	return copy_to_user(arg, &up, sizeof(up)) ? -EFAULT : 0;
}

static int gdedu_ioc_unpin(struct gdedu_file *f, void __user *arg)
{
	struct gdedu_unpin u;
	struct gdedu_entry *e;

	if (copy_from_user(&u, arg, sizeof(u)))
		return -EFAULT;
	list_for_each_entry(e, &f->cache, lru) {
		if (u.gpu_addr >= e->start && u.gpu_addr < e->start + e->size) {
			gdedu_drop(f, e);
			return 0;
		}
	}
	return -ENOENT;
}

static int gdedu_ioc_xfer(struct gdedu_file *f, void __user *arg)
{
	struct gdedu_xfer x;

	if (copy_from_user(&x, arg, sizeof(x)))
		return -EFAULT;
	if (x.flags || (x.dir != GDEDU_TO_GPU && x.dir != GDEDU_FROM_GPU) ||
	    !x.size || x.size > GDEDU_MAX_XFER ||
	    x.gpu_addr + x.size < x.gpu_addr)
		return -EINVAL;
	return gdedu_xfer(f, &x);
}

static int gdedu_ioc_dmabuf(struct gdedu_file *f, unsigned int cmd,
			    void __user *arg)
{
#ifndef GDEDU_DMABUF
	return -EOPNOTSUPP;	/* GPL-only API, or no dma-buf core */
#else
	struct gdedu_dmabuf_attach a;
	struct gdedu_dmabuf_xfer x;
	struct gdedu_dmabuf_detach d;
	int ret;

	switch (cmd) {
	case GDEDU_IOC_DMABUF_ATTACH:
		if (copy_from_user(&a, arg, sizeof(a)))
			return -EFAULT;
		if (a.flags)
			return -EINVAL;
		ret = gdedu_dmabuf_attach(f, &a);
		if (!ret && copy_to_user(arg, &a, sizeof(a))) {
			gdedu_dmabuf_detach(f, a.id);
			ret = -EFAULT;
		}
		return ret;
	case GDEDU_IOC_DMABUF_XFER:
		if (copy_from_user(&x, arg, sizeof(x)))
			return -EFAULT;
		if ((x.dir != GDEDU_TO_GPU && x.dir != GDEDU_FROM_GPU) ||
		    !x.size || x.size > GDEDU_MAX_XFER)
			return -EINVAL;
		return gdedu_dmabuf_xfer(f, &x);
	default:	/* GDEDU_IOC_DMABUF_DETACH */
		if (copy_from_user(&d, arg, sizeof(d)))
			return -EFAULT;
		return d.pad ? -EINVAL : gdedu_dmabuf_detach(f, d.id);
	}
#endif
}

static long gdedu_ioctl(struct file *filp, unsigned int cmd,
			unsigned long arg)
{
	struct gdedu_file *f = filp->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	if (current->tgid != f->owner_tgid ||
	    current->group_leader->start_time != f->owner_start)
		return -EPERM;
	/* An unbound device is gone; its registers are unmapped. */
	down_read(&f->edu->gone_sem);
	if (f->edu->gone) {
		up_read(&f->edu->gone_sem);
		return -ENODEV;
	}
	mutex_lock(&f->lock);
	switch (cmd) {
	case GDEDU_IOC_XFER:
		ret = gdedu_ioc_xfer(f, uarg);
		break;
	case GDEDU_IOC_PIN:
		ret = gdedu_ioc_pin(f, uarg);
		break;
	case GDEDU_IOC_UNPIN:
		ret = gdedu_ioc_unpin(f, uarg);
		break;
	case GDEDU_IOC_FLUSH:
		gdedu_flush(f);
		ret = 0;
		break;
	case GDEDU_IOC_STATS:
		f->stats.invalidations = atomic64_read(&f->invalidations);
		f->stats.cached = f->cached;
		ret = copy_to_user(uarg, &f->stats, sizeof(f->stats)) ?
		      -EFAULT : 0;
		break;
	case GDEDU_IOC_DMABUF_ATTACH:
	case GDEDU_IOC_DMABUF_XFER:
	case GDEDU_IOC_DMABUF_DETACH:
		ret = gdedu_ioc_dmabuf(f, cmd, uarg);
		break;
	default:
		ret = -ENOTTY;
	}
	mutex_unlock(&f->lock);
	up_read(&f->edu->gone_sem);
	return ret;
}

static const struct file_operations gdedu_fops = {
	.owner		= THIS_MODULE,
	.open		= gdedu_open,
	.release	= gdedu_release,
	.unlocked_ioctl	= gdedu_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static int gdedu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct edu_dev *edu;
	int ret;

	if (gdedu_dev)
		return -EBUSY;	/* one device is all the example needs */
	/* Not devm: open files may outlive the device (see remove). */
	edu = kzalloc(sizeof(*edu), GFP_KERNEL);
	if (!edu)
		return -ENOMEM;
	kref_init(&edu->ref);
	init_rwsem(&edu->gone_sem);
	mutex_init(&edu->files_lock);
	INIT_LIST_HEAD(&edu->files);
	edu->pdev = pdev;
	ret = pcim_enable_device(pdev);
	if (ret)
		goto err_free;
	ret = pcim_iomap_regions(pdev, BIT(0), "gdirect_edu");
	if (ret)
		goto err_free;
	ret = dma_set_mask_and_coherent(&pdev->dev,
					DMA_BIT_MASK(gdedu_dma_bits));
	if (ret)
		goto err_free;
	edu->mmio = pcim_iomap_table(pdev)[0];
	pci_set_master(pdev);
	ret = edu_engine_init(edu);
	if (ret)
		goto err_free;

	edu->misc.minor = MISC_DYNAMIC_MINOR;
	edu->misc.name = "gdirect_edu";
	edu->misc.fops = &gdedu_fops;
	edu->misc.mode = 0660;
	ret = misc_register(&edu->misc);
	if (ret)
		goto err_engine;
	pci_set_drvdata(pdev, edu);
	gdedu_dev = edu;
	return 0;

err_engine:
	edu_engine_exit(edu);
err_free:
	kfree(edu);	/* what pcim_*() took goes with the failed probe */
	return ret;
}

static void gdedu_remove(struct pci_dev *pdev)
{
	struct edu_dev *edu = pci_get_drvdata(pdev);
	struct gdedu_file *f;

	/*
	 * Files may still be open (the device was unbound, not the module
	 * removed): wait for ioctls in flight, then refuse new ones.  Their
	 * cached pins are put when they close, from their owner's process
	 * (put_pages needs it), but the DMA mappings for this device must go
	 * now, with the device.
	 */
	down_write(&edu->gone_sem);
	edu->gone = true;
	up_write(&edu->gone_sem);
	mutex_lock(&edu->files_lock);
	list_for_each_entry(f, &edu->files, node) {
		mutex_lock(&f->lock);
		gdedu_unmap_all(f);
		gdedu_dmabuf_unmap_all(f);
		mutex_unlock(&f->lock);
	}
	mutex_unlock(&edu->files_lock);
	misc_deregister(&edu->misc);
	edu_engine_exit(edu);
	gdedu_dev = NULL;
	kref_put(&edu->ref, gdedu_dev_free);
}

static const struct pci_device_id gdedu_ids[] = {
	{ PCI_DEVICE(0x1234, 0x11e8) },	/* qemu edu */
	{ }
};
MODULE_DEVICE_TABLE(pci, gdedu_ids);

static struct pci_driver gdedu_driver = {
	.name		= "gdirect_edu",
	.id_table	= gdedu_ids,
	.probe		= gdedu_probe,
	.remove		= gdedu_remove,
};
module_pci_driver(gdedu_driver);

MODULE_DESCRIPTION("Example GPUDirect RDMA driver for qemu's edu device");
MODULE_LICENSE("GPL");
