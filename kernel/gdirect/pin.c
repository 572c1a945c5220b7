// SPDX-License-Identifier: GPL-2.0
/*
 * The nv-p2p registrations: pin, free callback, release
 *
 * The hard part of every GPUDirect RDMA driver is the free callback racing
 * with unpin, fd close and process exit (guide 11.3).  The rules this file
 * follows are stated once, by name, in docs/driver.md, "Locking and
 * teardown": two references, no callback lock across provider calls, one
 * winner, revocation order, mappings filled on fault, fenced unmap, no
 * get_pages beside put_pages, owner-only put.  Comments here cite them by
 * name.  The steps of a teardown that are not the state machine's live
 * beside it: the peer's DMA mapping in dma.c, the write-combining
 * memtypes in wc.c, the CPU mappings in mmap.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "gdirect_internal.h"

/*
 * Three locks keep NEW (get_pages) and USE (calls that pass a page-table
 * pointer we checked is live: put_pages, dma_map_pages) apart ("no
 * get_pages beside put_pages", docs/driver.md), each over the set of
 * tables a stale pointer can reach in the provider:
 *
 *  gd_excl      every get_pages takes it for writing; dma_map_pages and
 *               the put_pages of a registration without a fence take it
 *               for reading.  A stale map may meet a table that any
 *               get_pages allocated at the same address, a put with
 *               tokens one that any get_pages registered in the token's
 *               client, and on Tegra (!GD_PUT_PER_PROCESS) a put any
 *               process's table.  The provider runs get_pages under its
 *               own API lock anyway, so serialising them costs nothing.
 *  gd_fence     one per owner process, for its token-less registrations
 *               where GD_PUT_PER_PROCESS: their get_pages take it for
 *               writing, their put_pages for reading.  The provider looks
 *               such a put up among the tables registered by the calling
 *               process, which is the owner ("owner-only put"), so only
 *               that process's get_pages can hand a stale pointer to a
 *               new table there.  One process's pins, linear in their
 *               pages, thus never delay another's unpins, closes and
 *               exits.
 *  gd_tok_excl  get_pages without a fence take it for writing, put_pages
 *               with a fence for reading: a token names a client gdirect
 *               cannot map to a process, so such a get_pages may register
 *               in any owner's client.
 *
 * Persistent puts take none: no callback frees a persistent table, and
 * only the releaser that claimed the registration puts it.  The order is
 * gd_excl, gd_tok_excl, then a gd_fence; nobody holds two fences.  An
 * rw_semaphore queues waiters in order and hands the lock over to a
 * waiter that has waited too long, so a stream of pins cannot starve an
 * unpin, nor a stream of unpins a pin (docs/driver.md, "Limits"); lockdep
 * sees each.  None is ever waited for by the free callback, so holding
 * one across a provider call cannot deadlock with the provider lock.  A
 * pin, a user's or a kernel caller's, waits killably; a release never
 * does, as close and exit must put the pages whatever signal is pending.
 */
DECLARE_RWSEM(gd_excl);
static DECLARE_RWSEM(gd_tok_excl);

/* One owner process's fence; shared by its registrations. */
struct gd_fence {
	struct rw_semaphore sem;
	pid_t tgid;
	unsigned int users;		/* under gd_fences_lock */
};

/*
 * tgid -> gd_fence, for owners with registrations.  A tgid reused by a new
 * process while the old one's registrations live shares their fence,
 * which only excludes more than needed.
 */
static DEFINE_XARRAY(gd_fences);
static DEFINE_MUTEX(gd_fences_lock);

/* The fence of process @tgid, made if it has none; NULL without memory. */
static struct gd_fence *gd_fence_get(pid_t tgid, gfp_t gfp)
{
	struct gd_fence *f;

	mutex_lock(&gd_fences_lock);
	f = xa_load(&gd_fences, tgid);
	if (!f) {
		f = kmalloc(sizeof(*f), gfp);
		if (!f)
			goto out;
		init_rwsem(&f->sem);
		f->tgid = tgid;
		f->users = 0;
		/* The index's nodes are shared: charged to no one. */
		if (xa_is_err(xa_store(&gd_fences, tgid, f, GFP_KERNEL))) {
			kfree(f);
			f = NULL;
			goto out;
		}
	}
	f->users++;
out:
	mutex_unlock(&gd_fences_lock);
	return f;
}

