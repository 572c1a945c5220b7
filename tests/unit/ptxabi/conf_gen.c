/* SPDX-License-Identifier: MIT */
/*
 * The generator: random records (nested structs and unions, anonymous
 * members, bit-fields of every integer type, vector and half types,
 * arrays, pointers, alignment attributes) and functions taking and
 * returning them, rendered as a header and as nvcc probes of them.
 * Deterministic: a xorshift generator seeded from the command line.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

/* ---- deterministic random numbers ---- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)((rng_state >> 11) % n);
}

/* ---- growable strings ---- */

void sadd(struct str *b, const char *fmt, ...)
{
	va_list ap;

	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(b->s ? b->s + b->n : NULL,
				  b->s ? b->cap - b->n : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			abort();
		if (b->s && b->n + (size_t)n < b->cap) {
			b->n += (size_t)n;
			return;
		}
		b->cap = (b->cap + (size_t)n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		if (!b->s)
			abort();
	}
}

/* ---- the random declarations ---- */

const struct scalar scalars[] = {
	{ "char", 8, true }, { "signed char", 8, true },
	{ "unsigned char", 8, false }, { "short", 16, true },
	{ "unsigned short", 16, false }, { "int", 32, true },
	{ "unsigned int", 32, false }, { "long", 64, true },
	{ "unsigned long", 64, false }, { "long long", 64, true },
	{ "unsigned long long", 64, false }, { "float", 32, true },
	{ "double", 64, true }, { "bool", 8, false }, { "uint8_t", 8, false },
	{ "int16_t", 16, true }, { "uint32_t", 32, false },
	{ "int64_t", 64, true }, { "size_t", 64, false },
	{ "enum GE", 32, true },
};
#define NSCALARS (sizeof(scalars) / sizeof(scalars[0]))
#define NBITFIELD_TYPES 11	/* the first 11 are integer types */

static const char *const vectors[] = {
	"char1", "char2", "char3", "char4", "uchar1", "uchar2", "uchar3",
	"uchar4", "short1", "short2", "short3", "short4", "ushort1", "ushort2",
	"ushort3", "ushort4", "int1", "int2", "int3", "int4", "uint1", "uint2",
	"uint3", "uint4", "long1", "long2", "long3", "long4_16a", "long4_32a",
	"ulong1", "ulong2", "ulong3", "ulong4_16a", "ulong4_32a", "longlong1",
	"longlong2", "longlong3", "longlong4_16a", "longlong4_32a",
	"ulonglong1", "ulonglong2", "ulonglong3", "ulonglong4_16a",
	"ulonglong4_32a", "float1", "float2", "float3", "float4", "double1",
	"double2", "double3", "double4_16a", "double4_32a", "__half",
	"__half2", "__nv_bfloat16", "__nv_bfloat162",
};
#define NVECTORS (sizeof(vectors) / sizeof(vectors[0]))

static const char *const pointers[] = {
	"int *", "const char *", "void *", "float3 *", "double **",
};

struct grec *recs;
int nrecs;
int *tops;
static int caprecs;
static struct gfunc *funcs;

static int new_record(int parent)
{
	if (nrecs == caprecs) {
		caprecs = caprecs ? caprecs * 2 : 64;
		recs = realloc(recs, (size_t)caprecs * sizeof(*recs));
		if (!recs)
			abort();
	}
	struct grec *r = &recs[nrecs];

	memset(r, 0, sizeof(*r));
	r->parent = parent;
	return nrecs++;
}

static void gen_dims(struct gmem *m)
{
	uint32_t r = rnd(100);

	if (r < 15) {
		m->ndims = 1;
		m->dims[0] = 1 + (int)rnd(5);
	} else if (r < 19) {
		m->ndims = 2;
		m->dims[0] = 1 + (int)rnd(3);
		m->dims[1] = 1 + (int)rnd(3);
	}
}

static int gen_record(int depth, int parent, int ntop_before, bool trivial,
		      bool anon);

/* The last four "vectors" are the half types: their copy constructors
 * make a union holding them uncopyable in C++, so unions avoid them. */
#define NHALF 4

static void gen_members(int ri, int depth, int ntop_before)
{
	int n = rnd(40) == 0 ? 0 : 1 + (int)rnd(7);
	int cap = n * 4 + 4, cnt = 0;
	struct gmem *mem = calloc((size_t)cap, sizeof(*mem));

	if (!mem)
		abort();
	for (int i = 0; i < n; i++) {
		uint32_t r = rnd(100);

		if (r < 28) {
			int run = 1 + (int)rnd(4);

			for (int j = 0; j < run && cnt < cap; j++) {
				struct gmem *m = &mem[cnt++];
				int t = (int)rnd(NBITFIELD_TYPES + 1);
				unsigned tb;

				m->k = M_BITS;
				if (t == NBITFIELD_TYPES) {
					m->idx = 13;	/* bool : 1 */
					m->bits = 1;
					m->named = true;
					continue;
				}
				m->idx = t;
				tb = scalars[t].bits;
				uint32_t u = rnd(100);

				if (u < 6) {
					m->bits = 0;
				} else {
					m->bits = 1 + (int)rnd(tb);
					m->named = u >= 16;
				}
			}
			continue;
		}
		struct gmem *m = &mem[cnt++];

		m->named = true;
		if (r < 50) {
			m->k = M_SCALAR;
			m->idx = (int)rnd(NSCALARS);
			gen_dims(m);
		} else if (r < 66) {
			m->k = M_VECTOR;
			m->idx = (int)rnd(recs[ri].no_half ? NVECTORS - NHALF :
					  NVECTORS);
			if (m->idx >= (int)(NVECTORS - NHALF))
				recs[ri].nontrivial = true;
			gen_dims(m);
		} else if (r < 72) {
			m->k = M_PTR;
			m->idx = (int)rnd(sizeof(pointers) / sizeof(pointers[0]) + 1);
			if (m->idx == (int)(sizeof(pointers) / sizeof(pointers[0])))
				m->idx = recs[ri].anon ? 0 : -1; /* to this record */
			gen_dims(m);
		} else if (r < 75) {
			m->k = M_FPTR;
		} else if (r < 79 && depth < 3 && !recs[ri].anon) {
			/* C11 anonymous struct/union: no name, members
			 * promoted; C++ allows no nested types or half types
			 * (constructors) in it */
			m->k = M_REC;
			m->inline_def = true;
			m->named = false;
			m->idx = gen_record(depth + 1, ri, ntop_before, true,
					    true);
			continue;	/* no dims, no alignment attribute */
		} else if (r < 88 && depth < 3 && !recs[ri].anon) {
			m->k = M_REC;
			m->inline_def = true;
			m->idx = gen_record(depth + 1, ri, ntop_before,
					    recs[ri].no_half, false);
			if (recs[m->idx].nontrivial)
				recs[ri].nontrivial = true;
			gen_dims(m);
		} else if (ntop_before > 0) {
			m->k = M_REC;
			m->idx = tops[rnd((uint32_t)ntop_before)];
			if ((recs[m->idx].nontrivial && recs[ri].no_half) ||
			    recs[m->idx].weight > 24) {
				m->k = M_SCALAR;
				m->idx = (int)rnd(NSCALARS);
			} else if (recs[m->idx].nontrivial) {
				recs[ri].nontrivial = true;
			}
			gen_dims(m);
		} else {
			m->k = M_SCALAR;
			m->idx = (int)rnd(NSCALARS);
		}
		if (rnd(100) < 5)
			m->align = 1 << (1 + rnd(5));
	}
	int w = 0;

	for (int i = 0; i < cnt; i++) {
		struct gmem *m = &mem[i];
		int mw = m->k == M_REC ? recs[m->idx].weight : 1;

		/* arrays of big records make the PTX explode: flatten */
		if (m->k == M_REC && mw > 6)
			m->ndims = 0;
		for (int d = 0; d < m->ndims; d++)
			mw *= m->dims[d];
		w += mw;
		/* promoted names must not clash with the enclosing ones */
		if (recs[ri].anon)
			snprintf(m->name, sizeof(m->name), "m%d_%d", ri, i);
		else
			snprintf(m->name, sizeof(m->name), "m%d", i);
	}
	recs[ri].weight = w;
	recs[ri].mem = mem;
	recs[ri].nmem = cnt;
}

static int gen_record(int depth, int parent, int ntop_before, bool trivial,
		      bool anon)
{
	int ri = new_record(parent);

	recs[ri].anon = anon;
	if (anon) {
		struct str q = { 0 };

		sadd(&q, "%s", recs[parent].qual);
		recs[ri].qual = q.s;
	} else if (parent < 0) {
		snprintf(recs[ri].tag, sizeof(recs[ri].tag), "T%d", ri);
		struct str q = { 0 };

		sadd(&q, "T%d", ri);
		recs[ri].qual = q.s;
	} else {
		snprintf(recs[ri].tag, sizeof(recs[ri].tag), "T%d_n%d",
			 parent, ri);
		struct str q = { 0 };

		sadd(&q, "%s::%s", recs[parent].qual, recs[ri].tag);
		recs[ri].qual = q.s;
	}
	recs[ri].is_union = anon ? rnd(2) == 0 : rnd(6) == 0;
	recs[ri].no_half = trivial || recs[ri].is_union;
	if (rnd(10) == 0 && !anon)
		recs[ri].align = 1 << (1 + rnd(5));
	gen_members(ri, depth, ntop_before);
	return ri;
}

static void render_record(struct str *o, int ri, int indent);

static void render_member(struct str *o, int ri, const struct gmem *m,
			  int indent)
{
	char dims[32] = "";

	if (m->ndims == 1)
		snprintf(dims, sizeof(dims), "[%d]", m->dims[0]);
	else if (m->ndims == 2)
		snprintf(dims, sizeof(dims), "[%d][%d]", m->dims[0], m->dims[1]);
	sadd(o, "%*s", indent, "");
	switch (m->k) {
	case M_BITS:
		sadd(o, "%s %s : %d;\n", scalars[m->idx].name,
		     m->named ? m->name : "", m->bits);
		return;
	case M_SCALAR:
		sadd(o, "%s %s%s", scalars[m->idx].name, m->name, dims);
		break;
	case M_VECTOR:
		sadd(o, "%s %s%s", vectors[m->idx], m->name, dims);
		break;
	case M_PTR:
		if (m->idx < 0)
			sadd(o, "%s %s *%s%s", recs[ri].is_union ? "union" :
			     "struct", recs[ri].tag, m->name, dims);
		else
			sadd(o, "%s%s%s", pointers[m->idx], m->name, dims);
		break;
	case M_FPTR:
		sadd(o, "void (*%s)(int, float3)", m->name);
		break;
	case M_REC:
		if (m->inline_def) {
			render_record(o, m->idx, indent);
			if (m->named)
				sadd(o, " %s%s", m->name, dims);
		} else {
			sadd(o, "%s %s %s%s", recs[m->idx].is_union ? "union" :
			     "struct", recs[m->idx].tag, m->name, dims);
		}
		break;
	}
	if (m->align)
		sadd(o, " __attribute__((aligned(%d)))", m->align);
	sadd(o, ";\n");
}

static void render_record(struct str *o, int ri, int indent)
{
	const struct grec *r = &recs[ri];

	sadd(o, "%s ", r->is_union ? "union" : "struct");
	if (r->align)
		sadd(o, "__align__(%d) ", r->align);
	if (!r->anon)
		sadd(o, "%s ", r->tag);
	sadd(o, "{\n");
	for (int i = 0; i < r->nmem; i++)
		render_member(o, ri, &r->mem[i], indent + 4);
	sadd(o, "%*s}", indent, "");
}

const char *rec_kw(int ri)
{
	return recs[ri].is_union ? "union" : "struct";
}

static void render_type(struct str *o, const struct gfunc *f,
			const struct gparam *p)
{
	switch (p->kind) {
	case 0:
		sadd(o, "%s %s", rec_kw(p->idx), recs[p->idx].tag);
		break;
	case 1:
		sadd(o, "%s", scalars[p->idx].name);
		break;
	case 2:
		sadd(o, "%s", vectors[p->idx]);
		break;
	default:
		sadd(o, "%s", pointers[p->idx]);
		break;
	}
	(void)f;
}

static struct gparam gen_param(int own, int ntop)
{
	struct gparam p;
	uint32_t r = rnd(100);

	if (r < 30) {
		p.kind = 0;
		p.idx = rnd(3) ? own : (int)rnd((uint32_t)ntop);
	} else if (r < 65) {
		p.kind = 1;
		p.idx = (int)rnd(NSCALARS);
	} else if (r < 90) {
		p.kind = 2;
		p.idx = (int)rnd(NVECTORS);
	} else {
		p.kind = 3;
		p.idx = (int)rnd(sizeof(pointers) / sizeof(pointers[0]));
	}
	return p;
}

static void render_proto(struct str *o, const struct gfunc *f,
			 const char *prefix, int i, bool names)
{
	if (f->has_ret)
		render_type(o, f, &f->ret);
	else
		sadd(o, "void");
	sadd(o, " %s_%d(", prefix, i);
	for (int j = 0; j < f->np; j++) {
		if (j)
			sadd(o, ", ");
		render_type(o, f, &f->p[j]);
		if (names)
			sadd(o, " a%d", j);
	}
	if (f->np == 0)
		sadd(o, "void");
	sadd(o, ")");
}

/* Its own members and, for anonymous members, the promoted ones (never
 * bit-fields). */
int offsetof_members(int ri, const struct gmem **out, int n)
{
	const struct grec *g = &recs[ri];

	for (int k = 0; k < g->nmem; k++) {
		const struct gmem *m = &g->mem[k];

		if (m->k == M_BITS)
			continue;
		if (m->k == M_REC && !m->named)
			n = offsetof_members(m->idx, out, n);
		else
			out[n++] = m;
	}
	return n;
}

/* ---- the probes ---- */

void gen_probes(uint64_t seed, int ntop, struct str *hdr, struct str *cu,
		struct gen_counts *counts)
{
	rng_state = seed ? seed : 1;
	/* Declarations: records, then functions f_i (defined in the .cu)
	 * and g_i (only declared, called from a kernel). */
	funcs = calloc((size_t)ntop, sizeof(*funcs));

	if (!funcs)
		abort();
	sadd(hdr, "/* generated by ptxabi-conformance, seed 0x%llx */\n"
	     "#include <stdint.h>\n#include <stddef.h>\n"
	     "enum GE { GE_A, GE_B = 1000 };\n",
	     (unsigned long long)seed);
	tops = calloc((size_t)ntop, sizeof(int));
	if (!tops)
		abort();
	for (int i = 0; i < ntop; i++) {
		tops[i] = gen_record(0, -1, i, false, false);
		render_record(hdr, tops[i], 0);
		sadd(hdr, ";\n");
	}
	sadd(hdr, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n");
	for (int i = 0; i < ntop; i++) {
		struct gfunc *f = &funcs[i];

		f->rec = tops[i];
		f->np = 1 + (int)rnd(4);
		int own = (int)rnd((uint32_t)f->np);

		for (int j = 0; j < f->np; j++) {
			f->p[j] = gen_param(tops[i], i + 1);
			if (f->p[j].kind == 0)
				f->p[j].idx = tops[rnd(3) ? i :
						     (int)rnd((uint32_t)i + 1)];
		}
		f->p[own].kind = 0;
		f->p[own].idx = tops[i];
		uint32_t r = rnd(10);

		f->has_ret = r < 8;
		f->ret = r < 5 ? (struct gparam){ 0, tops[i] } :
			 gen_param(tops[i], i + 1);
		if (f->ret.kind == 0)
			f->ret.idx = tops[i];
		for (int pass = 0; pass < 2; pass++) {
			/* ONLY_DEFINED: what `ptxabi check` sees */
			sadd(hdr, pass ? "#ifndef ONLY_DEFINED\n__device__ " :
			     "__device__ ");
			render_proto(hdr, f, pass ? "g" : "f", i, true);
			sadd(hdr, pass ? ";\n#endif\n" : ";\n");
		}
	}
	sadd(hdr, "#ifdef __cplusplus\n}\n#endif\n");

	sadd(cu, "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
	     "#include <cstddef>\n#include \"decls.h\"\n");
	for (int i = 0; i < ntop; i++) {
		sadd(cu, "extern \"C\" __device__ __noinline__ ");
		render_proto(cu, &funcs[i], "f", i, true);
		if (funcs[i].has_ret) {
			sadd(cu, " { ");
			render_type(cu, &funcs[i], &funcs[i].ret);
			sadd(cu, " r{}; return r; }\n");
		} else {
			sadd(cu, " { }\n");
		}
	}
	int nbits = 0, nmembers = 0;

	for (int r = 0; r < nrecs; r++) {
		const struct grec *g = &recs[r];

		const struct gmem *om[512];
		int nom;

		if (g->anon)
			continue;	/* no name: checked through its parent */
		nom = offsetof_members(r, om, 0);
		sadd(cu, "__device__ unsigned long long L_%d[] = { sizeof(%s), "
		     "alignof(%s)", r, g->qual, g->qual);
		for (int k = 0; k < nom; k++) {
			sadd(cu, ", offsetof(%s, %s)", g->qual, om[k]->name);
			nmembers++;
		}
		sadd(cu, " };\n");
		if (g->is_union)
			continue;
		for (int k = 0; k < g->nmem; k++) {
			const struct gmem *m = &g->mem[k];

			if (m->k != M_BITS || !m->named)
				continue;
			nbits++;
			if (m->idx == 13)
				sadd(cu, "__device__ %s B_%d_%d = { .%s = true "
				     "};\n", g->qual, r, k, m->name);
			else if (scalars[m->idx].is_signed)
				sadd(cu, "__device__ %s B_%d_%d = { .%s = -1 "
				     "};\n", g->qual, r, k, m->name);
			else
				sadd(cu, "__device__ %s B_%d_%d = { .%s = "
				     "(~0ULL >> %d) };\n", g->qual, r, k,
				     m->name, 64 - m->bits);
		}
	}
	sadd(cu, "__global__ void conformance_calls(void)\n{\n");
	for (int i = 0; i < ntop; i++) {
		const struct gfunc *f = &funcs[i];

		sadd(cu, "\t{\n");
		for (int j = 0; j < f->np; j++) {
			sadd(cu, "\t\t");
			render_type(cu, f, &f->p[j]);
			sadd(cu, " a%d{};\n", j);
		}
		sadd(cu, "\t\tg_%d(", i);
		for (int j = 0; j < f->np; j++)
			sadd(cu, "%sa%d", j ? ", " : "", j);
		sadd(cu, ");\n\t}\n");
	}
	sadd(cu, "}\n");
	counts->nbits = nbits;
	counts->nmembers = nmembers;
}

void gen_free(void)
{
	for (int r = 0; r < nrecs; r++) {
		free(recs[r].mem);
		free(recs[r].qual);
	}
	free(recs);
	free(tops);
	free(funcs);
}
