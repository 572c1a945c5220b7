/* SPDX-License-Identifier: GPL-2.0 */
/*
 * State shared by the files of gdirect.ko
 *
 * Two objects carry everything:
 *
 *  struct gd_ctx  one open /dev/gdirect: its handles, status words and
 *                 event queue.  Refcounted: the file holds one reference,
 *                 every registration made through it holds one more, so the
 *                 status area and the zap address space outlive release()
 *                 for as long as a late free callback may still use them.
 *
 *  struct gd_reg  one nv-p2p registration, made for a user context or for a
 *                 kernel caller of the in-kernel API.  Refcounted: the
 *                 handle (user xarray entry or kernel pointer) holds one
 *                 reference and the NVIDIA registration another, the "nv
 *                 reference" ("two references" in docs/driver.md).
 *
 * Lock order: mmap_lock (a page fault) before gd_reg.sem; gd_reg.sem
 * before gd_reg.lock; gd_regs' xa_lock before gd_reg.lock; gd_ctx.ev_lock,
 * the contexts' xa_lock and gd_reg.lock are leaves.
 * None of them is held across a call into the nv-p2p provider; only
 * gd_excl, gd_tok_excl and the owners' fences (pin.c) are, which the
 * callback never waits for.  The rules
 * behind this ("no callback lock across provider calls", "fenced unmap",
 * ...) are stated once, in docs/driver.md, "Locking and teardown".
 */
#ifndef GDIRECT_INTERNAL_H
#define GDIRECT_INTERNAL_H

#include <linux/fs.h>
#include <linux/delay.h>
#include <linux/idr.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include "gdirect_ioctl.h"
#include "gdirect_kapi.h"
#include "nvp2p_compat.h"
#include "kcompat.h"

#define GD_PAGE_SHIFT		GDIRECT_GPU_PAGE_SHIFT
#define GD_PAGE_SIZE		((u64)1 << GD_PAGE_SHIFT)

/*
 * mmap offsets: the status area is at offset 0; region N is at N << 40, so
 * a region may be up to 1 TiB and the handle space stays below 2^63.
 */
#define GD_MMAP_REGION_SHIFT	40
#define GD_MMAP_REGION_MASK	(((u64)1 << GD_MMAP_REGION_SHIFT) - 1)
#define GD_MAX_HANDLE		((1U << 22) - 1)
/*
 * A 32-bit process passes mmap2() a 32-bit offset in 4 KiB units, on every
 * architecture and page size, so it reaches offsets below 2^44 only: with
 * 1 TiB windows, handles 1 to 15.  A file opened by a 32-bit process
 * (in_compat_syscall() at open) therefore places region N at N << 32: up
 * to 4095 regions of up to 4 GiB each, all reachable.
 */
#define GD_MMAP_COMPAT_SHIFT	32
#define GD_MMAP_COMPAT_BITS	44
/*
 * gdrdrv handles: mmap offset handle << PAGE_SHIFT, spaced by the region's
 * pages, never reused; kept below 2^(62 - PAGE_SHIFT) so offsets fit loff_t.
 */
#define GD_GDR_MAX_HANDLE	((1ULL << (62 - PAGE_SHIFT)) - 1)

#define GD_STATUS_PAGES		DIV_ROUND_UP(GDIRECT_STATUS_BYTES, PAGE_SIZE)

enum gd_state {
	GD_PINNING,	/* inside get_pages; the callback waits for the result */
	GD_PINNED,	/* valid: DMA and CPU mappings allowed */
	GD_RELEASING,	/* unpin in progress; no new users */
	GD_REVOKED,	/* free callback claimed it; pages are gone */
	GD_DEAD,	/* released, or get_pages failed */
};

/*
 * A process, as the owner of an fd or a registration: its tgid (in the
 * initial namespace, for the region list) and the start time of its thread
 * group, which together never name two processes, so no reference on a
 * struct pid is held (put_pid() is GPL-only, see GD_EXPORT).
 */
struct gd_owner {
	pid_t tgid;
	u64 start_time;
};

/*
 * gdirect's in-kernel API is exported GPL-only, except in the build for
 * NVIDIA's proprietary driver (GDIRECT_PROPRIETARY, chosen by Kbuild from
 * the provider's exports): there gdirect inherits the driver's taint, and
 * the kernel refuses a module that uses GPL-only symbols of a tainted one.
 */
