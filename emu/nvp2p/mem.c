// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mem.c - GPU memory allocations of the emulated GPU
 *
 * An allocation is a run of 64 KiB granules of BAR2 bound to a GPU virtual
 * address of one process.  It is referenced by its owner until freed and by
 * each persistent pin, so memory pinned persistently outlives cuMemFree as
 * it does with the NVIDIA driver.  The VA is released at free time: the same
 * VA can be backed again at once, while the old memory is still pinned.
 *
 * An IPC import (cuIpcOpenMemHandle) is an allocation of the importing
 * process at a VA of its own that shares an exported allocation's memory
 * and, through its struct emu_export, holds a reference of it: the
 * exporter's cuMemFree leaves the memory to the importers, as the NVIDIA
 * driver does.  Pins follow the VA they were
 * taken on: the importer's pins are revoked when it closes the handle (or
 * exits), the exporter's when it frees, whatever the other side does.
 */
#include <linux/random.h>
#include <linux/slab.h>

#include "emu.h"

static void emu_export_put(struct emu_export *x)
{
	lockdep_assert_held(&emu->lock);
	if (!x->withdrawn || x->imports)
		return;
	list_del(&x->node);
	emu_alloc_put(x->alloc);
	kfree(x);
}

static void emu_import_release(struct emu_export *x)
{
	lockdep_assert_held(&emu->lock);
	x->imports--;
	emu->nr_imports--;
	emu_export_put(x);
}

static void emu_alloc_kref_release(struct kref *ref)
{
	struct emu_alloc *a = container_of(ref, struct emu_alloc, ref);
	struct emu_sub *s, *tmp;

	list_for_each_entry_safe(s, tmp, &a->subs, node)
		kfree(s);
	emu->nr_allocs--;
	if (a->export) {
		emu_import_release(a->export);
		kfree(a);
		return;
	}
	gen_pool_free(emu->pool, emu->mem_phys + a->mem_offset, a->size);
	emu->mem_used -= a->size;
	a->user->bytes -= a->size;
	emu_user_put(a->user);
	kfree(a);
}

/* Drop a reference; the memory goes back to the pool with the last one. */
void emu_alloc_put(struct emu_alloc *a)
{
	lockdep_assert_held(&emu->lock);
	kref_put(&a->ref, emu_alloc_kref_release);
}

static bool range_inside(u64 va, u64 len, u64 start, u64 size)
{
	return va >= start && len <= size && va - start <= size - len;
}

/*
 * In an allocation that CUDA allocations share (its subs), a pin must lie
 * within the 64 KiB pages of one of them: it may cover a neighbour's bytes
 * in those pages, not span two allocations.
 */
static bool emu_sub_covers(struct emu_alloc *a, u64 va, u64 len)
{
	struct emu_sub *s;
	u64 start, end;

	lockdep_assert_held(&emu->lock);
	if (list_empty(&a->subs))
		return true;
	list_for_each_entry(s, &a->subs, node) {
		start = round_down(s->va, EMU_PAGE_SIZE);
		end = round_up(s->va + s->size, EMU_PAGE_SIZE);
		if (range_inside(va, len, start, end - start))
			return true;
	}
	return false;
}

/*
 * Find the live allocation of process @tgid that wholly contains
 * [va, va + len).  A range that straddles two allocations is not found,
 * because the NVIDIA driver's get_pages requires one allocation: its
 * resource manager refuses a range that ends past the allocation holding
 * its start (CliGetThirdPartyP2PVidmemInfoFromAddress() in
 * src/nvidia/src/kernel/gpu/bus/third_party_p2p.c of
 * open-gpu-kernel-modules).  A range that spans two CUDA allocations
 * sharing a page is not found either (docs/emulator.md, "Placement of
 * device memory").
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
				return emu_sub_covers(a, va, len) ? a : NULL;
	}
	return NULL;
}

/**
 * emu_sub_add() - record a CUDA allocation inside one of @f's allocations
 * @f: the open file
 * @va: its start
 * @size: its bytes
 *
 * Return: 0; -EINVAL if [va, va + size) is not inside one allocation of
 * @f, or overlaps one recorded already; -ENOMEM.
 */
