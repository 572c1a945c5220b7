// SPDX-License-Identifier: GPL-2.0
/*
 * gdirect_kapitest - test-only caller of gdirect's in-kernel API
 *
 * Drives what an example driver cannot without racing itself:
 *
 *   echo "unmap ADDR SIZE" > /sys/kernel/debug/gdirect_kapitest/run
 *	pin for the edu device, then gdirect_dma_unmap(): DMA brackets now
 *	fail with -ENODEV, the DMA addresses are gone, a second unmap is a
 *	no-op, and the unpin still puts the pages.
 *   echo "race-start ADDR SIZE" > /sys/kernel/debug/gdirect_kapitest/run
 *	pin for the edu device and start gdirect_dma_unmap() in a kernel
 *	thread; the test holds that unmap open with nvp2p_emu's unmap_delay_ms
 *	and waits until it is in flight (unmaps_in_flight), then
 *   echo "race-unpin 0 0" > /sys/kernel/debug/gdirect_kapitest/run
 *	gdirect_unpin() here, while the thread's unmap runs: two unmappers of
 *	one region.
 *
 *   echo "overlap-pin ADDR SIZE" > /sys/kernel/debug/gdirect_kapitest/run
 *	pin the same range KT_OVERLAP times, with no peer, and hold the pins
 *	(more than a 16-bit count of a BAR1 page's pins can hold), until
 *   echo "overlap-unpin 0 0" > /sys/kernel/debug/gdirect_kapitest/run
 *	unpins them all.
 *
 *   echo "irq ADDR SIZE" > /sys/kernel/debug/gdirect_kapitest/run
 *	pin for the edu device and open and close DMA brackets from process
 *	context, from a tasklet (softirq) and from an irq_work (hard
 *	interrupt), as a NIC driver does from its submission path, its NAPI
 *	poll and its completion interrupt, and inside each bracket ask
 *	gdirect_region_revoked() and gdirect_region_dma_addrs(), as such a
 *	driver does; lockdep (the debug kernel) reports a lock not safe in
 *	all three.
 *
 *   echo "end-race ADDR SIZE" > /sys/kernel/debug/gdirect_kapitest/run
 *	pin for the edu device, open a DMA bracket and close it from a
 *	kernel thread while this context unpins: the release must not free
 *	the region while the thread's gdirect_dma_end() still uses it.
 *	gdirect's dbg_dma_end_delay_ms (debug builds) holds the thread in
 *	gdirect_dma_end() after the bracket is counted out; the test reads
 *	gdirect's dbg_freed_wakes.
 *
 * All run in the writer's context (it owns the GPU memory) and leave their
 * results in .../result as "name value" lines; the write fails with the
 * errno of the step that did not go as it must.
 */
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/interrupt.h>
#include <linux/irq_work.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "gdirect_kapi.h"

/* 5.11 renamed in_irq() in_hardirq() (scripts/kconftest.sh). */
#if defined(KC_CONFTEST) && !defined(KC_HAVE_IN_HARDIRQ)
#define in_hardirq()	in_irq()
#endif

struct kt_unmapper {
	struct gdirect_region *region;
	struct completion done;
};

struct kt_bracket;

struct kt_bracket_tasklet {
	struct tasklet_struct t;
	struct kt_bracket *b;
};

struct kt_bracket_irq_work {
	struct irq_work w;
	struct kt_bracket *b;
};

static struct dentry *kt_dir;
static DEFINE_MUTEX(kt_lock);		/* one run at a time; kt_result, kt_race */
static char kt_result[256];
static struct kt_unmapper kt_race;	/* between race-start and race-unpin */
#define KT_OVERLAP	65537
static struct gdirect_region **kt_overlap;	/* overlap-pin's regions */
static unsigned int kt_overlap_n;

static int kt_unmap_thread(void *data)
{
	struct kt_unmapper *u = data;

	gdirect_dma_unmap(u->region);
	complete(&u->done);
	return 0;
}

static int kt_pin(u64 addr, u64 size, struct gdirect_region **r)
{
	struct gdirect_pin_params p = { 0 };
	struct pci_dev *edu;
	int ret;

	edu = pci_get_device(0x1234, 0x11e8, NULL);	/* qemu's edu */
	if (!edu)
		return -ENODEV;
	/*
	 * A peer and no GDIRECT_KPIN_PERSISTENT: gdirect maps a persistent
	 * pin and pairs it with a callback pin (gdirect_kapi.h, "Peer pins").
	 */
	p.peer = edu;
	p.addr = addr;
	p.size = size;
	ret = gdirect_pin(&p, r);
	pci_dev_put(edu);	/* the region holds its own reference */
	return ret;
}