static void gd_fence_put(struct gd_fence *f)
{
	mutex_lock(&gd_fences_lock);
	if (!--f->users) {
		xa_erase(&gd_fences, f->tgid);
		kfree(f);
	}
	mutex_unlock(&gd_fences_lock);
}

/* The next id xa_alloc_cyclic() tries for gd_regs; under its xa_lock. */
static u32 gd_regs_next;

void gd_owner_current(struct gd_owner *o)
{
	o->tgid = current->tgid;
	o->start_time = current->group_leader->start_time;
}

/*
 * The process of @pid, which the caller holds a reference on.  Another
 * process than current is recorded by number only, with a start time that
 * matches no process: it is never current's, which is all gdirect asks of
 * an owner (a pin for another process needs tokens).  Its task is not
 * looked up: that needs rcu_read_lock(), GPL-only on preemptible-RCU kernels.
 */
void gd_owner_of_pid(struct pid *pid, struct gd_owner *o)
{
	if (pid == task_tgid(current)) {
		gd_owner_current(o);
		return;
	}
	o->tgid = pid_nr(pid);
	o->start_time = U64_MAX;
}

bool gd_owner_eq(const struct gd_owner *a, const struct gd_owner *b)
{
	return a->tgid == b->tgid && a->start_time == b->start_time;
}

bool gd_is_owner(const struct gd_owner *owner)
{
	struct gd_owner me;

	gd_owner_current(&me);
	return gd_owner_eq(&me, owner);
}

static struct gd_reg *gd_reg_alloc(struct gd_ctx *ctx, gfp_t gfp)
{
	struct gd_reg *r = kzalloc(sizeof(*r), gfp);

	if (!r)
		return NULL;
#ifdef GDIRECT_DEBUG_KNOBS
	r->dbg_magic = GD_REG_LIVE;
#endif
	kref_init(&r->ref);
	init_rwsem(&r->sem);
	spin_lock_init(&r->lock);
	spin_lock_init(&r->dma_lock);
	r->dma_refuse = -ESTALE;	/* until pinned */
	init_waitqueue_head(&r->wait);
	INIT_LIST_HEAD(&r->ev_node);
	r->state = GD_DEAD;
	r->slot = U32_MAX;
	atomic64_set(&r->mapped_len, 0);
	gd_owner_current(&r->owner);
	if (ctx) {
		gd_ctx_get(ctx);
		r->ctx = ctx;
	}
	return r;
}

static void gd_reg_free(struct kref *kref)
{
	struct gd_reg *r = container_of(kref, struct gd_reg, ref);

	if (r->proc_id)
		xa_erase(&gd_regs, r->proc_id);
	/*
	 * Only now is the pin off the caps and the slot free for reuse: a
	 * callback still in flight holds a reference and may yet write this
	 * slot's word.
	 */
	gd_reg_uncharge(r);
	if (r->ctx) {
		if (r->slot != U32_MAX) {
			gd_status_set(r->ctx, r->slot, GDIRECT_STATUS_FREE);
			ida_free(&r->ctx->slots, r->slot);
		}
		gd_ctx_put(r->ctx);
	}
	gd_release_wc(r);	/* nothing left by now; a safety net */
	if (r->fence)
		gd_fence_put(r->fence);
	kvfree(r->bus);
	pci_dev_put(r->peer);
	if (r->stale_target)
		gd_reg_put(r->stale_target);
#ifdef GDIRECT_DEBUG_KNOBS
	r->dbg_magic = GD_REG_FREED;
#endif
	kfree(r);
}

void gd_reg_get(struct gd_reg *r)
{
	kref_get(&r->ref);
}

void gd_reg_put(struct gd_reg *r)
{
	kref_put(&r->ref, gd_reg_free);
}

/*
 * Set once a free callback has dropped a module reference.  The thread
 * that dropped it still returns through this module's text afterwards,
 * so gd_callbacks_quiesce() must wait before the module may be freed.
 */
static bool gd_cb_put_module;

