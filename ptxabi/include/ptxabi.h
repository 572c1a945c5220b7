/* SPDX-License-Identifier: MIT */
/*
 * ptxabi - C type layout and PTX .param declarations, as nvcc computes them.
 *
 * A context reads C declarations (typedefs, struct/union/enum definitions,
 * function declarations, as found in a CUDA C header) and answers what the
 * PTX Interoperability guide (chapters 1 and 2) and nvcc say about them:
 * sizes, alignments, member offsets, bit-field positions, and the PTX
 * `.param` spelling of each parameter and return value.  The target is a
 * 64-bit host (LP64), which is what nvcc assumes on Linux x86-64/aarch64.
 *
 * Errors are reported as "FILE:LINE:COL: message" through ptxabi_error().
 */
#ifndef PTXABI_H
#define PTXABI_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ptxabi_ctx ptxabi_ctx;

/* A new context with the built-in types (C scalars, <stdint.h> names,
 * __half, the CUDA vector types) and the predefined macros nvcc's device
 * pass sees (__CUDACC__, __CUDA_ARCH__=800, __cplusplus).  NULL when out of
 * memory. */
ptxabi_ctx *ptxabi_new(void);
void ptxabi_free(ptxabi_ctx *ctx);

/* Defines (value NULL means "1") or undefines a macro before parsing. */
int ptxabi_define(ptxabi_ctx *ctx, const char *name, const char *value);
int ptxabi_undef(ptxabi_ctx *ctx, const char *name);

/* Parses declarations; may be called repeatedly (later text sees earlier
 * declarations).  Returns 0, or -1 with ptxabi_error() set. */
int ptxabi_parse(ptxabi_ctx *ctx, const char *text, size_t len,
		 const char *filename);
int ptxabi_parse_file(ptxabi_ctx *ctx, const char *path);

/* The last error, "FILE:LINE:COL: message" (empty string when none). */
const char *ptxabi_error(const ptxabi_ctx *ctx);

/* Layout of a type named as in C: "struct S", "union U", a typedef name,
 * "float3", "unsigned long", "int[3]"...  Returns 0 or -1 (error set). */
struct ptxabi_layout {
	size_t size;
	size_t align;
};
int ptxabi_type_layout(ptxabi_ctx *ctx, const char *type,
		       struct ptxabi_layout *out);

/* Position of a member given by a path such as "a.b[2].c" inside a type.
 * For a bit-field, bit_width > 0 and the field occupies bits
 * [bit_offset, bit_offset + bit_width) counted from the least significant
 * bit of byte `offset` (little endian).  For other members bit_width == 0,
 * bit_offset == 0 and size is the member's size. */
struct ptxabi_member {
	size_t offset;
	size_t size;
	unsigned bit_offset;
	unsigned bit_width;
};
int ptxabi_member(ptxabi_ctx *ctx, const char *type, const char *path,
		  struct ptxabi_member *out);

/* Functions declared so far, in declaration order. */
size_t ptxabi_func_count(const ptxabi_ctx *ctx);
const char *ptxabi_func_name(const ptxabi_ctx *ctx, size_t i);

/* The PTX .param declaration of parameter `param` (0-based) of function
 * `func`, or of its return value when param == -1, exactly as nvcc spells
 * it in a .func prototype, e.g. ".param .b32 f_param_0" or
 * ".param .align 16 .b8 func_retval0[16]".  Writes "" for a void return.
 * Types with a non-trivial C++ copy constructor (__half2, __nv_bfloat162
 * and records holding them) are passed as a .b64 address and returned
 * through a hidden first parameter: then param == -1 gives that
 * ".param .b64 f_param_0" and C parameter i is PTX parameter i + 1.
 * Returns the length (snprintf-style) or -1 (error set). */
int ptxabi_param_decl(ptxabi_ctx *ctx, const char *func, int param,
		      char *buf, size_t bufsize);

/* Output formats for ptxabi_print(). */
enum ptxabi_what {
	PTXABI_TYPES = 1,	/* layouts of the struct/union types read   */
	PTXABI_PROTOS = 2,	/* .func prototypes (.visible definitions)  */
	PTXABI_EXTERNS = 4,	/* .extern .func declarations for callers   */
	PTXABI_CALLS = 8,	/* caller-side call sequences               */
};
/* Prints what was read; `only` restricts to one type or function name
 * (NULL: everything). */
int ptxabi_print(ptxabi_ctx *ctx, FILE *out, unsigned what, const char *only);

/* Checks PTX text (hand-written or generated) against the functions read:
 * every declared function must have a .func prototype in the PTX whose
 * parameters and return value match in count, kind, size and alignment.
 * Writes one line per finding to `report`.  Returns the number of errors
 * (0: all match), or -1 (error set) if the PTX cannot be read. */
int ptxabi_check_ptx(ptxabi_ctx *ctx, const char *const *ptx_paths,
		     size_t npaths, FILE *report);

#ifdef __cplusplus
}
#endif

#endif /* PTXABI_H */
