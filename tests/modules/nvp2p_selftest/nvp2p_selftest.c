// SPDX-License-Identifier: GPL-2.0
/*
 * nvp2p_selftest.c - a minimal third-party driver that tests the provider
 *
 * It binds qemu's edu device, pins GPU memory through nv-p2p on request,
 * maps it for edu and has edu's DMA engine write into it peer to peer.
 * The free callback follows guide 12.4: it forgets the page table and DMA
 * mapping under a spinlock and frees them with the free functions; it
 * never calls put_pages.  The unpin path reads the table under the same
 * spinlock and calls put_pages without it, so no lock of ours is ever held
 * across a call into the provider: no lock-order cycle with the provider's
 * own lock, which the callback runs under.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/uaccess.h>

#include "nv-p2p.h"
#include "nvp2p_selftest.h"

#define EDU_VENDOR	0x1234
#define EDU_DEVICE	0x11e8
#define EDU_DMA_SRC	0x80
#define EDU_DMA_DST	0x88
#define EDU_DMA_COUNT	0x90
#define EDU_DMA_CMD	0x98
#define EDU_CMD_START	0x1
#define EDU_CMD_TO_RAM	0x2
#define EDU_BUF_ADDR	0x40000
/* qemu 7.2 rejects a transfer of the full 4 KiB window (off by one). */
#define EDU_CHUNK	2048

struct st_slot {
	struct nvidia_p2p_page_table *pt;
	struct nvidia_p2p_dma_mapping *map;
	u64 va;
	u32 callbacks;
	bool persistent;
	/*
	 * The last table put or revoked and its mapping, never dereferenced:
	 * kept only to hand them back to the provider, which must treat the
	 * call as the use-after-free it is with NVIDIA's driver.
	 */
	struct nvidia_p2p_page_table *dead_pt;
	struct nvidia_p2p_dma_mapping *dead_map;
};

static struct {
	struct pci_dev *edu;
	void __iomem *regs;
	void *bounce;
	dma_addr_t bounce_dma;
	struct mutex edu_lock;		/* one edu transfer at a time */
	spinlock_t lock;		/* slots[] */
	struct st_slot slots[ST_SLOTS];
} st;

static void st_free_callback(void *data)
{
	struct st_slot *s = data;
	struct nvidia_p2p_page_table *pt;
	struct nvidia_p2p_dma_mapping *map;

	spin_lock(&st.lock);
	pt = s->pt;
	map = s->map;
	s->pt = NULL;
	s->map = NULL;
	s->dead_pt = pt;
	s->dead_map = map;
	s->callbacks++;
	spin_unlock(&st.lock);
	/* No DMA of ours is in flight: edu transfers hold a pin reference. */
	if (map)
		nvidia_p2p_free_dma_mapping(map);
	if (pt)
		nvidia_p2p_free_page_table(pt);
}

static struct st_slot *st_slot(u32 i)
{
	return i < ST_SLOTS ? &st.slots[i] : NULL;
}

static long st_pin(struct st_pin *p)
{
	struct st_slot *s = st_slot(p->slot);
	struct nvidia_p2p_page_table *pt = NULL;

	if (!s || READ_ONCE(s->pt))
		return -EINVAL;
	switch (p->mode) {
	case ST_PIN_CALLBACK:
		p->ret = nvidia_p2p_get_pages(p->p2p_token, p->va_space, p->va,
					      p->len, &pt, st_free_callback, s);
		break;
	case ST_PIN_PERSISTENT:
		p->ret = nvidia_p2p_get_pages_persistent(p->va, p->len, &pt,
							 p->flags);
		break;
	case ST_PIN_NULL_CALLBACK:
		p->ret = nvidia_p2p_get_pages(0, 0, p->va, p->len, &pt, NULL, s);
		break;
	case ST_PIN_NULL_TABLE:
		p->ret = nvidia_p2p_get_pages(0, 0, p->va, p->len, NULL,
					      st_free_callback, s);
		break;
	default:
		return -EINVAL;
	}
	if (p->ret)
		return 0;
	if (!NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(pt))
		pr_err("incompatible page table version 0x%08x\n",
		       pt->version);
	spin_lock(&st.lock);
	s->pt = pt;
	s->map = NULL;
	s->va = p->va;
	s->persistent = p->mode == ST_PIN_PERSISTENT;
	spin_unlock(&st.lock);
	return 0;
}

