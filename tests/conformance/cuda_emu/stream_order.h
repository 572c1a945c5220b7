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
 *
 * A test whose point is that something does NOT wait for the word must
 * not let the clock decide whether the release comes first: a slow
 * machine would put 'R' before what did not wait.  It starts the release
 * with order_release_prepare() (a timed release only as a fallback,
 * ORDER_FALLBACK_MS: a failed order rather than a hang) and releases from
 * the program:
 * order_release_now(): release at once, if not yet released; from any
 * thread, a host function included;
 * order_release_hostfn(): a host function that notes the prepared letter
 * and arms the release ORDER_PAUSE_MS from then, for work that must run
 * while another stream waits: its letter comes before 'R' however slow
 * the machine, and work that should wait for the word but does not gets
 * the pause to show itself before 'R' (a slow machine can only hide such
 * a bug, never fail a correct run);
 * order_release_arm(): release a pause from now, for a call that must wait
 * for the word, made after the questions that must see it unreleased.
 * order_release_join(): wait for a started release, at its time, and end
 * its thread.
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
/* The pause order_release_hostfn() arms. */
#define ORDER_PAUSE_MS 300

struct order_release {
	volatile uint32_t *word;
	char letter;		/* noted by order_release_hostfn() */
	pthread_t t;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct timespec until;	/* under lock: when the thread releases */
	int started;
	int released;		/* under lock */
	int joining;		/* under lock */
};

/* CLOCK_MONOTONIC, @ms from now. */
static inline struct timespec order_after_ms(unsigned int ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

static inline int order_past(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec ||
	       (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

static inline void order_release_now(struct order_release *r)
{
	pthread_mutex_lock(&r->lock);
	if (!r->released) {
		r->released = 1;
		order_note('R');
		__atomic_store_n(r->word, 1, __ATOMIC_SEQ_CST);
	}
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

static inline void order_release_arm(struct order_release *r, unsigned int ms)
{
	pthread_mutex_lock(&r->lock);
	r->until = order_after_ms(ms);
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

static inline void order_release_hostfn(void *arg)
{
	struct order_release *r = arg;

	order_hostfn((void *)(uintptr_t)r->letter);
	order_release_arm(r, ORDER_PAUSE_MS);
}

static inline void *order_release_fn(void *arg)
{
	struct order_release *r = arg;

	pthread_mutex_lock(&r->lock);
	while (!r->released) {
		int err = pthread_cond_timedwait(&r->cond, &r->lock, &r->until);

		/* the time may have moved on (order_release_arm) meanwhile */
		if ((err == ETIMEDOUT && order_past(&r->until)) ||
		    (err && err != ETIMEDOUT))
			break;
	}
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
 * A release @ms from now, by a thread; @letter is what
 * order_release_hostfn() notes.  0, or -1 when no thread could be made
 * (nothing is then released).
 */
static inline int order_release_start_note(struct order_release *r,
					   volatile uint32_t *word,
					   unsigned int ms, char letter)
{
	pthread_condattr_t ca;

	r->word = word;
	r->letter = letter;
	r->released = 0;
	r->joining = 0;
	r->until = order_after_ms(ms);
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cond, &ca);
	pthread_condattr_destroy(&ca);
	r->started = 1;		/* before the thread reads it */
	if (pthread_create(&r->t, NULL, order_release_fn, r))
		r->started = 0;
	return r->started ? 0 : -1;
}

static inline int order_release_start(struct order_release *r,
				      volatile uint32_t *word, unsigned int ms)
{
	return order_release_start_note(r, word, ms, 0);
}

/* A release that the program makes; ORDER_FALLBACK_MS otherwise. */
static inline int order_release_prepare(struct order_release *r,
					volatile uint32_t *word, char letter)
{
	return order_release_start_note(r, word, ORDER_FALLBACK_MS, letter);
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
