/* SPDX-License-Identifier: MIT */
/*
 * lib-cudaload: the one CUDA driver loader (lib/cudaload) against the fake
 * driver the lib tests build (GDIRECT_LIBCUDA, set by meson): a missing
 * required entry is an error naming its symbol, a missing optional one is
 * NULL, and a GDIRECT_LIBCUDA that does not load is an error naming it.
 *
 * The fake driver exports the current ABIs (cuMemAlloc_v2, cuCtxDestroy_v2)
 * but not the older ones (cuCtxDestroy, cuDevicePrimaryCtxRelease), which
 * serve as the missing entries.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cudaload.h"
#include "tap.h"

static const char *fake;

/* The error text ends with the missing symbol's name. */
static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

static void missing_required_is_named(void)
{
	struct gdl_cuda cu;
	char err[256] = "";
	uint64_t want = GDL_CU_BIT(mem_alloc) | GDL_CU_BIT(ctx_destroy_v1);

	CHECK_EQ(gdl_cuload_open(&cu, want, want, 0, err, sizeof(err)), -ENOSYS);
	tap_diag("%s", err);
	CHECK(ends_with(err, " lacks cuCtxDestroy"));
	CHECK(strstr(err, fake) != NULL);
	CHECK(cu.dl == NULL && cu.mem_alloc == NULL);
}

static void missing_optional_is_null(void)
{
	struct gdl_cuda cu;
	char err[256] = "";
	uint64_t want = GDL_CU_BIT(mem_alloc) | GDL_CU_BIT(mem_free) |
			GDL_CU_BIT(ctx_destroy) | GDL_CU_BIT(ctx_destroy_v1) |
			GDL_CU_BIT(primary_release_v1);
	void *alloc;

	CHECK_EQ(gdl_cuload_open(&cu, want, GDL_CU_BIT(mem_alloc) |
				GDL_CU_BIT(mem_free), 0, err, sizeof(err)), 0);
	CHECK(cu.dl != NULL);
	/* The versioned symbol, not the base name, is what dlsym found. */
	alloc = dlsym(cu.dl, "cuMemAlloc_v2");
	CHECK(alloc != NULL && (void *)cu.mem_alloc == alloc);
	CHECK(cu.mem_free != NULL && cu.ctx_destroy != NULL);
	CHECK(cu.ctx_destroy_v1 == NULL && cu.primary_release_v1 == NULL);
	/* An entry not asked for stays NULL although the driver has it. */
	CHECK(cu.init == NULL);
	gdl_cuload_close(&cu);
	CHECK(cu.dl == NULL && cu.mem_alloc == NULL);
}

/* Through cuGetProcAddress_v2 (the fake has it), then dlsym. */
static void proc_address(void)
{
	struct gdl_cuda cu;
	char err[256] = "";
	uint64_t want = GDL_CU_BIT(pointer_get_attribute) |
			GDL_CU_BIT(mem_get_address_range) |
			GDL_CU_BIT(ctx_destroy_v1);

	CHECK_EQ(gdl_cuload_open(&cu, want, want & ~GDL_CU_BIT(ctx_destroy_v1),
				GDL_CUDA_PROC_ADDRESS, err, sizeof(err)), 0);
	CHECK(cu.pointer_get_attribute != NULL);
	CHECK(cu.mem_get_address_range != NULL);
	gdl_cuload_close(&cu);
}

static void bad_path_is_an_error(void)
{
	struct gdl_cuda cu;
	char err[256] = "";

	setenv("GDIRECT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
	CHECK_EQ(gdl_cuload_open(&cu, GDL_CU_BIT(init), 0, 0, err, sizeof(err)),
		 -ENOENT);
	tap_diag("%s", err);
	CHECK(strstr(err, "/nonexistent/libcuda.so.1") != NULL);
	CHECK(cu.dl == NULL);
	setenv("GDIRECT_LIBCUDA", fake, 1);
}

/* Unset or empty, the variable names nothing: libcuda.so.1 is loaded. */
static void default_path(void)
{
	const char *path;
	char err[256] = "";

	unsetenv("GDIRECT_LIBCUDA");
	CHECK_EQ(gdl_cuload_path(&path, err, sizeof(err)), 0);
	CHECK_STR(path, "libcuda.so.1");
	setenv("GDIRECT_LIBCUDA", "", 1);
	CHECK_EQ(gdl_cuload_path(&path, err, sizeof(err)), 0);
	CHECK_STR(path, "libcuda.so.1");
	CHECK(!gdl_cuload_named());
	setenv("GDIRECT_LIBCUDA", fake, 1);
	CHECK(gdl_cuload_named());
}

/* "none" loads nothing, and names no library whose absence is a mistake. */
static void none_loads_nothing(void)
{
	struct gdl_cuda cu;
	const char *path = "";
	char err[256] = "";

	setenv("GDIRECT_LIBCUDA", "none", 1);
	CHECK_EQ(gdl_cuload_path(&path, err, sizeof(err)), 0);
	CHECK(path == NULL);
	CHECK(!gdl_cuload_named());
	CHECK_EQ(gdl_cuload_open(&cu, GDL_CU_BIT(init), 0, 0, err, sizeof(err)),
		 -ENOENT);
	CHECK(cu.dl == NULL);
	tap_diag("%s", err);
	setenv("GDIRECT_LIBCUDA", fake, 1);
}

int main(void)
{
	fake = getenv("GDIRECT_LIBCUDA");
	if (!fake || !*fake)
		tap_skip_all("GDIRECT_LIBCUDA is not set (run through meson test)");
	TAP_TEST(missing_required_is_named);
	TAP_TEST(missing_optional_is_null);
	TAP_TEST(proc_address);
	TAP_TEST(bad_path_is_an_error);
	TAP_TEST(default_path);
	TAP_TEST(none_loads_nothing);
	return tap_done();
}
