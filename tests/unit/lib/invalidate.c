/* SPDX-License-Identifier: MIT */
/*
 * lib-invalidate: each invalidation mode alone keeps the invariant that a
 * registration is never handed out for freed memory: free, re-allocate at
 * the same VA, register again, and ask the fake backend whether the pin
 * behind the answer covered the new allocation.  A control run with no
 * mode shows the check does catch a stale registration.
 */
#include <cuda.h>

#include "tutil.h"

enum how { VIA_KERNEL, VIA_HOOKS, VIA_TAGS, VIA_NONE };

static const char *names[] = { "kernel", "hooks", "buffer_id", "none" };

static void cuda_free(uint64_t a, enum how how)
{
	if (how == VIA_HOOKS)
		gdirect_notify_free(P(a), 0);	/* what the hooks call */
	CHECK_EQ(cuMemFree_v2(a), CUDA_SUCCESS);
}

/* Returns whether the registration after re-allocation was fresh. */
static bool realloc_case(enum how how, size_t size)
{
	static const unsigned modes[] = { GDIRECT_INV_KERNEL, GDIRECT_INV_HOOKS,
					  GDIRECT_INV_BUFFER_ID, 0 };
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_reg *r, *held;
	struct gdirect_reg_info ri;
	struct gdirect_stats st;
	struct fake_stats fs;
	bool fresh;

	params(&p, modes[how]);
	if (!modes[how])	/* the control: no invalidation, opted out */
		p.flags |= GDIRECT_CTX_NO_INVALIDATION;
	/* Only the kernel mode gets revocations, as from nvidia.ko; the
	 * others must work where the pin outlives the memory (persistent). */
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){
		.revoke_on_free = how == VIA_KERNEL }, &b);
	uint64_t x = fake_cuda_alloc(size), keep = fake_cuda_alloc(64 * KiB);

	CHECK_EQ(gdirect_reg_get(c, P(x + 8), 16, 0, &r), 0);
	gdirect_reg_put(r);
	/* A second allocation, registered and held across the free. */
	CHECK_EQ(gdirect_reg_get(c, P(keep), 64, 0, &held), 0);

	cuda_free(x, how);
	uint64_t y = fake_cuda_alloc(size);

	CHECK_EQ(y, x);		/* the same VA, a new buffer */
	CHECK_EQ(gdirect_reg_get(c, P(y + 8), 16, 0, &r), 0);
	CHECK_EQ(gdirect_reg_info(r, &ri), 0);
	fresh = fake_backend_pin_covers(b, ri.kernel_handle,
					fake_cuda_buffer_id_at(y));
	gdirect_reg_put(r);
	gdirect_stats(c, &st);
	if (how == VIA_KERNEL)
		CHECK_EQ(st.inv_kernel, 1);
	if (how == VIA_HOOKS)
		CHECK_EQ(st.inv_hooks, 1);
	if (how == VIA_TAGS)
		CHECK_EQ(st.inv_buffer_id, 1);
	/* The unrelated registration survived. */
	CHECK_EQ(gdirect_reg_info(held, &ri), 0);
	CHECK(ri.valid);
	gdirect_reg_put(held);
	/* The dead region was unpinned (the control case leaks nothing
	 * either: flush unpins its stale region). */
	fake_backend_stats(b, &fs);
	if (how != VIA_NONE)
		CHECK_EQ(fs.pins - fs.unpins, 2);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
	tap_diag("%-9s size %7zu: %s", names[how], size, fresh ? "fresh" : "STALE");
	return fresh;
}

/* A registration in use when its memory is freed: reported invalid, the
 * next lookup pins anew, and the old one is unpinned at its last put. */