int emu_sub_add(struct emu_file *f, u64 va, u64 size)
{
	struct emu_sub *s, *n;
	struct emu_alloc *a;
	int ret = -EINVAL;

	n = kzalloc(sizeof(*n), GFP_KERNEL_ACCOUNT);
	if (!n)
		return -ENOMEM;
	n->va = va;
	n->size = size;
	mutex_lock(&emu->lock);
	list_for_each_entry(a, &f->allocs, node) {
		if (!size || a->export || !range_inside(va, size, a->va, a->size))
			continue;
		list_for_each_entry(s, &a->subs, node)
			if (va < s->va + s->size && s->va < va + size)
				goto out;
		list_add_tail(&n->node, &a->subs);
		n = NULL;
		ret = 0;
		break;
	}
out:
	mutex_unlock(&emu->lock);
	kfree(n);
	return ret;
}

/**
 * emu_sub_del() - a CUDA allocation inside a shared one is freed
 * @f: the open file
 * @va: its start, as given to emu_sub_add()
 *
 * Every non-persistent pin covering its bytes is revoked through its free
 * callback, as a free of a whole allocation does; the memory stays with
 * the allocation it lies in.
 *
 * Return: 0, or -EINVAL if no such CUDA allocation is recorded.
 */
int emu_sub_del(struct emu_file *f, u64 va)
{
	struct emu_sub *s;
	struct emu_alloc *a;

	mutex_lock(&emu->lock);
	list_for_each_entry(a, &f->allocs, node) {
		list_for_each_entry(s, &a->subs, node) {
			if (s->va != va)
				continue;
			list_del(&s->node);
			emu_revoke_pins(a, s->va, s->size);
			mutex_unlock(&emu->lock);
			kfree(s);
			return 0;
		}
	}
	mutex_unlock(&emu->lock);
	return -EINVAL;
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
	INIT_LIST_HEAD(&a->subs);
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
	struct emu_export *x, *tmp;

	lockdep_assert_held(&emu->lock);
	list_del_init(&a->node);
	a->owner = NULL;
	emu_revoke_pins(a, a->va, a->size);
	list_for_each_entry_safe(x, tmp, &emu->exports, node) {
		if (x->alloc == a && !x->withdrawn) {
			x->withdrawn = true;
			emu_export_put(x);
		}
	}
	emu_alloc_put(a);
}

/* The export named @handle while it can be imported, or NULL. */
static struct emu_export *emu_export_find(u64 handle)
{
	struct emu_export *x;

	lockdep_assert_held(&emu->lock);
	list_for_each_entry(x, &emu->exports, node)
		if (x->handle == handle)
			return !x->withdrawn || x->imports ? x : NULL;
	return NULL;
}

/**
 * emu_export_create() - name a range of an allocation for other processes
 * @f: the open file of the owner
 * @va: start of the range, inside one of @f's allocations (not an import)
 * @size: bytes of the range, inside that allocation
 * @handle: out: the range's handle, the same while it stays exported
 * @base: out: the allocation's start
 * @alloc_size: out: the allocation's size
 *
 * Return: 0; -EINVAL if the range is in no allocation of @f or in an
 * import; -ENOSPC if EMU_MAX_EXPORTS_PER_ALLOC other ranges of that
 * allocation are exported; -ENOMEM.
 */
