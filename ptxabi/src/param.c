/* SPDX-License-Identifier: MIT */
/*
 * Parameter passing (PTX Interoperability guide, 2.3) as nvcc spells it.
 * The guide's table says .u32/.s32/.f32/.u64/..., but nvcc declares every
 * scalar .func parameter and return value untyped: .b32 for integers of 32
 * bits or less (sign or zero extended) and float, .b64 for 64-bit integers,
 * pointers, references and double.  Aggregates, unions, __half, the vector
 * types and __int128 are byte arrays with the aggregate's alignment.  The
 * device linker compares prototypes textually enough that .f64 vs .b64 is
 * rejected while a wrong .align is not, so we spell exactly what nvcc does.
 */
#include <string.h>

#include "ptxabi_internal.h"

void param_spec(ptxabi_ctx *ctx, const struct type *t, struct loc loc,
		struct pspec *out)
{
	memset(out, 0, sizeof(*out));
	switch (t->kind) {
	case TY_BOOL: case TY_CHAR: case TY_SCHAR: case TY_UCHAR:
	case TY_SHORT: case TY_USHORT: case TY_INT: case TY_UINT:
	case TY_FLOAT:
		out->bits = 32;
		break;
	case TY_ENUM:
		out->bits = t->size > 4 ? 64 : 32;
		break;
	case TY_LONG: case TY_ULONG: case TY_LLONG: case TY_ULLONG:
	case TY_DOUBLE: case TY_PTR: case TY_REF:
		out->bits = 64;
		break;
	case TY_INT128: case TY_UINT128: case TY_STRUCT: case TY_UNION:
		if (t->nontrivial && t->kind == TY_UNION)
			fail(ctx, loc, "'%s' cannot be passed or returned: a "
			     "union holding __half2 or __nv_bfloat162 has no "
			     "copy constructor in C++", type_str(ctx, t));
		if (t->nontrivial) {
			out->bits = 64;	/* by invisible reference */
			break;
		}
		if (!t->complete)
			fail(ctx, loc, "parameter or return of incomplete type "
			     "'%s'", type_str(ctx, t));
		if (t->align > 128)
			fail(ctx, loc, "'%s' is aligned to %zu bytes; PTX "
			     "parameters allow at most 128",
			     type_str(ctx, t), t->align);
		out->agg = true;
		out->align = t->align;
		out->size = t->size;
		return;
	case TY_VOID:
		fail(ctx, loc, "parameter of type void");
	case TY_ARRAY:
		fail(ctx, loc, "arrays cannot be returned");
	case TY_FUNC:
		fail(ctx, loc, "functions cannot be returned");
	}
	out->size = out->align = out->bits / 8;
}

void func_sig(ptxabi_ctx *ctx, const struct func *f, struct psig *out)
{
	const struct type *ft = f->fty;
	size_t k = 0;

	memset(out, 0, sizeof(*out));
	out->p = ar_alloc(ctx, (ft->nparams + 1) * sizeof(*out->p));
	if (ft->ret->kind != TY_VOID) {
		param_spec(ctx, ft->ret, f->loc, &out->ret);
		if (type_is_record(ft->ret) && ft->ret->nontrivial) {
			out->sret = true;
			out->p[k++] = out->ret;
		} else {
			out->has_ret = true;
		}
	}
	for (size_t i = 0; i < ft->nparams; i++)
		param_spec(ctx, ft->params[i], f->loc, &out->p[k++]);
	out->n = k;
}

int pspec_str(const struct pspec *p, const char *name, char *buf,
	      size_t bufsize)
{
	if (p->agg)
		return snprintf(buf, bufsize, ".param .align %zu .b8 %s[%zu]",
				p->align, name, p->size);
	return snprintf(buf, bufsize, ".param .b%u %s", p->bits, name);
}

static void print_pspec(FILE *out, const struct pspec *p, const char *name)
{
	if (p->agg)
		fprintf(out, ".param .align %zu .b8 %s[%zu]", p->align, name,
			p->size);
	else
		fprintf(out, ".param .b%u %s", p->bits, name);
}

/* Layout as nvcc prints it: a definition is
 *   .visible .func  (.param .b32 func_retval0) f(\n\t.param ...\n)
 * and a declaration for callers
 *   .extern .func  (.param .b32 func_retval0) f\n(\n\t.param ...\n)\n;
 */
void print_proto(ptxabi_ctx *ctx, FILE *out, const struct func *f,
		 bool external)
{
	struct psig sig;

	func_sig(ctx, f, &sig);
	fputs(external ? ".extern .func " : ".visible .func ", out);
	if (sig.has_ret) {
		fputs(" (", out);
		print_pspec(out, &sig.ret, "func_retval0");
		fputs(") ", out);
	}
	fputs(f->name, out);
	fputs(external ? "\n(" : "(", out);
	if (sig.n)
		fputc('\n', out);
	for (size_t i = 0; i < sig.n; i++) {
		char name[300];

		snprintf(name, sizeof(name), "%s_param_%zu", f->name, i);
		fputc('\t', out);
		print_pspec(out, &sig.p[i], name);
		fputs(i + 1 < sig.n ? ",\n" : "\n", out);
	}
	fputs(external ? ")\n;\n" : ")\n", out);
}

/* ---- call sequences ---- */

struct regs {
	unsigned rs, r, rd;	/* next %rs (16-bit), %r (32), %rd (64) */
};