static void in_use(enum how how)
{
	static const unsigned modes[] = { GDIRECT_INV_KERNEL, GDIRECT_INV_HOOKS,
					  GDIRECT_INV_BUFFER_ID };
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_reg *old, *r;
	struct gdirect_reg_info ri;
	struct fake_stats fs;

	params(&p, modes[how]);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){
		.revoke_on_free = how == VIA_KERNEL }, &b);
	uint64_t x = fake_cuda_alloc(128 * KiB);

	CHECK_EQ(gdirect_reg_get(c, P(x), 128 * KiB, 0, &old), 0);
	cuda_free(x, how);
	CHECK_EQ(fake_cuda_alloc(128 * KiB), x);
	CHECK_EQ(gdirect_reg_get(c, P(x), 128 * KiB, 0, &r), 0);
	CHECK(r != old);
	CHECK_EQ(gdirect_reg_info(old, &ri), 0);
	CHECK(!ri.valid);
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.unpins, 0);		/* still referenced */
	gdirect_reg_put(old);
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.unpins, 1);
	gdirect_reg_put(r);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* Hooks: the unpin is deferred out of the hook to the next library call. */
static void deferred(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_reg *r;
	struct fake_stats fs;

	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	uint64_t x = fake_cuda_alloc(64 * KiB);

	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
	gdirect_reg_put(r);
	gdirect_notify_free(P(x), 64 * KiB);
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.unpins, 0);
	CHECK_EQ(gdirect_process_events(c), 1);
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.unpins, 1);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/* Kernel: a revocation seen through the event queue, with no lookup. */
static void kernel_events(void)
{
	struct gdirect_params p;
	struct gdl_backend *b;
	struct gdirect_reg *r;
	struct gdirect_stats st;
	struct fake_stats fs;

	params(&p, GDIRECT_INV_KERNEL);
	struct gdirect_ctx *c = mkctx(&p, &(struct fake_cfg){ 0 }, &b);
	uint64_t x = fake_cuda_alloc(64 * KiB);

	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
	gdirect_reg_put(r);
	CHECK_EQ(fake_backend_revoke(b, x, 1), 1);
	CHECK_EQ(gdirect_process_events(c), 1);
	gdirect_stats(c, &st);
	CHECK_EQ(st.inv_kernel, 1);
	CHECK_EQ(st.regions, 0);
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.unpins, 1);		/* a revoked handle still needs UNPIN */
	/* And the status word alone, before any event is read. */
	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
	gdirect_reg_put(r);
	CHECK_EQ(fake_backend_revoke(b, x, 1), 1);
	CHECK_EQ(gdirect_reg_get(c, P(x), 1, 0, &r), 0);
	gdirect_stats(c, &st);
	CHECK_EQ(st.inv_kernel, 2);
	CHECK_EQ(st.misses, 3);
	gdirect_reg_put(r);
	gdirect_ctx_destroy(c);
	fake_cuda_reset();
}

/*
 * With gdirect.ko pinning persistently (use_persistent=Y) nothing is ever
 * revoked: kernel mode alone cannot see a free, so the context is refused
 * with a sentence saying so; any set with another mode is accepted.
 */
static void persistent_pins(void)
{
	static const unsigned ok[] = {
		GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS, GDIRECT_INV_HOOKS,
		GDIRECT_INV_BUFFER_ID, GDIRECT_INV_KERNEL | GDIRECT_INV_BUFFER_ID,
	};
	struct fake_cfg cfg = { .persistent = true };
	struct gdirect_params p;
	struct gdirect_ctx *c = NULL;
	struct gdl_backend *b = fake_backend_over_cuda(&cfg);

	CHECK(b);
	params(&p, GDIRECT_INV_KERNEL);
	CHECK_EQ(gdl_ctx_create_backend(&p, b, &c), -EINVAL);
	CHECK(strstr(gdirect_errmsg(), "use_persistent=Y"));
	tap_diag("kernel alone, persistent pins: %s", gdirect_errmsg());
	b->ops->destroy(b);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		params(&p, ok[i]);
		c = mkctx(&p, &cfg, NULL);
		gdirect_ctx_destroy(c);
	}
	/* Callback pins: kernel alone is fine. */
	params(&p, GDIRECT_INV_KERNEL);
	c = mkctx(&p, &(struct fake_cfg){ .revoke_on_free = true }, NULL);
	gdirect_ctx_destroy(c);
}

