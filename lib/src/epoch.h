/* SPDX-License-Identifier: MIT */
/*
 * epoch.h - epoch-based reclamation for the lock-free read paths.
 *
 * Readers bracket a lookup with gdl_epoch_enter()/gdl_epoch_exit(): one plain
 * store to a per-thread slot each and a compiler barrier, no shared cache
 * line written, no locked instruction (epoch.c says why that is enough).
 * Writers unlink an object from every published structure, then
 * gdl_epoch_retire() it; it is freed only once no reader that could have
 * seen it is still inside.
 */
#ifndef GDL_EPOCH_H
#define GDL_EPOCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gdl_epoch_slot {
	_Atomic uint64_t epoch;	/* 0: outside a read section */
	_Atomic int owned;
	char pad[64 - sizeof(uint64_t) - sizeof(int)];
} __attribute__((aligned(64)));

/* Internal to the inline fast path below. */
extern __thread struct gdl_epoch_slot *gdl_epoch_my_slot
	__attribute__((tls_model("initial-exec")));
extern _Atomic uint64_t gdl_epoch_global;
extern _Atomic int gdl_epoch_light;
extern struct gdl_epoch_slot gdl_epoch_overflow;
struct gdl_epoch_slot *gdl_epoch_enter_slow(void);
void gdl_epoch_exit_overflow(void);

/*
 * Set by the first of libgdirect's thread-exit destructors to run in a
 * thread: from then on the thread claims nothing from a pool (epoch slot,
 * block of counts, statistics shard), since a claim made by a late
 * destructor of another library may come after the last round of
 * destructors and never be given back.  It takes the paths of a thread
 * beyond the pools' limits instead.  (A thread whose first call into
 * libgdirect comes from a destructor has no libgdirect destructor to set
 * it, and claims as any thread does: thread-specific data gives no way to
 * tell that destructors have started.)
 */
extern __thread bool gdl_thread_exiting
	__attribute__((tls_model("initial-exec")));

/* Set up the process-wide state (the membarrier registration, which can
 * take milliseconds) now rather than on a first lookup.  Idempotent. */
void gdl_epoch_init(void);

/*
 * The writer's half of the light reader fence, for other protocols of the
 * same shape (tcache.h): after it returns, every store a reader made before
 * its compiler barrier is visible to the caller, and every load a reader
 * makes after it sees what the caller stored before the call.  False if
 * that could not be forced (then decide nothing).
 */
bool gdl_epoch_sync_readers(void);

/* The reader's half: a compiler barrier when gdl_epoch_sync_readers() uses
 * membarrier, else a full fence. */
static inline void gdl_epoch_reader_fence(void)
{
	if (__builtin_expect(atomic_load_explicit(&gdl_epoch_light,
						  memory_order_relaxed), 1))
		atomic_signal_fence(memory_order_seq_cst);
	else
		atomic_thread_fence(memory_order_seq_cst);
}

/*
 * The thread's own slot if it has one (not NULL, not the shared overflow
 * slot), else NULL.  With gdl_epoch_enter_own()/gdl_epoch_exit_own() it makes
 * a read section that never calls out, for hit paths that must stay leaf
 * functions and leave every other case to a slow path.
 */
static inline struct gdl_epoch_slot *gdl_epoch_own_slot(void)
{
	struct gdl_epoch_slot *s = gdl_epoch_my_slot;

	return __builtin_expect(s == &gdl_epoch_overflow, 0) ? NULL : s;
}

static inline void gdl_epoch_enter_own(struct gdl_epoch_slot *s)
{
	atomic_store_explicit(&s->epoch, atomic_load_explicit(&gdl_epoch_global,
				memory_order_acquire), memory_order_relaxed);
	gdl_epoch_reader_fence();
}

static inline void gdl_epoch_exit_own(struct gdl_epoch_slot *s)
{
	atomic_store_explicit(&s->epoch, 0, memory_order_release);
}

/* Inline: a hit is a few dozen instructions, a call would be a tenth. */
static inline struct gdl_epoch_slot *gdl_epoch_enter(void)
{
	struct gdl_epoch_slot *s = gdl_epoch_own_slot();

	if (__builtin_expect(s == NULL, 0))
		return gdl_epoch_enter_slow();
	gdl_epoch_enter_own(s);
	return s;
}

static inline void gdl_epoch_exit(struct gdl_epoch_slot *s)
{
	if (__builtin_expect(s == &gdl_epoch_overflow, 0))
		gdl_epoch_exit_overflow();
	else
		gdl_epoch_exit_own(s);
}

/* Free obj with fn(obj) once every reader that might see it has left. */
void gdl_epoch_retire(void *obj, void (*fn)(void *));

/* Free what can be freed now; returns how many objects still wait. */
unsigned long gdl_epoch_reclaim(void);

/* Wait until everything retired so far has been freed (no readers must be
 * blocked on the calling thread). */
void gdl_epoch_barrier(void);

/* In a fork child: only the calling thread exists; forget the others. */
void gdl_epoch_atfork_child(void);

#endif