/**
 * gd_callbacks_quiesce() - wait until no free callback is still returning
 *
 * For module exit.  A free callback's last act is module_put() of its
 * registration's nv reference (gd_reg_drop_nv()); rmmod may go ahead as
 * soon as the last one drops, while that thread still has the rest of
 * gd_free_callback() to run, and may be preempted there.  RCU Tasks ends
 * a grace period only once every task has switched voluntarily, run in
 * user space or idled since it began, which a task preempted in this text
 * has not; and after module_put() a callback neither sleeps nor leaves
 * before returning.  So when synchronize_rcu_tasks() returns, no task is
 * in gdirect's text.  Without CONFIG_TASKS_RCU the call is
 * synchronize_rcu(), which is enough where the kernel cannot preempt (a
 * CPU's quiescent state is then a context switch, which that thread makes
 * only after returning).  docs/driver.md says where the window stays: a
 * preemptible kernel without RCU Tasks, and the proprietary flavour, to
 * which the GPL-only call is closed.  Sleeps, and only when a callback
 * ever dropped a module reference.
 */
void gd_callbacks_quiesce(void)
{
#ifndef GDIRECT_PROPRIETARY
	if (READ_ONCE(gd_cb_put_module))
		synchronize_rcu_tasks();
#endif
}

/* Drop the nv reference, once; also lets the module go. */
static void gd_reg_drop_nv(struct gd_reg *r, bool from_callback)
{
	bool held;

	spin_lock(&r->lock);
	held = r->nv_ref;
	r->nv_ref = false;
	spin_unlock(&r->lock);
	if (!held)
		return;
	atomic64_dec(&gd_stats.live_regions);
	atomic64_sub(r->size, &gd_stats.live_bytes);
	gd_reg_put(r);
	/* Ordered before the put by module_put()'s atomic decrement. */
	if (from_callback)
		WRITE_ONCE(gd_cb_put_module, true);
	/* Nothing after this may sleep: gd_callbacks_quiesce() relies on it. */
	module_put(THIS_MODULE);
}

static bool gd_reg_state_is_not(struct gd_reg *r, enum gd_state s)
{
	bool ret;

	spin_lock(&r->lock);
	ret = r->state != s;
	spin_unlock(&r->lock);
	return ret;
}

static bool gd_reg_cb_done(struct gd_reg *r)
{
	bool ret;

	spin_lock(&r->lock);
	ret = !r->revoked || r->cb_done;
	spin_unlock(&r->lock);
	return ret;
}

/*
 * The NVIDIA driver revokes the pages.  Called synchronously with the
 * provider's lock held (guide 11.3, 12.4): the BAR pages stay mapped until
 * we return, and the table and DMA mappings are freed right after.
 */
static void gd_free_callback(void *data)
{
	struct gd_reg *r = data;
	struct nvidia_p2p_page_table *pt;
	struct nvidia_p2p_dma_mapping *dma;
	bool notify;

	/* get_pages() may not have returned to gd_reg_pin() yet. */
	wait_event(r->wait, gd_reg_state_is_not(r, GD_PINNING));

	/* Under sem: a fault in progress finishes before we zap. */
	down_write(&r->sem);
	spin_lock(&r->lock);
	notify = r->state == GD_PINNED;
	WRITE_ONCE(r->revoked, true);
	if (notify)
		r->state = GD_REVOKED;
	gd_reg_dma_refuse(r, -ESTALE);
	spin_unlock(&r->lock);
	up_write(&r->sem);

	/* New DMA is refused from here on; wait for what is in flight. */
	wait_event(r->wait, gd_reg_no_dma(r));
	/* An unmap in flight still uses the table: it must end first. */
	gd_reg_wait_unmap(r);

	/* Revoked BAR pages must never be reachable from user space. */
	gd_zap_cpu_mappings(r);
	gd_release_wc(r);

	spin_lock(&r->lock);
	pt = r->pt;
	dma = r->dma;
	r->pt = NULL;
	r->dma = NULL;
	spin_unlock(&r->lock);
	if (dma)
		gd_nv_free_dma_mapping(dma);
	if (pt)
		gd_nv_free_page_table(pt);

	atomic64_inc(&gd_stats.callbacks);
	if (notify) {
		if (r->ctx) {
			atomic64_inc(&r->ctx->callbacks);
			gd_status_set(r->ctx, r->slot, GDIRECT_STATUS_REVOKED);
			gd_event_queue(r);
		}
		if (r->invalidate)
			r->invalidate((struct gdirect_region *)r, r->inv_data);
	}
	spin_lock(&r->lock);
	r->cb_done = true;
	spin_unlock(&r->lock);
	wake_up_all(&r->wait);
	gd_reg_drop_nv(r, true);
}

