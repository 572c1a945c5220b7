/* SPDX-License-Identifier: MIT */
/*
 * Reads .func prototypes out of PTX text and checks them against the C
 * declarations.  The device linker rejects some mismatches (.f64 vs .b64,
 * scalar vs byte array, missing return) but silently accepts a wrong
 * .align on an aggregate, so a prototype that links is not necessarily
 * right: this check compares count, kind, size and alignment of every
 * parameter and of the return value.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ptxabi_internal.h"

struct pdecl {
	bool reg_space;		/* .reg instead of .param */
	size_t align;		/* .align N, 0: none given */
	char tletter;		/* b, u, s, f (or p for .pred) */
	unsigned bits;
	size_t count;		/* array elements, 0: scalar */
	const char *text;
};

struct pfunc {
	const char *name, *file;
	unsigned line;
	const char *linkage;	/* ".visible", ".extern", ".weak", "" */
	bool has_ret;
	struct pdecl ret;
	struct pdecl *params;
	size_t nparams;
};

struct ptok {
	const char *s;
	size_t len;
	unsigned line;
};

static bool ptok_is(const struct ptok *t, const char *s)
{
	return t->len == strlen(s) && memcmp(t->s, s, t->len) == 0;
}

static void ptx_tokens(ptxabi_ctx *ctx, const char *text, size_t len,
		       struct ptok **out, size_t *n)
{
	size_t cap = 0;
	unsigned line = 1;
	const char *p = text, *end = text + len;

	*out = NULL;
	*n = 0;
	while (p < end) {
		if (*p == '\n') {
			line++;
			p++;
			continue;
		}
		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		if (p + 1 < end && p[0] == '/' && p[1] == '/') {
			while (p < end && *p != '\n')
				p++;
			continue;
		}
		if (p + 1 < end && p[0] == '/' && p[1] == '*') {
			p += 2;
			while (p + 1 < end && !(p[0] == '*' && p[1] == '/')) {
				if (*p == '\n')
					line++;
				p++;
			}
			p += 2;
			continue;
		}
		const char *s = p;

		if (isalnum((unsigned char)*p) || strchr("._$%", *p)) {
			p++;
			while (p < end && (isalnum((unsigned char)*p) ||
					   strchr("_$.", *p)))
				p++;
		} else if (*p == '"') {
			p++;
			while (p < end && *p != '"' && *p != '\n')
				p++;
			if (p < end && *p == '"')
				p++;
		} else {
			p++;
		}
		*out = vec_grow(ctx, *out, &cap, *n + 1, sizeof(**out));
		(*out)[(*n)++] = (struct ptok){ s, (size_t)(p - s), line };
	}
}

/* One ".param [.align N] .type name[[N]]" starting at t[*i]. */
static bool parse_pdecl(ptxabi_ctx *ctx, struct ptok *t, size_t n, size_t *i,
			struct pdecl *d)
{
	size_t k = *i;
	const char *start;

	memset(d, 0, sizeof(*d));
	if (k >= n)
		return false;
	start = t[k].s;
	if (ptok_is(&t[k], ".reg"))
		d->reg_space = true;
	else if (!ptok_is(&t[k], ".param"))
		return false;
	k++;
	while (k < n && t[k].s[0] == '.' && !ptok_is(&t[k], ".align") &&
	       !(t[k].len >= 3 && strchr("busf", t[k].s[1]) &&
		 isdigit((unsigned char)t[k].s[2])) && !ptok_is(&t[k], ".pred"))
		k++;		/* state-space qualifiers such as .ptr */
	if (k < n && ptok_is(&t[k], ".align")) {
		k++;
		if (k >= n)
			return false;
		d->align = strtoul(t[k].s, NULL, 10);
		k++;
	}
	if (k >= n || t[k].s[0] != '.')
		return false;
	if (ptok_is(&t[k], ".pred")) {
		d->tletter = 'p';
		d->bits = 1;
	} else {
		d->tletter = t[k].s[1];
		d->bits = (unsigned)strtoul(t[k].s + 2, NULL, 10);
	}
	k++;
	if (k >= n)
		return false;
	k++;			/* the name */
	if (k < n && ptok_is(&t[k], "[")) {
		if (k + 2 >= n || !ptok_is(&t[k + 2], "]"))
			return false;
		d->count = strtoul(t[k + 1].s, NULL, 10);
		k += 3;
	}
	d->text = ar_strndup(ctx, start, (size_t)(t[k - 1].s + t[k - 1].len -
						   start));
	/* Collapse the whitespace of the original into single spaces. */
	char *w = (char *)d->text, *r = (char *)d->text;
	bool sp = false;