int emu_export_create(struct emu_file *f, u64 va, u64 size, u64 *handle,
		      u64 *base, u64 *alloc_size)
{
	struct emu_export *x, *nx;
	struct emu_alloc *a;
	unsigned int n;
	int ret = -EINVAL;
	u64 h;

	nx = kzalloc(sizeof(*nx), GFP_KERNEL_ACCOUNT);
	if (!nx)
		return -ENOMEM;
	mutex_lock(&emu->lock);
	list_for_each_entry(a, &f->allocs, node) {
		if (!size || va < a->va || size > a->size ||
		    va - a->va > a->size - size)
			continue;
		if (a->export)
			break;
		ret = 0;
		n = 0;
		list_for_each_entry(x, &emu->exports, node) {
			if (x->alloc != a || x->withdrawn)
				continue;
			if (x->offset == va - a->va && x->size == size)
				goto found;
			n++;
		}
		/* Bounded, as the list is walked under emu->lock. */
		if (n >= EMU_MAX_EXPORTS_PER_ALLOC) {
			ret = -ENOSPC;
			break;
		}
		do {	/* handles are capabilities: unguessable, unique */
			h = get_random_u64();
		} while (!h || emu_export_find(h));
		x = nx;
		nx = NULL;
		x->alloc = a;
		x->handle = h;
		x->offset = va - a->va;
		x->size = size;
		kref_get(&a->ref);
		list_add_tail(&x->node, &emu->exports);
found:
		*handle = x->handle;
		*base = a->va;
		*alloc_size = a->size;
		break;
	}
	mutex_unlock(&emu->lock);
	kfree(nx);
	return ret;
}

/**
 * emu_export_withdraw() - the owner freed the exported range (cuMemFree of
 * an allocation that shares its pages): it can no longer be imported,
 * except while an import of it is left.
 * @f: the owner's open file
 * @handle: from emu_export_create()
 *
 * Return: 0; -EINVAL if @handle is not a live export of @f's.
 */
int emu_export_withdraw(struct emu_file *f, u64 handle)
{
	struct emu_export *x;
	int ret = -EINVAL;

	mutex_lock(&emu->lock);
	list_for_each_entry(x, &emu->exports, node) {
		if (x->handle == handle) {
			if (!x->withdrawn && x->alloc->owner == f) {
				x->withdrawn = true;
				emu_export_put(x);
				ret = 0;
			}
			break;
		}
	}
	mutex_unlock(&emu->lock);
	return ret;
}

/**
 * emu_import_create() - share an exported allocation at a VA of @f
 * @f: the importer's open file
 * @handle: from emu_export_create()
 * @va: GPU VA, 64 KiB-aligned, reserved by the caller, not yet backed
 * @size: the exported allocation's size (the whole of it is mapped)
 * @out: the import
 * @offset: out: where the exported range starts in the allocation
 * @range: out: the exported range's size
 *
 * Return: 0; -ENOENT if nothing can be imported as @handle; -ELOOP if the
 * memory is the importing process's own; -EINVAL if @size differs;
 * -EEXIST if the VA is backed already; -ENOMEM.
 */
int emu_import_create(struct emu_file *f, u64 handle, u64 va, u64 size,
		      struct emu_alloc **out, u64 *offset, u64 *range)
{
	struct emu_export *x;
	struct emu_alloc *a;
	int ret = 0;

	a = kzalloc(sizeof(*a), GFP_KERNEL_ACCOUNT);
	if (!a)
		return -ENOMEM;
	mutex_lock(&emu->lock);
	x = handle ? emu_export_find(handle) : NULL;
	if (!x)
		ret = -ENOENT;
	else if (x->alloc->tgid == f->tgid)
		ret = -ELOOP;
	else if (x->alloc->size != size)
		ret = -EINVAL;
	else if (emu_va_taken(f, va, size))
		ret = -EEXIST;
	if (ret) {
		mutex_unlock(&emu->lock);
		kfree(a);
		return ret;
	}
	kref_init(&a->ref);
	INIT_LIST_HEAD(&a->pins);
	INIT_LIST_HEAD(&a->subs);
	x->imports++;
	emu->nr_imports++;
	emu->nr_imports_total++;
	a->export = x;
	a->owner = f;
	a->tgid = f->tgid;
	a->va = va;
	a->size = size;
	a->mem_offset = x->alloc->mem_offset;
	list_add_tail(&a->node, &f->allocs);
	emu->nr_allocs++;
	*out = a;
	*offset = x->offset;
	*range = x->size;
	mutex_unlock(&emu->lock);
	return 0;
}
