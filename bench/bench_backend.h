/* SPDX-License-Identifier: MIT */
/*
 * bench_backend.h - the emulated pinning device both caches register through.
 *
 * One implementation serves gdirect (as its pinning backend, struct
 * gd_backend) and UCX (called from ucs_rcache's mem_reg/mem_dereg), so the
 * two caches pay exactly the same for the same work: a pin costs pin_ns,
 * an unpin unpin_ns (slept, not spun: on a 2-core machine a spinning pin
 * would take the core the other threads are measured on), and a pin that
 * would take the pinned total past bar_bytes fails with -ENOMEM after
 * costing a pin (refuse_free: at once), like a BAR1 allocation failing
 * inside the driver.
 */
#ifndef BENCH_BACKEND_H
#define BENCH_BACKEND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct tb_cfg {
	uint64_t pin_ns, unpin_ns;
	uint64_t bar_bytes;		/* 0: unlimited */
	bool refuse_free;		/* a refused pin costs nothing */
};

struct tb_counters {
	uint64_t pins, unpins, enomem;	/* enomem: pins refused for BAR space */
	uint64_t pin_ns_total;		/* time spent in successful pins */
	uint64_t bar_used, bar_peak;
	uint64_t live;
};

struct tb;

struct tb *tb_new(const struct tb_cfg *cfg);
void tb_free(struct tb *t);
void tb_set_costs(struct tb *t, uint64_t pin_ns, uint64_t unpin_ns);
void tb_set_budget(struct tb *t, uint64_t bar_bytes);

/* 0 and a nonzero handle, or -ENOMEM (BAR budget) / -ENOSPC. */
int tb_pin(struct tb *t, uint64_t addr, uint64_t size, uint64_t *handle);
int tb_unpin(struct tb *t, uint64_t handle);

void tb_counters(struct tb *t, struct tb_counters *c);
void tb_reset_counters(struct tb *t);

/* Pins in progress right now. */
unsigned tb_pins_in_flight(struct tb *t);

/* The same device as libgdirect's pinning backend (struct gd_backend *).
 * Destroying the gdirect context does not free it: tb_free() does. */
struct gd_backend *tb_gd_backend(struct tb *t);

/* CLOCK_MONOTONIC in ns, and a sleep until an absolute time. */
uint64_t tb_now_ns(void);
void tb_sleep_until(uint64_t t_ns);

#endif