	for (; *r; r++) {
		if (isspace((unsigned char)*r)) {
			sp = true;
			continue;
		}
		if (sp && w != d->text)
			*w++ = ' ';
		sp = false;
		*w++ = *r;
	}
	*w = 0;
	*i = k;
	return true;
}

static void scan_file(ptxabi_ctx *ctx, const char *path, struct pfunc **fv,
		      size_t *nf, size_t *capf)
{
	FILE *f = fopen(path, "rb");

	if (!f) {
		struct loc at = { path, 0, 0 };

		fail(ctx, at, "cannot open PTX file");
	}
	size_t cap = 1 << 16, len = 0;
	char *buf = ar_alloc(ctx, cap);

	for (;;) {
		size_t r = fread(buf + len, 1, cap - len, f);

		len += r;
		if (r == 0)
			break;
		if (len == cap) {
			char *nb = ar_alloc(ctx, cap * 2);

			memcpy(nb, buf, len);
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);

	struct ptok *t;
	size_t n;

	ptx_tokens(ctx, buf, len, &t, &n);
	for (size_t i = 0; i < n; i++) {
		if (!ptok_is(&t[i], ".func"))
			continue;
		struct pfunc pf = { .file = path, .line = t[i].line,
				    .linkage = "" };

		if (i > 0 && (ptok_is(&t[i - 1], ".visible") ||
			      ptok_is(&t[i - 1], ".extern") ||
			      ptok_is(&t[i - 1], ".weak")))
			pf.linkage = ar_strndup(ctx, t[i - 1].s, t[i - 1].len);
		size_t k = i + 1;
		struct loc at = { path, t[i].line, 1 };

		if (k < n && ptok_is(&t[k], "(")) {
			k++;
			if (!parse_pdecl(ctx, t, n, &k, &pf.ret) ||
			    k >= n || !ptok_is(&t[k], ")"))
				fail(ctx, at, "cannot read the return value "
				     "declaration of this .func");
			pf.has_ret = true;
			k++;
		}
		if (k >= n)
			fail(ctx, at, ".func without a name");
		pf.name = ar_strndup(ctx, t[k].s, t[k].len);
		k++;
		size_t pcap = 0;

		if (k < n && ptok_is(&t[k], "(")) {
			k++;
			while (k < n && !ptok_is(&t[k], ")")) {
				struct pdecl d;

				if (!parse_pdecl(ctx, t, n, &k, &d))
					fail(ctx, at, "cannot read the "
					     "parameters of .func %s", pf.name);
				pf.params = vec_grow(ctx, pf.params, &pcap,
						     pf.nparams + 1,
						     sizeof(d));
				pf.params[pf.nparams++] = d;
				if (k < n && ptok_is(&t[k], ","))
					k++;
			}
		}
		*fv = vec_grow(ctx, *fv, capf, *nf + 1, sizeof(pf));
		(*fv)[(*nf)++] = pf;
		i = k;
	}
}

struct counts {
	int errors, warnings;
	char spelled[512];	/* this function's spelling differences */
};

/* Spelling differences the linker accepts are gathered into one warning
 * per prototype: .u32/.s64 for .b32/.b64 is the guide's own table. */
static void note_spelling(struct counts *c, const char *what,
			  const struct pdecl *d)
{
	size_t n = strlen(c->spelled);

	snprintf(c->spelled + n, sizeof(c->spelled) - n, "%s%s '%s'",
		 n ? ", " : "", what, d->text);
}

static void compare(ptxabi_ctx *ctx, FILE *rep, const struct pfunc *pf,
		    const char *what, const struct pdecl *d,
		    const struct pspec *want, const char *want_text,
		    struct counts *c)
{
	const char *why = NULL;

	if (d->reg_space) {
		why = "is in the .reg state space; ABI parameters are .param";
	} else if (!want->agg) {
		if (d->count)
			why = "is a byte array; nvcc passes this type as a "
			      "scalar";
		else if (d->bits != want->bits)
			why = ar_printf(ctx, "has %u bits, expected %u", d->bits,
					want->bits);
		else if (d->tletter == 'f' || d->tletter == 'p')
			why = "is typed; nvcc declares it untyped and the "
			      "device linker rejects the difference";
		else if (d->tletter != 'b')
			note_spelling(c, what, d);
	} else {
		size_t elem = d->bits / 8 ? d->bits / 8 : 1;
		size_t bytes = elem * (d->count ? d->count : 1);
		size_t align = d->align ? d->align : elem;

		if (!d->count)
			why = "is a scalar; nvcc passes this type as a byte "
			      "array";
		else if (bytes != want->size)
			why = ar_printf(ctx, "has %zu bytes, expected %zu", bytes,
					want->size);
		else if (align != want->align)
			why = ar_printf(ctx, "is aligned to %zu, expected %zu "
					"(the device linker does not catch "
					"this)", align, want->align);
		else if (d->tletter != 'b' || d->bits != 8)
			note_spelling(c, what, d);
	}
	if (why) {
		fprintf(rep, "%s:%u: error: %s: %s '%s' %s; expected '%s'\n",
			pf->file, pf->line, pf->name, what, d->text, why,
			want_text);
		c->errors++;
	}
}

static void check_one(ptxabi_ctx *ctx, FILE *rep, const struct func *f,
		      const struct pfunc *pf, struct counts *c)
{
	struct psig sig;
	char want[320];
	int before = c->errors;

	func_sig(ctx, f, &sig);
	c->spelled[0] = 0;
	if (strcmp(pf->linkage, ".visible") && strcmp(pf->linkage, ".weak") &&
	    strcmp(pf->linkage, ".extern")) {
		fprintf(rep, "%s:%u: error: %s: .func is not .visible; other "
			"modules cannot link to it\n", pf->file, pf->line,
			pf->name);
		c->errors++;
	}
	if (!sig.has_ret && pf->has_ret) {
		fprintf(rep, "%s:%u: error: %s: returns '%s' but nvcc declares "
			"no return value%s\n", pf->file, pf->line, pf->name,
			pf->ret.text, sig.sret ? " (the result is written "
			"through a hidden first .b64 parameter)" : "");
		c->errors++;
	} else if (sig.has_ret) {
		pspec_str(&sig.ret, "func_retval0", want, sizeof(want));
		if (!pf->has_ret) {
			fprintf(rep, "%s:%u: error: %s: no return value "
				"declared; expected '%s'\n", pf->file,
				pf->line, pf->name, want);
			c->errors++;
		} else {
			compare(ctx, rep, pf, "return value", &pf->ret,
				&sig.ret, want, c);
		}
	}
	if (pf->nparams != sig.n) {
		fprintf(rep, "%s:%u: error: %s: %zu parameter(s) in PTX, %zu "
			"expected from the C declaration (%s:%u)\n", pf->file,
			pf->line, pf->name, pf->nparams, sig.n, f->loc.file,
			f->loc.line);
		c->errors++;
		return;
	}
	for (size_t i = 0; i < sig.n; i++) {
		char name[300], what[64];

		snprintf(name, sizeof(name), "%s_param_%zu", f->name, i);
		pspec_str(&sig.p[i], name, want, sizeof(want));
		snprintf(what, sizeof(what), "parameter %zu", i);
		compare(ctx, rep, pf, what, &pf->params[i], &sig.p[i], want,
			c);
	}
	if (c->spelled[0]) {
		fprintf(rep, "%s:%u: warning: %s: typed where nvcc writes "
			".b32/.b64/.b8 (the device linker accepts it): %s\n",
			pf->file, pf->line, pf->name, c->spelled);
		c->warnings++;
	}
	if (c->errors == before)
		fprintf(rep, "ok %s (%s:%u, %zu parameter(s)%s)\n", f->name,
			pf->file, pf->line, sig.n,
			sig.has_ret ? " and a return value" : "");
}

int check_ptx(ptxabi_ctx *ctx, const char *const *paths, size_t n,
	      FILE *report)
{
	struct pfunc *fv = NULL;
	size_t nf = 0, capf = 0;
	struct counts c = { .errors = 0 };

	for (size_t i = 0; i < n; i++)
		scan_file(ctx, paths[i], &fv, &nf, &capf);
	for (size_t i = 0; i < ctx->nfuncs; i++) {
		const struct func *f = &ctx->funcs[i];
		bool defined = false, seen = false;

		for (size_t j = 0; j < nf; j++) {
			if (strcmp(fv[j].name, f->name))
				continue;
			seen = true;
			if (strcmp(fv[j].linkage, ".extern"))
				defined = true;
			check_one(ctx, report, f, &fv[j], &c);
		}
		if (!defined) {
			fprintf(report, "%s:%u: error: %s is %s in the PTX "
				"files\n", f->loc.file, f->loc.line, f->name,
				seen ? "only declared (.extern), not defined,"
				     : "not defined");
			c.errors++;
		}
	}
	for (size_t j = 0; j < nf; j++) {
		bool known = false;

		for (size_t i = 0; i < ctx->nfuncs && !known; i++)
			known = strcmp(fv[j].name, ctx->funcs[i].name) == 0;
		if (!known && !strcmp(fv[j].linkage, ".visible")) {
			fprintf(report, "%s:%u: warning: .visible .func %s has "
				"no C declaration\n", fv[j].file, fv[j].line,
				fv[j].name);
			c.warnings++;
		}
	}
	fprintf(report, "%zu function(s) checked against %zu PTX file(s): "
		"%d error(s), %d warning(s)\n", ctx->nfuncs, n, c.errors,
		c.warnings);
	return c.errors;
}
