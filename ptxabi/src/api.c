/* SPDX-License-Identifier: MIT */
/* The public entry points: each installs the error landing pad. */
#include <stdlib.h>
#include <string.h>

#include "ptxabi_internal.h"

/* Every entry point that may fail() runs its body between these two. */
#define ENTER(ctx, errval)                                                 \
	jmp_buf jb_;                                                       \
	jmp_buf *saved_ = (ctx)->jmp;                                      \
	(ctx)->jmp = &jb_;                                                 \
	if (setjmp(jb_)) {                                                 \
		(ctx)->jmp = saved_;                                       \
		return errval;                                             \
	}                                                                  \
	(ctx)->err[0] = 0
#define LEAVE(ctx) ((ctx)->jmp = saved_)

static int init(ptxabi_ctx *ctx)
{
	ENTER(ctx, -1);
	builtins_install(ctx);
	/* What nvcc's device compilation pass defines. */
	macro_define(ctx, "__CUDACC__", "1");
	macro_define(ctx, "__NVCC__", "1");
	macro_define(ctx, "__CUDA_ARCH__", "800");
	macro_define(ctx, "__cplusplus", "201703L");
	macro_define(ctx, "__LP64__", "1");
	macro_define(ctx, "__x86_64__", "1");
	LEAVE(ctx);
	return 0;
}

ptxabi_ctx *ptxabi_new(void)
{
	ptxabi_ctx *ctx = calloc(1, sizeof(*ctx));

	if (ctx && init(ctx)) {
		ptxabi_free(ctx);
		return NULL;
	}
	return ctx;
}

void ptxabi_free(ptxabi_ctx *ctx)
{
	if (!ctx)
		return;
	ar_free_all(ctx);
	free(ctx);
}

int ptxabi_define(ptxabi_ctx *ctx, const char *name, const char *value)
{
	ENTER(ctx, -1);
	macro_define(ctx, name, value);
	LEAVE(ctx);
	return 0;
}

int ptxabi_undef(ptxabi_ctx *ctx, const char *name)
{
	ENTER(ctx, -1);
	macro_undef(ctx, name);
	LEAVE(ctx);
	return 0;
}

int ptxabi_parse(ptxabi_ctx *ctx, const char *text, size_t len,
		 const char *filename)
{
	ENTER(ctx, -1);
	struct tokvec tv = { 0 };
	const char *file = ar_strndup(ctx, filename ? filename : "<input>",
				      strlen(filename ? filename : "<input>"));
	/* Tokens point into the text: keep a copy the context owns. */
	const char *copy = ar_strndup(ctx, text, len);

	lex_preprocess(ctx, copy, len, file, &tv);
	parse_tokens(ctx, tv.v, tv.n);
	LEAVE(ctx);
	return 0;
}

