// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs.c - counters and fault-injection knobs of the emulated GPU
 *
 * /sys/kernel/debug/nvp2p_emu/
 *   allocations  pins  dma_maps  callbacks   live counts / callbacks fired
 *   unmaps_in_flight  stale_unmaps           dma_unmap_pages calls running /
 *                                            made on a table no longer live
 *   unfreed_tables                           Tegra: tables put or revoked but
 *                                            not yet freed by their driver
 *   leftover_dma_maps                        Tegra: mappings a driver left
 *                                            mapped when its callback returned
 *                                            (L4T would leak them)
 *   dma_max_run_kb                           Tegra: longest hw_len run (0: any)
 *   bar1_total  bar1_reserved  bar1_used     BAR1 budget in bytes
 *   mem_total  mem_used                      GPU memory in bytes
 *   pin_latency_us  callback_delay_ms        the module parameters, writable
 *   unmap_delay_ms
 *   fail_next          "COUNT ERRNO": the next COUNT get_pages calls fail
 *   fail_next_dma_map  "COUNT ERRNO": the next COUNT dma_map_pages calls fail
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/uaccess.h>

#include "emu.h"

static int fail_next_show(struct seq_file *m, void *v)
{
	struct emu_fault *f = m->private;

	mutex_lock(&emu->lock);
	seq_printf(m, "%u %d\n", f->count, f->err);
	mutex_unlock(&emu->lock);
	return 0;
}

static int fail_next_open(struct inode *inode, struct file *file)
{
	return single_open(file, fail_next_show, inode->i_private);
}

static ssize_t fail_next_write(struct file *file, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	struct emu_fault *f = ((struct seq_file *)file->private_data)->private;
	unsigned int count;
	int err;
	char buf[32];

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

static const struct file_operations fail_next_fops = {
	.owner = THIS_MODULE,
	.open = fail_next_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = fail_next_write,
};

static int mem_used_get(void *data, u64 *val)
{
	mutex_lock(&emu->lock);
	*val = emu->mem_used;
	mutex_unlock(&emu->lock);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(mem_used_fops, mem_used_get, NULL, "%llu\n");

void emu_debugfs_init(struct emu_dev *e)
{
	struct dentry *d = debugfs_create_dir("nvp2p_emu", NULL);

	e->debugfs = d;
	debugfs_create_u64("allocations", 0444, d, &e->nr_allocs);
	debugfs_create_u64("pins", 0444, d, &e->nr_pins);
	debugfs_create_u64("dma_maps", 0444, d, &e->nr_dma_maps);
	debugfs_create_u64("callbacks", 0444, d, &e->nr_callbacks);
	debugfs_create_atomic_t("unmaps_in_flight", 0444, d,
				&e->unmaps_in_flight);
	debugfs_create_u64("stale_unmaps", 0444, d, &e->nr_stale_unmaps);
	debugfs_create_u64("unfreed_tables", 0444, d, &e->nr_unfreed_tables);
	debugfs_create_u64("leftover_dma_maps", 0444, d,
			   &e->nr_leftover_dma_maps);
#ifdef NVP2P_EMU_TEGRA
	debugfs_create_u32("dma_max_run_kb", 0644, d, &emu_dma_max_run_kb);
#endif
	debugfs_create_u64("bar1_total", 0444, d, &e->bar1_size);
	debugfs_create_u64("bar1_reserved", 0444, d, &e->bar1_reserved);
	debugfs_create_u64("bar1_used", 0444, d, &e->bar1_used);
	debugfs_create_u64("mem_total", 0444, d, &e->mem_size);
	debugfs_create_file_unsafe("mem_used", 0444, d, NULL, &mem_used_fops);
	debugfs_create_u32("pin_latency_us", 0644, d, &emu_pin_latency_us);
	debugfs_create_u32("callback_delay_ms", 0644, d, &emu_callback_delay_ms);
	debugfs_create_u32("unmap_delay_ms", 0644, d, &emu_unmap_delay_ms);
	debugfs_create_file("fail_next", 0644, d, &e->fail_pin, &fail_next_fops);
	debugfs_create_file("fail_next_dma_map", 0644, d, &e->fail_dma,
			    &fail_next_fops);
}

void emu_debugfs_exit(struct emu_dev *e)
{
	debugfs_remove_recursive(e->debugfs);
}
