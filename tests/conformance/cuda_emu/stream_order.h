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
 * The thread lives until it is joined, so that a count of the process's
 * threads does not depend on how long the pause was.
 * order_release_now(): release at once, if not yet released; from any
 * thread, a host function included.  A test whose point is that something
 * does NOT wait for the word releases it from there, and gives the timed
 * release only as a fallback (ORDER_FALLBACK_MS), so that a slow machine
 * cannot put 'R' first: the order is then fixed by the program, not by
 * the clock.  A timed release stays for what must wait for the word.
 * order_release_hostfn(): a host function that notes the letter given at
 * order_release_start() and releases at once.
 * order_release_join(): wait for a started release (released then, if the
 * pause has not ended: nothing is left waiting).
 */
#ifndef STREAM_ORDER_H
#define STREAM_ORDER_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
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

/* The pause of a release that is only a fallback: a failed order, not a hang. */
#define ORDER_FALLBACK_MS 10000

struct order_release {
	volatile uint32_t *word;
	unsigned int ms;
	char letter;		/* noted by order_release_hostfn() */
	pthread_t t;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int started;
	int released;		/* under lock */
	int joining;		/* under lock */
};

static inline void order_release_now(struct order_release *r)
{
	int first;

	pthread_mutex_lock(&r->lock);
	first = !r->released;
	r->released = 1;
	if (first) {
		order_note('R');
		__atomic_store_n(r->word, 1, __ATOMIC_SEQ_CST);
	}
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

static inline void order_release_hostfn(void *arg)
{
	struct order_release *r = arg;

	order_hostfn((void *)(uintptr_t)r->letter);
	order_release_now(r);
}

static inline void *order_release_fn(void *arg)
{
	struct order_release *r = arg;
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += r->ms / 1000;
	until.tv_nsec += (long)(r->ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&r->lock);
	while (!r->released && !r->joining &&
	       pthread_cond_timedwait(&r->cond, &r->lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&r->lock);
	order_release_now(r);
	/* a caller's own call (no thread was made) returns at once */
	pthread_mutex_lock(&r->lock);
	while (r->started && !r->joining)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/*
 * 0, or -1 when no thread could be made (nothing is then released).
 * @letter is what order_release_hostfn() notes; 0 where it is not used.
 */
static inline int order_release_start_note(struct order_release *r,
					   volatile uint32_t *word,
					   unsigned int ms, char letter)
{
	pthread_condattr_t ca;

	r->word = word;
	r->ms = ms;
	r->letter = letter;
	r->released = 0;
	r->joining = 0;
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cond, &ca);
	pthread_condattr_destroy(&ca);
	r->started = 1;
	if (pthread_create(&r->t, NULL, order_release_fn, r))
		r->started = 0;
	return r->started ? 0 : -1;
}

static inline int order_release_start(struct order_release *r,
				      volatile uint32_t *word, unsigned int ms)
{
	return order_release_start_note(r, word, ms, 0);
}

static inline void order_release_join(struct order_release *r)
{
	if (!r->started)
		return;
	pthread_mutex_lock(&r->lock);
	r->joining = 1;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->t, NULL);
	r->started = 0;
}

#endif /* STREAM_ORDER_H */
