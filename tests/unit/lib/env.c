/* SPDX-License-Identifier: MIT */
/*
 * lib-env: every setting libgdirect takes from the environment is parsed
 * strictly.  A value not understood whole (a misspelt or differently-cased
 * word, a space, a fraction, trailing garbage, an overflow, an empty mode
 * set) makes gdirect_ctx_create() fail with -EINVAL and a sentence naming
 * the variable; good values are taken exactly; only the explicit opt-out
 * runs without invalidation.
 */
#include "tutil.h"

static int ncases;

/* gdirect_ctx_create() with name=value: its result; *c destroyed. */
static int create_with(const char *name, const char *value)
{
	struct gdirect_ctx *c = NULL;
	int rc;

	setenv(name, value, 1);
	rc = gdirect_ctx_create(NULL, &c);
	unsetenv(name);
	if (!rc)
		gdirect_ctx_destroy(c);
	ncases++;
	return rc;
}

static void refused(const char *name, const char *value)
{
	int rc = create_with(name, value);

	if (rc != -EINVAL || !strstr(gdirect_errmsg(), name)) {
		TAP_FAIL("%s=\"%s\": got %d (%s), expected -EINVAL naming it",
			 name, value, rc, gdirect_errmsg());
	}
	tap_diag("  %s=\"%s\": %s", name, value, gdirect_errmsg());
}

static void accepted(const char *name, const char *value)
{
	int rc = create_with(name, value);

	if (rc) {
		TAP_FAIL("%s=\"%s\": refused (%s)", name, value,
			 gdirect_errmsg());
	}
}

/* gdirect_params_init() under name=value. */
static struct gdirect_params params_with(const char *name, const char *value)
{
	struct gdirect_params p;

	setenv(name, value, 1);
	gdirect_params_init(&p);
	unsetenv(name);
	return p;
}

static void modes(void)
{
	static const char *const bad[] = {
		"kernal", "KERNEL", "Hooks", "none", "kernel, hooks", " kernel",
		"kernel ", "kernel,", ",kernel", "kernel,,hooks", ",", "0", "1",
		"kernel;hooks", "buffer-id", "unsafe_none,kernel", "kernel\n",
	};
	struct gdirect_params p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refused("GDIRECT_INVALIDATION", bad[i]);
	p = params_with("GDIRECT_INVALIDATION", "kernel,hooks");
	CHECK_EQ(p.invalidation, GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS);
	p = params_with("GDIRECT_INVALIDATION", "buffer_id");
	CHECK_EQ(p.invalidation, GDIRECT_INV_BUFFER_ID);
	p = params_with("GDIRECT_INVALIDATION", "hooks,all");
	CHECK_EQ(p.invalidation, GDIRECT_INV_ALL);
	accepted("GDIRECT_INVALIDATION", "kernel,hooks,buffer_id");
	/* An empty variable is an unset one: the defaults. */
	p = params_with("GDIRECT_INVALIDATION", "");
	CHECK_EQ(p.invalidation, GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS);
	/* The one explicit opt-out. */
	p = params_with("GDIRECT_INVALIDATION", "unsafe_none");
	CHECK_EQ(p.invalidation, 0);
	CHECK(p.flags & GDIRECT_CTX_NO_INVALIDATION);
	accepted("GDIRECT_INVALIDATION", "unsafe_none");
}

/* Through the API: no mode is refused unless opted out. */
static void api_modes(void)
{
	struct gdirect_params p;
	struct gdirect_ctx *c = NULL;

	gdirect_params_init(&p);
	p.invalidation = 0;
	CHECK_EQ(gdirect_ctx_create(&p, &c), -EINVAL);
	CHECK(strstr(gdirect_errmsg(), "stale"));
	tap_diag("  invalidation 0: %s", gdirect_errmsg());
	p.flags |= GDIRECT_CTX_NO_INVALIDATION;
	CHECK_EQ(gdirect_ctx_create(&p, &c), 0);
	gdirect_ctx_destroy(c);
	p.invalidation = GDIRECT_INV_HOOKS;
	CHECK_EQ(gdirect_ctx_create(&p, &c), -EINVAL);
	p.flags = 0;
	p.invalidation = 1U << 7;
	CHECK_EQ(gdirect_ctx_create(&p, &c), -EINVAL);
	CHECK(strstr(gdirect_errmsg(), "mode"));
	ncases += 4;
}

