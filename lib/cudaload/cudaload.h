/* SPDX-License-Identifier: MIT */
/*
 * cudaload.h - the one loader of the CUDA driver, libcuda.so.1, at run time.
 *
 * The product never links libcuda: it must run where no CUDA is installed
 * and pick the real driver on a GPU server.  gdl_cuload_open() dlopens
 * libcuda.so.1 (or the file GDIRECT_LIBCUDA names) and fills a struct
 * gdl_cuda with the entry points of cuda_entries.h; gdl_cuload_next() gives
 * the interposer the definition after its own.  libgdirect, its interposer,
 * the gdirect command and libgdrapi link this code statically, with hidden
 * visibility, and each keeps its own table and its own scheme for loading
 * it once.
 */
#ifndef GDL_CUDALOAD_H
#define GDL_CUDALOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_entries.h"

/* GDL_CU_<field>: an entry's index, for the masks of gdl_cuload_open(). */
enum gdl_cuda_entry {
#define GDL_CUDA_X(field, name, symbol, type) GDL_CU_##field,
	GDL_CUDA_ENTRIES(GDL_CUDA_X)
#undef GDL_CUDA_X
	GDL_CU_COUNT
};

#define GDL_CU_BIT(field) (UINT64_C(1) << GDL_CU_##field)

/* gdl_cu_<field>_t: an entry's function pointer type. */
#define GDL_CUDA_X(field, name, symbol, type)				\
	typedef __typeof__(type) gdl_cu_##field##_t;
GDL_CUDA_ENTRIES(GDL_CUDA_X)
#undef GDL_CUDA_X

/* The entry points one user resolved; NULL where the driver lacks one. */
struct gdl_cuda {
	void *dl;	/* the dlopen handle; NULL when nothing is loaded */
#define GDL_CUDA_X(field, name, symbol, type) gdl_cu_##field##_t field;
	GDL_CUDA_ENTRIES(GDL_CUDA_X)
#undef GDL_CUDA_X
};

/* Options of gdl_cuload_open(). */
enum {
	/*
	 * Resolve through the driver's cuGetProcAddress_v2, asking for the
	 * version of each entry that include/nvidia/cuda.h's CUDA_VERSION
	 * names (NVIDIA's documented way to reach an entry point), and fall
	 * back to dlsym of the versioned symbol where the driver has no
	 * cuGetProcAddress_v2 or does not know the name.
	 */
	GDL_CUDA_PROC_ADDRESS = 1 << 0,
	/* dlopen with RTLD_GLOBAL instead of RTLD_LOCAL. */
	GDL_CUDA_GLOBAL = 1 << 1,
};

/*
 * The library to load: GDIRECT_LIBCUDA when it is set and not empty, else
 * "libcuda.so.1".  The variable is read with secure_getenv(), so a
 * set-user-ID process ignores it.  The value "none" asks for no driver
 * (*path NULL): the way to run without CUDA on a machine that has it.  Any
 * other value is a name for dlopen: a path, or a file name dlopen searches
 * for as it does libcuda.so.1 (the tests and benchmarks pass paths relative
 * to the build directory).  Whether it loads is gdl_cuload_open()'s to say.
 * 0 with the name in *path; err names a refused value, which no value is
 * today.
 */
int gdl_cuload_path(const char **path, char *err, size_t errlen);

/*
 * Whether the variable named a library: set to something other than empty
 * or "none", and read (not a secure-execution process).  A library it names
 * that does not load is then the user's mistake, to be reported, where the
 * default libcuda.so.1 missing only means a machine without CUDA.
 */
bool gdl_cuload_named(void);

/*
 * Load the driver and fill *cu with the entries in want (GDL_CU_BIT masks),
 * the others NULL.  Every entry in need (a subset of want) must resolve.
 * Returns 0; -ENOENT (dlopen of GDIRECT_LIBCUDA or libcuda.so.1 failed, or
 * GDIRECT_LIBCUDA is "none") or
 * -ENOSYS (a needed entry is missing, which err names), with *cu zeroed and
 * the library closed.  Not thread-safe: each caller loads once its own way.
 */
int gdl_cuload_open(struct gdl_cuda *cu, uint64_t want, uint64_t need,
		 unsigned int flags, char *err, size_t errlen);

/* dlclose the driver and zero *cu. */
void gdl_cuload_close(struct gdl_cuda *cu);

/*
 * The next definition of entry e after the calling object (dlsym with
 * RTLD_NEXT), else libcuda's if another library loaded libcuda.so.1
 * locally, so that it is not in the global scope; NULL if neither has it.
 * An interposer calls it for the functions it defines itself.  Nothing is
 * cached: the caller keeps what it found (a NULL is looked up again next
 * time, since libcuda may be loaded later).  It must be linked into the
 * interposer itself, since RTLD_NEXT is relative to the object calling
 * dlsym.
 */
void *gdl_cuload_next(enum gdl_cuda_entry e);

/* The symbol libcuda exports for entry e ("cuMemFree_v2"). */
const char *gdl_cuload_symbol(enum gdl_cuda_entry e);

#endif