/**
 * gd_range() - widen [addr, addr + size) to 64 KiB boundaries
 * @addr: start, any alignment
 * @size: bytes, > 0
 * @start: out: aligned start
 * @len: out: aligned length
 *
 * Return: 0, or -EINVAL for a zero size, an overflow, or a range above
 * the 1 TiB a single mmap window can address.
 */
int gd_range(u64 addr, u64 size, u64 *start, u64 *len)
{
	u64 end;

	if (!size || addr + size < addr)
		return -EINVAL;
	end = addr + size;
	if (end > U64_MAX - (GD_PAGE_SIZE - 1))
		return -EINVAL;
	*start = round_down(addr, GD_PAGE_SIZE);
	*len = round_up(end, GD_PAGE_SIZE) - *start;
	if (*len > GD_MMAP_REGION_MASK + 1)
		return -EINVAL;
	return 0;
}

/**
 * gd_reg_setup() - check a pin request and make its registration
 * @ctx: the user context it is for, or NULL for a kernel caller
 * @req: what to pin; the entry point has checked its own flags
 * @out: the new registration, DEAD, holding its handle reference
 *
 * The checks every entry point shares (/dev/gdirect, /dev/gdrdrv and
 * gdirect_pin()), in one order, so the same bad input gets the same errno
 * everywhere.  Tokens (when allowed) pin with a free callback; token-less
 * requests of a user context without the persistent flag follow the
 * use_persistent default.  A user registration, and a kernel one made for
 * current's user (@req->account), is charged to current's memory cgroup
 * and counted against the pin caps.
 *
 * Return: 0; -EINVAL for a zero, wrapping or over-1-TiB range, or tokens
 * with the persistent API; -EPERM for tokens when allow_tokens is off, or
 * another process's memory without tokens; -EOPNOTSUPP for the persistent
 * API where the provider has none; -EDQUOT at a pin cap; -ENOMEM.
 */
int gd_reg_setup(struct gd_ctx *ctx, const struct gd_pin_req *req,
		 struct gd_reg **out)
{
	bool tokens = req->p2p_token || req->va_space;
	bool persistent = req->persistent;
	bool account = ctx || req->account;
	struct gd_reg *r;
	u64 start, len;
	int ret;

	ret = gd_range(req->addr, req->size, &start, &len);
	if (ret)
		return ret;
	if (tokens && !gd_allow_tokens)
		return -EPERM;
	if (!tokens && !gd_is_owner(&req->owner))
		return -EPERM;
	if (persistent && tokens)
		return -EINVAL;		/* the persistent API has no tokens */
	if (persistent && !GD_HAVE_PERSISTENT)
		return -EOPNOTSUPP;
	if (tokens && ctx)
		pr_warn_once("process %d pins with p2p tokens; tokens are deprecated since CUDA 6.0 (guide 11.6)\n",
			     task_tgid_nr(current));
	else if (!tokens && ctx && gd_use_persistent)
		persistent = true;