static void sizes(void)
{
	static const char *const bad[] = {
		"1.5g", "99999999999g", "18446744073709551616", "17179869184t",
		"none", " 1g", "1g ", "-1", "+1", "1gb", "1 g", "0x10", "1e9",
		"g", "1KiB", "inf", "nan", "1,5", "4294967296G",
	};
	static const char *const vars[] = {
		"GDIRECT_MAX_BYTES", "GDIRECT_WHOLE_ALLOC_MAX",
	};
	struct gdirect_params p;

	for (size_t v = 0; v < 2; v++)
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			refused(vars[v], bad[i]);
	p = params_with("GDIRECT_MAX_BYTES", "64k");
	CHECK_EQ(p.max_bytes, 64 * KiB);
	p = params_with("GDIRECT_MAX_BYTES", "3G");
	CHECK_EQ(p.max_bytes, 3ULL << 30);
	p = params_with("GDIRECT_MAX_BYTES", "0");
	CHECK_EQ(p.max_bytes, 0);
	p = params_with("GDIRECT_WHOLE_ALLOC_MAX", "12345");
	CHECK_EQ(p.whole_alloc_max, 12345);
	accepted("GDIRECT_MAX_BYTES", "2m");
}

static void counts(void)
{
	static const char *const bad[] = {
		"none", "unlimited", "12abc", "1k", "-5", " 7", "7 ", "1.0",
		"99999999999999999999", "4294967297", "0x100", "",
	};
	struct gdirect_params p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (*bad[i])
			refused("GDIRECT_MAX_REGIONS", bad[i]);
	p = params_with("GDIRECT_MAX_REGIONS", "100");
	CHECK_EQ(p.max_regions, 100);
	p = params_with("GDIRECT_MAX_REGIONS", "0");
	CHECK_EQ(p.max_regions, 0);
}

static void others(void)
{
	struct gdirect_params p;

	refused("GDIRECT_PUBLISH_STATS", "yes");
	refused("GDIRECT_PUBLISH_STATS", "2");
	refused("GDIRECT_PUBLISH_STATS", "1 ");
	p = params_with("GDIRECT_PUBLISH_STATS", "0");
	CHECK_EQ(p.flags & GDIRECT_CTX_PUBLISH_STATS, 0);
	refused("GDIRECT_DEVICE", "dev/gdirect");
	refused("GDIRECT_PUBLISH_INTERVAL_MS", "0");
	refused("GDIRECT_PUBLISH_INTERVAL_MS", "5");
	refused("GDIRECT_PUBLISH_INTERVAL_MS", "99999999999");
	refused("GDIRECT_PUBLISH_INTERVAL_MS", "500ms");
	refused("GDIRECT_COPY", "AVX2");
	refused("GDIRECT_COPY", "fastest");
	accepted("GDIRECT_COPY", "generic");
	accepted("GDIRECT_PUBLISH_INTERVAL_MS", "100");
}

/* GDIRECT_MR_PATH: the verbs cache's registration path, in every build
 * (a typo is an error whether or not the library has the verbs API). */
static void mr_path(void)
{
	static const char *const bad[] = {
		"dma-buf", "DMABUF", "Peer", "dmabuf ", " peer", "auto,peer",
		"peermem", "0", "1", "dmabuf\n", "none",
	};
	static const struct { const char *v; uint32_t want; } good[] = {
		{ "auto", GDIRECT_MR_PATH_AUTO },
		{ "dmabuf", GDIRECT_MR_PATH_DMABUF },
		{ "peer", GDIRECT_MR_PATH_PEER },
	};
	struct gdirect_params p;
	struct gdirect_ctx *c = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refused("GDIRECT_MR_PATH", bad[i]);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		accepted("GDIRECT_MR_PATH", good[i].v);
		p = params_with("GDIRECT_MR_PATH", good[i].v);
		CHECK_EQ(p.mr_path, good[i].want);
	}
	p = params_with("GDIRECT_MR_PATH", "");
	CHECK_EQ(p.mr_path, GDIRECT_MR_PATH_AUTO);
	/* The field itself: an unknown path, the reserved word. */
	gdirect_params_init(&p);
	p.mr_path = GDIRECT_MR_PATH_PEER + 1;
	CHECK_EQ(gdirect_ctx_create(&p, &c), -EINVAL);
	CHECK(strstr(gdirect_errmsg(), "registration path"));
	gdirect_params_init(&p);
	p.reserved32 = 1;
	CHECK_EQ(gdirect_ctx_create(&p, &c), -EINVAL);
}

static void hooks_accepted(void)
{
	accepted("GDIRECT_INVALIDATION", "hooks");
}

int main(void)
{
	need_fake_cuda();
	/* No pinning device: the context is created without one. */
	setenv("GDIRECT_DEVICE", "/nonexistent/gdirect", 1);
	TAP_TEST(hooks_accepted);
	TAP_TEST(modes);
	TAP_TEST(api_modes);
	TAP_TEST(sizes);
	TAP_TEST(counts);
	setenv("GDIRECT_DEVICE", "/nonexistent/gdirect", 1);
	TAP_TEST(others);
	TAP_TEST(mr_path);
	tap_diag("%d settings checked", ncases);
	return tap_done();
}
