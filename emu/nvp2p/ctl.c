// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ctl.c - /dev/nvp2p_emu, the emulated GPU's user interface
 *
 * The CUDA driver subset in cuda_emu/ sits on this, as libcuda sits on the
 * NVIDIA driver's device files.  An open file is one GPU VA space, used only
 * by the process that opened it; closing it frees all its memory, revoking
 * third-party pins as the NVIDIA driver does at process exit.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "emu.h"
#include "nvp2p_emu.h"

#define EMU_COPY_CHUNK	EMU_PAGE_SIZE

static atomic_t emu_next_va_space = ATOMIC_INIT(0);

static int emu_open(struct inode *inode, struct file *file)
{
	struct emu_file *f;
	struct emu_dev *e;
	int ret = -ENODEV;

	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		return -ENOMEM;
	INIT_LIST_HEAD(&f->allocs);
	f->tgid = current->tgid;
	/* Tokens authenticate a VA space (guide 11.6): unguessable. */
	f->p2p_token = get_random_u64() | 1;
	f->va_space = atomic_inc_return(&emu_next_va_space);
	/*
	 * emu is set before the device node exists and stays (unbound, at
	 * worst) while files are open; an unbind marks it gone first.
	 */
	mutex_lock(&emu_bind_lock);
	e = emu;
	if (e) {
		mutex_lock(&e->lock);
		if (!e->gone) {
			ret = -ENOMEM;
			f->user = emu_user_get(current_uid());
		}
		if (f->user)
			list_add_tail(&f->node, &e->files);
		mutex_unlock(&e->lock);
	}
	mutex_unlock(&emu_bind_lock);
	if (!f->user) {
		kfree(f);
		return ret;
	}
	file->private_data = f;
	return 0;
}

static int emu_release(struct inode *inode, struct file *file)
{
	struct emu_file *f = file->private_data;
	struct emu_alloc *a, *tmp;

	mutex_lock(&emu->lock);
	list_for_each_entry_safe(a, tmp, &f->allocs, node)
		emu_alloc_free(a);
	list_del(&f->node);
	f->user->files--;
	emu_user_put(f->user);
	mutex_unlock(&emu->lock);
	kfree(f);
	return 0;
}

/*
 * The range an alloc or import asks for: not empty, not wrapping past 2^64,
 * and whole emulated GPU pages.
 */
static bool emu_req_range_ok(u64 va, u64 size)
{
	return size && va + size > va && IS_ALIGNED(va, EMU_PAGE_SIZE) &&
	       IS_ALIGNED(size, EMU_PAGE_SIZE);
}

/* The VA must be reserved by the caller and not CPU-accessible. */
static int emu_check_reserved(u64 va, u64 size)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	int ret = -EINVAL;

	if (!mm)
		return -EINVAL;
	mmap_read_lock(mm);
	vma = find_vma(mm, va);
	if (vma && vma->vm_start <= va && size <= vma->vm_end - va &&
	    !(vma->vm_flags & (VM_READ | VM_WRITE | VM_EXEC)))
		ret = 0;
	mmap_read_unlock(mm);
	return ret;
}

static long emu_ioc_alloc(struct emu_file *f, void __user *argp)
{
	struct nvp2p_emu_alloc req;
	struct emu_alloc *a;
	int ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (!emu_req_range_ok(req.va, req.size))
		return -EINVAL;
	if (req.size > emu->mem_size)
		return -ENOMEM;
	ret = emu_check_reserved(req.va, req.size);
	if (ret)
		return ret;
	ret = emu_alloc_create(f, req.va, req.size, &a);
	if (ret)
		return ret;
	req.mem_offset = a->mem_offset;
	if (copy_to_user(argp, &req, sizeof(req)))
		return -EFAULT;	/* the allocation stays; freed at close */
	return 0;
}

static long emu_ioc_export(struct emu_file *f, void __user *argp)
{
	struct nvp2p_emu_export req;
	int ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	ret = emu_export_create(f, req.va, req.size, &req.handle, &req.base,
				&req.alloc_size);
	if (ret)
		return ret;
	return copy_to_user(argp, &req, sizeof(req)) ? -EFAULT : 0;
}

static long emu_ioc_dmabuf(struct emu_file *f, void __user *argp)
{
	struct nvp2p_emu_dmabuf req;
#ifdef EMU_DMABUF
	struct dma_buf *buf;
#endif
	int ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.flags & ~(NVP2P_EMU_DMABUF_PCIE | NVP2P_EMU_DMABUF_ALLOW_MMAP))
		return -EINVAL;
#ifdef EMU_DMABUF
	ret = emu_dmabuf_export(f, req.va, req.size, req.flags, &buf, &req.fd);
	if (ret)
		return ret;
	if (copy_to_user(argp, &req, sizeof(req))) {
		emu_dmabuf_abort(buf, req.fd);
		return -EFAULT;
	}
	emu_dmabuf_install(buf, req.fd);
	return 0;
