/* SPDX-License-Identifier: MIT */
/*
 * Type constructors, the scalar table (LP64, as nvcc on 64-bit Linux) and
 * the built-in declarations a device header gets from its includes.
 */
#include <string.h>

#include "ptxabi_internal.h"

static const struct {
	const char *name;
	size_t size;
	bool is_signed;
} scalars[] = {
	[TY_VOID] = { "void", 0, false },
	[TY_BOOL] = { "_Bool", 1, false },
	[TY_CHAR] = { "char", 1, true },	/* signed on x86-64 and nvcc */
	[TY_SCHAR] = { "signed char", 1, true },
	[TY_UCHAR] = { "unsigned char", 1, false },
	[TY_SHORT] = { "short", 2, true },
	[TY_USHORT] = { "unsigned short", 2, false },
	[TY_INT] = { "int", 4, true },
	[TY_UINT] = { "unsigned int", 4, false },
	[TY_LONG] = { "long", 8, true },
	[TY_ULONG] = { "unsigned long", 8, false },
	[TY_LLONG] = { "long long", 8, true },
	[TY_ULLONG] = { "unsigned long long", 8, false },
	[TY_INT128] = { "__int128", 16, true },
	[TY_UINT128] = { "unsigned __int128", 16, false },
	[TY_FLOAT] = { "float", 4, true },
	[TY_DOUBLE] = { "double", 8, true },
};

struct type *type_new(ptxabi_ctx *ctx, enum tykind k)
{
	struct type *t = ar_alloc(ctx, sizeof(*t));

	t->kind = k;
	return t;
}

struct type *type_scalar(ptxabi_ctx *ctx, enum tykind k)
{
	struct type *t = type_new(ctx, k);

	t->size = scalars[k].size;
	t->align = k == TY_VOID ? 1 : t->size;
	t->is_signed = scalars[k].is_signed;
	t->name = scalars[k].name;
	t->complete = k != TY_VOID;
	return t;
}

struct type *type_ptr(ptxabi_ctx *ctx, struct type *base, enum tykind k)
{
	struct type *t = type_new(ctx, k);

	t->base = base;
	t->size = t->align = 8;
	t->complete = true;
	return t;
}

struct type *type_array(ptxabi_ctx *ctx, struct type *base, size_t len,
			struct loc loc)
{
	struct type *t = type_new(ctx, TY_ARRAY);

	if (!base->complete)
		fail(ctx, loc, "array of incomplete type '%s'",
		     type_str(ctx, base));
	if (base->kind == TY_FUNC)
		fail(ctx, loc, "array of functions");
	t->base = base;
	t->len = len;
	t->size = base->size * len;
	t->align = base->align;
	t->complete = true;
	return t;
}

bool type_is_integer(const struct type *t)
{
	return t->kind >= TY_BOOL && t->kind <= TY_UINT128;
}

bool type_is_record(const struct type *t)
{
	return t->kind == TY_STRUCT || t->kind == TY_UNION;
}

static struct type *lookup(struct named *v, size_t n, const char *name,
			   size_t len)
{
	for (size_t i = n; i-- > 0;)
		if (strlen(v[i].name) == len && memcmp(v[i].name, name, len) == 0)
			return v[i].type;
	return NULL;
}

struct type *lookup_typedef(ptxabi_ctx *ctx, const char *name, size_t len)
{
	return lookup(ctx->typedefs, ctx->ntypedefs, name, len);
}

struct type *lookup_tag(ptxabi_ctx *ctx, const char *name, size_t len)
{
	return lookup(ctx->tags, ctx->ntags, name, len);
}

void add_typedef(ptxabi_ctx *ctx, const char *name, struct type *t)
{
	ctx->typedefs = vec_grow(ctx, ctx->typedefs, &ctx->captypedefs,
				 ctx->ntypedefs + 1, sizeof(struct named));
	ctx->typedefs[ctx->ntypedefs++] = (struct named){ name, t };
}

void add_tag(ptxabi_ctx *ctx, const char *name, struct type *t)
{
	ctx->tags = vec_grow(ctx, ctx->tags, &ctx->captags, ctx->ntags + 1,
			     sizeof(struct named));
	ctx->tags[ctx->ntags++] = (struct named){ name, t };
}

const char *type_str(ptxabi_ctx *ctx, const struct type *t)
{
	switch (t->kind) {
	case TY_PTR:
		return ar_printf(ctx, "%s *", type_str(ctx, t->base));
	case TY_REF:
		return ar_printf(ctx, "%s &", type_str(ctx, t->base));
	case TY_ARRAY:
		return ar_printf(ctx, "%s[%zu]", type_str(ctx, t->base), t->len);
	case TY_FUNC:
		return ar_printf(ctx, "%s (...)", type_str(ctx, t->ret));
	default:
		return t->name ? t->name : "<anonymous>";
	}
}

/*
 * What a CUDA translation unit sees without writing it: <stdint.h> names
 * (LP64), cuda_fp16.h / cuda_bf16.h storage types, and the vector types
 * with the alignments vector_types.h gives them (CUDA 13: an even count of
 * elements aligns to count * element size, capped at 16 except the _32a
 * variants; odd counts align as the element).
 */
