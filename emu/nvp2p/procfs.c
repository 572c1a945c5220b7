// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * procfs.c - the knobs of knobs.c under /proc/driver/nvp2p_emu/, root only
 *
 * The proprietary flavour's front-end: a module licensed "NVIDIA" may use
 * no GPL-only symbol, and every debugfs entry point is one.
 */
#include <linux/fs.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>

#include "emu.h"

/* 5.17 renamed PDE_DATA() pde_data() (scripts/kconftest.sh). */
#if defined(KC_CONFTEST) && !defined(KC_HAVE_PDE_DATA_LOWER)
#define pde_data(inode)	PDE_DATA(inode)
#endif

#define EMU_PROC_DIR	"driver/nvp2p_emu"

static int emu_proc_open(struct inode *inode, struct file *file)
{
	return single_open(file, emu_knob_show, pde_data(inode));
}

static ssize_t emu_proc_write(struct file *file, const char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	struct seq_file *m = file->private_data;

	return emu_knob_write(m->private, ubuf, len);
}

static const struct proc_ops emu_proc_ops = {
	.proc_open = emu_proc_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
	.proc_write = emu_proc_write,
};

void emu_debugfs_init(struct emu_dev *e)
{
	struct proc_dir_entry *d = proc_mkdir(EMU_PROC_DIR, NULL);
	const struct emu_knob *k;
	size_t i;

	if (!d) {
		dev_warn(&e->pdev->dev, "no /proc/%s: counters unavailable\n",
			 EMU_PROC_DIR);
		return;
	}
	for (i = 0; (k = emu_knob_at(i)); i++)
		if (!proc_create_data(emu_knob_name(k),
				      emu_knob_writable(k) ? 0600 : 0400, d,
				      &emu_proc_ops, (void *)k))
			dev_warn(&e->pdev->dev, "no /proc/%s/%s\n", EMU_PROC_DIR,
				 emu_knob_name(k));
}

void emu_debugfs_exit(struct emu_dev *e)
{
	remove_proc_subtree(EMU_PROC_DIR, NULL);
}
