/* SPDX-License-Identifier: MIT */
/*
 * hookable.h - exported entry points that memory-hook libraries can patch
 *
 * UCX's ucm ("bistro" hook mode) overwrites the first 5 or 13 bytes of an
 * allocation or free entry point with a jump to its hook, after copying
 * the instructions it overwrites elsewhere.  Its copier knows only a few
 * prologue instructions (push, mov %rsp,%rbp, sub $imm32,%rsp, mov $imm32,
 * %reg, ...) and nothing RIP-relative, so a compiler's prologue (or an
 * ASan build's) may not be copyable.  EMU_HOOKABLE(name, impl) defines the
 * exported symbol `name` as a stub whose first 14 bytes are such
 * instructions and which then jumps to the C function `impl` (hidden, with
 * name's signature):
 *
 *	55		push %rbp
 *	48 89 e5	mov %rsp,%rbp
 *	b8 00000000	mov $0,%eax	(twice: %eax is not an argument)
 *	5d		pop %rbp
 *	e9 rel32	jmp impl
 *
 * tests/unit/cuda_emu/hookable.c decodes every such entry with the same
 * rules.
 */
#ifndef CUDA_EMU_HOOKABLE_H
#define CUDA_EMU_HOOKABLE_H

#if defined(__x86_64__)
#define EMU_HOOKABLE(name, impl)					\
	__asm__(".text\n"						\
		".globl " #name "\n"					\
		".type " #name ", @function\n"				\
		".p2align 4\n"						\
		#name ":\n"						\
		"\t.byte 0x55\n"					\
		"\t.byte 0x48, 0x89, 0xe5\n"				\
		"\t.byte 0xb8, 0x00, 0x00, 0x00, 0x00\n"		\
		"\t.byte 0xb8, 0x00, 0x00, 0x00, 0x00\n"		\
		"\t.byte 0x5d\n"					\
		"\tjmp " #impl "\n"					\
		".size " #name ", .-" #name "\n"			\
		".previous\n")
#else
#define EMU_HOOKABLE(name, impl)					\
	extern __typeof__(impl) name					\
		__attribute__((alias(#impl), visibility("default")))
#endif

/* The hidden C function behind a hookable entry point. */
#define EMU_HOOK_IMPL __attribute__((visibility("hidden"), used))

#endif /* CUDA_EMU_HOOKABLE_H */
