/* SPDX-License-Identifier: MIT */
/*
 * Epoch-based reclamation.
 *
 *   reader: e = global (acquire); slot = e (relaxed store); F_r;
 *           ...load published pointer, use object...; slot = 0 (release)
 *   writer: unpublish; tag = global++ (seq_cst RMW); retire(old, tag)
 *   reclaim: F_w; scan slots (seq_cst loads); free objects whose tag is
 *            below every nonzero slot.
 *
 * Why nothing freed is still in use: take a reader that could reach the
 * old object, so its pointer load did not see the unpublish.  Its slot
 * store precedes that load in program order, and F_r/F_w make the store
 * visible to the scan (below).  The value it stored is <= tag: had it read
 * global after the increment, its acquire load would have synchronized with
 * the seq_cst RMW, which follows the unpublish, and its pointer load would
 * have seen the unpublish.  So the scan sees a slot <= tag and keeps the
 * object, unless the reader already stored 0, whose release orders all its
 * uses before the scan's load that sees it.  An epoch read early is
 * conservative, never unsafe.
 *
 * F_r/F_w: the reader's store must not be ordered after its pointer load
 * (StoreLoad), which on x86 takes a locked instruction or MFENCE, 10-20 ns
 * per section.  Instead the reader has only a compiler barrier and the
 * reclaimer, which is rare, issues membarrier(MEMBARRIER_CMD_PRIVATE_
 * EXPEDITED): every running thread of the process executes a full barrier
 * before it returns (and a descheduled one went through a context switch,
 * also a full barrier).  A reader whose pointer load was performed before
 * that barrier has its slot store visible to the scan after it; one whose
 * pointer load came after it sees the unpublish, which the writer made
 * before.  Where membarrier is not available (old kernels, seccomp) readers
 * use a seq_cst fence instead (F_r = full fence, F_w = seq_cst loads), the
 * classic argument.  The choice is made once per process (and again in a
 * fork child, which does not inherit the registration) before any reader
 * can run.  ThreadSanitizer models neither kind of fence precisely but
 * checks the happens-before edges the argument relies on (the acquire of
 * global, the release of the slot).
 *
 * Threads beyond GDL_EPOCH_SLOTS, and exiting threads that gave their slot
 * back (slot_release), share an rwlock instead: a reclaimer takes it for
 * writing once, which waits for every such reader.
 */
#include "epoch.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/membarrier.h>

#define GDL_EPOCH_SLOTS 256

struct retired {
	struct retired *next;
	void *obj;
	void (*fn)(void *);
	uint64_t tag;
};

static struct gdl_epoch_slot slots[GDL_EPOCH_SLOTS];
struct gdl_epoch_slot gdl_epoch_overflow; /* returned to overflow readers */
_Atomic uint64_t gdl_epoch_global = 1;
static pthread_rwlock_t overflow_lock = PTHREAD_RWLOCK_INITIALIZER;
static _Atomic bool overflow_used;

static pthread_mutex_t retire_lock = PTHREAD_MUTEX_INITIALIZER;
static struct retired *retire_list;
static unsigned long retire_count;

/* Nonzero: readers use a compiler barrier, reclaim calls membarrier. */
_Atomic int gdl_epoch_light;
static pthread_once_t mb_once = PTHREAD_ONCE_INIT;

static int membarrier(int cmd)
{
	return (int)syscall(__NR_membarrier, cmd, 0, 0);
}

static void mb_register(void)
{
	atomic_store(&gdl_epoch_light,
		     membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0);
}

void gdl_epoch_init(void)
{
	pthread_once(&mb_once, mb_register);
}

static pthread_key_t slot_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
/* initial-exec: a plain %fs-relative load on the hit path, not a call to
 * __tls_get_addr (the default for a shared library). */
__thread struct gdl_epoch_slot *gdl_epoch_my_slot
	__attribute__((tls_model("initial-exec")));
__thread bool gdl_thread_exiting __attribute__((tls_model("initial-exec")));

/*
 * At thread exit, run by the exiting thread.  Another library's
 * thread-exit destructor may still call into libgdirect after this one
 * (their order is unspecified): its read sections take the overflow lock,
 * since the slot is another thread's to claim as soon as owned is 0.
 */
static void slot_release(void *p)
{
	struct gdl_epoch_slot *s = p;

	gdl_thread_exiting = true;
	gdl_epoch_my_slot = &gdl_epoch_overflow;
	atomic_store(&s->epoch, 0);
	atomic_store(&s->owned, 0);
}

static void make_key(void)
{
	pthread_key_create(&slot_key, slot_release);
}

