#!/bin/sh
# SPDX-License-Identifier: MIT
# kconftest.sh KDIR OUTDIR - the kernel interfaces the modules build
# across, probed by compiling, as NVIDIA's conftest.sh does.
#
# Each probe below is a few lines of C using one interface that moved
# between kernels; all are compiled in one Kbuild run against KDIR (make
# -k, one object each), and OUTDIR/kconftest.h gets KC_HAVE_<NAME> 1 for
# each that compiled, a comment for each that did not, and KC_CONFTEST.
# scripts/build-modules.sh passes the header to every module with
# -include; the code's fallbacks (kernel/gdirect/kcompat.h, emu/nvp2p/
# emu.h, tests/modules) apply where KC_CONFTEST is defined and a KC_HAVE_
# is not, so a build without the header (make M=... by hand) assumes the
# newest kernel.  A probe tests the interface, never a version number, so
# a distribution kernel with a backport gets the new path.
#
# The header is written only when it changes.  Cost: one Kbuild run,
# about 20 s on the loaded 2-core build machine.
# A control probe that compiles against any kernel must compile, or the
# script fails and writes no header: a Kbuild run that failed as a whole
# (a wrong KDIR or compiler, flags the probes trip on) must not read as a
# kernel without every interface.
set -eu
kdir=$1 out=$2
mkdir -p "$out/probes"
out=$(cd "$out" && pwd)
p=$out/probes
rm -f "$p"/*.c "$p"/*.o "$p"/.*.cmd

# probe NAME: the C source on standard input, as a probe.
probe() { cat >"$p/$1.c"; names="${names:-} $1"; }

# The control: it compiles against any kernel, so when it does not, the
# Kbuild run itself failed (a wrong KDIR or compiler, flags the probes
# trip on) and no answer of the others can be trusted.
probe CONTROL <<'C'
#include <linux/compiler.h>
static int __used kc_probe(void) { return 0; }
C
# lockdep_assert(), and lockdep_is_held() without CONFIG_LOCKDEP: 5.11.
probe LOCKDEP_ASSERT <<'C'
#include <linux/lockdep.h>
#include <linux/mutex.h>
static void __used kc_probe(struct mutex *m) { lockdep_assert(lockdep_is_held(m)); }
C
# pde_data() replaced PDE_DATA(): 5.17.
probe PDE_DATA_LOWER <<'C'
#include <linux/proc_fs.h>
static void *__used kc_probe(const struct inode *i) { return pde_data(i); }
C
# sg_alloc_table_from_pages_segment(), returning int: 5.15.
probe SG_ALLOC_TABLE_FROM_PAGES_SEGMENT <<'C'
#include <linux/scatterlist.h>
static int __used kc_probe(struct sg_table *t, struct page **p)
{ return sg_alloc_table_from_pages_segment(t, p, 1, 0, 4096, 4096, GFP_KERNEL); }
C
# address_space.invalidate_lock: 5.15.
probe MAPPING_INVALIDATE_LOCK <<'C'
#include <linux/fs.h>
static void __used kc_probe(struct address_space *m) { init_rwsem(&m->invalidate_lock); }
C
# vm_operations_struct.may_split, formerly .split: 5.11.
probe VM_OPS_MAY_SPLIT <<'C'
#include <linux/mm.h>
static const struct vm_operations_struct __used kc_probe = { .may_split = NULL };
C
# The maple tree: 6.1.
probe MAPLE_TREE <<'C'
#include <linux/maple_tree.h>
static DEFINE_MTREE(kc_probe_tree);
static void *__used kc_probe(unsigned long *i) { return mt_find(&kc_probe_tree, i, 1); }
C
# in_hardirq(), formerly in_irq(): 5.11.
probe IN_HARDIRQ <<'C'
#include <linux/preempt.h>
static int __used kc_probe(void) { return in_hardirq(); }
C
# MODULE_IMPORT_NS() takes the namespace as a string literal, used as it
# is, where it stringified an identifier before: 6.13.  The probe has
# MODULE_INFO() check the length of what it is given, which is the
# literal's on a new kernel and its stringified quotes' on an old one.
probe MODULE_IMPORT_NS_STRING <<'C'
#include <linux/build_bug.h>
#include <linux/module.h>
#undef MODULE_INFO
#define MODULE_INFO(tag, info) static_assert(sizeof(info) == sizeof("KC"))
MODULE_IMPORT_NS("KC");
C
# dma_buf_attachment.sgt, the table the dma-buf core made at attach for a
# dynamic importer of a static exporter: gone by 6.18 (a 6.18 kernel's BTF
# has none), where the importer's map asks the exporter.  The probe is of
# the old interface, whose absence is the newer kernels.
probe DMA_BUF_ATTACHMENT_SGT <<'C'
#include <linux/dma-buf.h>
static void *__used kc_probe(struct dma_buf_attachment *a) { return a->sgt; }
C
# dma_buf_attach_ops.invalidate_mappings, formerly .move_notify: 7.x.
probe DMA_BUF_INVALIDATE_MAPPINGS <<'C'
#include <linux/dma-buf.h>
static void kc_inval(struct dma_buf_attachment *a) { }
static const struct dma_buf_attach_ops __used kc_probe = {
	.invalidate_mappings = kc_inval,
};
C
# file_operations.mmap_prepare with what a mapping set up before its VMA
# exists needs: the descriptor's flag helpers (vma_flags_t), the kernel
# pages action and vm_operations_struct.mapped, which runs once the VMA is
# established: 7.x.  vm_flags_set() write-locks the VMA there through the
# GPL-only __vma_start_write(), which the descriptor needs not.
probe MMAP_PREPARE_MAPPED <<'C'
#include <linux/fs.h>
#include <linux/mm.h>
static int kc_mapped(unsigned long start, unsigned long end, pgoff_t pgoff,
		     const struct file *file, void **priv) { return 0; }
static const struct vm_operations_struct kc_ops = { .mapped = kc_mapped };
static int kc_prepare(struct vm_area_desc *desc)
{
	vma_desc_set_flags(desc, VMA_IO_BIT, VMA_PFNMAP_BIT);
	vma_desc_clear_flags(desc, VMA_MAYWRITE_BIT);
	desc->vm_ops = &kc_ops;
	desc->private_data = NULL;
	mmap_action_map_kernel_pages_full(desc, NULL);
	return vma_desc_test(desc, VMA_SHARED_BIT) ? 0 : -EINVAL;
}
static const struct file_operations __used kc_probe = { .mmap_prepare = kc_prepare };
C

objs=""
for n in $names; do objs="$objs $n.o"; done
# Listed as modules, so that every kernel's Kbuild has a rule for each
# object; only the objects are asked for, so nothing is linked.
echo "obj-m :=$objs" >"$p/Kbuild"
# Kbuild's own failures are the probes' answers; its output is kept.
# shellcheck disable=SC2086
make -k -s -C "$kdir" ${GDIRECT_KCC:+CC="$GDIRECT_KCC"} M="$p" $objs \
	>"$out/kconftest.log" 2>&1 || true
if [ ! -s "$p/CONTROL.o" ]; then
	echo "kconftest.sh: the control probe did not compile against $kdir, so no probe can be read; see $out/kconftest.log:" >&2
	tail -n 15 "$out/kconftest.log" >&2
	exit 1
fi
{
	echo "/* Generated by scripts/kconftest.sh for $kdir; do not edit. */"
	echo "#define KC_CONFTEST 1"
	for n in $names; do
		[ "$n" = CONTROL ] && continue
		if [ -s "$p/$n.o" ]; then
			echo "#define KC_HAVE_$n 1"
		else
			echo "/* no $n */"
		fi
	done
} >"$out/kconftest.h.new"
if cmp -s "$out/kconftest.h.new" "$out/kconftest.h"; then
	rm -f "$out/kconftest.h.new"
else
	mv "$out/kconftest.h.new" "$out/kconftest.h"
fi
