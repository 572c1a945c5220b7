/* SPDX-License-Identifier: MIT */
/*
 * ctx.c - contexts: parameters, creation, destruction, statistics, fork.
 *
 * Fork: gdirect.ko refuses ioctls and mmaps from any process but the one
 * that opened the device, and BAR mappings are not inherited.  So in a
 * child every call on an inherited context fails with -EPERM, except
 * gdirect_stats() and gdirect_ctx_destroy(), which frees the child's copy
 * without touching the parent's pins (or any lock another thread might
 * have held at fork time).  The parent is unaffected.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_dl.h"
#include "epoch.h"
#include "internal.h"

_Atomic uint64_t gd_fork_gen;

__thread unsigned gd_my_shard __attribute__((tls_model("initial-exec")));
__thread uint64_t gd_my_seq __attribute__((tls_model("initial-exec")));

/* Bit i: shard i has a live owner (who writes it without atomics). */
static _Atomic uint32_t shards_owned;
static _Atomic unsigned next_shared;
static pthread_key_t shard_key;
static pthread_once_t shard_once = PTHREAD_ONCE_INIT;

/* At thread exit: the shard is free for a new thread.  The release and
 * the next owner's claim order its writes after ours. */
static void shard_release(void *p)
{
	unsigned i = (unsigned)(uintptr_t)p - 1;

	gd_my_shard = 0;
	atomic_fetch_and(&shards_owned, ~(1u << i));
}

static void shard_key_make(void)
{
	pthread_key_create(&shard_key, shard_release);
}

unsigned gd_shard_assign(void)
{
	uint32_t v;

	pthread_once(&shard_once, shard_key_make);
	v = atomic_load(&shards_owned);
	while (v != (1u << GD_SHARDS) - 1) {
		unsigned i = (unsigned)__builtin_ctz(~v);

		if (atomic_compare_exchange_weak(&shards_owned, &v, v | 1u << i)) {
			if (pthread_setspecific(shard_key, (void *)(uintptr_t)(i + 1))) {
				/* Cannot learn of our exit: give it back. */
				atomic_fetch_and(&shards_owned, ~(1u << i));
				break;
			}
			gd_my_shard = 1 + i;
			return i;
		}
	}
	gd_my_shard = 1 + GD_SHARDS +
		      atomic_fetch_add(&next_shared, 1) % GD_SHARDS_SHARED;
	return gd_my_shard - 1;
}

static pthread_mutex_t ctx_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gdirect_ctx *ctx_list;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void atfork_child(void)
{
	atomic_fetch_add(&gd_fork_gen, 1);
	gd_epoch_atfork_child();
	pthread_mutex_init(&ctx_list_lock, NULL);
}

static void atfork_register(void)
{
	pthread_atfork(NULL, NULL, atfork_child);
}

void gd_ctx_list_add(struct gdirect_ctx *c)
{
	pthread_mutex_lock(&ctx_list_lock);
	c->reg_next = ctx_list;
	ctx_list = c;
	pthread_mutex_unlock(&ctx_list_lock);
}

void gd_ctx_list_del(struct gdirect_ctx *c)
{
	pthread_mutex_lock(&ctx_list_lock);
	for (struct gdirect_ctx **pp = &ctx_list; *pp; pp = &(*pp)->reg_next)
		if (*pp == c) {
			*pp = c->reg_next;
			break;
		}
	pthread_mutex_unlock(&ctx_list_lock);
}

void gd_ctx_list_foreach(void (*fn)(struct gdirect_ctx *, void *), void *arg)
{
	pthread_mutex_lock(&ctx_list_lock);
	for (struct gdirect_ctx *c = ctx_list; c; c = c->reg_next)
		if (c->fork_gen == atomic_load(&gd_fork_gen))
			fn(c, arg);
	pthread_mutex_unlock(&ctx_list_lock);
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long x;

	if (!v || !*v)
		return def;
	x = strtoull(v, &end, 0);
	switch (*end) {
	case 'k': case 'K': x <<= 10; break;
	case 'm': case 'M': x <<= 20; break;
	case 'g': case 'G': x <<= 30; break;
	default: break;
	}
	return x;
}