#else
	ret = -EOPNOTSUPP;	/* dma_buf_export() is GPL-only */
	return ret;
#endif
}

static long emu_ioc_withdraw(struct emu_file *f, void __user *argp)
{
	struct nvp2p_emu_withdraw req;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	return emu_export_withdraw(f, req.handle);
}

static long emu_ioc_import(struct emu_file *f, void __user *argp)
{
	struct nvp2p_emu_import req;
	struct emu_alloc *a;
	int ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (!emu_req_range_ok(req.va, req.size))
		return -EINVAL;
	ret = emu_check_reserved(req.va, req.size);
	if (ret)
		return ret;
	ret = emu_import_create(f, req.handle, req.va, req.size, &a,
				&req.offset, &req.range_size);
	if (ret)
		return ret;
	req.mem_offset = a->mem_offset;
	if (copy_to_user(argp, &req, sizeof(req)))
		return -EFAULT;	/* the import stays; freed at close */
	return 0;
}

static long emu_ioc_free(struct emu_file *f, void __user *argp)
{
	struct nvp2p_emu_free req;
	struct emu_alloc *a;
	int ret = -EINVAL;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	mutex_lock(&emu->lock);
	list_for_each_entry(a, &f->allocs, node) {
		if (a->va == req.va) {
			emu_alloc_free(a);
			ret = 0;
			break;
		}
	}
	mutex_unlock(&emu->lock);
	return ret;
}

/*
 * Find the caller's allocation holding [va, va + size) and take a reference,
 * so a concurrent free cannot return the memory to the pool mid-copy.
 */
static struct emu_alloc *emu_get_range(struct emu_file *f, u64 va, u64 size,
				       u64 *offset)
{
	struct emu_alloc *a;

	mutex_lock(&emu->lock);
	list_for_each_entry(a, &f->allocs, node) {
		if (va >= a->va && size <= a->size && va - a->va <= a->size - size) {
			kref_get(&a->ref);
			*offset = a->mem_offset + (va - a->va);
			mutex_unlock(&emu->lock);
			return a;
		}
	}
	mutex_unlock(&emu->lock);
	return NULL;
}

static void emu_put_range(struct emu_alloc *a)
{
	mutex_lock(&emu->lock);
	emu_alloc_put(a);
	mutex_unlock(&emu->lock);
}

static int emu_copy_chunks(struct nvp2p_emu_copy *req, u64 dst_off,
			   u64 src_off)
{
	u64 done, n;
	void *buf;
	int ret = 0;

	buf = kmalloc(EMU_COPY_CHUNK, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (done = 0; done < req->size; done += n) {
		n = min_t(u64, req->size - done, EMU_COPY_CHUNK);
		switch (req->dir) {
		case NVP2P_EMU_HTOD:
			if (copy_from_user(buf, u64_to_user_ptr(req->src + done), n)) {
				ret = -EFAULT;
				goto out;
			}
			memcpy_toio(emu->mem + dst_off + done, buf, n);
			atomic64_add(n, &emu->htod_bytes);
			break;
		case NVP2P_EMU_DTOH:
			memcpy_fromio(buf, emu->mem + src_off + done, n);
			if (copy_to_user(u64_to_user_ptr(req->dst + done), buf, n)) {
				ret = -EFAULT;
				goto out;
			}
			atomic64_add(n, &emu->dtoh_bytes);
			break;
		case NVP2P_EMU_DTOD:
			memcpy_fromio(buf, emu->mem + src_off + done, n);
			memcpy_toio(emu->mem + dst_off + done, buf, n);
			break;
		case NVP2P_EMU_MEMSET:
			memset_io(emu->mem + dst_off + done, (u8)req->src, n);
			break;
		}
		cond_resched();
	}
out:
	kfree(buf);
	return ret;
}

static long emu_ioc_copy(struct emu_file *f, void __user *argp)
{
	struct nvp2p_emu_copy req;
	struct emu_alloc *dst = NULL, *src = NULL;
	u64 dst_off = 0, src_off = 0;
	bool gpu_dst, gpu_src;
	int ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.dir < NVP2P_EMU_HTOD || req.dir > NVP2P_EMU_MEMSET || req.reserved)
		return -EINVAL;
	if (!req.size)
		return 0;
	gpu_dst = req.dir != NVP2P_EMU_DTOH;
	gpu_src = req.dir == NVP2P_EMU_DTOH || req.dir == NVP2P_EMU_DTOD;
	if (gpu_dst) {
		dst = emu_get_range(f, req.dst, req.size, &dst_off);
		if (!dst)
			return -EINVAL;
	}
	if (gpu_src) {
		src = emu_get_range(f, req.src, req.size, &src_off);
		if (!src) {
			ret = -EINVAL;
			goto out;
		}
	}
	ret = emu_copy_chunks(&req, dst_off, src_off);
out:
	if (src)
		emu_put_range(src);
	if (dst)
		emu_put_range(dst);
	return ret;
}