static long st_put(struct st_put *p)
{
	struct st_slot *s = st_slot(p->slot);
	struct nvidia_p2p_page_table *pt;
	struct nvidia_p2p_dma_mapping *map;

	if (!s)
		return -EINVAL;
	if (p->mode == ST_PUT_DEAD_PERSISTENT) {
		spin_lock(&st.lock);
		pt = s->dead_pt;
		spin_unlock(&st.lock);
		p->ret = nvidia_p2p_put_pages_persistent(p->va, pt, 0);
		return 0;
	}
	spin_lock(&st.lock);
	pt = s->pt;
	map = s->map;
	spin_unlock(&st.lock);
	/*
	 * pt may be revoked from here on: the provider tolerates a put of a
	 * revoked table, which is the point of the test.  With a NULL pt
	 * (revoked already) the call must still return 0.
	 */
	if (map && pt)
		nvidia_p2p_dma_unmap_pages(st.edu, pt, map);
	if (p->mode == ST_PUT_PERSISTENT)
		p->ret = nvidia_p2p_put_pages_persistent(p->va, pt, p->flags);
	else
		p->ret = nvidia_p2p_put_pages(p->p2p_token, p->va_space, p->va,
					      pt);
	if (!p->ret) {
		spin_lock(&st.lock);
		if (s->pt == pt && pt) {
			s->pt = NULL;
			s->map = NULL;
			s->dead_pt = pt;
			s->dead_map = map;
		}
		spin_unlock(&st.lock);
	}
	return 0;
}

static long st_info(struct st_slot_info *i)
{
	struct st_slot *s = st_slot(i->slot);
	struct nvidia_p2p_page_table *pt;
	struct nvidia_p2p_dma_mapping *map;
	u32 slot = i->slot;

	if (!s)
		return -EINVAL;
	memset(i, 0, sizeof(*i));
	i->slot = slot;
	/*
	 * The test reads a table only while it knows no revocation can run
	 * (it owns the memory and frees nothing meanwhile).
	 */
	spin_lock(&st.lock);
	pt = s->pt;
	map = s->map;
	i->callbacks = s->callbacks;
	spin_unlock(&st.lock);
	if (pt) {
		i->live = 1;
		i->version = pt->version;
		i->compatible = NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(pt);
		i->page_size = pt->page_size;
		i->entries = pt->entries;
		i->phys0 = pt->pages[0]->physical_address;
		i->phys_last = pt->pages[pt->entries - 1]->physical_address;
		i->uuid_set = pt->gpu_uuid != NULL;
#ifndef NVP2P_EMU_PAGE_TABLE_V1
		i->flags = pt->flags;
#endif
	}
	if (map) {
		i->dma_live = 1;
		i->dma_version = map->version;
		i->dma_entries = map->entries;
		i->dma0 = map->dma_addresses[0];
	}
	return 0;
}

static long st_dma_map(struct st_dma *d)
{
	struct st_slot *s = st_slot(d->slot);
	struct nvidia_p2p_dma_mapping *map = NULL;
	struct nvidia_p2p_page_table *pt;

	if (!s)
		return -EINVAL;
	spin_lock(&st.lock);
	pt = d->mode == ST_DMA_DEAD ? s->dead_pt : s->pt;
	spin_unlock(&st.lock);
	d->ret = nvidia_p2p_dma_map_pages(d->mode == ST_DMA_NULL_PEER ? NULL : st.edu,
					  pt, &map);
	if (d->ret || d->mode == ST_DMA_DEAD)
		return 0;
	if (!NVIDIA_P2P_DMA_MAPPING_VERSION_COMPATIBLE(map))
		pr_err("incompatible DMA mapping version\n");
	spin_lock(&st.lock);
	if (s->pt == pt)
		s->map = map;
	spin_unlock(&st.lock);
	return 0;
}

