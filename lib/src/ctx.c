/* SPDX-License-Identifier: MIT */
/*
 * ctx.c - contexts: parameters, creation, destruction, fork.  The
 * statistics they count are stats.c's.
 *
 * Fork: gdirect.ko refuses ioctls and mmaps from any process but the one
 * that opened the device, and BAR mappings are not inherited.  So in a
 * child every call on an inherited context fails with -EPERM, except
 * gdirect_stats() and gdirect_ctx_destroy(), which frees the child's copy
 * without touching the parent's pins (or any lock another thread might
 * have held at fork time).  An inherited registration is inert: its put
 * only counts, mapping it fails (rcache.c).  The parent is unaffected.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stdio.h>

#include "copy.h"
#include "cuda_dl.h"
#include "epoch.h"
#include "libgdirect_internal.h"
#include "regcache.h"
#include "parse.h"

_Atomic uint64_t gdl_fork_gen;

__thread uint64_t gdl_my_seq __attribute__((tls_model("initial-exec")));

static pthread_mutex_t ctx_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gdirect_ctx *ctx_list;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void atfork_child(void)
{
	atomic_fetch_add(&gdl_fork_gen, 1);
	gdl_epoch_atfork_child();
	gdl_tc_atfork_child();
	pthread_mutex_init(&ctx_list_lock, NULL);
}

static void atfork_register(void)
{
	pthread_atfork(NULL, NULL, atfork_child);
}

void gdl_ctx_list_add(struct gdirect_ctx *c)
{
	pthread_mutex_lock(&ctx_list_lock);
	c->reg_next = ctx_list;
	ctx_list = c;
	pthread_mutex_unlock(&ctx_list_lock);
}

void gdl_ctx_list_del(struct gdirect_ctx *c)
{
	pthread_mutex_lock(&ctx_list_lock);
	for (struct gdirect_ctx **pp = &ctx_list; *pp; pp = &(*pp)->reg_next)
		if (*pp == c) {
			*pp = c->reg_next;
			break;
		}
	pthread_mutex_unlock(&ctx_list_lock);
}

void gdl_ctx_list_foreach(void (*fn)(struct gdirect_ctx *, void *), void *arg)
{
	pthread_mutex_lock(&ctx_list_lock);
	for (struct gdirect_ctx *c = ctx_list; c; c = c->reg_next)
		if (!gdl_inherited(c))
			fn(c, arg);
	pthread_mutex_unlock(&ctx_list_lock);
}

/* gdirect_params.reserved[GDL_ENV_BAD]: the environment was not understood
 * when gdirect_params_init() read it; check_params() says why. */
#define GDL_ENV_BAD 6
#define GDL_ENV_BAD_MARK 0x67646972656e76ULL

/* The value of environment variable name, NULL when unset or empty. */
static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/*
 * Apply the environment to *p.  0, or -EINVAL with a sentence naming the
 * variable in why.
 */
static int env_apply(struct gdirect_params *p, char *why, size_t n)
{
	char w[220];
	const char *v, *name;
	uint64_t x;
	bool b;

	if ((v = env(name = "GDIRECT_INVALIDATION"))) {
		uint32_t m;

		if (gdl_parse_modes(v, &m, &b, w, sizeof(w)))
			goto bad;
		p->invalidation = m;
		if (b)
			p->flags |= GDIRECT_CTX_NO_INVALIDATION;
	}
	if ((v = env(name = "GDIRECT_MAX_REGIONS"))) {
		if (gdl_parse_uint(v, 0, GDL_MAX_REGIONS_LIMIT, &x, w,
				   sizeof(w)))
			goto bad;
		p->max_regions = x;
	}
	if ((v = env(name = "GDIRECT_MAX_BYTES"))) {
		if (gdl_parse_size(v, 0, GDL_MAX_BYTES_LIMIT, &x, w, sizeof(w)))
			goto bad;
		p->max_bytes = x;
	}
	if ((v = env(name = "GDIRECT_WHOLE_ALLOC_MAX"))) {
		if (gdl_parse_size(v, 0, GDL_MAX_BYTES_LIMIT, &x, w, sizeof(w)))
			goto bad;
		p->whole_alloc_max = x;
	}
	if ((v = env(name = "GDIRECT_MR_PATH"))) {
		uint32_t m;

		if (gdl_parse_mr_path(v, &m, w, sizeof(w)))
			goto bad;
		p->mr_path = m;
	}
	if ((v = env(name = "GDIRECT_DEVICE"))) {
		if (v[0] != '/')
			goto not_absolute;
		p->device_path = v;
	}
	if ((v = env(name = "GDIRECT_PUBLISH_STATS"))) {
		if (gdl_parse_bool(v, &b, w, sizeof(w)))
			goto bad;
		if (b)
			p->flags |= GDIRECT_CTX_PUBLISH_STATS;
	}
	if ((v = env(name = "GDIRECT_STATS_DIR")) && v[0] != '/')
		goto not_absolute;
	if ((v = env(name = "GDIRECT_STATS_BASE")) && v[0] != '/')
		goto not_absolute;
	if ((v = env(name = "GDIRECT_PUBLISH_INTERVAL_MS")) &&
	    gdl_parse_uint(v, GDL_PUBLISH_MIN_MS, GDL_PUBLISH_MAX_MS, &x, w,
			   sizeof(w)))
		goto bad;
	if ((v = env(name = "GDIRECT_COPY")) && gdl_copy_check(v, w, sizeof(w)))
		goto bad;
	return 0;
not_absolute:
	snprintf(w, sizeof(w), "\"%s\" is not an absolute path", v);
bad:
	snprintf(why, n, "%s: %s", name, w);
	return -EINVAL;
}

