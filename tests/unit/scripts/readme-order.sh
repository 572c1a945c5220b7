#!/bin/sh
# SPDX-License-Identifier: MIT
# readme-order.sh SOURCE - the README's commands in sequence on one fresh
# clone, the cheap way: what makes their order matter is meson's
# configuration, so this runs the configuration step each make target runs
# (scripts/meson-setup.sh) on a copy of the source tree, without the builds.
#
#   1. `make demo` on a machine without UCX: configured with UCX hidden
#      (PKG_CONFIG_LIBDIR pointing nowhere), no benchmark target;
#   2. `make bench` after installing libucx-dev: UCX visible, the same build
#      directory must be configured again and gain bench/rcache/rcache_bench;
#   3. `make` again: nothing changed, no new configuration.
# TAP; a skip where UCX is not installed, as step 2 needs it.
set -u
src=$1
. "$src/tests/include/tap.sh"
if ! pkg-config --exists ucx-ucs 2>/dev/null; then
	skip_all "UCX (libucx-dev, pkg-config ucx-ucs) is not installed: nothing for a reconfiguration to find"
fi
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mkdir "$d/clone" "$d/nopc"
# A fresh clone: the source tree without build directories or results.
tar -C "$src" --exclude='./build*' --exclude=./results --exclude=./.git -cf - . | tar -C "$d/clone" -xf -
b=$d/clone/build
has_bench() { ninja -C "$b" -t targets all 2>/dev/null | grep -q '^bench/rcache/rcache_bench:'; }
plan 3

PKG_CONFIG_LIBDIR=$d/nopc PKG_CONFIG_PATH='' "$d/clone/scripts/meson-setup.sh" "$b" >"$d/1.log" 2>&1
r=$?
has_bench && hb=1 || hb=0
[ "$r" = 0 ] && [ "$hb" = 0 ]
check_rc $? "make demo without UCX: configured, no benchmark target (setup rc $r)"
[ $r = 0 ] || diag "$(cat "$d/1.log")"

"$d/clone/scripts/meson-setup.sh" "$b" >"$d/2.log" 2>&1
r=$?
diag "$(cat "$d/2.log")"
has_bench
check_rc $? "make bench once UCX is installed: reconfigured, bench/rcache/rcache_bench is a target (setup rc $r)"

"$d/clone/scripts/meson-setup.sh" "$b" >"$d/3.log" 2>&1
r=$?
[ $r = 0 ] && ! grep -q reconfiguring "$d/3.log"
check_rc $? "make again, nothing changed: no new configuration (setup rc $r)"
tap_done