static struct gdl_epoch_slot *slot_claim(void)
{
	/* Before this thread's first section: the reader fence is chosen. */
	pthread_once(&mb_once, mb_register);
	pthread_once(&key_once, make_key);
	if (gdl_thread_exiting)
		return &gdl_epoch_overflow;
	for (int i = 0; i < GDL_EPOCH_SLOTS; i++) {
		int zero = 0;

		if (atomic_load_explicit(&slots[i].owned, memory_order_relaxed))
			continue;
		if (!atomic_compare_exchange_strong(&slots[i].owned, &zero, 1))
			continue;
		if (pthread_setspecific(slot_key, &slots[i])) {
			/* Cannot learn of our exit: give it back. */
			atomic_store(&slots[i].owned, 0);
			break;
		}
		return &slots[i];
	}
	return &gdl_epoch_overflow;
}

/* First section of this thread, or a thread beyond GDL_EPOCH_SLOTS, or an
 * exiting one. */
struct gdl_epoch_slot *gdl_epoch_enter_slow(void)
{
	struct gdl_epoch_slot *s = gdl_epoch_my_slot;

	if (s == NULL)
		s = gdl_epoch_my_slot = slot_claim();
	if (s == &gdl_epoch_overflow) {
		atomic_store(&overflow_used, true);
		pthread_rwlock_rdlock(&overflow_lock);
		return s;
	}
	return gdl_epoch_enter();
}

void gdl_epoch_exit_overflow(void)
{
	pthread_rwlock_unlock(&overflow_lock);
}

void gdl_epoch_retire(void *obj, void (*fn)(void *))
{
	struct retired *r = malloc(sizeof(*r));

	if (!r) {
		/* No memory to defer: wait for every reader instead. */
		gdl_epoch_barrier();
		fn(obj);
		return;
	}
	r->obj = obj;
	r->fn = fn;
	r->tag = atomic_fetch_add(&gdl_epoch_global, 1);
	pthread_mutex_lock(&retire_lock);
	r->next = retire_list;
	retire_list = r;
	retire_count++;
	pthread_mutex_unlock(&retire_lock);
}

bool gdl_epoch_sync_readers(void)
{
	pthread_once(&mb_once, mb_register);
	atomic_thread_fence(memory_order_seq_cst);
	/* The expedited command needs this process's registration (a child
	 * made by a raw clone() has none); the global one needs none and
	 * only takes longer (an RCU grace period).  If neither works, say
	 * so: the caller decides nothing rather than guess. */
	if (atomic_load_explicit(&gdl_epoch_light, memory_order_relaxed) &&
	    membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
	    membarrier(MEMBARRIER_CMD_GLOBAL) != 0)
		return false;
	atomic_thread_fence(memory_order_seq_cst);
	return true;
}

/* UINT64_MAX when no reader can hold anything; 0 (free nothing) if the
 * readers' barrier could not be forced. */
static uint64_t min_active(void)
{
	uint64_t min = UINT64_MAX;

	if (!gdl_epoch_sync_readers())
		return 0;

	for (int i = 0; i < GDL_EPOCH_SLOTS; i++) {
		uint64_t e = atomic_load(&slots[i].epoch);

		if (e && e < min)
			min = e;
	}
	if (atomic_load(&overflow_used)) {
		pthread_rwlock_wrlock(&overflow_lock);
		pthread_rwlock_unlock(&overflow_lock);
	}
	return min;
}

unsigned long gdl_epoch_reclaim(void)
{
	struct retired *list, *keep = NULL, *next;
	unsigned long kept = 0, left;

	pthread_mutex_lock(&retire_lock);
	list = retire_list;
	retire_list = NULL;
	retire_count = 0;
	pthread_mutex_unlock(&retire_lock);
	if (!list)
		return 0;

	uint64_t min = min_active();

	for (; list; list = next) {
		next = list->next;
		if (list->tag < min) {
			list->fn(list->obj);
			free(list);
		} else {
			list->next = keep;
			keep = list;
			kept++;
		}
	}
	pthread_mutex_lock(&retire_lock);
	while (keep) {
		next = keep->next;
		keep->next = retire_list;
		retire_list = keep;
		retire_count++;
		keep = next;
	}
	left = retire_count;
	pthread_mutex_unlock(&retire_lock);
	(void)kept;
	return left;
}

void gdl_epoch_barrier(void)
{
	while (gdl_epoch_reclaim())
		sched_yield();
}

void gdl_epoch_atfork_child(void)
{
	for (int i = 0; i < GDL_EPOCH_SLOTS; i++) {
		if (&slots[i] == gdl_epoch_my_slot)
			continue;
		atomic_store(&slots[i].epoch, 0);
		atomic_store(&slots[i].owned, 0);
	}
	/* The membarrier registration belongs to the parent's mm. */
	mb_register();
	pthread_rwlock_init(&overflow_lock, NULL);
	pthread_mutex_init(&retire_lock, NULL);
}