/*
 * A free reported while a miss pins the same range (after the pages are
 * pinned, before the miss publishes the region): the region must not be
 * cached, since the memory it pinned is gone.  Here the buffer is freed and
 * a new one allocated at the same address from inside the pin; the
 * registration handed out, and every later one, must be the new buffer's.
 */
struct race {
	uint64_t x, y;
	size_t size;
	int fired;
};

static void free_inside_pin(void *arg)
{
	struct race *rc = arg;

	if (rc->fired++)
		return;
	gdirect_notify_free(P(rc->x), rc->size);	/* the hooks */
	CHECK_EQ(cuMemFree_v2(rc->x), CUDA_SUCCESS);
	rc->y = fake_cuda_alloc(rc->size);
	CHECK_EQ(rc->y, rc->x);		/* the same address, new memory */
}

static void free_during_pin(void)
{
	struct race rc = { .size = 128 * KiB };
	struct fake_cfg cfg = { .after_pin = free_inside_pin, .after_pin_arg = &rc };
	struct gdirect_params p;
	struct gdirect_reg *r;
	struct gdirect_reg_info ri;
	struct gdl_backend *b;
	struct fake_stats fs;

	params(&p, GDIRECT_INV_HOOKS);
	struct gdirect_ctx *c = mkctx(&p, &cfg, &b);

	rc.x = fake_cuda_alloc(rc.size);
	CHECK_EQ(gdirect_reg_get(c, P(rc.x), 64 * KiB, 0, &r), 0);
	CHECK_EQ(rc.fired, 2);		/* the first pin raced, the second did not */
	CHECK_EQ(gdirect_reg_info(r, &ri), 0);
	CHECK(fake_backend_pin_covers(b, ri.kernel_handle, fake_cuda_buffer_id_at(rc.y)));
	gdirect_reg_put(r);
	CHECK_EQ(gdirect_reg_get(c, P(rc.y), 64 * KiB, 0, &r), 0);
	CHECK_EQ(gdirect_reg_info(r, &ri), 0);
	CHECK(fake_backend_pin_covers(b, ri.kernel_handle, fake_cuda_buffer_id_at(rc.y)));
	gdirect_reg_put(r);
	gdirect_process_events(c);
	fake_backend_stats(b, &fs);
	CHECK_EQ(fs.pins, 2);
	CHECK_EQ(fs.unpins, 1);		/* the raced pin, given back */
	gdirect_ctx_destroy(c);
	CHECK_EQ(cuMemFree_v2(rc.y), CUDA_SUCCESS);
	tap_diag("free during a pin: the raced pin was not cached");
}

/* The case tap_test() runs next: a mode and a size. */
static enum how cur_how;
static size_t cur_size;

static void realloc_fresh(void)
{
	CHECK(realloc_case(cur_how, cur_size));
}

static void realloc_stale_without_a_mode(void)
{
	CHECK(!realloc_case(cur_how, cur_size));
}

static void in_use_case(void)
{
	in_use(cur_how);
}

int main(void)
{
	static const size_t sizes[] = { 4 * KiB, 100 * KiB, 1 * MiB };
	char what[80];

	need_fake_cuda();
	for (int how = VIA_KERNEL; how <= VIA_TAGS; how++)
		for (size_t i = 0; i < 3; i++) {
			cur_how = how;
			cur_size = sizes[i];
			snprintf(what, sizeof(what), "%s, %zu B: re-allocated memory gets a fresh registration",
				 names[how], sizes[i]);
			tap_test(what, realloc_fresh);
		}
	/* Control: with no mode the stale registration is handed out, and
	 * the oracle above sees it. */
	cur_how = VIA_NONE;
	cur_size = 1 * MiB;
	tap_test("control, no mode: the stale registration is seen", realloc_stale_without_a_mode);
	for (int how = VIA_KERNEL; how <= VIA_TAGS; how++) {
		cur_how = how;
		snprintf(what, sizeof(what), "%s: a registration in use when freed", names[how]);
		tap_test(what, in_use_case);
	}
	TAP_TEST(deferred);
	TAP_TEST(kernel_events);
	TAP_TEST(persistent_pins);
	TAP_TEST(free_during_pin);
	return tap_done();
}
