// SPDX-License-Identifier: MIT
/*
 * gdirect_jitlink.c - nvJitLink with every result checked and its stderr
 * read; see gdirect_jitlink.h for why.
 */
#include "gdirect_jitlink.h"

#include <nvJitLink.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct text {
	char *s;
	size_t len;
	int oom;
};

static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *s;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || t->oom)
		return;
	s = realloc(t->s, t->len + (size_t)n + 1);
	if (!s) {
		t->oom = 1;
		return;
	}
	t->s = s;
	va_start(ap, fmt);
	vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

/* Appends one of nvJitLink's logs; returns its length. */
static size_t add_log(struct text *t, nvJitLinkHandle h, int error_log)
{
	size_t size = 0;
	char *buf;
	nvJitLinkResult r;

	r = error_log ? nvJitLinkGetErrorLogSize(h, &size)
		      : nvJitLinkGetInfoLogSize(h, &size);
	if (r != NVJITLINK_SUCCESS || size <= 1)
		return 0;
	buf = malloc(size);
	if (!buf)
		return 0;
	r = error_log ? nvJitLinkGetErrorLog(h, buf)
		      : nvJitLinkGetInfoLog(h, buf);
	if (r == NVJITLINK_SUCCESS) {
		buf[size - 1] = '\0';
		text_add(t, "%s%s", buf,
			 buf[strlen(buf) - 1] == '\n' ? "" : "\n");
	}
	free(buf);
	return r == NVJITLINK_SUCCESS ? size - 1 : 0;
}

/*
 * fd 2 goes to a temporary file while nvJitLink runs, since that is where
 * it writes what its logs omit.
 */
struct capture {
	int saved;
	FILE *file;
};

static int capture_start(struct capture *c)
{
	fflush(stderr);
	c->file = tmpfile();
	if (!c->file)
		return -1;
	c->saved = dup(STDERR_FILENO);
	if (c->saved < 0 || dup2(fileno(c->file), STDERR_FILENO) < 0) {
		if (c->saved >= 0)
			close(c->saved);
		fclose(c->file);
		return -1;
	}
	return 0;
}

/* Restores fd 2; returns 1 when the captured text has an error line. */
static int capture_end(struct capture *c, struct text *t)
{
	char line[1024];
	int error = 0;

	fflush(stderr);
	dup2(c->saved, STDERR_FILENO);
	close(c->saved);
	rewind(c->file);
	while (fgets(line, sizeof(line), c->file)) {
		text_add(t, "%s", line);
		if (strstr(line, "error") || strstr(line, "@E@"))
			error = 1;
	}
	fclose(c->file);
	return error;
}

static const char *result_name(nvJitLinkResult r)
{
	switch (r) {
	case NVJITLINK_SUCCESS: return "NVJITLINK_SUCCESS";
	case NVJITLINK_ERROR_UNRECOGNIZED_OPTION: return "NVJITLINK_ERROR_UNRECOGNIZED_OPTION";
	case NVJITLINK_ERROR_MISSING_ARCH: return "NVJITLINK_ERROR_MISSING_ARCH";
	case NVJITLINK_ERROR_INVALID_INPUT: return "NVJITLINK_ERROR_INVALID_INPUT";
	case NVJITLINK_ERROR_PTX_COMPILE: return "NVJITLINK_ERROR_PTX_COMPILE";
	case NVJITLINK_ERROR_NVVM_COMPILE: return "NVJITLINK_ERROR_NVVM_COMPILE";
	case NVJITLINK_ERROR_INTERNAL: return "NVJITLINK_ERROR_INTERNAL";
	default: return "nvJitLinkResult";
	}
}

int gdirect_jitlink(const char *arch, const struct gdirect_jit_input *inputs,
		    size_t n, void **cubin, size_t *cubin_size, char **log)
{
	struct text t = { NULL, 0, 0 };
	struct capture cap;
	nvJitLinkHandle h = NULL;
	nvJitLinkResult r;
	char opt_arch[64];
	const char *opts[2];
	int failed = 0, captured;
	size_t i;

	*cubin = NULL;
	*cubin_size = 0;
	snprintf(opt_arch, sizeof(opt_arch), "-arch=%s", arch);
	opts[0] = opt_arch;
	opts[1] = "-lineinfo";

	captured = capture_start(&cap) == 0;
	if (!captured)
		text_add(&t, "gdirect_jitlink: cannot capture stderr\n");
	r = nvJitLinkCreate(&h, 2, opts);
	if (r != NVJITLINK_SUCCESS) {
		text_add(&t, "nvJitLinkCreate(%s): %s (%d)\n", opt_arch,
			 result_name(r), (int)r);
		failed = 1;
		h = NULL;
	}
	/*
	 * Every input's result: a failed one (a PTX .target above arch, say)
	 * is dropped and nvJitLinkComplete may still succeed without it.
	 */
	for (i = 0; h && i < n; i++) {
		r = nvJitLinkAddData(h, (nvJitLinkInputType)inputs[i].type,
				     inputs[i].data, inputs[i].size,
				     inputs[i].name);
		if (r != NVJITLINK_SUCCESS) {
			text_add(&t, "nvJitLinkAddData(%s): %s (%d)\n",
				 inputs[i].name, result_name(r), (int)r);
			failed = 1;
		}
	}
	if (h && !failed) {
		r = nvJitLinkComplete(h);
		if (r != NVJITLINK_SUCCESS) {
			text_add(&t, "nvJitLinkComplete: %s (%d)\n",
				 result_name(r), (int)r);
			failed = 1;
		}
	}
	if (h && add_log(&t, h, 1) > 0)
		failed = 1;	/* an error log is an error, whatever r said */
	if (h)
		add_log(&t, h, 0);
	if (captured && capture_end(&cap, &t))
		failed = 1;
	if (t.oom)
		failed = 1;

	if (h && !failed) {
		size_t size = 0;

		r = nvJitLinkGetLinkedCubinSize(h, &size);
		if (r == NVJITLINK_SUCCESS && size > 0) {
			*cubin = malloc(size);
			if (*cubin)
				r = nvJitLinkGetLinkedCubin(h, *cubin);
		}
		if (r != NVJITLINK_SUCCESS || !*cubin) {
			text_add(&t, "nvJitLinkGetLinkedCubin: %s (%d)\n",
				 result_name(r), (int)r);
			free(*cubin);
			*cubin = NULL;
			failed = 1;
		} else {
			*cubin_size = size;
		}
	}
	if (h)
		nvJitLinkDestroy(&h);

	if (log) {
		*log = t.s ? t.s : calloc(1, 1);
	} else {
		free(t.s);
	}
	return failed ? -1 : 0;
}

char *gdirect_jit_slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)len + 1);
		if (buf && fread(buf, 1, (size_t)len, f) == (size_t)len) {
			buf[len] = '\0';
			*size = (size_t)len;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}