static uint32_t parse_modes(const char *v)
{
	uint32_t m = 0;
	const char *p = v;

	while (*p) {
		size_t n = strcspn(p, ",");

		if (n == 6 && !strncmp(p, "kernel", n))
			m |= GDIRECT_INV_KERNEL;
		else if (n == 5 && !strncmp(p, "hooks", n))
			m |= GDIRECT_INV_HOOKS;
		else if (n == 9 && !strncmp(p, "buffer_id", n))
			m |= GDIRECT_INV_BUFFER_ID;
		else if (n == 3 && !strncmp(p, "all", n))
			m |= GDIRECT_INV_ALL;
		p += n;
		if (*p)
			p++;
	}
	return m;
}

GD_EXPORT void gdirect_params_init(struct gdirect_params *p)
{
	const char *v;

	memset(p, 0, sizeof(*p));
	p->invalidation = GDIRECT_INV_KERNEL | GDIRECT_INV_HOOKS;
	p->max_regions = 1024;
	p->max_bytes = 1ULL << 30;
	p->whole_alloc_max = 32ULL << 20;
	p->device_path = "/dev/gdirect";
	v = getenv("GDIRECT_INVALIDATION");
	if (v && *v)
		p->invalidation = parse_modes(v);
	p->max_regions = env_u64("GDIRECT_MAX_REGIONS", p->max_regions);
	p->max_bytes = env_u64("GDIRECT_MAX_BYTES", p->max_bytes);
	p->whole_alloc_max = env_u64("GDIRECT_WHOLE_ALLOC_MAX", p->whole_alloc_max);
	v = getenv("GDIRECT_DEVICE");
	if (v && *v)
		p->device_path = v;
	v = getenv("GDIRECT_PUBLISH_STATS");
	if (v && *v && strcmp(v, "0"))
		p->flags |= GDIRECT_CTX_PUBLISH_STATS;
}

static int check_params(const struct gdirect_params *p)
{
	if (p->invalidation & ~GDIRECT_INV_ALL ||
	    p->flags & ~(GDIRECT_CTX_CACHE_HOST | GDIRECT_CTX_PUBLISH_STATS))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(p->reserved) / sizeof(p->reserved[0]); i++)
		if (p->reserved[i])
			return -EINVAL;
	return 0;
}

GD_EXPORT int gd_ctx_create_backend(const struct gdirect_params *p, struct gd_backend *b,
			  struct gdirect_ctx **out)
{
	struct gdirect_ctx *c;

	pthread_once(&atfork_once, atfork_register);
	gd_epoch_init();
	/* Cache-line aligned: the hit counters' shards each own a line. */
	c = aligned_alloc(64, (sizeof(*c) + 63) & ~(size_t)63);
	if (!c)
		return gd_err(-ENOMEM, "out of memory");
	memset(c, 0, sizeof(*c));
	if (p)
		c->p = *p;
	else
		gdirect_params_init(&c->p);
	if (check_params(&c->p)) {
		free(c);
		return gd_err(-EINVAL, "invalid parameters");
	}
	gd_hpmem_init(&c->regmem, sizeof(struct gdirect_reg),
		      sizeof(struct gd_reg_cold));
	if (gd_pgtab_init(&c->index) || gd_allocs_init(c)) {
		gd_pgtab_destroy(&c->index);
		gd_pgtab_destroy(&c->allocs);
		free(c);
		return gd_err(-ENOMEM, "out of memory");
	}
	c->backend = b;
	c->fork_gen = atomic_load(&gd_fork_gen);
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->pin_done, NULL);
	pthread_cond_init(&c->released, NULL);
	c->regions.next = c->regions.prev = &c->regions;
	gd_cuda_available();	/* load the driver now, not on a hot path */
	gd_ctx_list_add(c);
	int rc = gd_publish_start(c);

	if (rc) {
		c->backend = NULL;	/* the caller's to destroy */
		gdirect_ctx_destroy(c);
		return rc;
	}
	*out = c;
	return 0;
}