#ifdef GDIRECT_PROPRIETARY
#define GD_EXPORT(sym)	EXPORT_SYMBOL(sym)
#else
#define GD_EXPORT(sym)	EXPORT_SYMBOL_GPL(sym)
#endif

struct gd_ctx {
	struct kref ref;
	struct gd_owner owner;		/* the opener */
	struct xarray regs;		/* handle -> gd_reg, XA_FLAGS_ALLOC1 */
	u32 next_handle;		/* cyclic handle allocator state */
	struct ida slots;		/* status slots */
	__u32 *status;			/* GDIRECT_STATUS_BYTES, vmapped */
	struct page *status_pages[GD_STATUS_PAGES];	/* memcg-charged */
	atomic_t nr_pins;		/* charged registrations */
	struct address_space mapping;	/* this fd's VMAs only, for zapping */

	spinlock_t ev_lock;		/* events, ev_closed */
	struct list_head events;	/* gd_reg.ev_node, oldest first */
	bool ev_closed;
	wait_queue_head_t ev_wait;

	struct list_head node;		/* gd_ctxs, for /proc */
	atomic64_t callbacks;		/* free callbacks fired on its pins */

	bool gdrdrv;			/* opened through /dev/gdrdrv */
	u8 mmap_shift;			/* region N at N << mmap_shift */
	u64 gdr_next;			/* next gdrdrv handle; under xa_lock */
};

/* A run of physically contiguous BAR pages held write-combining (wc.c). */
struct gd_wc_run {
	u64 start, len;
};

struct gd_fence;

struct gd_reg {
#ifdef GDIRECT_DEBUG_KNOBS
	/*
	 * GD_REG_LIVE until gd_reg_free() writes GD_REG_FREED: a debug
	 * build's check for a region used after its last put.  First, where
	 * the slab keeps no free-list pointer.
	 */
	u64 dbg_magic;
#endif
	struct kref ref;
	struct rw_semaphore sem;	/* state vs faults; taken by callback */
	spinlock_t lock;		/* state, revoked, dma */
	enum gd_state state;
	/* The free callback ran (or runs); read without lock by revoked(). */
	bool revoked;
	bool cb_done;			/* ... and has returned from its work */
	bool nv_ref;			/* nv reference still held */
	bool unmapping;			/* inside dma_unmap_pages(); see dma.c */
	bool table_ok;			/* pt passed gd_check_table() */
	/*
	 * The DMA brackets' own lock, taken with interrupts off: drivers
	 * open and close brackets from softirq and hard interrupt context,
	 * while r->lock is taken in process context with both enabled.
	 * Nests inside r->lock.
	 */
	spinlock_t dma_lock;
	int dma_users;			/* gdirect_dma_begin() holders */
	int dma_refuse;			/* 0, or what a new bracket returns */
	/*
	 * The peer's addresses (bus, or dma's own), set under dma_lock once
	 * the mapping is checked; gdirect_region_dma_addrs() reads them
	 * under dma_lock alone, from any context.  Valid while dma_refuse
	 * is 0: every teardown refuses brackets before it unmaps.
	 */
	const u64 *dma_addrs;
	wait_queue_head_t wait;		/* PINNING done, no DMA or unmap */

	/* Immutable after pinning. */
	u64 addr, size;			/* 64 KiB-aligned range pinned */
	u64 p2p_token;
	u32 va_space;
	u32 flags;			/* GDIRECT_PIN_* */
	bool persistent;
	bool cpu_cacheable;
	struct gd_owner owner;		/* the process that pinned */
	/*
	 * A user registration, or a kernel one with GDIRECT_KPIN_ACCOUNT:
	 * counted against the pin caps, its memory charged to the pinning
	 * process's memory cgroup.
	 */
	bool charged;
	kuid_t uid;			/* the user charged */

	struct nvidia_p2p_page_table *pt;	/* NULL once revoked */
	struct nvidia_p2p_dma_mapping *dma;	/* kernel pins with a peer */
	u64 *bus;			/* per 64 KiB page, when dma's is not */
	struct pci_dev *peer;
	struct gd_fence *fence;		/* the owner's; NULL: see pin.c */

