#!/bin/sh
# t-gpl-imports.sh SOURCE - scripts/check-gpl-imports.sh finds a GPL-only
# import and passes clean modules: a planted module calling put_pid() (a
# GPL-only export) fails it, naming the symbol; a module calling only
# printk passes; and the modules of the proprietary-provider flavour
# (nvp2p_emu licensed "NVIDIA", gdirect, gdirect_edu), built here against
# the installed headers, pass it.  Skipped, saying why, without headers.
set -u
top=$1
kver=${KVER:-$(ls -1 /lib/modules 2>/dev/null | grep -- '-amd64$' | sort -V | tail -n1)}
kdir=/lib/modules/$kver/build
if [ -z "$kver" ] || [ ! -r "$kdir/Module.symvers" ]; then
	echo "SKIP: no kernel headers with Module.symvers (/lib/modules/${kver:-?}/build; Debian: linux-headers-amd64)"
	exit 77
fi
command -v nm >/dev/null || { echo "SKIP: no nm (binutils)"; exit 77; }
check=$top/scripts/check-gpl-imports.sh
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Two one-file modules: planted uses a GPL-only symbol, clean does not.
mkdir -p "$d/planted" "$d/clean"
cat >"$d/planted/planted.c" <<'C'
#include <linux/module.h>
#include <linux/pid.h>
static int __init planted_init(void)
{
	put_pid(NULL);
	return 0;
}
module_init(planted_init);
MODULE_LICENSE("GPL");
C
cat >"$d/clean/clean.c" <<'C'
#include <linux/module.h>
#include <linux/printk.h>
static int __init clean_init(void)
{
	pr_info("clean\n");
	return 0;
}
module_init(clean_init);
MODULE_LICENSE("GPL");
C
echo "obj-m := planted.o" >"$d/planted/Kbuild"
echo "obj-m := clean.o" >"$d/clean/Kbuild"
for m in planted clean; do
	if ! make -s -C "$kdir" M="$d/$m" modules >"$d/$m.log" 2>&1; then
		cat "$d/$m.log"; echo "FAIL: building the $m module"; exit 1
	fi
done

"$check" "$kdir/Module.symvers" -- "$d/planted/planted.ko" >"$d/out" 2>&1
rc=$?
cat "$d/out"
[ $rc -eq 1 ] || fail "planted put_pid(): exit $rc, not 1"
grep -q '^planted: GPL-only import put_pid ' "$d/out" ||
	fail "planted put_pid(): the symbol is not named"

"$check" -v "$kdir/Module.symvers" -- "$d/clean/clean.ko" >"$d/out" 2>&1
rc=$?
cat "$d/out"
[ $rc -eq 0 ] || fail "clean module: exit $rc, not 0"
grep -q '^clean: _printk (EXPORT_SYMBOL from vmlinux)' "$d/out" ||
	fail "clean module: -v does not list its import of _printk"

"$check" "$kdir/Module.symvers" -- "$d/nonexistent.ko" >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || fail "a missing module: exit $rc, not 2"

# The real modules of the proprietary flavour; build-modules.sh runs the
# check itself, so it fails the build on a GPL-only import.
if ! "$top/scripts/build-modules.sh" "$kdir" "$d/kmod" prop nvp2p_emu gdirect \
	gdirect_edu >"$d/build.log" 2>&1; then
	grep -v BTF "$d/build.log" | tail -20
	fail "the proprietary flavour's modules do not build or import GPL-only symbols"
else
	"$check" "$kdir/Module.symvers" "$d"/kmod/*/Module.symvers -- \
		"$d"/kmod/*/*.ko || fail "the proprietary flavour's modules import GPL-only symbols"
fi
[ $fails -eq 0 ] && echo "PASS: check-gpl-imports.sh" || exit 1
