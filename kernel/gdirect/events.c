// SPDX-License-Identifier: GPL-2.0
/*
 * Telling user space about revocations without a system call
 *
 * Two channels, both fed by the free callback without allocating or
 * sleeping: a status word per slot in a read-only shared page array (an
 * acquire load in the library's fast path), and a queue of struct
 * gdirect_event records behind read() and poll() for whoever wants to be
 * woken.  A queued event holds a reference to its registration, so the
 * record needs no allocation; a registration is queued at most once.
 */
#include <linux/poll.h>
#include <linux/uaccess.h>

#include "gdirect_internal.h"

void gd_status_set(struct gd_ctx *ctx, u32 slot, u32 value)
{
	/* Pairs with the reader's acquire load of the word. */
	smp_store_release(&ctx->status[slot], value);
}

void gd_event_queue(struct gd_reg *r)
{
	struct gd_ctx *ctx = r->ctx;
	bool queued = false;

	spin_lock(&ctx->ev_lock);
	if (!ctx->ev_closed && list_empty(&r->ev_node)) {
		gd_reg_get(r);
		list_add_tail(&r->ev_node, &ctx->events);
		queued = true;
	}
	spin_unlock(&ctx->ev_lock);
	if (queued) {
		atomic64_inc(&gd_stats.events);
		wake_up_interruptible_poll(&ctx->ev_wait, EPOLLIN | EPOLLRDNORM);
	}
}

/* release(): no reader is left; drop what is queued, accept no more. */
void gd_events_drain(struct gd_ctx *ctx)
{
	struct gd_reg *r, *tmp;
	LIST_HEAD(list);

	spin_lock(&ctx->ev_lock);
	ctx->ev_closed = true;
	list_splice_init(&ctx->events, &list);
	spin_unlock(&ctx->ev_lock);
	list_for_each_entry_safe(r, tmp, &list, ev_node) {
		list_del_init(&r->ev_node);
		gd_reg_put(r);
	}
}

static struct gd_reg *gd_event_pop(struct gd_ctx *ctx)
{
	struct gd_reg *r;

	spin_lock(&ctx->ev_lock);
	r = list_first_entry_or_null(&ctx->events, struct gd_reg, ev_node);
	if (r)
		list_del_init(&r->ev_node);
	spin_unlock(&ctx->ev_lock);
	return r;
}

/* Put back at the head an event we could not hand out. */
static void gd_event_unpop(struct gd_ctx *ctx, struct gd_reg *r)
{
	spin_lock(&ctx->ev_lock);
	if (!ctx->ev_closed) {
		list_add(&r->ev_node, &ctx->events);
		r = NULL;
	}
	spin_unlock(&ctx->ev_lock);
	if (r)
		gd_reg_put(r);
}

static bool gd_events_pending(struct gd_ctx *ctx)
{
	bool ret;

	spin_lock(&ctx->ev_lock);
	ret = !list_empty(&ctx->events);
	spin_unlock(&ctx->ev_lock);
	return ret;
}

ssize_t gd_read(struct file *filp, char __user *buf, size_t len, loff_t *off)
{
	struct gd_ctx *ctx = filp->private_data;
	struct gdirect_event ev;
	struct gd_reg *r;
	size_t done = 0;
	int ret;

	if (!gd_is_owner(&ctx->owner))
		return -EPERM;
	if (len < sizeof(ev))
		return -EINVAL;

	while (len - done >= sizeof(ev)) {
		r = gd_event_pop(ctx);
		if (!r) {
			if (done)
				break;
			if (filp->f_flags & O_NONBLOCK)
				return -EAGAIN;
			ret = wait_event_interruptible(ctx->ev_wait,
						       gd_events_pending(ctx));
			if (ret)
				return ret;
			continue;
		}
		memset(&ev, 0, sizeof(ev));
		ev.handle = r->handle;
		ev.pinned_addr = r->addr;
		ev.pinned_size = r->size;
		ev.status_slot = r->slot;
		ev.cause = GDIRECT_EVENT_REVOKED;
		if (copy_to_user(buf + done, &ev, sizeof(ev))) {
			gd_event_unpop(ctx, r);
			return done ? done : -EFAULT;
		}
		gd_reg_put(r);
		done += sizeof(ev);
	}
	return done;
}

__poll_t gd_poll(struct file *filp, struct poll_table_struct *wait)
{
	struct gd_ctx *ctx = filp->private_data;

	if (!gd_is_owner(&ctx->owner))
		return EPOLLERR;
	poll_wait(filp, &ctx->ev_wait, wait);
	return gd_events_pending(ctx) ? EPOLLIN | EPOLLRDNORM : 0;
}