GD_EXPORT int gdirect_ctx_create(const struct gdirect_params *p,
				 struct gdirect_ctx **out)
{
	struct gdirect_params def;
	struct gd_backend *b = NULL;
	int rc;

	if (!out)
		return gd_err(-EINVAL, "invalid argument");
	if (!p) {
		gdirect_params_init(&def);
		p = &def;
	}
	if (check_params(p))
		return gd_err(-EINVAL, "invalid parameters");
	rc = gd_backend_kernel_open(p->device_path ? p->device_path :
				    "/dev/gdirect", &b);
	if (rc && rc != -ENOENT && rc != -ENODEV && rc != -ENXIO)
		return gd_err(rc, "opening %s failed: %s", p->device_path,
			      strerror(-rc));
	rc = gd_ctx_create_backend(p, rc ? NULL : b, out);
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
	gd_epoch_barrier();
	gd_publish_drop_in_child(c);
	gd_hpmem_destroy(&c->regmem);
	gd_pgtab_destroy(&c->index);
	gd_allocs_free_all(c);
	if (c->backend && c->backend->event_fd >= 0)
		close(c->backend->event_fd);
	free(c);
}

GD_EXPORT void gdirect_ctx_destroy(struct gdirect_ctx *c)
{
	struct gdirect_reg *release = NULL;
	bool leaked = false;

	if (!c)
		return;
	if (atomic_load(&gd_fork_gen) != c->fork_gen) {
		destroy_in_child(c);
		return;
	}
	gd_publish_stop(c);
	gd_ctx_list_del(c);
	gd_drain(c);
	pthread_mutex_lock(&c->lock);
	while (c->regions.next != &c->regions) {
		struct gdirect_reg *r = c->regions.next;

		gd_kill_locked(c, &r, 1, GD_CAUSE_FLUSH, &release);
		if (c->regions.next == r) {
			/* Still referenced: the caller broke the contract.
			 * Force it dead so the loop ends; it leaks. */
			uint32_t v = atomic_load(&r->refs);

			atomic_store(&r->refs, GD_DEAD | GD_REFS(v));
			r->prev->next = r->next;
			r->next->prev = r->prev;
			leaked = true;
		}
	}
	pthread_mutex_unlock(&c->lock);
	gd_release_list(release);
	gd_drain(c);
	gd_epoch_barrier();
	if (!leaked)	/* else its holder may still read it: keep it */
		gd_hpmem_destroy(&c->regmem);
	gd_pgtab_destroy(&c->index);
	gd_allocs_free_all(c);
	if (c->backend)
		c->backend->ops->destroy(c->backend);
	pthread_cond_destroy(&c->pin_done);
	pthread_cond_destroy(&c->released);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

GD_EXPORT void gdirect_stats(struct gdirect_ctx *c, struct gdirect_stats *st)
{
	if (!c || !st)
		return;
	memset(st, 0, sizeof(*st));
#define CP(f) st->f = atomic_load_explicit(&c->st.f, memory_order_relaxed);
	GD_COUNTER_FIELDS(CP)
#undef CP
	for (int i = 0; i < GD_SHARDS + GD_SHARDS_SHARED; i++) {
		st->hits += atomic_load_explicit(&c->shard[i].hits,
						 memory_order_relaxed);
		st->classify_hits += atomic_load_explicit(&c->shard[i].classify_hits,
							  memory_order_relaxed);
	}
}

GD_EXPORT int gdirect_event_fd(struct gdirect_ctx *c)
{
	return c && c->backend ? c->backend->event_fd : -1;
}