int ptxabi_parse_file(ptxabi_ctx *ctx, const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");

	if (!f) {
		snprintf(ctx->err, sizeof(ctx->err), "%s: cannot open", path);
		return -1;
	}
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);

	while (buf) {
		size_t n = fread(buf + len, 1, cap - len, f);

		len += n;
		if (n == 0)
			break;
		if (len == cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	bool bad = ferror(f);

	if (f != stdin)
		fclose(f);
	if (!buf || bad) {
		free(buf);
		snprintf(ctx->err, sizeof(ctx->err), "%s: %s", path,
			 buf ? "read error" : "out of memory");
		return -1;
	}
	int rc = ptxabi_parse(ctx, buf, len, strcmp(path, "-") ? path :
			      "<stdin>");

	free(buf);
	return rc;
}

const char *ptxabi_error(const ptxabi_ctx *ctx)
{
	return ctx->err;
}

int ptxabi_type_layout(ptxabi_ctx *ctx, const char *type,
		       struct ptxabi_layout *out)
{
	ENTER(ctx, -1);
	struct type *t = parse_type_string(ctx, type);
	struct loc at = { "<type>", 1, 1 };

	if (!t->complete)
		fail(ctx, at, "'%s' is incomplete", type_str(ctx, t));
	out->size = t->size;
	out->align = t->align;
	LEAVE(ctx);
	return 0;
}

/* Finds `name` in a record, looking through anonymous members. */
static const struct member *find_member(const struct type *t, const char *name,
					size_t len, size_t *off)
{
	for (size_t i = 0; i < t->nmem; i++) {
		const struct member *m = &t->mem[i];

		if (m->name && strlen(m->name) == len &&
		    memcmp(m->name, name, len) == 0) {
			*off += m->offset;
			return m;
		}
		if (!m->name && m->bits < 0 && type_is_record(m->type)) {
			size_t sub = *off + m->offset;
			const struct member *r = find_member(m->type, name, len,
							     &sub);

			if (r) {
				*off = sub;
				return r;
			}
		}
	}
	return NULL;
}

int ptxabi_member(ptxabi_ctx *ctx, const char *type, const char *path,
		  struct ptxabi_member *out)
{
	ENTER(ctx, -1);
	struct type *t = parse_type_string(ctx, type);
	struct loc at = { "<path>", 1, 1 };
	const struct member *last = NULL;
	size_t off = 0;
	const char *p = path;

	memset(out, 0, sizeof(*out));
	while (*p) {
		at.col = (unsigned)(p - path) + 1;
		if (*p == '[') {
			char *end;
			unsigned long long idx = strtoull(p + 1, &end, 10);

			if (t->kind != TY_ARRAY || *end != ']' || end == p + 1)
				fail(ctx, at, "bad index in '%s'", path);
			if (idx >= t->len)
				fail(ctx, at, "index %llu out of range", idx);
			t = t->base;
			off += idx * t->size;
			last = NULL;
			p = end + 1;
			continue;
		}
		if (*p == '.')
			p++;
		size_t n = strcspn(p, ".[");

		if (!type_is_record(t))
			fail(ctx, at, "'%s' has no members", type_str(ctx, t));
		size_t moff = 0;
		const struct member *m = find_member(t, p, n, &moff);

		if (!m)
			fail(ctx, at, "no member '%.*s' in '%s'", (int)n, p,
			     type_str(ctx, t));
		if (m->bits >= 0) {
			/* moff counted the bit-field's offset (bitpos / 8) */
			off += moff - m->offset;
			out->bit_width = (unsigned)m->bits;
			out->bit_offset = (unsigned)(m->bitpos % 8);
			off += m->bitpos / 8;
		} else {
			off += moff;
		}
		last = m;
		t = m->type;
		p += n;
		if (m->bits >= 0 && *p)
			fail(ctx, at, "bit-field '%s' has no members", m->name);
	}
	out->offset = off;
	out->size = last && last->bits >= 0 ? 0 : t->size;
	if (!last || last->bits < 0) {
		out->bit_width = 0;
		out->bit_offset = 0;
	}
	LEAVE(ctx);
	return 0;
}

size_t ptxabi_func_count(const ptxabi_ctx *ctx)
{
	return ctx->nfuncs;
}

const char *ptxabi_func_name(const ptxabi_ctx *ctx, size_t i)
{
	return i < ctx->nfuncs ? ctx->funcs[i].name : NULL;
}

static const struct func *find_func(ptxabi_ctx *ctx, const char *name)
{
	for (size_t i = 0; i < ctx->nfuncs; i++)
		if (strcmp(ctx->funcs[i].name, name) == 0)
			return &ctx->funcs[i];
	struct loc at = { "<function>", 1, 1 };

	fail(ctx, at, "no function '%s' was declared", name);
}

int ptxabi_param_decl(ptxabi_ctx *ctx, const char *func, int param,
		      char *buf, size_t bufsize)
{
	ENTER(ctx, -1);
	const struct func *f = find_func(ctx, func);
	struct psig sig;
	char name[300];
	int n;

	func_sig(ctx, f, &sig);
	if (param < -1 || (param >= 0 && (size_t)param >= f->fty->nparams))
		fail(ctx, f->loc, "'%s' has no parameter %d", func, param);
	if (param == -1 && sig.sret) {
		/* returned through the hidden first parameter */
		snprintf(name, sizeof(name), "%s_param_0", func);
		n = pspec_str(&sig.p[0], name, buf, bufsize);
	} else if (param == -1 && !sig.has_ret) {
		if (bufsize)
			buf[0] = 0;
		n = 0;
	} else if (param == -1) {
		n = pspec_str(&sig.ret, "func_retval0", buf, bufsize);
	} else {
		size_t k = (size_t)param + sig.sret;

		snprintf(name, sizeof(name), "%s_param_%zu", func, k);
		n = pspec_str(&sig.p[k], name, buf, bufsize);
	}
	LEAVE(ctx);
	return n;
}

static bool record_matches(const struct type *t, const char *only)
{
	if (!only)
		return !t->builtin;
	return (t->name && strcmp(t->name, only) == 0) ||
	       (t->tag && strcmp(t->tag, only) == 0);
}

int ptxabi_print(ptxabi_ctx *ctx, FILE *out, unsigned what, const char *only)
{
	ENTER(ctx, -1);
	bool found = !only;

	if (what & PTXABI_TYPES) {
		for (size_t i = 0; i < ctx->nrecords; i++)
			if (record_matches(ctx->records[i], only)) {
				print_record(ctx, out, ctx->records[i]);
				found = true;
			}
		if (only && !found) {
			struct type *t = lookup_typedef(ctx, only, strlen(only));

			if (t && type_is_record(t)) {
				print_record(ctx, out, t);
				found = true;
			} else if (t) {
				fprintf(out, "%s: size %zu, align %zu\n", only,
					t->size, t->align);
				found = true;
			}
		}
	}
	for (size_t i = 0; i < ctx->nfuncs; i++) {
		const struct func *f = &ctx->funcs[i];

		if (only && strcmp(f->name, only))
			continue;
		found = true;
		if (what & PTXABI_PROTOS)
			print_proto(ctx, out, f, false);
		if (what & PTXABI_EXTERNS)
			print_proto(ctx, out, f, true);
		if (what & PTXABI_CALLS)
			print_callseq(ctx, out, f, (unsigned)i);
	}
	if (!found) {
		struct loc at = { "<name>", 1, 1 };

		fail(ctx, at, "no type or function named '%s'", only);
	}
	LEAVE(ctx);
	return 0;
}

int ptxabi_check_ptx(ptxabi_ctx *ctx, const char *const *ptx_paths,
		     size_t npaths, FILE *report)
{
	ENTER(ctx, -1);
	int n = check_ptx(ctx, ptx_paths, npaths, report);

	LEAVE(ctx);
	return n;
}
