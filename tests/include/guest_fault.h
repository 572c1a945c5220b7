/* SPDX-License-Identifier: MIT */
/*
 * guest_fault.h - does touching this address fault?  (header only)
 *
 * guest_faults(p, write): 1 if reading *p (or, with WRITE, writing a 32-bit
 * word to it) raises SIGBUS or SIGSEGV, 0 if the access goes through.  The
 * jump back is per thread, so threads may probe at the same time; a fault
 * outside a probe still kills the process as it would have.
 */
#ifndef GUEST_FAULT_H
#define GUEST_FAULT_H

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>

/* This thread's jump back out of a probe; NULL outside one. */
static inline sigjmp_buf *volatile *guest_fault_env(void)
{
	static __thread sigjmp_buf *volatile env;

	return &env;
}

static inline void guest_fault_handler(int sig)
{
	sigjmp_buf *env = *guest_fault_env();

	if (env)
		siglongjmp(*env, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

static inline int guest_faults(volatile void *p, int write)
{
	struct sigaction sa = { .sa_handler = guest_fault_handler,
				.sa_flags = SA_NODEFER };
	sigjmp_buf env;
	volatile int faulted = 0;

	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	if (sigsetjmp(env, 1)) {
		faulted = 1;
	} else {
		*guest_fault_env() = &env;
		if (write)
			*(volatile uint32_t *)p = 0x5a5a5a5a;
		else
			(void)*(volatile uint32_t *)p;
	}
	*guest_fault_env() = NULL;
	return faulted;
}

#endif /* GUEST_FAULT_H */
