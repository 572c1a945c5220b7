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
 * This file compares; conf_gen.c generates, conf_nvcc.c runs nvcc,
 * conf_ptx.c reads the PTX.
 *
 * usage: ptxabi-conformance [SEED [COUNT [KEEP_DIR]]]
 * A skip (1..0 # SKIP) when the build found no nvcc (scripts/find-cuda.sh).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "ptxabi.h"
#include "tap.h"

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
static char *ptx, *ptx_copy;

static void cleanup(void)
{
	gen_free();
	ptx_free();
	free(hdr.s);
	free(cu.s);
	free(ptx);
	free(ptx_copy);
}

static void mismatch(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void mismatch(const char *fmt, ...)
{
	va_list ap;

	char what[1024];

	if (++mismatches > 60)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	tap_diag("MISMATCH %s", what);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x5eed2026;
	int ntop = argc > 2 ? atoi(argv[2]) : 320;
	const char *keep = argc > 3 ? argv[3] : NULL;
	const char *nvcc = find_nvcc();

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!nvcc) {
		tap_skip_all("the build found no nvcc (scripts/find-cuda.sh, "
			     "meson option cuda-home): cannot compare with nvcc");
	}
	tap_diag("seed 0x%llx, %d top-level records, nvcc %s",
	       (unsigned long long)seed, ntop, nvcc);

	/* Declarations: records, then functions f_i (defined in the .cu)
	 * and g_i (only declared, called from a kernel). */
	atexit(cleanup);

	struct gen_counts counts;
	struct probe pr;

	gen_probes(seed, ntop, &hdr, &cu, &counts);
	int nbits = counts.nbits, nmembers = counts.nmembers;

	/* Compile once. */
	if (nvcc_compile(nvcc, keep, &hdr, &cu, &pr))
		return tap_done();

	size_t ptxlen;
	ptx = read_all(pr.ppath, &ptxlen);
	ptx_copy = ptx ? strdup(ptx) : NULL;
	if (!ptx_copy) {
		tap_ok(0, "read nvcc's PTX %s", pr.ppath);
		return tap_done();
	}

	read_globals(ptx_copy);

	/* What the tool says. */
	ptxabi_ctx *ctx = ptxabi_new();

	if (!ctx || ptxabi_parse(ctx, hdr.s, hdr.n, pr.hpath)) {
		tap_ok(0, "ptxabi reads the declarations: %s",
		       ctx ? ptxabi_error(ctx) : "out of memory");
		ptxabi_free(ctx);
		return tap_done();
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
	const char *ppaths[1] = { pr.ppath };
	char *rep = NULL;
	size_t replen = 0;
	FILE *rf = open_memstream(&rep, &replen);

	if (!cctx || !rf || ptxabi_define(cctx, "ONLY_DEFINED", NULL) ||
	    ptxabi_parse(cctx, hdr.s, hdr.n, pr.hpath)) {
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
	tap_diag("%d records (%d top-level, %d anonymous members), %d members "
		 "by offsetof, %d bit-fields, %d functions x (definition, "
		 "declaration, call sequence), ptxabi check: %d checks, %d "
		 "mismatch(es)", nrecs, ntop, nanon, nmembers, nbits, ntop,
	       nchecked, mismatches);
	ptxabi_free(ctx);
	if (!tap_ok(!mismatches, "ptxabi agrees with nvcc on every layout and prototype")) {
		tap_diag("inputs kept in %s", pr.dir);
		return tap_done();
	}
	if (!keep)
		probe_remove(&pr);
	return tap_done();
}