static long emu_ioc_query(struct emu_file *f, void __user *argp)
{
	struct nvp2p_emu_query req;
	struct emu_alloc *a;
	int ret = -EINVAL;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	mutex_lock(&emu->lock);
	list_for_each_entry(a, &f->allocs, node) {
		if (req.va >= a->va && req.va - a->va < a->size) {
			req.base = a->va;
			req.size = a->size;
			req.mem_offset = a->mem_offset;
			ret = 0;
			break;
		}
	}
	mutex_unlock(&emu->lock);
	if (!ret && copy_to_user(argp, &req, sizeof(req)))
		return -EFAULT;
	return ret;
}

static long emu_ioc_info(void __user *argp)
{
	struct nvp2p_emu_info info = {
		.abi_version = NVP2P_EMU_ABI_VERSION,
		.page_table_version = NVIDIA_P2P_PAGE_TABLE_VERSION,
		.dma_mapping_version = NVIDIA_P2P_DMA_MAPPING_VERSION,
		.persistent_api = EMU_PERSISTENT_API,
		.mem_size = emu->mem_size,
		.bar1_size = emu->bar1_size,
		.bar1_reserved = emu->bar1_reserved,
		.pci_domain = pci_domain_nr(emu->pdev->bus),
		.pci_bus = emu->pdev->bus->number,
		.pci_devfn = emu->pdev->devfn,
#ifdef EMU_DMABUF
		.caps = NVP2P_EMU_CAP_DMABUF,
#endif
	};

	info.cuda_version = READ_ONCE(emu_cuda_version);
#ifndef NVP2P_EMU_TEGRA
	if (READ_ONCE(emu_coherent))
		info.caps |= NVP2P_EMU_CAP_COHERENT;
#endif
	mutex_lock(&emu->lock);
	info.mem_used = emu->mem_used;
	info.bar1_used = emu->bar1_used;
	mutex_unlock(&emu->lock);
	memcpy(info.gpu_uuid, emu->uuid, sizeof(info.gpu_uuid));
	return copy_to_user(argp, &info, sizeof(info)) ? -EFAULT : 0;
}

static long emu_ioctl_active(struct emu_file *f, unsigned int cmd,
			     void __user *argp)
{
	switch (cmd) {
	case NVP2P_EMU_IOC_INFO:
		return emu_ioc_info(argp);
	case NVP2P_EMU_IOC_ALLOC:
		return emu_ioc_alloc(f, argp);
	case NVP2P_EMU_IOC_FREE:
		return emu_ioc_free(f, argp);
	case NVP2P_EMU_IOC_COPY:
		return emu_ioc_copy(f, argp);
	case NVP2P_EMU_IOC_QUERY:
		return emu_ioc_query(f, argp);
	case NVP2P_EMU_IOC_EXPORT:
		return emu_ioc_export(f, argp);
	case NVP2P_EMU_IOC_IMPORT:
		return emu_ioc_import(f, argp);
	case NVP2P_EMU_IOC_WITHDRAW:
		return emu_ioc_withdraw(f, argp);
	case NVP2P_EMU_IOC_DMABUF:
		return emu_ioc_dmabuf(f, argp);
	case NVP2P_EMU_IOC_SUB_ADD:
	case NVP2P_EMU_IOC_SUB_DEL: {
		struct nvp2p_emu_sub req;

		if (copy_from_user(&req, argp, sizeof(req)))
			return -EFAULT;
		return cmd == NVP2P_EMU_IOC_SUB_ADD ?
		       emu_sub_add(f, req.va, req.size) : emu_sub_del(f, req.va);
	}
	case NVP2P_EMU_IOC_TOKENS: {
		struct nvp2p_emu_tokens t = {
			.p2p_token = f->p2p_token,
			.va_space = f->va_space,
		};

		return copy_to_user(argp, &t, sizeof(t)) ? -EFAULT : 0;
	}
	default:
		return -ENOTTY;
	}
}

static long emu_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct emu_file *f = file->private_data;
	long ret;

	/* A GPU VA space belongs to one process, as a CUDA context does. */
	if (current->tgid != f->tgid)
		return -EPERM;

	/*
	 * An open file keeps emu (see emu_open()).  Unbound, its memory was
	 * freed and every call fails; the unbind waits for calls in flight.
	 */
	down_read(&emu->active);
	if (emu->gone)
		ret = -ENODEV;
	else
		ret = emu_ioctl_active(f, cmd, (void __user *)arg);
	up_read(&emu->active);
	return ret;
}

static const struct file_operations emu_fops = {
	.owner = THIS_MODULE,
	.open = emu_open,
	.release = emu_release,
	.unlocked_ioctl = emu_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice emu_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "nvp2p_emu",
	.fops = &emu_fops,
};

int emu_ctl_register(void)
{
	emu_misc.mode = emu_dev_mode & 0666;
	return misc_register(&emu_misc);
}

void emu_ctl_unregister(void)
{
	misc_deregister(&emu_misc);
}
