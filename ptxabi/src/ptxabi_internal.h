/* SPDX-License-Identifier: MIT */
/* ptxabi internals: shared by the lexer, parser, layout and printers only. */
#ifndef PTXABI_INTERNAL_H
#define PTXABI_INTERNAL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ptxabi.h"

struct loc {
	const char *file;
	unsigned line, col;
};

enum tokkind { TK_EOF, TK_IDENT, TK_NUM, TK_STR, TK_CHAR, TK_PUNCT };

struct token {
	enum tokkind kind;
	const char *s;		/* not NUL-terminated: use len */
	size_t len;
	struct loc loc;
	bool bol;		/* first token on its line (directives) */
};

struct tokvec {
	struct token *v;
	size_t n, cap;
};

enum tykind {
	TY_VOID, TY_BOOL, TY_CHAR, TY_SCHAR, TY_UCHAR, TY_SHORT, TY_USHORT,
	TY_INT, TY_UINT, TY_LONG, TY_ULONG, TY_LLONG, TY_ULLONG,
	TY_INT128, TY_UINT128, TY_FLOAT, TY_DOUBLE, TY_ENUM,
	TY_PTR, TY_REF, TY_ARRAY, TY_STRUCT, TY_UNION, TY_FUNC,
};

struct type;

struct member {
	const char *name;	/* NULL: unnamed bit-field or anonymous record */
	struct type *type;
	int bits;		/* -1: not a bit-field, else the width */
	size_t req_align;	/* alignas/__align__ on the member, 0: none */
	size_t offset;		/* byte offset (bit-fields: bitpos / 8) */
	size_t bitpos;		/* bit-fields: bit offset from the record */
	const char *tyname;	/* typedef name it was declared with, or NULL */
	struct loc loc;
};

struct type {
	enum tykind kind;
	size_t size, align;
	bool complete;
	bool is_signed;		/* integer kinds */
	const char *name;	/* how to print it: "int", "struct S", "float3" */
	struct type *base;	/* pointer/reference target, array element */
	size_t len;		/* array length */
	/* records */
	const char *tag;
	struct member *mem;
	size_t nmem;
	size_t req_align;	/* __align__(N) on the record, 0: none */
	bool builtin;		/* __half, CUDA vector types */
	bool nontrivial;	/* C++ copy constructor not trivial (__half2,
				 * __nv_bfloat162 and records holding them) */
	struct loc loc;
	/* functions */
	struct type *ret;
	struct type **params;
	const char **pnames;
	size_t nparams;
};

struct func {
	const char *name;
	struct type *fty;
	struct loc loc;
};

struct named {			/* typedefs, tags */
	const char *name;
	struct type *type;
};

struct macro {
	const char *name;
	bool funclike, undefined;
	const char **params;
	size_t nparams;
	struct token *body;
	size_t nbody;
};

struct arena_blk;

struct ptxabi_ctx {
	struct arena_blk *arena;
	char err[512];
	jmp_buf *jmp;		/* where fail() lands while parsing */

	struct macro *macros;
	size_t nmacros, capmacros;
	struct named *typedefs;
	size_t ntypedefs, captypedefs;
	struct named *tags;
	size_t ntags, captags;
	struct named *enumconsts;	/* type field unused; value in len */
	long long *enumvals;
	size_t nenumconsts, capenumconsts;
	struct func *funcs;
	size_t nfuncs, capfuncs;
	struct type **records;		/* records defined, in order */
	size_t nrecords, caprecords;
	unsigned anon_count;
};

/* arena.c */
void *ar_alloc(ptxabi_ctx *ctx, size_t n);
char *ar_strndup(ptxabi_ctx *ctx, const char *s, size_t n);
char *ar_printf(ptxabi_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ar_free_all(ptxabi_ctx *ctx);
void *vec_grow(ptxabi_ctx *ctx, void *v, size_t *cap, size_t need, size_t elt);
_Noreturn void fail(ptxabi_ctx *ctx, struct loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* token.c */
void tokvec_push(ptxabi_ctx *ctx, struct tokvec *tv, const struct token *t);
bool tok_is(const struct token *t, const char *s);

/* lex.c: tokenizes and preprocesses a buffer. */
void lex_preprocess(ptxabi_ctx *ctx, const char *text, size_t len,
		    const char *file, struct tokvec *out);
void macro_define(ptxabi_ctx *ctx, const char *name, const char *value);
void macro_undef(ptxabi_ctx *ctx, const char *name);

/* expr.c: the value of an #if condition, macros already expanded. */
long long eval_pp_expr(ptxabi_ctx *ctx, struct token *toks, size_t n,
		       struct loc where);

/* parse.c (with record.c and expr.c; their shared pieces are parser.h) */
void parse_tokens(ptxabi_ctx *ctx, struct token *toks, size_t n);
struct type *parse_type_string(ptxabi_ctx *ctx, const char *s);

/* types.c: built-in types and lookups. */
struct type *type_new(ptxabi_ctx *ctx, enum tykind k);
struct type *type_scalar(ptxabi_ctx *ctx, enum tykind k);
struct type *type_ptr(ptxabi_ctx *ctx, struct type *base, enum tykind k);
struct type *type_array(ptxabi_ctx *ctx, struct type *base, size_t len,
			struct loc loc);
void builtins_install(ptxabi_ctx *ctx);
struct type *lookup_typedef(ptxabi_ctx *ctx, const char *name, size_t len);
struct type *lookup_tag(ptxabi_ctx *ctx, const char *name, size_t len);
void add_typedef(ptxabi_ctx *ctx, const char *name, struct type *t);
void add_tag(ptxabi_ctx *ctx, const char *name, struct type *t);
bool type_is_integer(const struct type *t);
bool type_is_record(const struct type *t);
const char *type_str(ptxabi_ctx *ctx, const struct type *t);

/* layout.c */
void layout_record(ptxabi_ctx *ctx, struct type *t);

/* param.c: nvcc's .param spelling and call sequences. */
struct pspec {
	bool agg;		/* .align A .b8 name[N] */
	unsigned bits;		/* scalar: 32 or 64 */
	size_t align, size;
};
void param_spec(ptxabi_ctx *ctx, const struct type *t, struct loc loc,
		struct pspec *out);
/* A function's PTX signature.  Types with a non-trivial copy constructor
 * travel by invisible reference (Itanium C++ ABI, which nvcc follows): as
 * a .b64 pointer parameter, and when returned through a hidden .b64 first
 * parameter (sret) with no return value. */
struct psig {
	bool has_ret;
	struct pspec ret;
	bool sret;		/* p[0] is the hidden return pointer */
	struct pspec *p;	/* PTX parameters, in order */
	size_t n;
};
void func_sig(ptxabi_ctx *ctx, const struct func *f, struct psig *out);
int pspec_str(const struct pspec *p, const char *name, char *buf,
	      size_t bufsize);
void print_proto(ptxabi_ctx *ctx, FILE *out, const struct func *f,
		 bool external);
void print_callseq(ptxabi_ctx *ctx, FILE *out, const struct func *f,
		   unsigned seq);

/* print.c */
void print_record(ptxabi_ctx *ctx, FILE *out, const struct type *t);

/* ptxscan.c */
int check_ptx(ptxabi_ctx *ctx, const char *const *paths, size_t n,
	      FILE *report);

#endif
