/* SPDX-License-Identifier: MIT */
/*
 * gdirect-compat32.h - the report gdirect-compat32 (a 32-bit program)
 * writes for gdirect-compat (a 64-bit one): every field has the
 * same offset in both ABIs (64-bit fields at multiples of 8).
 */
#ifndef GDIRECT_COMPAT32_H
#define GDIRECT_COMPAT32_H

#include <linux/types.h>

#define C32_PINS	20
/* map_err: mmap_offset is not a 32-bit count of 4 KiB units */
#define C32_UNREACHABLE	1000

struct c32_pin {
	__u32 pin_err;		/* 0, or the errno of GDIRECT_IOC_PIN */
	__u32 map_err;		/* 0, the errno of mmap2, or C32_UNREACHABLE */
	__u64 handle;
	__u64 mmap_offset;
	__u32 readback;		/* 1: both marker words read back */
	__u32 status;		/* its status word, or ~0 when not mapped */
};

struct c32_report {
	__u32 open_err;		/* 0, or the errno of open or status mmap */
	__u32 past_err;		/* errno of an mmap past pin 0's end */
	struct c32_pin pin[C32_PINS];
	__u32 unpin_err;	/* the first UNPIN error, or 0 */
	__u32 done;		/* 1 once the report is whole */
};

#endif /* GDIRECT_COMPAT32_H */