static int kt_unmap(u64 addr, u64 size)
{
	struct gdirect_region *r;
	const u64 *dma;
	int before, after, addrs, again;
	u32 n;
	int ret;

	lockdep_assert_held(&kt_lock);
	ret = kt_pin(addr, size, &r);
	if (ret)
		return ret;
	before = gdirect_dma_begin(r);
	if (!before)
		gdirect_dma_end(r);
	gdirect_dma_unmap(r);
	after = gdirect_dma_begin(r);
	if (!after)
		gdirect_dma_end(r);
	addrs = gdirect_region_dma_addrs(r, &dma, &n);
	gdirect_dma_unmap(r);
	again = gdirect_dma_begin(r);
	if (!again)
		gdirect_dma_end(r);
	gdirect_unpin(r);
	snprintf(kt_result, sizeof(kt_result),
		 "begin_before %d\nbegin_after %d\ndma_addrs_after %d\nbegin_after_second_unmap %d\n",
		 before, after, addrs, again);
	return before || after != -ENODEV || addrs != -ESTALE ||
	       again != -ENODEV ? -EPROTO : 0;
}

static int kt_race_start(u64 addr, u64 size)
{
	struct task_struct *t;
	int ret;

	lockdep_assert_held(&kt_lock);
	if (kt_race.region)
		return -EBUSY;
	ret = kt_pin(addr, size, &kt_race.region);
	if (ret)
		return ret;
	init_completion(&kt_race.done);
	t = kthread_run(kt_unmap_thread, &kt_race, "gdirect_kapitest");
	if (IS_ERR(t)) {
		gdirect_unpin(kt_race.region);
		kt_race.region = NULL;
		return PTR_ERR(t);
	}
	return 0;
}

/* The thread's unmap is in flight (the test saw it): unpin meanwhile. */
static int kt_race_unpin(void)
{
	ktime_t t0;
	s64 unpin_ms;

	lockdep_assert_held(&kt_lock);
	if (!kt_race.region)
		return -ENOENT;
	t0 = ktime_get();
	gdirect_unpin(kt_race.region);	/* the second unmapper */
	unpin_ms = ktime_ms_delta(ktime_get(), t0);
	wait_for_completion(&kt_race.done);
	kt_race.region = NULL;
	snprintf(kt_result, sizeof(kt_result), "unpin_ms %lld\n", unpin_ms);
	return 0;
}

/* One DMA bracket on a region, from whichever context runs it. */
struct kt_bracket {
	struct gdirect_region *region;
	int ret;
	bool in_hardirq, in_softirq;
	struct completion done;
};

static void kt_bracket(struct kt_bracket *b)
{
	const u64 *dma;
	u32 n;

	b->in_hardirq = in_hardirq();
	b->in_softirq = in_serving_softirq();
	b->ret = gdirect_dma_begin(b->region);
	if (!b->ret) {
		/* What a driver asks inside its bracket, in that context. */
		if (gdirect_region_revoked(b->region))
			b->ret = -ESTALE;
		else
			b->ret = gdirect_region_dma_addrs(b->region, &dma, &n);
		gdirect_dma_end(b->region);
	}
	complete(&b->done);
}

/* gdirect_dma_end() of a bracket the test opened, from a kernel thread. */
static int kt_end_thread(void *data)
{
	struct kt_unmapper *u = data;

	gdirect_dma_end(u->region);
	complete(&u->done);
	return 0;
}

/*
 * The bracket's end and an unpin race: the thread counts the bracket out
 * and is held (dbg_dma_end_delay_ms) before it returns, while the unpin
 * here sees no bracket open, puts the pages and drops the region.
 */
static int kt_end_race(u64 addr, u64 size)
{
	struct kt_unmapper u;
	struct task_struct *t;
	int ret;

	lockdep_assert_held(&kt_lock);
	ret = kt_pin(addr, size, &u.region);
	if (ret)
		return ret;
	ret = gdirect_dma_begin(u.region);
	if (ret) {
		gdirect_unpin(u.region);
		return ret;
	}
	init_completion(&u.done);
	t = kthread_run(kt_end_thread, &u, "gdirect_kapitest");
	if (IS_ERR(t)) {
		gdirect_dma_end(u.region);
		gdirect_unpin(u.region);
		return PTR_ERR(t);
	}
	/* The test's delay is far longer: the thread is in it by now. */
	msleep(100);
	gdirect_unpin(u.region);
	wait_for_completion(&u.done);
	snprintf(kt_result, sizeof(kt_result), "end_race done\n");
	return 0;
}

static void kt_bracket_tasklet(struct tasklet_struct *t)
{
	kt_bracket(container_of(t, struct kt_bracket_tasklet, t)->b);
}

static void kt_bracket_irq_work(struct irq_work *w)
{
	kt_bracket(container_of(w, struct kt_bracket_irq_work, w)->b);
}

