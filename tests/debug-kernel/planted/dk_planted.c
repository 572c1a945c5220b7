// SPDX-License-Identifier: GPL-2.0
/*
 * dk_planted.ko - bugs on purpose, for the debug-kernel lane only.
 *
 * The lane must show that its checkers would catch a bug in our drivers, so
 * this module carries one bug per checker, each run only when a test writes
 * its name to /sys/kernel/debug/dk_planted/trigger:
 *
 *   lock-ab, lock-ba  the two halves of an AB-BA lock inversion (lockdep);
 *                     each is harmless alone and nothing ever deadlocks, but
 *                     after both have run lockdep knows the two orders
 *   oob               a read one byte past a kmalloc'd buffer (KASAN)
 *   kfence-uaf        a read of a KFENCE-sampled object after kfree (KFENCE)
 *   leak              an allocation whose only pointer is dropped (kmemleak)
 *   sleep-atomic      a might-sleep point under a spinlock (DEBUG_ATOMIC_SLEEP);
 *                     it only asks whether sleeping is allowed, never sleeps
 *
 * It is never loaded by the normal guest suite and never built into it.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kfence.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>

/* Two locks with names that the lockdep report will show. */
static DEFINE_MUTEX(dk_planted_a);
static DEFINE_MUTEX(dk_planted_b);
static DEFINE_SPINLOCK(dk_planted_spin);
static struct dentry *dk_dir;

static void dk_lock_ab(void)
{
	mutex_lock(&dk_planted_a);
	mutex_lock(&dk_planted_b);
	mutex_unlock(&dk_planted_b);
	mutex_unlock(&dk_planted_a);
}

static void dk_lock_ba(void)
{
	mutex_lock(&dk_planted_b);
	mutex_lock(&dk_planted_a);	/* the planted inversion */
	mutex_unlock(&dk_planted_a);
	mutex_unlock(&dk_planted_b);
}

static noinline int dk_oob(void)
{
	size_t size = 13;
	volatile char *p;
	char c;

	/* Hidden from the compiler, so it is a run-time bug, not a warning. */
	OPTIMIZER_HIDE_VAR(size);
	p = kmalloc(size, GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	c = p[size];		/* the planted out-of-bounds read */
	kfree((void *)p);
	return c == 0x7f ? 1 : 0;	/* use c, so the read stays */
}

/*
 * KFENCE samples one allocation per interval (100 ms by default): allocate
 * until one lands in its pool, for at most about 20 s.
 */
static noinline int dk_kfence_uaf(void)
{
	volatile char *p = NULL;
	char c;
	int i;

	for (i = 0; i < 2000; i++) {
		p = kmalloc(32, GFP_KERNEL);
		if (!p)
			return -ENOMEM;
		if (is_kfence_address((void *)p))
			break;
		kfree((void *)p);
		p = NULL;
		msleep(10);
	}
	if (!p)
		return -EAGAIN;
	kfree((void *)p);
	c = p[0];		/* the planted use-after-free */
	return c == 0x7f ? 1 : 0;
}

static noinline int dk_leak(void)
{
	char *p = kmalloc(64, GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	strscpy(p, "dk_planted: leaked on purpose", 64);
	return 0;		/* the planted leak: p is dropped */
}

static noinline void dk_sleep_atomic(void)
{
	spin_lock(&dk_planted_spin);
	might_sleep();		/* the planted sleep in atomic context */
	spin_unlock(&dk_planted_spin);
}

static ssize_t dk_trigger_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	char cmd[16];
	int ret = 0;

	if (len == 0 || len >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, len))
		return -EFAULT;
	cmd[len] = '\0';
	strim(cmd);
	if (!strcmp(cmd, "lock-ab"))
		dk_lock_ab();
	else if (!strcmp(cmd, "lock-ba"))
		dk_lock_ba();
	else if (!strcmp(cmd, "oob"))
		ret = dk_oob();
	else if (!strcmp(cmd, "kfence-uaf"))
		ret = dk_kfence_uaf();
	else if (!strcmp(cmd, "leak"))
		ret = dk_leak();
	else if (!strcmp(cmd, "sleep-atomic"))
		dk_sleep_atomic();
	else
		return -EINVAL;
	return ret < 0 ? ret : len;
}

static const struct file_operations dk_trigger_fops = {
	.owner = THIS_MODULE,
	.write = dk_trigger_write,
};

static int __init dk_planted_init(void)
{
	dk_dir = debugfs_create_dir("dk_planted", NULL);
	debugfs_create_file("trigger", 0200, dk_dir, NULL, &dk_trigger_fops);
	return 0;
}

static void __exit dk_planted_exit(void)
{
	debugfs_remove_recursive(dk_dir);
}

module_init(dk_planted_init);
module_exit(dk_planted_exit);
MODULE_DESCRIPTION("Planted bugs that the debug-kernel lane must catch");
MODULE_LICENSE("GPL");
