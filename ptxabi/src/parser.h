/* SPDX-License-Identifier: MIT */
/*
 * The declaration parser's shared pieces: the cursor over a token vector
 * (token.c), the constant-expression evaluator (expr.c), declaration
 * specifiers and declarators (parse.c), records and enums (record.c).
 * The preprocessor (lex.c) reaches the evaluator only through
 * eval_pp_expr() in ptxabi_internal.h and never includes this header.
 */
#ifndef PTXABI_PARSER_H
#define PTXABI_PARSER_H

#include "ptxabi_internal.h"

struct parser;

/* Type names inside constant expressions (casts, sizeof, alignof) are the
 * declaration parser's: it hands these in.  NULL in #if, where an
 * identifier that is no macro is 0 and there is no sizeof. */
struct typenames {
	bool (*is_type_start)(struct parser *p, const struct token *t);
	struct type *(*type_name)(struct parser *p);
};

struct parser {
	ptxabi_ctx *ctx;
	struct token *t;
	size_t n, i;
	const struct typenames *types;
};

struct declspec {
	struct type *type;
	const char *tdname;	/* the typedef name used, if any */
	bool is_typedef, is_static, has_body_ok;
	size_t req_align;
	struct loc loc;
};

struct decl {
	const char *name;
	struct loc loc;
	size_t req_align;
};

/* token.c: the cursor.  The last token is always TK_EOF and is never
 * stepped over. */
struct token *peek(struct parser *p);
struct token *peek2(struct parser *p);
struct token *next(struct parser *p);
bool accept(struct parser *p, const char *s);
void expect(struct parser *p, const char *s);
const char *tokdesc(ptxabi_ctx *ctx, const struct token *t);
char *tokstr(struct parser *p, const struct token *t);
void skip_group(struct parser *p);

/* expr.c: an integer constant expression at the cursor. */
long long cexpr(struct parser *p);

/* parse.c: declaration specifiers and declarators. */
void parser_init(struct parser *p, ptxabi_ctx *ctx, struct token *toks,
		 size_t n);
bool is_ignored(const struct token *t);
bool is_type_start(struct parser *p, const struct token *t);
bool parse_align_word(struct parser *p, size_t *req_align);
void parse_declspec(struct parser *p, struct declspec *ds);
struct type *declarator(struct parser *p, struct type *base, struct decl *d,
			bool abstract);
struct type *type_name(struct parser *p);

/* record.c: struct, union and enum specifiers (the keyword at the cursor). */
struct type *parse_record(struct parser *p);
struct type *parse_enum(struct parser *p);

#endif
