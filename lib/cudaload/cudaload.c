/* SPDX-License-Identifier: MIT */
#include "cudaload.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(GDL_CU_COUNT <= 64, "the entry masks are 64 bits wide");

/* One entry's names and where struct gdl_cuda holds it. */
struct entry {
	const char *name, *symbol;
	size_t offset;
};

/* The symbol is stringified as written, so cuda.h's version macros
 * (cuMemFree for cuMemFree_v2) do not rename the older ABIs. */
static const struct entry entries[GDL_CU_COUNT] = {
#define GDL_CUDA_X(field, name_, symbol_, type)				\
	[GDL_CU_##field] = { name_, #symbol_, offsetof(struct gdl_cuda, field) },
	GDL_CUDA_ENTRIES(GDL_CUDA_X)
#undef GDL_CUDA_X
};

const char *gdl_cuload_symbol(enum gdl_cuda_entry e)
{
	return entries[e].symbol;
}

int gdl_cuload_path(const char **path, char *err, size_t errlen)
{
	/* Not from a less privileged user's environment (set-user-ID). */
	const char *v = secure_getenv("GDIRECT_LIBCUDA");

	(void)err;
	(void)errlen;
	*path = !v || !*v ? "libcuda.so.1" : strcmp(v, "none") ? v : NULL;
	return 0;
}

bool gdl_cuload_named(void)
{
	const char *v = secure_getenv("GDIRECT_LIBCUDA");

	return v && *v && strcmp(v, "none");
}

int gdl_cuload_open(struct gdl_cuda *cu, uint64_t want, uint64_t need,
		   unsigned int flags, char *err, size_t errlen)
{
	CUresult (*gpa)(const char *, void **, int, cuuint64_t,
			CUdriverProcAddressQueryResult *) = NULL;
	const char *path;
	int ret;

	memset(cu, 0, sizeof(*cu));
	ret = gdl_cuload_path(&path, err, errlen);
	if (ret)
		return ret;
	if (!path) {
		snprintf(err, errlen, "GDIRECT_LIBCUDA=none asks for no CUDA driver");
		return -ENOENT;
	}
	cu->dl = dlopen(path, RTLD_NOW |
			(flags & GDL_CUDA_GLOBAL ? RTLD_GLOBAL : RTLD_LOCAL));
	if (!cu->dl) {
		snprintf(err, errlen, "cannot load %s: %s", path, dlerror());
		return -ENOENT;
	}
	/* POSIX allows converting dlsym's void * to a function pointer. */
	if (flags & GDL_CUDA_PROC_ADDRESS)
		*(void **)&gpa = dlsym(cu->dl, "cuGetProcAddress_v2");
	for (int e = 0; e < GDL_CU_COUNT; e++) {
		void *fn = NULL;
		CUdriverProcAddressQueryResult st;

		if (!(want & (UINT64_C(1) << e)))
			continue;
		/* cuGetProcAddress_v2 knows which version of a name the
		 * CUDA_VERSION we compile against means. */
		if (!gpa || gpa(entries[e].name, &fn, CUDA_VERSION,
				CU_GET_PROC_ADDRESS_DEFAULT, &st) != CUDA_SUCCESS ||
		    st != CU_GET_PROC_ADDRESS_SUCCESS || !fn)
			fn = dlsym(cu->dl, entries[e].symbol);
		if (!fn && (need & (UINT64_C(1) << e))) {
			snprintf(err, errlen, "%s lacks %s", path,
				 entries[e].symbol);
			gdl_cuload_close(cu);
			return -ENOSYS;
		}
		memcpy((char *)cu + entries[e].offset, &fn, sizeof(fn));
	}
	return 0;
}

void gdl_cuload_close(struct gdl_cuda *cu)
{
	if (cu->dl)
		dlclose(cu->dl);
	memset(cu, 0, sizeof(*cu));
}

void *gdl_cuload_next(enum gdl_cuda_entry e)
{
	void *f = dlsym(RTLD_NEXT, entries[e].symbol);

	if (!f) {
		void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);

		if (h) {
			f = dlsym(h, entries[e].symbol);
			dlclose(h);
		}
	}
	return f;
}
