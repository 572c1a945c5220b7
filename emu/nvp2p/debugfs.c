// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * debugfs.c - the knobs of knobs.c under /sys/kernel/debug/nvp2p_emu/
 *
 * The open flavours' front-end (debugfs is GPL-only: procfs.c serves the
 * proprietary one).
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/seq_file.h>

#include "emu.h"

static int emu_dbg_open(struct inode *inode, struct file *file)
{
	return single_open(file, emu_knob_show, inode->i_private);
}

static ssize_t emu_dbg_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	struct seq_file *m = file->private_data;

	return emu_knob_write(m->private, ubuf, len);
}

static const struct file_operations emu_dbg_fops = {
	.owner = THIS_MODULE,
	.open = emu_dbg_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = emu_dbg_write,
};

void emu_debugfs_init(struct emu_dev *e)
{
	struct dentry *d = debugfs_create_dir("nvp2p_emu", NULL);
	const struct emu_knob *k;
	size_t i;

	e->debugfs = d;
	for (i = 0; (k = emu_knob_at(i)); i++)
		debugfs_create_file(emu_knob_name(k),
				    emu_knob_writable(k) ? 0644 : 0444, d,
				    (void *)k, &emu_dbg_fops);
}

void emu_debugfs_exit(struct emu_dev *e)
{
	debugfs_remove_recursive(e->debugfs);
}
