/* SPDX-License-Identifier: MIT */
/*
 * gdirect_jitlink.h - link the device library's PTX with a caller at run
 * time, through nvJitLink.  Internal to device/ (tests, tools); host code.
 *
 * nvJitLink 13.0 does not fail on a prototype mismatch: nvJitLinkComplete
 * returns NVJITLINK_SUCCESS, its error log stays empty, and the message
 * ("Prototype doesn't match for ...") goes to the process's stderr.  So
 * gdirect_jitlink() checks every result, reads both logs, and also captures
 * file descriptor 2 while nvJitLink runs; any "error" line there fails the
 * link.  The capture swaps fd 2 process-wide: do not call it while other
 * threads write to stderr.
 */
#ifndef GDIRECT_JITLINK_H
#define GDIRECT_JITLINK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gdirect_jit_input {
	const char *name;	/* for messages */
	int type;		/* an nvJitLinkInputType, NVJITLINK_INPUT_PTX ... */
	const void *data;
	size_t size;		/* PTX: the text's length, NUL excluded */
};

/*
 * Links inputs[0..n) for arch ("sm_90").  On success returns 0 and a
 * malloc'd cubin in *cubin, *cubin_size bytes.  On failure returns -1 and
 * *cubin is NULL.  Either way, when log is not NULL, *log is a malloc'd
 * text of everything nvJitLink reported (error log, info log, stderr),
 * possibly empty; the caller frees it.
 */
int gdirect_jitlink(const char *arch, const struct gdirect_jit_input *inputs,
		    size_t n, void **cubin, size_t *cubin_size, char **log);

/* Reads a whole file into a NUL-terminated malloc'd buffer; NULL on error. */
char *gdirect_jit_slurp(const char *path, size_t *size);

#ifdef __cplusplus
}
#endif

#endif /* GDIRECT_JITLINK_H */
