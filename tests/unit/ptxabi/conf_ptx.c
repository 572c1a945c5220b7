/* SPDX-License-Identifier: MIT */
/*
 * The PTX indexer: what the comparison needs out of nvcc's PTX -- the
 * bytes of initialized globals, the .visible and .extern .func prototypes
 * and the call sequences, as text, by function name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

static struct gvar *gvars;
static size_t ngvars;

/* ".visible .global .align 8 .b8 L_3[24] = {8, 0, ...};" */
void read_globals(char *ptx)
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

const struct gvar *gvar(const char *name)
{
	for (size_t i = 0; i < ngvars; i++)
		if (strcmp(gvars[i].name, name) == 0)
			return &gvars[i];
	return NULL;
}

unsigned long long u64_at(const struct gvar *v, size_t i)
{
	unsigned long long x = 0;

	for (unsigned b = 0; b < 8; b++)
		if (i * 8 + b < v->size)
			x |= (unsigned long long)v->bytes[i * 8 + b] << (8 * b);
	return x;
}

/* The lines of a call sequence that the prototype determines: .param
 * declarations and the call itself (not the register moves). */
char *callseq_skeleton(const char *text)
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

void index_ptx(const char *ptx)
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

const char *piece(char kind, const char *name)
{
	for (size_t i = 0; i < npieces; i++)
		if (pieces[i].kind == kind && strcmp(pieces[i].name, name) == 0)
			return pieces[i].text;
	return NULL;
}

void ptx_free(void)
{
	for (size_t i = 0; i < ngvars; i++)
		free(gvars[i].bytes);
	free(gvars);
	for (size_t i = 0; i < npieces; i++)
		free(pieces[i].text);
	free(pieces);
}