static const char *reg(ptxabi_ctx *ctx, struct regs *rg, unsigned bytes)
{
	if (bytes <= 2)
		return ar_printf(ctx, "%%rs%u", ++rg->rs);
	if (bytes == 4)
		return ar_printf(ctx, "%%r%u", ++rg->r);
	return ar_printf(ctx, "%%rd%u", ++rg->rd);
}

typedef void (*leaf_fn)(ptxabi_ctx *ctx, FILE *out, struct regs *rg,
			const char *pname, size_t off, unsigned bytes,
			bool store);

static void leaf_move(ptxabi_ctx *ctx, FILE *out, struct regs *rg,
		      const char *pname, size_t off, unsigned bytes, bool store)
{
	const char *r = reg(ctx, rg, bytes);

	if (store)
		fprintf(out, "\tst.param.b%u \t[%s+%zu], %s;\n", bytes * 8,
			pname, off, r);
	else
		fprintf(out, "\tld.param.b%u \t%s, [%s+%zu];\n", bytes * 8, r,
			pname, off);
}

/* Visits every scalar piece of an aggregate: one access per scalar member
 * at its offset; bytes holding bit-fields are moved as single bytes, the
 * way nvcc moves records with bit-fields.  Padding is not moved. */
static void walk(ptxabi_ctx *ctx, FILE *out, struct regs *rg,
		 const struct type *t, const char *pname, size_t base,
		 bool store, unsigned char *done)
{
	if (t->kind == TY_ARRAY) {
		for (size_t i = 0; i < t->len; i++)
			walk(ctx, out, rg, t->base, pname,
			     base + i * t->base->size, store, done);
		return;
	}
	if (type_is_record(t)) {
		/* A union is moved through its largest member's bytes. */
		if (t->kind == TY_UNION) {
			size_t s = 0, left = t->size;

			while (s < t->size) {
				unsigned b = 1;

				while (b < 8 && b * 2 <= left &&
				       (base + s) % (b * 2) == 0 &&
				       b * 2 <= t->align)
					b *= 2;
				if (!done[base + s])
					leaf_move(ctx, out, rg, pname, base + s,
						  b, store);
				for (unsigned k = 0; k < b; k++)
					done[base + s + k] = 1;
				s += b;
				left -= b;
			}
			return;
		}
		for (size_t i = 0; i < t->nmem; i++) {
			const struct member *m = &t->mem[i];

			if (m->bits < 0) {
				walk(ctx, out, rg, m->type, pname,
				     base + m->offset, store, done);
				continue;
			}
			if (m->bits == 0)
				continue;
			size_t first = m->bitpos / 8;
			size_t last = (m->bitpos + (size_t)m->bits - 1) / 8;

			for (size_t b = first; b <= last; b++) {
				if (!done[base + b]) {
					leaf_move(ctx, out, rg, pname, base + b,
						  1, store);
					done[base + b] = 1;
				}
			}
		}
		return;
	}
	if (!done[base]) {
		leaf_move(ctx, out, rg, pname, base, (unsigned)t->size, store);
		for (size_t k = 0; k < t->size; k++)
			done[base + k] = 1;
	}
}

static void move_value(ptxabi_ctx *ctx, FILE *out, struct regs *rg,
		       const struct type *t, const struct pspec *ps,
		       const char *pname, bool store)
{
	if (!ps->agg) {
		leaf_move(ctx, out, rg, pname, 0, ps->bits / 8, store);
		return;
	}
	unsigned char *done = ar_alloc(ctx, t->size + 1);

	if (t->kind == TY_INT128 || t->kind == TY_UINT128) {
		leaf_move(ctx, out, rg, pname, 0, 8, store);
		leaf_move(ctx, out, rg, pname, 8, 8, store);
		return;
	}
	walk(ctx, out, rg, t, pname, 0, store, done);
}

/* The caller's side, in nvcc's layout: a brace-scoped sequence declaring
 * param0..N and retval0, storing the arguments, the call.uni, and loading
 * the result.  Registers are placeholders (%r1...); integer arguments
 * narrower than 32 bits must be sign or zero extended into their .b32. */
void print_callseq(ptxabi_ctx *ctx, FILE *out, const struct func *f,
		   unsigned seq)
{
	const struct type *ft = f->fty;
	struct regs rg = { 0 };
	struct psig sig;

	func_sig(ctx, f, &sig);
	fprintf(out, "\t{ // callseq %u, 0\n", seq);
	fputs("\t.reg .b32 temp_param_reg;\n", out);
	for (size_t i = 0; i < sig.n; i++) {
		char name[32];
		size_t ci = i - sig.sret;	/* the C parameter */

		snprintf(name, sizeof(name), "param%zu", i);
		fputc('\t', out);
		print_pspec(out, &sig.p[i], name);
		fputs(";\n", out);
		if (sig.sret && i == 0)
			fputs("\t// the address of the caller's result\n", out);
		move_value(ctx, out, &rg, sig.sret && i == 0 ? ft->ret :
			   ft->params[ci], &sig.p[i], name, true);
	}
	if (sig.has_ret) {
		fputc('\t', out);
		print_pspec(out, &sig.ret, "retval0");
		fputs(";\n", out);
		fputs("\tcall.uni (retval0), \n", out);
	} else {
		fputs("\tcall.uni \n", out);
	}
	fprintf(out, "\t%s, \n\t(\n", f->name);
	for (size_t i = 0; i < sig.n; i++)
		fprintf(out, "\tparam%zu%s\n", i, i + 1 < sig.n ? ", " : "");
	fputs("\t);\n", out);
	if (sig.has_ret)
		move_value(ctx, out, &rg, ft->ret, &sig.ret, "retval0", false);
	fprintf(out, "\t} // callseq %u\n", seq);
}
