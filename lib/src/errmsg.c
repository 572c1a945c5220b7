/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>

#include "libgdirect_internal.h"

static __thread char msg[256];

int gdl_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err;
}

GDL_EXPORT const char *gdirect_errmsg(void)
{
	return msg;
}