	/* User registrations. */
	struct gd_ctx *ctx;		/* holds a reference; NULL for kapi */
	struct gd_wc_run *wc_runs;	/* write-combining memtypes we hold */
	u32 nr_wc_runs;
	u64 handle;
	u64 mmap_base;			/* offset of byte 0 in ctx->mapping */
	u32 slot;
	atomic64_t mapped_len;		/* claimed from 0 under lock */
	u32 map_type;			/* GDIRECT_MAP_*; under lock */
	u32 gdr_req_type;		/* gdrdrv: requested type; under lock */
	u32 gdr_map_type;		/* gdrdrv: live mapping's; under lock */
	bool gdr_unaligned;		/* gdrdrv: asked start not 64 KiB-aligned */
#ifdef GDIRECT_DEBUG_KNOBS
	bool dbg_wc;			/* the live mappings' type; under lock */
#endif
	struct list_head ev_node;	/* on ctx->events while queued */

	/* Kernel registrations. */
	void (*invalidate)(struct gdirect_region *r, void *data);
	void *inv_data;
	/*
	 * A peer pin made persistent (kapi.c, "peer pins"): its unmapped
	 * callback pin of the same range, whose handle reference this
	 * registration holds until gdirect_unpin(); and, on that callback
	 * pin, the registration it marks stale, with a reference.  "stale"
	 * is set (under lock, read without it by gdirect_region_revoked())
	 * once the callback pin's free callback has started.
	 */
	struct gd_reg *companion;
	struct gd_reg *stale_target;
	bool stale;

	u32 proc_id;			/* index in gd_regs; 0: none */
};

/* Counters for /proc; atomics so the callback never takes a lock. */
struct gd_stats {
	atomic64_t pins, pin_failures, unpins, callbacks, orphaned;
	atomic64_t persistent_pins, version_mismatch, live_regions, live_bytes;
	atomic64_t mmaps, events, put_errors, dma_maps, unmap_waits;
	atomic64_t wc_conflicts, stale_peer_pins, peer_pins_unpaired;
#ifdef GDIRECT_DEBUG_KNOBS
	atomic64_t dbg_freed_wakes, dbg_map_type_mismatch;
#endif
};

extern struct gd_stats gd_stats;
extern bool gd_use_persistent;
extern bool gd_allow_tokens;
extern unsigned int gd_max_pins_per_file;
extern unsigned int gd_max_pins_per_user;
extern unsigned long long gd_max_pinned_bytes_per_user;
extern struct xarray gd_regs;
extern struct mutex gd_ctxs_lock;
extern struct list_head gd_ctxs;

/* A pin request, from any entry point, for gd_reg_setup(). */
struct gd_pin_req {
	u64 addr, size;		/* any alignment */
	u64 p2p_token;		/* legacy tokens, or 0 */
	u32 va_space;
	bool persistent;	/* the persistent API was asked for */
	bool account;		/* a kernel caller's pin for current's user */
	struct gd_owner owner;	/* whose memory it is */
};

/*
 * Race knobs of the project's debug builds (GDIRECT_DEBUG_KNOBS, set by
 * scripts/build-modules.sh, never by DKMS): module parameters, in ms,
 * that hold a window open for the tests; 0 (the default) holds nothing.
 */
#ifdef GDIRECT_DEBUG_KNOBS
#define GD_REG_LIVE	0x6764726567206c76ULL
#define GD_REG_FREED	0x6764726567206672ULL
extern unsigned int gd_dbg_dma_end_delay_ms;
extern unsigned int gd_dbg_mmap_type_delay_ms;
/* Busy-waits: the brackets run in any context, hard interrupts included. */
static inline void gd_dbg_delay(const unsigned int *knob)
{
	unsigned int ms = READ_ONCE(*knob);

	while (ms--)
		mdelay(1);
}
#else
/* A macro: without the knobs, their variables do not exist. */
#define gd_dbg_delay(knob) do { } while (0)
#endif

/* pin.c */
extern struct rw_semaphore gd_excl;
int gd_reg_setup(struct gd_ctx *ctx, const struct gd_pin_req *req,
		 struct gd_reg **out);
