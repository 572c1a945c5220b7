/* SPDX-License-Identifier: MIT */
/*
 * stream_order.h - the order recorder of the stream tests: stream order is
 * observed by order, never by time.  Each host function, and each release
 * of a waited-on word by another thread, appends a letter.
 *
 * Shared by conformance.c, which is built alone on a GPU machine (hence
 * here, beside it, and without CUDA's types), and by
 * tests/guest/cuda_emu/cuda-stream-test.c.
 *
 * order_note(): append a letter.
 * order_hostfn(): a host function for cuLaunchHostFunc, its argument the
 * letter; it counts the calls that ran on order_caller in order_on_caller.
 * order_take(): the letters since the last call (at most 63), and start anew.
 * order_release_start(): another thread writes 1 to a word after a pause,
 * noting 'R' first; order_release_fn() is that thread's function, for a
 * caller that must release the word itself when no thread can be made.
 * order_release_join(): wait for a started release.
 */
#ifndef STREAM_ORDER_H
#define STREAM_ORDER_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static char order_seq[64];
static unsigned int order_nseq;
static pthread_t order_caller;
static int order_on_caller;	/* host functions that ran on order_caller */

static inline void order_note(char c)
{
	unsigned int i = __atomic_fetch_add(&order_nseq, 1, __ATOMIC_SEQ_CST);

	if (i < sizeof(order_seq) - 1)
		order_seq[i] = c;
}

static inline void order_hostfn(void *arg)
{
	if (pthread_equal(pthread_self(), order_caller))
		__atomic_add_fetch(&order_on_caller, 1, __ATOMIC_SEQ_CST);
	order_note((char)(uintptr_t)arg);
}

static inline const char *order_take(void)
{
	static char out[sizeof(order_seq)];
	unsigned int n = __atomic_load_n(&order_nseq, __ATOMIC_SEQ_CST);

	memcpy(out, order_seq, sizeof(out));
	out[n < sizeof(out) - 1 ? n : sizeof(out) - 1] = '\0';
	memset(order_seq, 0, sizeof(order_seq));
	__atomic_store_n(&order_nseq, 0, __ATOMIC_SEQ_CST);
	return out;
}

struct order_release {
	volatile uint32_t *word;
	unsigned int ms;
	pthread_t t;
	int started;
};

static inline void *order_release_fn(void *arg)
{
	struct order_release *r = arg;

	usleep(r->ms * 1000);
	order_note('R');
	__atomic_store_n(r->word, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* 0, or -1 when no thread could be made (nothing is then released). */
static inline int order_release_start(struct order_release *r,
				      volatile uint32_t *word, unsigned int ms)
{
	r->word = word;
	r->ms = ms;
	r->started = !pthread_create(&r->t, NULL, order_release_fn, r);
	return r->started ? 0 : -1;
}

static inline void order_release_join(struct order_release *r)
{
	if (r->started)
		pthread_join(r->t, NULL);
	r->started = 0;
}

#endif /* STREAM_ORDER_H */