GDL_EXPORT void gdirect_params_init(struct gdirect_params *p)
{
	char why[256];

	memset(p, 0, sizeof(*p));
	p->invalidation = GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS;
	p->max_regions = 1024;
	p->max_bytes = 1ULL << 30;
	p->whole_alloc_max = 32ULL << 20;
	p->device_path = "/dev/gdirect";
	if (env_apply(p, why, sizeof(why)))
		p->reserved[GDL_ENV_BAD] = GDL_ENV_BAD_MARK;
}

/* 0, or -EINVAL with the reason set for gdirect_errmsg(). */
static int check_params(const struct gdirect_params *p)
{
	const uint32_t flags = GDIRECT_CTX_CACHE_HOST | GDIRECT_CTX_PUBLISH_STATS |
			       GDIRECT_CTX_NO_INVALIDATION;

	if (p->reserved[GDL_ENV_BAD] == GDL_ENV_BAD_MARK) {
		struct gdirect_params scratch;
		char why[256];

		memset(&scratch, 0, sizeof(scratch));
		if (env_apply(&scratch, why, sizeof(why)))
			return gdl_err(-EINVAL, "%s", why);
		return gdl_err(-EINVAL, "the environment gdirect_params_init() "
			      "read held a setting it could not understand");
	}
	for (size_t i = 0; i < sizeof(p->reserved) / sizeof(p->reserved[0]); i++)
		if (p->reserved[i])
			return gdl_err(-EINVAL,
				       "gdirect_params.reserved must be zero");
	if (p->reserved32)
		return gdl_err(-EINVAL,
			       "gdirect_params.reserved32 must be zero");
	if (p->mr_path > GDIRECT_MR_PATH_PEER)
		return gdl_err(-EINVAL, "unknown registration path %u "
			       "(GDIRECT_MR_PATH_AUTO, _DMABUF or _PEER)",
			       p->mr_path);
	if (p->invalidation & ~GDIRECT_INV_ALL)
		return gdl_err(-EINVAL, "unknown invalidation mode bits 0x%x",
			       p->invalidation & ~GDIRECT_INV_ALL);
	if (p->flags & ~flags)
		return gdl_err(-EINVAL, "unknown context flags 0x%x",
			       p->flags & ~flags);
	if (!p->invalidation && !(p->flags & GDIRECT_CTX_NO_INVALIDATION))
		return gdl_err(-EINVAL, "no invalidation mode chosen: a freed "
			       "and reallocated buffer could be handed a stale "
			       "registration; choose kernel, hooks or "
			       "buffer_id (or opt out with "
			       "GDIRECT_CTX_NO_INVALIDATION, "
			       "GDIRECT_INVALIDATION=" GDL_PARSE_NO_INVALIDATION
			       ")");
	if (p->invalidation && p->flags & GDIRECT_CTX_NO_INVALIDATION)
		return gdl_err(-EINVAL, "GDIRECT_CTX_NO_INVALIDATION with "
			       "invalidation modes chosen: pick one");
	return 0;
}

/*
 * The chosen modes must be able to see a free.  gdirect.ko revocation
 * cannot when gdirect.ko pins persistently (its use_persistent=Y): a
 * persistent pin gets no free callback, so kernel mode alone would keep a
 * stale registration.  Refuse rather than run unsafe.
 */
static int check_modes_backend(const struct gdirect_params *p,
			       const struct gdl_backend *b)
{
	if (b && b->persistent && p->invalidation == GDIRECT_INV_KERNEL)
		return gdl_err(-EINVAL, "invalidation mode kernel alone cannot "
			      "see frees: gdirect.ko pins persistently "
			      "(use_persistent=Y), so there is no revocation; "
			      "add hooks or buffer_id (GDIRECT_INVALIDATION="
			      "kernel,hooks)");
	return 0;
}

GDL_EXPORT int gdl_ctx_create_backend(const struct gdirect_params *p,
				      struct gdl_backend *b,
				      struct gdirect_ctx **out)
{
	struct gdirect_ctx *c;
	int rc;

