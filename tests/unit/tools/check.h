/* SPDX-License-Identifier: MIT */
/* check.h - assertions for the tools' unit tests: count, report, exit 1 */
#ifndef GDTOOL_CHECK_H
#define GDTOOL_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		check_failures++; \
	} \
} while (0)

#define CHECK_STR(a, b) do { \
	const char *a_ = (a), *b_ = (b); \
	if (!a_ || !b_ || strcmp(a_, b_)) { \
		fprintf(stderr, "%s:%d: \"%s\" != \"%s\" (%s)\n", __FILE__, __LINE__, \
			a_ ? a_ : "(null)", b_ ? b_ : "(null)", #a); \
		check_failures++; \
	} \
} while (0)

#define CHECK_DONE() do { \
	if (check_failures) \
		fprintf(stderr, "%d checks failed\n", check_failures); \
	return check_failures ? 1 : 0; \
} while (0)

#endif
