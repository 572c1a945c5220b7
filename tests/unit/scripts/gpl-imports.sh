#!/bin/sh
# SPDX-License-Identifier: MIT
# gpl-imports.sh SOURCE - scripts/check-gpl-imports.sh finds a GPL-only
# import and passes clean modules: a planted module calling put_pid() (a
# GPL-only export) fails it, naming the symbol; a module calling only
# printk passes; and the modules of the proprietary-provider flavour
# (nvp2p_emu licensed "NVIDIA", gdirect, gdirect_edu), built here against
# the installed headers, pass it.  Skipped, saying why, without headers.
set -u
top=$1
. "$top/tests/include/tap.sh"
kver=${KVER:-$(ls -1 /lib/modules 2>/dev/null | grep -- '-amd64$' | sort -V | tail -n1)}
kdir=/lib/modules/$kver/build
if [ -z "$kver" ] || [ ! -r "$kdir/Module.symvers" ]; then
	skip_all "no kernel headers with Module.symvers (/lib/modules/${kver:-?}/build; Debian: linux-headers-amd64)"
fi
command -v nm >/dev/null || skip_all "no nm (binutils)"
check=$top/scripts/check-gpl-imports.sh
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

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
		not_ok "the $m module builds"; diag "$(cat "$d/$m.log")"; tap_done; exit 1
	fi
	ok "the $m module builds"
done

"$check" "$kdir/Module.symvers" -- "$d/planted/planted.ko" >"$d/out" 2>&1
rc=$?
diag "$(cat "$d/out")"
check "planted put_pid(): exit $rc, want 1" [ $rc -eq 1 ]
check "planted put_pid(): the symbol is named" grep -q '^planted: GPL-only import put_pid ' "$d/out"

"$check" -v "$kdir/Module.symvers" -- "$d/clean/clean.ko" >"$d/out" 2>&1
rc=$?
diag "$(cat "$d/out")"
check "clean module: exit $rc, want 0" [ $rc -eq 0 ]
check "clean module: -v lists its import of _printk" \
	grep -q '^clean: _printk (EXPORT_SYMBOL from vmlinux)' "$d/out"

"$check" "$kdir/Module.symvers" -- "$d/nonexistent.ko" >/dev/null 2>&1
rc=$?
check "a missing module: exit $rc, want 2" [ $rc -eq 2 ]

# The real modules of the proprietary flavour; build-modules.sh runs the
# check itself, so it fails the build on a GPL-only import.
if ! "$top/scripts/build-modules.sh" "$kdir" "$d/kmod" prop nvp2p_emu gdirect \
	gdirect_edu >"$d/build.log" 2>&1; then
	not_ok "the proprietary flavour's modules build, importing no GPL-only symbol"
	diag "$(grep -v BTF "$d/build.log" | tail -20)"
else
	ok "the proprietary flavour's modules build, importing no GPL-only symbol"
	check_quiet "check-gpl-imports.sh passes them" "$check" "$kdir/Module.symvers" \
		"$d"/kmod/*/Module.symvers -- "$d"/kmod/*/*.ko
fi
tap_done