int gd_reg_pin(struct gd_reg *r);
void gd_reg_release(struct gd_reg *r);
int gd_range(u64 addr, u64 size, u64 *start, u64 *len);
void gd_reg_get(struct gd_reg *r);
void gd_callbacks_quiesce(void);
void gd_reg_put(struct gd_reg *r);
void gd_owner_current(struct gd_owner *o);
void gd_owner_of_pid(struct pid *pid, struct gd_owner *o);
bool gd_owner_eq(const struct gd_owner *a, const struct gd_owner *b);
bool gd_is_owner(const struct gd_owner *owner);

/* The provider's kernel-internal 524 means nothing to user space. */
static inline int gd_errno(int ret)
{
	return ret == -ENOTSUPP ? -EOPNOTSUPP : ret;
}

/* dma.c: a kernel registration's mapping for its peer, DMA brackets */
int gd_reg_dma_map(struct gd_reg *r);
void gd_reg_dma_unmap(struct gd_reg *r);
void gd_reg_unmap_peer(struct gd_reg *r);
int gd_reg_dma_begin(struct gd_reg *r);
void gd_reg_dma_refuse(struct gd_reg *r, int err);
void gd_reg_dma_end(struct gd_reg *r);
bool gd_reg_no_dma(struct gd_reg *r);
void gd_reg_wait_unmap(struct gd_reg *r);

/* main.c */
extern unsigned short gd_dev_mode;
void gd_ctx_get(struct gd_ctx *ctx);
void gd_ctx_put(struct gd_ctx *ctx);
struct gd_reg *gd_ctx_lookup(struct gd_ctx *ctx, u64 handle);
int gd_reg_charge(struct gd_reg *r);
void gd_reg_uncharge(struct gd_reg *r);
int gd_ctx_open(struct inode *inode, struct file *filp, bool gdrdrv);
int gd_ctx_release(struct inode *inode, struct file *filp);
int gd_fadvise(struct file *filp, loff_t offset, loff_t len, int advice);

/* ioctl.c */

/* What gd_ctx_pin() published. */
struct gd_pinned {
	struct gd_reg *r;	/* for gd_ctx_unpublish() only: no reference */
	u64 handle;
	u64 start, len;
	u64 mmap_offset;	/* where mmap() reaches the region */
	u32 slot;
};

int gd_ctx_pin(struct gd_ctx *ctx, u64 addr, u64 size, u64 p2p_token,
	       u32 va_space, u32 flags, struct gd_pinned *out);
void gd_ctx_unpublish(struct gd_ctx *ctx, const struct gd_pinned *p);
int gd_ctx_unpin(struct gd_ctx *ctx, u64 handle);
long gd_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);

/* mmap.c */
typedef int (*gd_mmap_claim_fn)(struct gd_reg *r, bool *wc);
#ifdef GD_MMAP_PREPARE
int gd_mmap_prepare(struct vm_area_desc *desc);
int gd_mmap_region_prepare(struct gd_reg *r, struct vm_area_desc *desc,
			   u64 roff, gd_mmap_claim_fn claim);
#else
int gd_mmap(struct file *filp, struct vm_area_struct *vma);
int gd_mmap_region(struct gd_reg *r, struct vm_area_struct *vma, u64 roff,
		   gd_mmap_claim_fn claim);
#endif
void gd_zap_cpu_mappings(struct gd_reg *r);

/* wc.c */
void gd_reserve_wc(struct gd_reg *r, struct nvidia_p2p_page_table *pt);
void gd_release_wc(struct gd_reg *r);
void gd_wc_exit(void);

/* events.c */
void gd_status_set(struct gd_ctx *ctx, u32 slot, u32 value);
void gd_event_queue(struct gd_reg *r);
void gd_events_drain(struct gd_ctx *ctx);
ssize_t gd_read(struct file *filp, char __user *buf, size_t len, loff_t *off);
__poll_t gd_poll(struct file *filp, struct poll_table_struct *wait);

/* gdrdrv.c: the /dev/gdrdrv personality */
int gd_gdrdrv_init(void);
void gd_gdrdrv_exit(void);
struct gd_reg *gd_gdr_find(struct gd_ctx *ctx, unsigned long pgoff);
int gd_gdr_claim(struct gd_reg *r, bool *wc);

/* procfs.c: /proc/driver/gdirect/ (procfs, as debugfs is GPL-only) */
void gd_procfs_init(void);
void gd_procfs_exit(void);

#endif /* GDIRECT_INTERNAL_H */