static long st_dma_unmap(struct st_dma *d)
{
	struct st_slot *s = st_slot(d->slot);
	struct nvidia_p2p_dma_mapping *map, bogus = {};
	struct nvidia_p2p_page_table *pt;
	struct pci_dev *peer = st.edu;

	if (!s)
		return -EINVAL;
	spin_lock(&st.lock);
	pt = d->mode == ST_DMA_DEAD ? s->dead_pt : s->pt;
	map = d->mode == ST_DMA_DEAD ? s->dead_map : s->map;
	spin_unlock(&st.lock);
	if (d->mode == ST_DMA_BOGUS_MAPPING)
		map = &bogus;
	/* Another device than the one mapped for: the emulated GPU itself. */
	if (d->mode == ST_DMA_WRONG_PEER)
		peer = pci_get_device(0x1af4, 0x1110, NULL);
	d->ret = nvidia_p2p_dma_unmap_pages(peer, pt, map);
	if (d->mode == ST_DMA_WRONG_PEER)
		pci_dev_put(peer);
	if (!d->ret && d->mode == ST_DMA_EDU) {
		spin_lock(&st.lock);
		if (s->map == map)
			s->map = NULL;
		spin_unlock(&st.lock);
	}
	return 0;
}

static int edu_xfer(u64 src, u64 dst, u32 count, bool to_ram)
{
	unsigned long timeout = jiffies + 5 * HZ;

	writeq(src, st.regs + EDU_DMA_SRC);
	writeq(dst, st.regs + EDU_DMA_DST);
	writeq(count, st.regs + EDU_DMA_COUNT);
	writeq(EDU_CMD_START | (to_ram ? EDU_CMD_TO_RAM : 0),
	       st.regs + EDU_DMA_CMD);
	while (readq(st.regs + EDU_DMA_CMD) & EDU_CMD_START) {
		if (time_after(jiffies, timeout))
			return -ETIMEDOUT;
		usleep_range(1000, 2000);
	}
	return 0;
}

static long st_edu(struct st_edu *e)
{
	struct st_slot *s = st_slot(e->slot);
	u64 done, n, i, target;
	int ret = 0;

	if (!s || !e->len || e->len > (16U << 20))
		return -EINVAL;
	mutex_lock(&st.edu_lock);
	for (done = 0; done < e->len && !ret; done += n) {
		u64 off = e->offset + done, page = off >> 16;

		n = min_t(u64, e->len - done, EDU_CHUNK);
		n = min_t(u64, n, 0x10000 - (off & 0xffff)); /* stay in a page */
		spin_lock(&st.lock);
		if (!s->map || page >= s->map->entries) {
			spin_unlock(&st.lock);
			ret = -EINVAL;
			break;
		}
		target = s->map->dma_addresses[page] + (off & 0xffff);
		spin_unlock(&st.lock);
		for (i = 0; i < n; i++)
			((u8 *)st.bounce)[i] = st_pattern(e->seed, done + i);
		ret = edu_xfer(st.bounce_dma, EDU_BUF_ADDR, n, false);
		if (!ret)
			ret = edu_xfer(EDU_BUF_ADDR, target, n, true);
	}
	mutex_unlock(&st.edu_lock);
	e->ret = ret;
	return 0;
}

