/* SPDX-License-Identifier: MIT */
/*
 * Conformance against nvcc: generates random C declarations (nested
 * structs, unions, bit-fields, vector and half types, arrays, pointers),
 * compiles probes of them with `nvcc -ptx` once, and checks that ptxabi
 * computes exactly what nvcc emitted:
 *   - sizeof/alignof/offsetof of every record, read from an initialized
 *     __device__ array in the PTX;
 *   - the position of every named bit-field outside unions, read from a
 *     __device__ record initialized with that field all ones (nvcc cannot
 *     initialize a bit-field in a union: "Internal Compiler Error");
 *   - the .visible .func prototype of a defined extern "C" function, the
 *     .extern .func declaration of a called one, and the .param lines and
 *     call.uni of its call sequence, as text.
 *
 * usage: ptxabi-conformance [SEED [COUNT [KEEP_DIR]]]
 * Exits 77 when no nvcc is found ($NVCC, PATH, $CUDA_HOME, /usr/local/cuda).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptxabi.h"

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

struct str {
	char *s;
	size_t n, cap;
};

static void sadd(struct str *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sadd(struct str *b, const char *fmt, ...)
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

struct scalar {
	const char *name;
	unsigned bits;		/* for bit-fields: the type's width */
	bool is_signed;
};