static const char builtin_src[] =
	"typedef signed char int8_t; typedef unsigned char uint8_t;\n"
	"typedef short int16_t; typedef unsigned short uint16_t;\n"
	"typedef int int32_t; typedef unsigned int uint32_t;\n"
	"typedef long int64_t; typedef unsigned long uint64_t;\n"
	"typedef long intptr_t; typedef unsigned long uintptr_t;\n"
	"typedef long intmax_t; typedef unsigned long uintmax_t;\n"
	"typedef unsigned long size_t; typedef long ssize_t;\n"
	"typedef long ptrdiff_t;\n"
	"typedef unsigned long long CUdeviceptr;\n"
	"struct __align__(2) __half { unsigned short __x; };\n"
	"struct __align__(4) __half2 { struct __half x, y; };\n"
	"struct __align__(2) __nv_bfloat16 { unsigned short __x; };\n"
	"struct __align__(4) __nv_bfloat162 { struct __nv_bfloat16 x, y; };\n"
	"typedef struct __half half; typedef struct __half2 half2;\n"
	"typedef struct __half __half; typedef struct __half2 __half2;\n"
	"typedef struct __nv_bfloat16 __nv_bfloat16;\n"
	"typedef struct __nv_bfloat162 __nv_bfloat162;\n"
#define V1(n, t) "struct " #n " { " t " x; }; typedef struct " #n " " #n ";\n"
#define V2(n, a, t) "struct __align__(" #a ") " #n " { " t " x, y; }; " \
	"typedef struct " #n " " #n ";\n"
#define V3(n, t) "struct " #n " { " t " x, y, z; }; " \
	"typedef struct " #n " " #n ";\n"
#define V4(n, a, t) "struct __align__(" #a ") " #n " { " t " x, y, z, w; }; " \
	"typedef struct " #n " " #n ";\n"
#define V4N(n, t) "struct " #n " { " t " x, y, z, w; }; " \
	"typedef struct " #n " " #n ";\n"
	V1(char1, "signed char") V1(uchar1, "unsigned char")
	V2(char2, 2, "signed char") V2(uchar2, 2, "unsigned char")
	V3(char3, "signed char") V3(uchar3, "unsigned char")
	V4(char4, 4, "signed char") V4(uchar4, 4, "unsigned char")
	V1(short1, "short") V1(ushort1, "unsigned short")
	V2(short2, 4, "short") V2(ushort2, 4, "unsigned short")
	V3(short3, "short") V3(ushort3, "unsigned short")
	V4(short4, 8, "short") V4(ushort4, 8, "unsigned short")
	V1(int1, "int") V1(uint1, "unsigned int")
	V2(int2, 8, "int") V2(uint2, 8, "unsigned int")
	V3(int3, "int") V3(uint3, "unsigned int")
	V4(int4, 16, "int") V4(uint4, 16, "unsigned int")
	V1(long1, "long") V1(ulong1, "unsigned long")
	V2(long2, 16, "long") V2(ulong2, 16, "unsigned long")
	V3(long3, "long") V3(ulong3, "unsigned long")
	V4(long4, 16, "long") V4(ulong4, 16, "unsigned long")
	V4(long4_16a, 16, "long") V4(ulong4_16a, 16, "unsigned long")
	V4(long4_32a, 32, "long") V4(ulong4_32a, 32, "unsigned long")
	V1(float1, "float") V2(float2, 8, "float") V3(float3, "float")
	V4(float4, 16, "float")
	V1(longlong1, "long long") V1(ulonglong1, "unsigned long long")
	V2(longlong2, 16, "long long") V2(ulonglong2, 16, "unsigned long long")
	V3(longlong3, "long long") V3(ulonglong3, "unsigned long long")
	V4(longlong4, 16, "long long") V4(ulonglong4, 16, "unsigned long long")
	V4(longlong4_16a, 16, "long long")
	V4(ulonglong4_16a, 16, "unsigned long long")
	V4(longlong4_32a, 32, "long long")
	V4(ulonglong4_32a, 32, "unsigned long long")
	V1(double1, "double") V2(double2, 16, "double") V3(double3, "double")
	V4(double4, 16, "double") V4(double4_16a, 16, "double")
	V4(double4_32a, 32, "double")
	V3(dim3, "unsigned int")
#undef V1
#undef V2
#undef V3
#undef V4
#undef V4N
	;

void builtins_install(ptxabi_ctx *ctx)
{
	struct tokvec tv = { 0 };

	lex_preprocess(ctx, builtin_src, sizeof(builtin_src) - 1,
		       "<built-in>", &tv);
	parse_tokens(ctx, tv.v, tv.n);
	/* Built-in records print under their CUDA names: float3, __half. */
	for (size_t i = 0; i < ctx->nrecords; i++) {
		ctx->records[i]->builtin = true;
		ctx->records[i]->name = ctx->records[i]->tag;
		/* cuda_fp16.h / cuda_bf16.h give these two user-provided
		 * copy constructors; __half and __nv_bfloat16 have none. */
		if (strcmp(ctx->records[i]->tag, "__half2") == 0 ||
		    strcmp(ctx->records[i]->tag, "__nv_bfloat162") == 0)
			ctx->records[i]->nontrivial = true;
	}
	ctx->nfuncs = 0;
}
