// SPDX-License-Identifier: GPL-2.0
/*
 * mem.c - GPU memory allocations of the emulated GPU
 *
 * An allocation is a run of 64 KiB granules of BAR2 bound to a GPU virtual
 * address of one process.  It is referenced by its owner until freed and by
 * each persistent pin, so memory pinned persistently outlives cuMemFree as
 * it does with the NVIDIA driver.  The VA is released at free time: the same
 * VA can be backed again at once, while the old memory is still pinned.
 */
#include <linux/slab.h>

#include "emu.h"

static void emu_alloc_release(struct kref *ref)
{
	struct emu_alloc *a = container_of(ref, struct emu_alloc, ref);

	gen_pool_free(emu->pool, emu->mem_phys + a->mem_offset, a->size);
	emu->mem_used -= a->size;
	emu->nr_allocs--;
	a->user->bytes -= a->size;
	emu_user_put(a->user);
	kfree(a);
}

/* Drop a reference; the memory goes back to the pool with the last one. */
void emu_alloc_put(struct emu_alloc *a)
{
	lockdep_assert_held(&emu->lock);
	kref_put(&a->ref, emu_alloc_release);
}

static bool range_inside(u64 va, u64 len, u64 start, u64 size)
{
	return va >= start && len <= size && va - start <= size - len;
}

/*
 * Find the live allocation of process @tgid that wholly contains
 * [va, va + len).  A range that straddles two allocations is not found:
 * get_pages requires one allocation (kernel_p2p.md 2.2).
 */
struct emu_alloc *emu_alloc_find(pid_t tgid, u64 va, u64 len)
{
	struct emu_file *f;
	struct emu_alloc *a;

	lockdep_assert_held(&emu->lock);
	list_for_each_entry(f, &emu->files, node) {
		if (f->tgid != tgid)
			continue;
		list_for_each_entry(a, &f->allocs, node)
			if (range_inside(va, len, a->va, a->size))
				return a;
	}
	return NULL;
}

struct emu_file *emu_file_by_token(u64 p2p_token, u32 va_space)
{
	struct emu_file *f;

	lockdep_assert_held(&emu->lock);
	list_for_each_entry(f, &emu->files, node)
		if (f->p2p_token == p2p_token && f->va_space == va_space)
			return f;
	return NULL;
}

/**
 * emu_user_get() - the memory account of @uid, for a new open file
 * @uid: the opener
 *
 * Return: the account with one more file, or NULL (no memory).
 */
struct emu_user *emu_user_get(kuid_t uid)
{
	struct emu_user *u;

	lockdep_assert_held(&emu->lock);
	list_for_each_entry(u, &emu->users, node) {
		if (uid_eq(u->uid, uid)) {
			u->files++;
			return u;
		}
	}
	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u)
		return NULL;
	u->uid = uid;
	u->files = 1;
	list_add_tail(&u->node, &emu->users);
	return u;
}

/* Free @u once no file and no allocation of its user is left. */
void emu_user_put(struct emu_user *u)
{
	lockdep_assert_held(&emu->lock);
	if (u->files || u->bytes)
		return;
	list_del(&u->node);
	kfree(u);
}

static bool emu_va_taken(struct emu_file *f, u64 va, u64 size)
{
	struct emu_alloc *b;

	lockdep_assert_held(&emu->lock);
	list_for_each_entry(b, &f->allocs, node)
		if (va < b->va + b->size && b->va < va + size)
			return true;
	return false;
}

/**
 * emu_alloc_create() - allocate GPU memory at a VA of @f's process
 * @f: the open file
 * @va: GPU VA, 64 KiB-aligned, not yet backed in @f
 * @size: bytes, 64 KiB-aligned, at most the GPU's memory
 * @out: the allocation
 *
 * Return: 0; -EEXIST if the VA range is backed already; -ENOMEM without
 * free GPU memory, beyond max_mem_per_user_mb, or without kernel memory.
 */
int emu_alloc_create(struct emu_file *f, u64 va, u64 size,
		     struct emu_alloc **out)
{
	u64 cap = (u64)READ_ONCE(emu_max_mem_per_user_mb) << 20;
	unsigned long phys = 0;
	struct emu_alloc *a;
	int ret = 0;

	a = kzalloc(sizeof(*a), GFP_KERNEL_ACCOUNT);
	if (!a)
		return -ENOMEM;

	mutex_lock(&emu->lock);
	if (emu_va_taken(f, va, size))
		ret = -EEXIST;
	else if (cap && f->user->bytes + size > cap)
		ret = -ENOMEM;
	else
		phys = gen_pool_alloc(emu->pool, size);
	if (!ret && !phys)
		ret = -ENOMEM;
	if (!ret)
		f->user->bytes += size;	/* seen by a racing allocation */
	mutex_unlock(&emu->lock);
	if (ret)
		goto err_free;

	/*
	 * A GPU hands out cleared memory: never another process's data.
	 * Zeroed with no lock held (it takes long for large sizes): nobody
	 * can reach the memory before it is on f->allocs.
	 */
	memset_io(emu->mem + (phys - emu->mem_phys), 0, size);

	mutex_lock(&emu->lock);
	if (emu_va_taken(f, va, size)) {
		/* Another thread of the process took the VA meanwhile. */
		gen_pool_free(emu->pool, phys, size);
		f->user->bytes -= size;
		ret = -EEXIST;
		goto err_unlock;
	}
	kref_init(&a->ref);
	INIT_LIST_HEAD(&a->pins);
	a->owner = f;
	a->user = f->user;
	a->tgid = f->tgid;
	a->va = va;
	a->size = size;
	a->mem_offset = phys - emu->mem_phys;
	list_add_tail(&a->node, &f->allocs);
	emu->nr_allocs++;
	emu->mem_used += size;
	*out = a;
	mutex_unlock(&emu->lock);
	return 0;

err_unlock:
	mutex_unlock(&emu->lock);
err_free:
	kfree(a);
	return ret;
}

/*
 * The owner frees an allocation (cuMemFree, or its fd closed).  Every
 * non-persistent pin of it is revoked through its free callback first;
 * persistent pins keep the memory until they are put.
 */
void emu_alloc_free(struct emu_alloc *a)
{
	lockdep_assert_held(&emu->lock);
	list_del_init(&a->node);
	a->owner = NULL;
	emu_revoke_alloc_pins(a);
	emu_alloc_put(a);
}