static long st_misc(struct st_misc *m)
{
	switch (m->which) {
	case ST_MISC_INIT_MAPPING:
		m->ret = nvidia_p2p_init_mapping(0, NULL, NULL, NULL);
		break;
	case ST_MISC_DESTROY_MAPPING:
		m->ret = nvidia_p2p_destroy_mapping(0);
		break;
	case ST_MISC_FREE_TABLE_NULL:
		m->ret = nvidia_p2p_free_page_table(NULL);
		break;
	case ST_MISC_FREE_DMA_NULL:
		m->ret = nvidia_p2p_free_dma_mapping(NULL);
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

union st_args {
	struct st_pin pin;
	struct st_put put;
	struct st_slot_info info;
	struct st_dma dma;
	struct st_edu edu;
	struct st_misc misc;
};

static long st_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *argp = (void __user *)arg;
	union st_args a;
	size_t size = _IOC_SIZE(cmd);
	long ret;

	if (_IOC_TYPE(cmd) != ST_IOC_MAGIC || size > sizeof(a))
		return -ENOTTY;
	if (copy_from_user(&a, argp, size))
		return -EFAULT;
	switch (cmd) {
	case ST_IOC_PIN:
		ret = st_pin(&a.pin);
		break;
	case ST_IOC_PUT:
		ret = st_put(&a.put);
		break;
	case ST_IOC_INFO:
		ret = st_info(&a.info);
		break;
	case ST_IOC_DMA_MAP:
		ret = st_dma_map(&a.dma);
		break;
	case ST_IOC_DMA_UNMAP:
		ret = st_dma_unmap(&a.dma);
		break;
	case ST_IOC_EDU:
		ret = st_edu(&a.edu);
		break;
	case ST_IOC_MISC:
		ret = st_misc(&a.misc);
		break;
	default:
		return -ENOTTY;
	}
	if (!ret && copy_to_user(argp, &a, size))
		return -EFAULT;
	return ret;
}

static const struct file_operations st_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = st_ioctl,
};

static struct miscdevice st_misc_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "nvp2p_selftest",
	.fops = &st_fops,
	.mode = 0600,
};

static int st_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	ret = pcim_iomap_regions(pdev, BIT(0), "nvp2p_selftest");
	if (ret)
		return ret;
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	pci_set_master(pdev);
	st.bounce = dmam_alloc_coherent(&pdev->dev, EDU_CHUNK, &st.bounce_dma,
					GFP_KERNEL);
	if (!st.bounce)
		return -ENOMEM;
	st.regs = pcim_iomap_table(pdev)[0];
	st.edu = pdev;
	ret = misc_register(&st_misc_dev);
	if (ret)
		st.edu = NULL;
	return ret;
}

static void st_remove(struct pci_dev *pdev)
{
	struct nvidia_p2p_page_table *pt;
	struct nvidia_p2p_dma_mapping *map;
	unsigned int i;

	misc_deregister(&st_misc_dev);
	/* Release what the tests left pinned, as any driver must at unload. */
	for (i = 0; i < ST_SLOTS; i++) {
		struct st_slot *s = &st.slots[i];

		spin_lock(&st.lock);
		pt = s->pt;
		map = s->map;
		s->pt = NULL;
		s->map = NULL;
		spin_unlock(&st.lock);
		if (!pt)
			continue;
		if (map)
			nvidia_p2p_dma_unmap_pages(pdev, pt, map);
		if (s->persistent)
			nvidia_p2p_put_pages_persistent(s->va, pt, 0);
		else
			nvidia_p2p_put_pages(0, 0, s->va, pt);
	}
	st.edu = NULL;
}

static const struct pci_device_id st_ids[] = {
	{ PCI_DEVICE(EDU_VENDOR, EDU_DEVICE) },
	{ }
};

static struct pci_driver st_driver = {
	.name = "nvp2p_selftest",
	.id_table = st_ids,
	.probe = st_probe,
	.remove = st_remove,
};

static int __init st_init(void)
{
	mutex_init(&st.edu_lock);
	spin_lock_init(&st.lock);
	return pci_register_driver(&st_driver);
}

static void __exit st_exit(void)
{
	pci_unregister_driver(&st_driver);
}

module_init(st_init);
module_exit(st_exit);
MODULE_DESCRIPTION("Third-party test driver for the nv-p2p provider, on qemu's edu device");
MODULE_LICENSE("GPL");