static int kt_irq(u64 addr, u64 size)
{
	struct kt_bracket proc = { 0 }, soft = { 0 }, hard = { 0 };
	struct kt_bracket_tasklet t = { .b = &soft };
	struct kt_bracket_irq_work w = { .b = &hard };
	struct gdirect_region *r;
	int ret;

	lockdep_assert_held(&kt_lock);
	ret = kt_pin(addr, size, &r);
	if (ret)
		return ret;
	proc.region = soft.region = hard.region = r;
	init_completion(&proc.done);
	init_completion(&soft.done);
	init_completion(&hard.done);
	kt_bracket(&proc);
	tasklet_setup(&t.t, kt_bracket_tasklet);
	tasklet_schedule(&t.t);
	wait_for_completion(&soft.done);
	tasklet_kill(&t.t);
	init_irq_work(&w.w, kt_bracket_irq_work);
	/* A hard interrupt on x86 (a self-IPI), where irq_work_queue() runs it. */
	w.w.node.u_flags |= IRQ_WORK_HARD_IRQ;
	irq_work_queue(&w.w);
	wait_for_completion(&hard.done);
	irq_work_sync(&w.w);
	/* Once more from process context, after the interrupt contexts. */
	reinit_completion(&proc.done);
	kt_bracket(&proc);
	gdirect_unpin(r);
	snprintf(kt_result, sizeof(kt_result),
		 "process %d\nsoftirq %d in_softirq %d\nhardirq %d in_hardirq %d\n",
		 proc.ret, soft.ret, soft.in_softirq, hard.ret, hard.in_hardirq);
	return proc.ret || soft.ret || hard.ret ? -EPROTO :
	       !soft.in_softirq || !hard.in_hardirq ? -EOPNOTSUPP : 0;
}

/* Oldest first: the provider finds each at the head of its pin list. */
static void kt_overlap_unpin(void)
{
	unsigned int i;

	lockdep_assert_held(&kt_lock);
	for (i = 0; i < kt_overlap_n; i++) {
		gdirect_unpin(kt_overlap[i]);
		cond_resched();
	}
	kt_overlap_n = 0;
	kvfree(kt_overlap);
	kt_overlap = NULL;
}

static int kt_overlap_pin(u64 addr, u64 size)
{
	struct gdirect_pin_params p = { 0 };
	int ret = 0;

	lockdep_assert_held(&kt_lock);
	if (kt_overlap)
		return -EBUSY;
	kt_overlap = kvcalloc(KT_OVERLAP, sizeof(*kt_overlap), GFP_KERNEL);
	if (!kt_overlap)
		return -ENOMEM;
	/* No peer: a DMA mapping each would make this quadratic. */
	p.addr = addr;
	p.size = size;
	while (kt_overlap_n < KT_OVERLAP && !ret) {
		ret = gdirect_pin(&p, &kt_overlap[kt_overlap_n]);
		if (!ret)
			kt_overlap_n++;
		cond_resched();
	}
	snprintf(kt_result, sizeof(kt_result), "overlap_pins %u\n",
		 kt_overlap_n);
	if (ret)
		kt_overlap_unpin();
	return ret;
}

static ssize_t kt_run_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	char buf[80], cmd[16];
	u64 addr, size;
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%15s %llx %llx", cmd, &addr, &size) != 3)
		return -EINVAL;
	mutex_lock(&kt_lock);
	kt_result[0] = '\0';
	if (!strcmp(cmd, "unmap"))
		ret = kt_unmap(addr, size);
	else if (!strcmp(cmd, "race-start"))
		ret = kt_race_start(addr, size);
	else if (!strcmp(cmd, "race-unpin"))
		ret = kt_race_unpin();
	else if (!strcmp(cmd, "end-race"))
		ret = kt_end_race(addr, size);
	else if (!strcmp(cmd, "irq"))
		ret = kt_irq(addr, size);
	else if (!strcmp(cmd, "overlap-pin"))
		ret = kt_overlap_pin(addr, size);
	else if (!strcmp(cmd, "overlap-unpin"))
		ret = kt_overlap ? (kt_overlap_unpin(), 0) : -ENOENT;
	else
		ret = -EINVAL;
	mutex_unlock(&kt_lock);
	return ret ? ret : len;
}

static const struct file_operations kt_run_fops = {
	.owner = THIS_MODULE,
	.write = kt_run_write,
	.llseek = noop_llseek,
};

static int kt_result_show(struct seq_file *m, void *v)
{
	mutex_lock(&kt_lock);
	seq_puts(m, kt_result);
	mutex_unlock(&kt_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kt_result);

static int __init kt_init(void)
{
	kt_dir = debugfs_create_dir("gdirect_kapitest", NULL);
	debugfs_create_file("run", 0200, kt_dir, NULL, &kt_run_fops);
	debugfs_create_file("result", 0400, kt_dir, NULL, &kt_result_fops);
	return 0;
}

static void __exit kt_exit(void)
{
	debugfs_remove_recursive(kt_dir);
	/*
	 * A test that stopped between the two steps: not from the owner, so
	 * the pin is left to revocation, but the thread must be done.
	 */
	mutex_lock(&kt_lock);
	if (kt_race.region) {
		wait_for_completion(&kt_race.done);
		gdirect_unpin(kt_race.region);
	}
	kt_overlap_unpin();
	mutex_unlock(&kt_lock);
}

module_init(kt_init);
module_exit(kt_exit);
MODULE_DESCRIPTION("Test-only caller of gdirect's in-kernel API");
MODULE_LICENSE("GPL");
