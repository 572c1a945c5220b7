#!/bin/sh
# t-readme-order.sh SOURCE - the README's commands in sequence on one fresh
# clone, the cheap way: what makes their order matter is meson's
# configuration, so this runs the configuration step each make target runs
# (scripts/meson-setup.sh) on a copy of the source tree, without the builds.
#
#   1. `make demo` on a machine without UCX: configured with UCX hidden
#      (PKG_CONFIG_LIBDIR pointing nowhere), no benchmark target;
#   2. `make bench` after installing libucx-dev: UCX visible, the same build
#      directory must be configured again and gain bench/rcache_bench;
#   3. `make` again: nothing changed, no new configuration.
# TAP; SKIP (exit 77) where UCX is not installed, as step 2 needs it.
set -u
src=$1
if ! pkg-config --exists ucx-ucs 2>/dev/null; then
	echo "1..0 # SKIP UCX (libucx-dev, pkg-config ucx-ucs) is not installed: nothing for a reconfiguration to find"
	exit 77
fi
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mkdir "$d/clone" "$d/nopc"
# A fresh clone: the source tree without build directories or results.
tar -C "$src" --exclude='./build*' --exclude=./results --exclude=./.git -cf - . | tar -C "$d/clone" -xf -
b=$d/clone/build
has_bench() { ninja -C "$b" -t targets all 2>/dev/null | grep -q '^bench/rcache_bench:'; }
n=0 fails=0
check() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi
}
echo "1..3"

PKG_CONFIG_LIBDIR=$d/nopc PKG_CONFIG_PATH='' "$d/clone/scripts/meson-setup.sh" "$b" >"$d/1.log" 2>&1
r=$?
has_bench && hb=1 || hb=0
[ "$r" = 0 ] && [ "$hb" = 0 ]
check $? "make demo without UCX: configured, no benchmark target (setup rc $r)"
[ $r = 0 ] || sed 's/^/# /' "$d/1.log"

"$d/clone/scripts/meson-setup.sh" "$b" >"$d/2.log" 2>&1
r=$?
sed 's/^/# /' "$d/2.log"
has_bench
check $? "make bench once UCX is installed: reconfigured, bench/rcache_bench is a target (setup rc $r)"

"$d/clone/scripts/meson-setup.sh" "$b" >"$d/3.log" 2>&1
r=$?
[ $r = 0 ] && ! grep -q reconfiguring "$d/3.log"
check $? "make again, nothing changed: no new configuration (setup rc $r)"
[ $fails = 0 ]