	/* A user's per-pin memory is charged to its memory cgroup. */
	r = gd_reg_alloc(ctx, account ? GFP_KERNEL_ACCOUNT : GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->owner = req->owner;
	r->addr = start;
	r->size = len;
	if (account) {
		ret = gd_reg_charge(r);
		if (ret) {
			gd_reg_put(r);
			return ret;
		}
	}
	r->p2p_token = req->p2p_token;
	r->va_space = req->va_space;
	/* Without tokens the owner is current: checked above. */
	if (!tokens && GD_PUT_PER_PROCESS) {
		r->fence = gd_fence_get(r->owner.tgid, account ?
					GFP_KERNEL_ACCOUNT : GFP_KERNEL);
		if (!r->fence) {
			gd_reg_put(r);
			return -ENOMEM;
		}
	}
	r->persistent = persistent;
	r->flags = persistent ? GDIRECT_PIN_PERSISTENT : 0;
	*out = r;
	return 0;
}

/* Check the table before reading any field but version (guide 13.3). */
static int gd_check_table(struct gd_reg *r, struct nvidia_p2p_page_table *pt)
{
	if (!NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(pt)) {
		atomic64_inc(&gd_stats.version_mismatch);
		pr_err_ratelimited("nv-p2p page table version %#x is incompatible with %#x, the version gdirect was built for; rebuild gdirect against the running NVIDIA driver\n",
				   pt->version, NVIDIA_P2P_PAGE_TABLE_VERSION);
		return -EPROTO;
	}
	if (!gd_nv_page_size_ok(pt)) {
		pr_err_ratelimited("unsupported GPU page size type %u\n",
				   pt->page_size);
		return -EOPNOTSUPP;
	}
	if ((u64)pt->entries * gd_nv_page_bytes(pt) != r->size) {
		pr_err_ratelimited("page table has %u entries for %llu bytes\n",
				   pt->entries, r->size);
		return -EIO;
	}
	return 0;
}

/*
 * Take what a get_pages for @r must hold ("no get_pages beside
 * put_pages"): gd_excl, and the owner's fence or, without one (tokens,
 * Tegra), gd_tok_excl.  Killable for every caller, a kernel one's
 * included: gdirect_pin() runs for a process (an ioctl of a peer
 * driver, a verbs registration), which must not be held
 * uninterruptibly behind every other pin in the system.
 */
static int gd_reg_new_lock(struct gd_reg *r)
{
	struct rw_semaphore *second = r->fence ? &r->fence->sem : &gd_tok_excl;

	if (down_write_killable(&gd_excl))
		return -EINTR;
	if (down_write_killable(second)) {
		up_write(&gd_excl);
		return -EINTR;
	}
	return 0;
}

static void gd_reg_new_unlock(struct gd_reg *r)
{
	up_write(r->fence ? &r->fence->sem : &gd_tok_excl);
	up_write(&gd_excl);
}

/*
 * Take what a put_pages of @r must hold: gd_tok_excl and the owner's
 * fence, or gd_excl without a fence (tokens, Tegra); a persistent put
 * takes nothing ("no get_pages beside put_pages").  Uninterruptible.
 */
static void gd_reg_use_lock(struct gd_reg *r)
{
	if (r->persistent)
		return;
	if (!r->fence) {
		down_read(&gd_excl);
		return;
	}
	down_read(&gd_tok_excl);
	down_read(&r->fence->sem);
}

static void gd_reg_use_unlock(struct gd_reg *r)
{
	if (r->persistent)
		return;
	if (!r->fence) {
		up_read(&gd_excl);
		return;
	}
	up_read(&r->fence->sem);
	up_read(&gd_tok_excl);
}

/**
 * gd_reg_pin() - pin r->addr, r->size through nv-p2p
 * @r: a registration from gd_reg_alloc() with its range and mode filled in
 *
 * Waits for gdirect's locks (gd_excl and the owner's fence) killably.
 *
 * Return: 0 with @r PINNED, or a negative errno with @r DEAD: -EINTR when
 * the caller got a fatal signal while waiting for the lock, -ENOMEM
 * when no id could be had for its entry in gd_regs.
 */
int gd_reg_pin(struct gd_reg *r)
{
	struct nvidia_p2p_page_table *pt = NULL;
	int ret, bad;
	u32 id;

	/*
	 * The registration's id in gd_regs, reserved (an empty entry) before
	 * anything else so that listing it below cannot fail.  The index is
	 * shared by every user, so its nodes are charged to no one's memory
	 * cgroup: a node outlives the pin that allocated it.
	 */
	ret = xa_alloc_cyclic(&gd_regs, &id, NULL, XA_LIMIT(1, U32_MAX),
			      &gd_regs_next, GFP_KERNEL);
	if (ret < 0)
		return ret;
	r->proc_id = id;

	ret = gd_reg_new_lock(r);
	if (ret)
		return ret;

	/* The nv reference; a callback may come before get_pages returns. */
	__module_get(THIS_MODULE);
	gd_reg_get(r);
	r->nv_ref = true;
	r->state = GD_PINNING;
	atomic64_inc(&gd_stats.live_regions);
	atomic64_add(r->size, &gd_stats.live_bytes);
	/* Storing into the reserved entry allocates nothing. */
	WARN_ON(xa_is_err(xa_store(&gd_regs, r->proc_id, r, GFP_KERNEL)));

	if (r->persistent) {
#if GD_HAVE_PERSISTENT
		ret = gd_nv_get_pages_persistent(r->addr, r->size, &pt);
#else
		ret = -EOPNOTSUPP;
#endif
	} else {
		ret = gd_nv_get_pages(r->p2p_token, r->va_space, r->addr,
				      r->size, &pt, gd_free_callback, r);
	}
	gd_reg_new_unlock(r);
	if (ret) {
		atomic64_inc(&gd_stats.pin_failures);
		spin_lock(&r->lock);
		r->state = GD_DEAD;
		spin_unlock(&r->lock);
		wake_up_all(&r->wait);
		gd_reg_drop_nv(r, false);
		return gd_errno(ret);
	}

	bad = gd_check_table(r, pt);
	if (!bad) {
		r->cpu_cacheable = gd_nv_cpu_cacheable(pt);
		/* Before PINNED: a callback then finds it to release. */
		gd_reserve_wc(r, pt);
	}
	if (r->ctx)
		gd_status_set(r->ctx, r->slot, GDIRECT_STATUS_PINNED);
	spin_lock(&r->lock);
	r->pt = pt;
	r->table_ok = !bad;
	r->state = GD_PINNED;
	/* Its callback pin's callback may have come already (kapi.c). */
	gd_reg_dma_refuse(r, r->stale ? -ESTALE : 0);
	spin_unlock(&r->lock);
	wake_up_all(&r->wait);
	if (bad) {
		gd_reg_release(r);
		return bad;
	}
	atomic64_inc(&gd_stats.pins);
	if (r->persistent)
		atomic64_inc(&gd_stats.persistent_pins);
	return 0;
}

/**
 * gd_reg_release() - end a registration from its handle's side
 * @r: the registration; the caller still holds its handle reference
 *
 * Tears down CPU mappings, waits for DMA, and calls put_pages() unless the
 * free callback got there first, in which case it waits for the callback to
 * finish.  Sleeps.  Never called with a lock held, nor from the callback.
 */
void gd_reg_release(struct gd_reg *r)
{
	struct nvidia_p2p_page_table *pt;
	bool claimed, revoked;
	int ret;

	down_write(&r->sem);
	spin_lock(&r->lock);
	claimed = r->state == GD_PINNED;
	if (claimed) {
		r->state = GD_RELEASING;
		gd_reg_dma_refuse(r, -ESTALE);
	}
	pt = r->pt;
	spin_unlock(&r->lock);
	up_write(&r->sem);
	if (!claimed) {
		/*
		 * Revoked: the callback ends it.  Wait until it has stopped
		 * using what the caller will free once we return (a kernel
		 * caller's invalidate data, for one).
		 */
		wait_event(r->wait, gd_reg_cb_done(r));
		return;
	}

	gd_zap_cpu_mappings(r);
	wait_event(r->wait, gd_reg_no_dma(r));
	atomic64_inc(&gd_stats.unpins);
	/*
	 * From any process: the peer's mapping must not outlive its owner,
	 * nor may put_pages free the table under another's unmap.
	 */
	gd_reg_dma_unmap(r);

	if (!r->persistent && !r->p2p_token && !r->va_space &&
	    !gd_is_owner(&r->owner)) {
		atomic64_inc(&gd_stats.orphaned);
		pr_debug("release of %#llx+%#llx outside its process; left to revocation\n",
			 r->addr, r->size);
		return;
	}

	gd_reg_use_lock(r);
	spin_lock(&r->lock);
	revoked = r->revoked;
	spin_unlock(&r->lock);
	if (revoked)
		ret = 0;	/* the callback ended it; pt may be reused */
#if GD_HAVE_PERSISTENT
	else if (r->persistent)
		ret = gd_nv_put_pages_persistent(r->addr, pt);
#endif
	else
		ret = gd_nv_put_pages(r->p2p_token, r->va_space, r->addr, pt);
	gd_reg_use_unlock(r);
	if (ret) {
		/* Still registered, maybe: keep the nv reference for it. */
		atomic64_inc(&gd_stats.put_errors);
		pr_warn_ratelimited("put_pages of %#llx+%#llx failed: %d\n",
				    r->addr, r->size, ret);
		return;
	}

	/*
	 * put_pages() waited for a callback in flight, so "revoked" is final:
	 * if set, that callback drops the nv reference (on Tegra put_pages
	 * itself runs the callback).
	 */
	spin_lock(&r->lock);
	revoked = r->revoked;
	r->state = GD_DEAD;
	r->pt = NULL;
	r->dma = NULL;
	spin_unlock(&r->lock);
	/* The pages are put (or the callback has them): no longer WC ours. */
	gd_release_wc(r);
	if (!revoked)
		gd_reg_drop_nv(r, false);
}
