/* SPDX-License-Identifier: MIT */
/*
 * epoch.h - epoch-based reclamation for the lock-free read paths.
 *
 * Readers bracket a lookup with gd_epoch_enter()/gd_epoch_exit(): one plain
 * store to a per-thread slot each and a compiler barrier, no shared cache
 * line written, no locked instruction (epoch.c says why that is enough).  Writers unlink
 * an object from every published structure, then gd_epoch_retire() it; it
 * is freed only once no reader that could have seen it is still inside.
 */
#ifndef GD_EPOCH_H
#define GD_EPOCH_H

#include <stdint.h>

struct gd_epoch_slot;

/* Set up the process-wide state (the membarrier registration, which can
 * take milliseconds) now rather than on a first lookup.  Idempotent. */
void gd_epoch_init(void);

struct gd_epoch_slot *gd_epoch_enter(void);
void gd_epoch_exit(struct gd_epoch_slot *s);

/* Free obj with fn(obj) once every reader that might see it has left. */
void gd_epoch_retire(void *obj, void (*fn)(void *));

/* Free what can be freed now; returns how many objects still wait. */
unsigned long gd_epoch_reclaim(void);

/* Wait until everything retired so far has been freed (no readers must be
 * blocked on the calling thread). */
void gd_epoch_barrier(void);

/* In a fork child: only the calling thread exists; forget the others. */
void gd_epoch_atfork_child(void);

#endif
