/* SPDX-License-Identifier: MIT */
/*
 * ptxabi-conformance's parts: the generator of random declarations and
 * their probes (conf_gen.c), the nvcc driver (conf_nvcc.c), the PTX indexer
 * (conf_ptx.c); conformance.c compares what nvcc emitted with ptxabi.
 */
#ifndef CONF_H
#define CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- growable strings (conf_gen.c) ---- */

struct str {
	char *s;
	size_t n, cap;
};

void sadd(struct str *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- the random declarations (conf_gen.c) ---- */

struct scalar {
	const char *name;
	unsigned bits;		/* for bit-fields: the type's width */
	bool is_signed;
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

extern const struct scalar scalars[];
extern struct grec *recs;	/* every record, nested ones included */
extern int nrecs;
extern int *tops;		/* record index of top-level record i */

struct gen_counts {
	int nmembers;		/* members named in offsetof probes */
	int nbits;		/* bit-field probes */
};

/* Fills HDR with NTOP random top-level records and, per record, a defined
 * f_i and a declared-only g_i (hidden under ONLY_DEFINED); CU with the
 * probes: sizeof/alignof/offsetof arrays L_r, one record B_r_k per named
 * bit-field outside unions initialized all ones, the f_i definitions and a
 * kernel calling every g_i.  Deterministic in SEED. */
void gen_probes(uint64_t seed, int ntop, struct str *hdr, struct str *cu,
		struct gen_counts *counts);
/* The members offsetof can name in record ri, in order, appended to OUT
 * from index N; returns the new count. */
int offsetof_members(int ri, const struct gmem **out, int n);
const char *rec_kw(int ri);
void gen_free(void);

/* ---- nvcc (conf_nvcc.c) ---- */

/* The nvcc meson found (scripts/find-cuda.sh), or NULL: none. */
const char *find_nvcc(void);
char *read_all(const char *path, size_t *len);

struct probe {
	char dir[4096];
	char hpath[4200], cpath[4200], ppath[4200], epath[4200];
};

/* Writes HDR as decls.h and CU as probe.cu into KEEP (or a new temporary
 * folder) and runs `nvcc -ptx -rdc=true -arch=sm_80` on them once, into
 * probe.ptx.  0, or -1 after printing why (the files are then kept). */
int nvcc_compile(const char *nvcc, const char *keep, const struct str *hdr,
		 const struct str *cu, struct probe *pr);
void probe_remove(const struct probe *pr);

/* ---- reading the PTX (conf_ptx.c) ---- */

struct gvar {
	char name[64];
	unsigned char *bytes;
	size_t size;
};

/* Records every initialized .global array of PTX (which it tokenizes in
 * place); gvar() finds one by name, u64_at() reads its i-th u64. */
void read_globals(char *ptx);
const struct gvar *gvar(const char *name);
unsigned long long u64_at(const struct gvar *v, size_t i);
/* The lines of a call sequence that the prototype determines. */
char *callseq_skeleton(const char *text);
/* Indexes nvcc's .visible .func headers ('v'), .extern .func declarations
 * ('e') and call sequence skeletons ('c') by function name. */
void index_ptx(const char *ptx);
const char *piece(char kind, const char *name);
void ptx_free(void);

#endif