	pthread_once(&atfork_once, atfork_register);
	gdl_epoch_init();
	/* Cache-line aligned: the hit counters' shards each own a line. */
	c = aligned_alloc(64, (sizeof(*c) + 63) & ~(size_t)63);
	if (!c)
		return gdl_err(-ENOMEM, "out of memory");
	memset(c, 0, sizeof(*c));
	if (p)
		c->p = *p;
	else
		gdirect_params_init(&c->p);
	rc = check_params(&c->p);
	if (!rc)
		rc = check_modes_backend(&c->p, b);
	/* The driver loads now, not on a hot path. */
	if (!rc && gdl_cuda_named_error())
		rc = gdl_err(-EINVAL, "%s", gdl_cuda_named_error());
	if (rc) {
		free(c);
		return rc;
	}
	gdl_hpmem_init(&c->regmem, sizeof(struct gdirect_reg),
		      sizeof(struct gdl_reg_cold));
	if (gdl_pgtab_init(&c->index) || gdl_slotab_init(&c->slots) ||
	    gdl_allocs_init(c) || gdl_regions_init(c)) {
		gdl_pgtab_destroy(&c->index);
		gdl_slotab_destroy(&c->slots);
		gdl_pgtab_destroy(&c->allocs);
		gdl_hpmem_destroy(&c->regmem);
		free(c);
		return gdl_err(-ENOMEM, "out of memory");
	}
	c->backend = b;
	c->fork_gen = atomic_load(&gdl_fork_gen);
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->pin_done, NULL);
	pthread_cond_init(&c->released, NULL);
#ifdef GDL_HAVE_VERBS
	if (gdl_mr_init(c)) {
		pthread_cond_destroy(&c->pin_done);
		pthread_cond_destroy(&c->released);
		pthread_mutex_destroy(&c->lock);
		gdl_pgtab_destroy(&c->index);
		gdl_slotab_destroy(&c->slots);
		gdl_allocs_free_all(c);
		gdl_hpmem_destroy(&c->regmem);
		free(c);
		return gdl_err(-ENOMEM, "out of memory");
	}
#endif
	gdl_ctx_list_add(c);
	rc = gdl_publish_start(c);

	if (rc) {
		c->backend = NULL;	/* the caller's to destroy */
		gdirect_ctx_destroy(c);
		return rc;
	}
	*out = c;
	return 0;
}

GDL_EXPORT int gdirect_ctx_create(const struct gdirect_params *p,
				 struct gdirect_ctx **out)
{
	struct gdirect_params def;
	struct gdl_backend *b = NULL;
	int rc;

	if (!out)
		return gdl_err(-EINVAL, "invalid argument");
	if (!p) {
		gdirect_params_init(&def);
		p = &def;
	}
	rc = check_params(p);
	if (rc)
		return rc;
	rc = gdl_backend_kernel_open(p->device_path ? p->device_path :
				    "/dev/gdirect", &b);
	if (rc && rc != -ENOENT && rc != -ENODEV && rc != -ENXIO)
		return gdl_err(rc, "opening %s failed: %s", p->device_path,
			      strerror(-rc));
	rc = gdl_ctx_create_backend(p, rc ? NULL : b, out);
	if (rc && b)
		b->ops->destroy(b);
	return rc;
}

/* In a fork child: free our copy without locks, ioctls or unmaps. */
static void destroy_in_child(struct gdirect_ctx *c)
{
	/* Regions live in c->regmem: retired ones are freed into it by the
	 * next reclaim, so reclaim them all now (in the child only this
	 * thread is left, and the epoch state was reset), then unmap it. */
	gdl_epoch_barrier();
	gdl_publish_drop_in_child(c);
	gdl_rc_destroy(c->mr, true);
	c->mr = NULL;
	gdl_hpmem_destroy(&c->regmem);
	gdl_pgtab_destroy(&c->index);
	gdl_slotab_destroy(&c->slots);
	gdl_allocs_free_all(c);
	if (c->backend && c->backend->event_fd >= 0)
		close(c->backend->event_fd);
	free(c);
}

GDL_EXPORT void gdirect_ctx_destroy(struct gdirect_ctx *c)
{
	bool leaked;

	if (!c)
		return;
	if (gdl_inherited(c)) {
		destroy_in_child(c);
		return;
	}
	gdl_publish_stop(c);
	gdl_ctx_list_del(c);
	gdl_rc_destroy(c->mr, false);
	c->mr = NULL;
	gdl_drain(c);
	pthread_mutex_lock(&c->lock);
	while (!gdl_list_empty(&c->live)) {
		struct gdirect_reg *r = gdl_reg_of(c->live.next);

		gdl_kill_locked(c, &r, 1, GDL_CAUSE_FLUSH, NULL);
	}
	pthread_mutex_unlock(&c->lock);
	gdl_release_try(c);
	gdl_drain(c);
	/* Still on the dying list: still referenced, the caller broke the
	 * contract.  Its holder may still read it: keep the memory. */
	leaked = !gdl_list_empty(&c->dying);
	gdl_epoch_barrier();
	if (!leaked)
		gdl_hpmem_destroy(&c->regmem);
	gdl_pgtab_destroy(&c->index);
	gdl_slotab_destroy(&c->slots);
	gdl_allocs_free_all(c);
	if (c->backend)
		c->backend->ops->destroy(c->backend);
	pthread_cond_destroy(&c->pin_done);
	pthread_cond_destroy(&c->released);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

GDL_EXPORT int gdirect_event_fd(struct gdirect_ctx *c)
{
	return c && c->backend ? c->backend->event_fd : -1;
}