static const struct scalar scalars[] = {
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

enum mkind { M_SCALAR, M_VECTOR, M_PTR, M_FPTR, M_REC, M_BITS };

struct gmem {
	enum mkind k;
	int idx;		/* scalar/vector/pointer index, or record */
	bool inline_def;	/* M_REC: defined right here */
	bool named;
	int bits;		/* M_BITS: width */
	int dims[2], ndims;
	int align;		/* __attribute__((aligned)) on the member */
	char name[16];
};

struct grec {
	char tag[32];
	char *qual;		/* C++ name: nested types are T1::T1_n2 */
	bool is_union;
	bool nontrivial;	/* holds __half & co., which have copy ctors */
	bool no_half;		/* inside a union: must not hold them */
	bool anon;		/* anonymous member: members promoted */
	int weight;		/* scalar leaves: keeps records (and PTX) small */
	int align;
	int parent;
	struct gmem *mem;
	int nmem;
};

static struct grec *recs;
static int nrecs, caprecs;
static int *tops;		/* record index of top-level record i */

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

static const char *rec_kw(int ri)
{
	return recs[ri].is_union ? "union" : "struct";
}

/* A parameter or return type: 0 = the function's own record. */
struct gparam {
	int kind;		/* 0 record, 1 scalar, 2 vector, 3 pointer */
	int idx;
};

struct gfunc {
	int rec;
	bool has_ret;
	struct gparam ret;
	struct gparam p[5];
	int np;
};

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

/* ---- nvcc ---- */

static const char *find_nvcc(char *buf, size_t n)
{
	const char *env = getenv("NVCC");

	if (env && access(env, X_OK) == 0)
		return env;
	const char *path = getenv("PATH");

	while (path && *path) {
		size_t len = strcspn(path, ":");

		snprintf(buf, n, "%.*s/nvcc", (int)len, path);
		if (len && access(buf, X_OK) == 0)
			return buf;
		path += len + (path[len] == ':');
	}
	env = getenv("CUDA_HOME");
	if (env) {
		snprintf(buf, n, "%s/bin/nvcc", env);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	if (access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
		return "/usr/local/cuda/bin/nvcc";
	return NULL;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct str b = { 0 };
	char chunk[65536];
	size_t n;

	if (!f)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		sadd(&b, "%.*s", (int)n, chunk);
	fclose(f);
	if (len)
		*len = b.n;
	return b.s ? b.s : calloc(1, 1);
}

static int write_file(const char *path, const struct str *s)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fwrite(s->s, 1, s->n, f);
	return fclose(f);
}

/* ---- reading the PTX ---- */

struct gvar {
	char name[64];
	unsigned char *bytes;
	size_t size;
};

static struct gvar *gvars;
static size_t ngvars;

/* ".visible .global .align 8 .b8 L_3[24] = {8, 0, ...};" */
static void read_globals(char *ptx)
{
	size_t cap = 0;

	for (char *line = strtok(ptx, "\n"); line; line = strtok(NULL, "\n")) {
		char *g = strstr(line, ".global ");

		if (!g || strncmp(line, "//", 2) == 0)
			continue;
		char *p = strstr(g, ".align ");

		if (!p)
			continue;
		p = strchr(p + 7, ' ');
		if (!p)
			continue;
		p++;
		unsigned ebits = 0;

		if (p[0] == '.' && strchr("bus", p[1]))
			ebits = (unsigned)strtoul(p + 2, &p, 10);
		if (!ebits || *p != ' ')
			continue;
		p++;
		char *br = strchr(p, '[');

		if (!br)
			continue;
		struct gvar v = { 0 };

		snprintf(v.name, sizeof(v.name), "%.*s", (int)(br - p), p);
		size_t count = strtoul(br + 1, NULL, 10);

		v.size = count * ebits / 8;
		v.bytes = calloc(v.size + 8, 1);
		char *init = strchr(br, '{');
		size_t at = 0;

		while (init && *init && *init != '}' && at < v.size) {
			init++;
			while (*init == ' ')
				init++;
			if (*init == '}')
				break;
			unsigned long long x = strtoull(init, &init, 0);

			for (unsigned b = 0; b < ebits / 8 && at < v.size; b++)
				v.bytes[at++] = (unsigned char)(x >> (8 * b));
			while (*init && *init != ',' && *init != '}')
				init++;
		}
		if (ngvars == cap) {
			cap = cap ? cap * 2 : 256;
			gvars = realloc(gvars, cap * sizeof(*gvars));
			if (!gvars)
				abort();
		}
		gvars[ngvars++] = v;
	}
}

static const struct gvar *gvar(const char *name)
{
	for (size_t i = 0; i < ngvars; i++)
		if (strcmp(gvars[i].name, name) == 0)
			return &gvars[i];
	return NULL;
}

static unsigned long long u64_at(const struct gvar *v, size_t i)
{
	unsigned long long x = 0;

	for (unsigned b = 0; b < 8; b++)
		if (i * 8 + b < v->size)
			x |= (unsigned long long)v->bytes[i * 8 + b] << (8 * b);
	return x;
}

/* The lines of a call sequence that the prototype determines: .param
 * declarations and the call itself (not the register moves). */
static char *callseq_skeleton(const char *text)
{
	struct str b = { 0 };
	const char *p = text;

	while (p && *p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const char *s = p;

		while (len && (*s == '\t' || *s == ' ')) {
			s++;
			len--;
		}
		if (strncmp(s, ".param", 6) == 0 ||
		    strncmp(s, "call.uni", 8) == 0 ||
		    strncmp(s, "param", 5) == 0 || strncmp(s, "g_", 2) == 0 ||
		    (len == 1 && *s == '(') || (len == 2 && s[0] == ')'))
			sadd(&b, "%.*s\n", (int)len, s);
		p = e ? e + 1 : NULL;
	}
	return b.s ? b.s : calloc(1, 1);
}

/* nvcc's prototypes and call sequences, found in one pass over the PTX:
 * kind 'v' = ".visible .func" definition header, 'e' = ".extern .func"
 * declaration, 'c' = call sequence skeleton; name = the function. */
struct piece {
	char kind;
	char name[64];
	char *text;
};

static struct piece *pieces;
static size_t npieces, cappieces;

static void add_piece(char kind, const char *name, size_t nlen, char *text)
{
	if (npieces == cappieces) {
		cappieces = cappieces ? cappieces * 2 : 1024;
		pieces = realloc(pieces, cappieces * sizeof(*pieces));
		if (!pieces)
			abort();
	}
	struct piece *pc = &pieces[npieces++];

	pc->kind = kind;
	snprintf(pc->name, sizeof(pc->name), "%.*s", (int)nlen, name);
	pc->text = text;
}

static const char *next_line(const char *p)
{
	const char *e = strchr(p, '\n');

	return e ? e + 1 : p + strlen(p);
}

static void index_ptx(const char *ptx)
{
	const char *p = ptx;

	while (*p) {
		const char *q = p;
		struct str b = { 0 };

		if (strncmp(p, ".visible .func", 14) == 0) {
			/* header through ")" alone, or a line ending "()" */
			const char *paren = strchr(p, '(');
			const char *eol = strchr(p, '\n');
			const char *name = NULL;

			/* the name precedes the '(' that opens the params:
			 * skip a "(.param ...)" return declaration */
			if (paren && eol && paren < eol && paren[1] == '.') {
				paren = strchr(strchr(paren, ')') + 1, '(');
			}
			if (paren && eol && paren < eol) {
				name = paren;
				while (name > p && name[-1] != ' ')
					name--;
			}
			for (;;) {
				const char *e = strchr(q, '\n');
				size_t len = e ? (size_t)(e - q) : strlen(q);

				sadd(&b, "%.*s\n", (int)len, q);
				if ((len == 1 && *q == ')') ||
				    (len >= 2 && q[len - 2] == '(' &&
				     q[len - 1] == ')') || !e)
					break;
				q = e + 1;
			}
			if (name)
				add_piece('v', name, (size_t)(paren - name), b.s);
			else
				free(b.s);
			p = next_line(q);
			continue;
		}
		if (strncmp(p, ".extern .func", 13) == 0) {
			const char *eol = strchr(p, '\n');
			const char *name = eol;

			while (name && name > p && name[-1] != ' ')
				name--;
			for (;;) {
				const char *e = strchr(q, '\n');
				size_t len = e ? (size_t)(e - q) : strlen(q);

				sadd(&b, "%.*s\n", (int)len, q);
				if ((len == 1 && *q == ';') || !e)
					break;
				q = e + 1;
			}
			if (name && eol)
				add_piece('e', name, (size_t)(eol - name), b.s);
			else
				free(b.s);
			p = next_line(q);
			continue;
		}
		if (strncmp(p, "\t{ // callseq", 13) == 0) {
			const char *callee = NULL;
			size_t clen = 0;

			for (;;) {
				const char *e = strchr(q, '\n');
				size_t len = e ? (size_t)(e - q) : strlen(q);

				sadd(&b, "%.*s\n", (int)len, q);
				if (strncmp(q, "\tcall.uni", 9) == 0 && e) {
					callee = e + 2;	/* "\tname, " */
					clen = strcspn(callee, ",\n");
				}
				if (strncmp(q, "\t} // callseq", 13) == 0 || !e)
					break;
				q = e + 1;
			}
			if (callee) {
				char *sk = callseq_skeleton(b.s);

				add_piece('c', callee, clen, sk);
			}
			free(b.s);
			p = next_line(q);
			continue;
		}
		p = next_line(p);
	}
}

static const char *piece(char kind, const char *name)
{
	for (size_t i = 0; i < npieces; i++)
		if (pieces[i].kind == kind && strcmp(pieces[i].name, name) == 0)
			return pieces[i].text;
	return NULL;
}

static char *tool_text(ptxabi_ctx *ctx, unsigned what, const char *name)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	if (ptxabi_print(ctx, f, what, name))
		fprintf(f, "ERROR %s\n", ptxabi_error(ctx));
	fclose(f);
	return buf;
}

static int mismatches;

/* Everything main() allocates, freed at exit on every path so that
 * LeakSanitizer stays quiet in the sanitizer build. */
static struct str hdr, cu;
static struct gfunc *funcs;
static char *ptx, *ptx_copy;

static void cleanup(void)
{
	for (int r = 0; r < nrecs; r++) {
		free(recs[r].mem);
		free(recs[r].qual);
	}
	free(recs);
	free(tops);
	for (size_t i = 0; i < ngvars; i++)
		free(gvars[i].bytes);
	free(gvars);
	free(hdr.s);
	free(cu.s);
	free(funcs);
	free(ptx);
	free(ptx_copy);
	for (size_t i = 0; i < npieces; i++)
		free(pieces[i].text);
	free(pieces);
}

static void mismatch(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void mismatch(const char *fmt, ...)
{
	va_list ap;

	if (++mismatches > 60)
		return;
	fputs("MISMATCH ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

/* The members offsetof can name in record ri, in order: its own and, for
 * anonymous members, the promoted ones (never bit-fields). */
static int offsetof_members(int ri, const struct gmem **out, int n)
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

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x5eed2026;
	int ntop = argc > 2 ? atoi(argv[2]) : 320;
	const char *keep = argc > 3 ? argv[3] : NULL;
	char nvbuf[4096];
	const char *nvcc = find_nvcc(nvbuf, sizeof(nvbuf));

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!nvcc) {
		printf("SKIP: nvcc not found ($NVCC, PATH, $CUDA_HOME/bin, "
		       "/usr/local/cuda/bin): cannot compare with nvcc\n");
		return 77;
	}
	rng_state = seed ? seed : 1;
	printf("seed 0x%llx, %d top-level records, nvcc %s\n",
	       (unsigned long long)seed, ntop, nvcc);

	/* Declarations: records, then functions f_i (defined in the .cu)
	 * and g_i (only declared, called from a kernel). */
	atexit(cleanup);
	funcs = calloc((size_t)ntop, sizeof(*funcs));

	if (!funcs)
		abort();
	sadd(&hdr, "/* generated by ptxabi-conformance, seed 0x%llx */\n"
	     "#include <stdint.h>\n#include <stddef.h>\n"
	     "enum GE { GE_A, GE_B = 1000 };\n",
	     (unsigned long long)seed);
	tops = calloc((size_t)ntop, sizeof(int));
	if (!tops)
		abort();
	for (int i = 0; i < ntop; i++) {
		tops[i] = gen_record(0, -1, i, false, false);
		render_record(&hdr, tops[i], 0);
		sadd(&hdr, ";\n");
	}
	sadd(&hdr, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n");
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
			sadd(&hdr, pass ? "#ifndef ONLY_DEFINED\n__device__ " :
			     "__device__ ");
			render_proto(&hdr, f, pass ? "g" : "f", i, true);
			sadd(&hdr, pass ? ";\n#endif\n" : ";\n");
		}
	}
	sadd(&hdr, "#ifdef __cplusplus\n}\n#endif\n");

	sadd(&cu, "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
	     "#include <cstddef>\n#include \"decls.h\"\n");
	for (int i = 0; i < ntop; i++) {
		sadd(&cu, "extern \"C\" __device__ __noinline__ ");
		render_proto(&cu, &funcs[i], "f", i, true);
		if (funcs[i].has_ret) {
			sadd(&cu, " { ");
			render_type(&cu, &funcs[i], &funcs[i].ret);
			sadd(&cu, " r{}; return r; }\n");
		} else {
			sadd(&cu, " { }\n");
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
		sadd(&cu, "__device__ unsigned long long L_%d[] = { sizeof(%s), "
		     "alignof(%s)", r, g->qual, g->qual);
		for (int k = 0; k < nom; k++) {
			sadd(&cu, ", offsetof(%s, %s)", g->qual, om[k]->name);
			nmembers++;
		}
		sadd(&cu, " };\n");
		if (g->is_union)
			continue;
		for (int k = 0; k < g->nmem; k++) {
			const struct gmem *m = &g->mem[k];

			if (m->k != M_BITS || !m->named)
				continue;
			nbits++;
			if (m->idx == 13)
				sadd(&cu, "__device__ %s B_%d_%d = { .%s = true "
				     "};\n", g->qual, r, k, m->name);
			else if (scalars[m->idx].is_signed)
				sadd(&cu, "__device__ %s B_%d_%d = { .%s = -1 "
				     "};\n", g->qual, r, k, m->name);
			else
				sadd(&cu, "__device__ %s B_%d_%d = { .%s = "
				     "(~0ULL >> %d) };\n", g->qual, r, k,
				     m->name, 64 - m->bits);
		}
	}
	sadd(&cu, "__global__ void conformance_calls(void)\n{\n");
	for (int i = 0; i < ntop; i++) {
		const struct gfunc *f = &funcs[i];

		sadd(&cu, "\t{\n");
		for (int j = 0; j < f->np; j++) {
			sadd(&cu, "\t\t");
			render_type(&cu, f, &f->p[j]);
			sadd(&cu, " a%d{};\n", j);
		}
		sadd(&cu, "\t\tg_%d(", i);
		for (int j = 0; j < f->np; j++)
			sadd(&cu, "%sa%d", j ? ", " : "", j);
		sadd(&cu, ");\n\t}\n");
	}
	sadd(&cu, "}\n");

	/* Compile once. */
	char dir[4096];

	if (keep) {
		snprintf(dir, sizeof(dir), "%s", keep);
		mkdir(dir, 0755);
	} else {
		const char *tmp = getenv("TMPDIR");

		snprintf(dir, sizeof(dir), "%s/ptxabi-conf-XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			return 1;
		}
	}
	char hpath[4200], cpath[4200], ppath[4200], epath[4200], cmd[20000];

	snprintf(hpath, sizeof(hpath), "%s/decls.h", dir);
	snprintf(cpath, sizeof(cpath), "%s/probe.cu", dir);
	snprintf(ppath, sizeof(ppath), "%s/probe.ptx", dir);
	snprintf(epath, sizeof(epath), "%s/nvcc.log", dir);
	if (write_file(hpath, &hdr) || write_file(cpath, &cu)) {
		perror(dir);
		return 1;
	}
	snprintf(cmd, sizeof(cmd), "'%s' -ptx -rdc=true -arch=sm_80 "
		 "-std=c++20 --diag-suppress=108,1160 -o '%s' '%s' > '%s' 2>&1", nvcc, ppath, cpath,
		 epath);
	printf("running: %s\n", cmd);
	if (system(cmd) != 0) {
		char *log = read_all(epath, NULL);

		printf("FAIL: nvcc failed on the generated probes (kept in "
		       "%s):\n%.4000s\n", dir, log ? log : "");
		free(log);
		return 1;
	}
	size_t ptxlen;
	ptx = read_all(ppath, &ptxlen);
	ptx_copy = ptx ? strdup(ptx) : NULL;
	if (!ptx_copy) {
		printf("FAIL: cannot read %s\n", ppath);
		return 1;
	}

	read_globals(ptx_copy);

	/* What the tool says. */
	ptxabi_ctx *ctx = ptxabi_new();

	if (!ctx || ptxabi_parse(ctx, hdr.s, hdr.n, hpath)) {
		printf("FAIL: ptxabi cannot read the declarations: %s\n",
		       ctx ? ptxabi_error(ctx) : "out of memory");
		ptxabi_free(ctx);
		return 1;
	}
	int nchecked = 0;

	for (int r = 0; r < nrecs; r++) {
		const struct grec *g = &recs[r];
		char tname[64], vname[64];
		struct ptxabi_layout lay;
		const struct gvar *v;

		if (g->anon)
			continue;
		snprintf(tname, sizeof(tname), "%s %s", rec_kw(r), g->tag);
		snprintf(vname, sizeof(vname), "L_%d", r);
		v = gvar(vname);
		if (!v) {
			mismatch("%s: no %s in the PTX", g->qual, vname);
			continue;
		}
		if (ptxabi_type_layout(ctx, tname, &lay)) {
			mismatch("%s: tool error %s", g->qual, ptxabi_error(ctx));
			continue;
		}
		if (lay.size != u64_at(v, 0) || lay.align != u64_at(v, 1))
			mismatch("%s: size/align tool %zu/%zu, nvcc %llu/%llu",
				 g->qual, lay.size, lay.align, u64_at(v, 0),
				 u64_at(v, 1));
		nchecked += 2;

		const struct gmem *om[512];
		int nom = offsetof_members(r, om, 0);

		for (int k = 0; k < nom; k++) {
			struct ptxabi_member pm;
			unsigned long long off = u64_at(v, 2 + (size_t)k);

			nchecked++;
			if (ptxabi_member(ctx, tname, om[k]->name, &pm))
				mismatch("%s.%s: tool error %s", g->qual,
					 om[k]->name, ptxabi_error(ctx));
			else if (pm.offset != off)
				mismatch("%s.%s: offset tool %zu, nvcc %llu",
					 g->qual, om[k]->name, pm.offset, off);
		}
		for (int k = 0; k < g->nmem; k++) {
			const struct gmem *m = &g->mem[k];
			struct ptxabi_member pm;

			if (m->k != M_BITS || !m->named || g->is_union)
				continue;
			if (ptxabi_member(ctx, tname, m->name, &pm)) {
				mismatch("%s.%s: tool error %s", g->qual,
					 m->name, ptxabi_error(ctx));
				continue;
			}
			nchecked++;
			char bname[64];

			snprintf(bname, sizeof(bname), "B_%d_%d", r, k);
			const struct gvar *b = gvar(bname);

			if (!b) {
				mismatch("%s.%s: no %s in the PTX", g->qual,
					 m->name, bname);
				continue;
			}
			long lo = -1, hi = -1;

			for (size_t bit = 0; bit < b->size * 8; bit++)
				if (b->bytes[bit / 8] >> (bit % 8) & 1) {
					if (lo < 0)
						lo = (long)bit;
					hi = (long)bit;
				}
			long tool_lo = (long)(pm.offset * 8 + pm.bit_offset);
			long want_w = m->idx == 13 ? 1 : m->bits;

			if (lo != tool_lo || hi - lo + 1 != want_w ||
			    (long)pm.bit_width != m->bits)
				mismatch("%s.%s: bits tool %ld..%ld, nvcc "
					 "%ld..%ld", g->qual, m->name, tool_lo,
					 tool_lo + (long)pm.bit_width - 1, lo,
					 hi);
		}
	}
	index_ptx(ptx);
	for (int i = 0; i < ntop; i++) {
		char fname[32], gname[32];
		const char *theirs;

		snprintf(fname, sizeof(fname), "f_%d", i);
		snprintf(gname, sizeof(gname), "g_%d", i);
		char *mine = tool_text(ctx, PTXABI_PROTOS, fname);

		theirs = piece('v', fname);
		if (!theirs || strcmp(mine, theirs))
			mismatch("%s prototype:\n--- ptxabi\n%s--- nvcc\n%s",
				 fname, mine, theirs ? theirs : "(not found)\n");
		free(mine);

		mine = tool_text(ctx, PTXABI_EXTERNS, gname);
		theirs = piece('e', gname);
		if (!theirs || strcmp(mine, theirs))
			mismatch("%s declaration:\n--- ptxabi\n%s--- nvcc\n%s",
				 gname, mine, theirs ? theirs : "(not found)\n");
		free(mine);

		char *call = tool_text(ctx, PTXABI_CALLS, gname);

		mine = callseq_skeleton(call);
		theirs = piece('c', gname);
		if (!theirs || strcmp(mine, theirs))
			mismatch("%s call sequence:\n--- ptxabi\n%s--- nvcc\n%s",
				 gname, mine, theirs ? theirs : "(not found)\n");
		free(call);
		free(mine);
		nchecked += 3;
	}

	/* `ptxabi check` must accept nvcc's own prototypes without a
	 * word: every f_i defined, matching, spelled the same. */
	ptxabi_ctx *cctx = ptxabi_new();
	const char *ppaths[1] = { ppath };
	char *rep = NULL;
	size_t replen = 0;
	FILE *rf = open_memstream(&rep, &replen);

	if (!cctx || !rf || ptxabi_define(cctx, "ONLY_DEFINED", NULL) ||
	    ptxabi_parse(cctx, hdr.s, hdr.n, hpath)) {
		mismatch("check: cannot set up: %s",
			 cctx ? ptxabi_error(cctx) : "out of memory");
	} else {
		int errs = ptxabi_check_ptx(cctx, ppaths, 1, rf);

		fflush(rf);
		if (errs != 0 || !strstr(rep, " 0 error(s), 0 warning(s)\n"))
			mismatch("ptxabi check on nvcc's PTX: %d error(s):\n"
				 "%.3000s", errs, rep);
		nchecked++;
	}
	if (rf)
		fclose(rf);
	free(rep);
	ptxabi_free(cctx);
	int nanon = 0;

	for (int r = 0; r < nrecs; r++)
		nanon += recs[r].anon;
	printf("%d records (%d top-level, %d anonymous members), %d members "
	       "by offsetof, %d bit-fields, %d functions x (definition, "
	       "declaration, call sequence), ptxabi check: %d checks, %d "
	       "mismatch(es)\n", nrecs, ntop, nanon, nmembers, nbits, ntop,
	       nchecked, mismatches);
	ptxabi_free(ctx);
	if (mismatches) {
		printf("FAIL: ptxabi disagrees with nvcc; inputs kept in %s\n",
		       dir);
		return 1;
	}
	if (!keep) {
		unlink(hpath);
		unlink(cpath);
		unlink(ppath);
		unlink(epath);
		rmdir(dir);
	}
	printf("PASS: ptxabi agrees with nvcc on every layout and prototype\n");
	return 0;
}
