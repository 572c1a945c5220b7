// SPDX-License-Identifier: GPL-2.0
/*
 * procfs.c - counters and knobs of the emulated GPU, proprietary flavour
 *
 * The same files as debugfs.c, with the same names and formats, under
 * /proc/driver/nvp2p_emu/ (root only): a module licensed "NVIDIA" may use
 * no GPL-only symbol, and every debugfs entry point is one.
 */
#include <linux/fs.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

#include "emu.h"

#define EMU_PROC_DIR	"driver/nvp2p_emu"

enum emu_knob_kind {
	EMU_U64,	/* a u64 field of struct emu_dev, read-only */
	EMU_ATOMIC,	/* an atomic_t field of struct emu_dev, read-only */
	EMU_U32,	/* a global unsigned int, writable */
	EMU_MEM_USED,	/* emu->mem_used, read under the lock */
	EMU_FAULT,	/* a struct emu_fault field: "COUNT ERRNO" */
};

struct emu_knob {
	const char *name;
	enum emu_knob_kind kind;
	size_t off;			/* into struct emu_dev */
	unsigned int *u32;		/* EMU_U32 */
};

#define EMU_FIELD(n, k, f) { n, k, offsetof(struct emu_dev, f), NULL }
#define EMU_PARAM(n, v) { n, EMU_U32, 0, &(v) }

static const struct emu_knob emu_knobs[] = {
	EMU_FIELD("allocations", EMU_U64, nr_allocs),
	EMU_FIELD("pins", EMU_U64, nr_pins),
	EMU_FIELD("dma_maps", EMU_U64, nr_dma_maps),
	EMU_FIELD("callbacks", EMU_U64, nr_callbacks),
	EMU_FIELD("unmaps_in_flight", EMU_ATOMIC, unmaps_in_flight),
	EMU_FIELD("stale_unmaps", EMU_U64, nr_stale_unmaps),
	EMU_FIELD("unfreed_tables", EMU_U64, nr_unfreed_tables),
	EMU_FIELD("leftover_dma_maps", EMU_U64, nr_leftover_dma_maps),
#ifdef NVP2P_EMU_TEGRA
	EMU_PARAM("dma_max_run_kb", emu_dma_max_run_kb),
#endif
	EMU_FIELD("bar1_total", EMU_U64, bar1_size),
	EMU_FIELD("bar1_reserved", EMU_U64, bar1_reserved),
	EMU_FIELD("bar1_used", EMU_U64, bar1_used),
	EMU_FIELD("mem_total", EMU_U64, mem_size),
	EMU_FIELD("mem_used", EMU_MEM_USED, mem_used),
	EMU_PARAM("pin_latency_us", emu_pin_latency_us),
	EMU_PARAM("callback_delay_ms", emu_callback_delay_ms),
	EMU_PARAM("unmap_delay_ms", emu_unmap_delay_ms),
	EMU_FIELD("fail_next", EMU_FAULT, fail_pin),
	EMU_FIELD("fail_next_dma_map", EMU_FAULT, fail_dma),
};

static int emu_knob_show(struct seq_file *m, void *v)
{
	const struct emu_knob *k = m->private;
	void *field = (char *)emu + k->off;
	struct emu_fault *f = field;
	u64 val;

	switch (k->kind) {
	case EMU_U64:
		seq_printf(m, "%llu\n", READ_ONCE(*(u64 *)field));
		break;
	case EMU_ATOMIC:
		seq_printf(m, "%d\n", atomic_read((atomic_t *)field));
		break;
	case EMU_U32:
		seq_printf(m, "%u\n", READ_ONCE(*k->u32));
		break;
	case EMU_MEM_USED:
		mutex_lock(&emu->lock);
		val = emu->mem_used;
		mutex_unlock(&emu->lock);
		seq_printf(m, "%llu\n", val);
		break;
	case EMU_FAULT:
		mutex_lock(&emu->lock);
		seq_printf(m, "%u %d\n", f->count, f->err);
		mutex_unlock(&emu->lock);
		break;
	}
	return 0;
}

static int emu_knob_open(struct inode *inode, struct file *file)
{
	return single_open(file, emu_knob_show, pde_data(inode));
}

static ssize_t emu_knob_write(struct file *file, const char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	const struct emu_knob *k = ((struct seq_file *)file->private_data)->private;
	struct emu_fault *f = (void *)((char *)emu + k->off);
	unsigned int count;
	int err;
	char buf[32];

	if (k->kind == EMU_U32) {
		err = kstrtouint_from_user(ubuf, len, 0, &count);
		if (err)
			return err;
		WRITE_ONCE(*k->u32, count);
		return len;
	}
	if (k->kind != EMU_FAULT)
		return -EPERM;
	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%u %d", &count, &err) != 2 || err <= 0 ||
	    err >= MAX_ERRNO)
		return -EINVAL;
	mutex_lock(&emu->lock);
	f->count = count;
	f->err = err;
	mutex_unlock(&emu->lock);
	return len;
}

static const struct proc_ops emu_knob_ops = {
	.proc_open = emu_knob_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
	.proc_write = emu_knob_write,
};

void emu_debugfs_init(struct emu_dev *e)
{
	struct proc_dir_entry *d = proc_mkdir(EMU_PROC_DIR, NULL);
	size_t i;
	umode_t mode;

	if (!d) {
		dev_warn(&e->pdev->dev, "no /proc/%s: counters unavailable\n",
			 EMU_PROC_DIR);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(emu_knobs); i++) {
		mode = emu_knobs[i].kind == EMU_U32 ||
		       emu_knobs[i].kind == EMU_FAULT ? 0600 : 0400;
		if (!proc_create_data(emu_knobs[i].name, mode, d, &emu_knob_ops,
				      (void *)&emu_knobs[i]))
			dev_warn(&e->pdev->dev, "no /proc/%s/%s\n", EMU_PROC_DIR,
				 emu_knobs[i].name);
	}
}

void emu_debugfs_exit(struct emu_dev *e)
{
	remove_proc_subtree(EMU_PROC_DIR, NULL);
}
