#!/bin/sh
# SPDX-License-Identifier: MIT
# build-cluster-initramfs.sh BUILD OUT - the initramfs of a cluster node.
#
# Environment: GUEST_TESTS (default "c-*", the cluster tests), GUEST_TIMEOUT,
# KVER (the guest kernel release, default the newest -amd64 one),
# UCX_PREFIX (a UCX installation to ship instead of Debian's libucx0 and
# ucx-utils, e.g. the GPU-aware build of `make ucx`).
#
# The v2 guest's initramfs (build-initramfs.sh) with a second archive
# appended (the kernel unpacks both): the network and Soft-RoCE modules of
# the guest kernel (e1000, crc32_generic first, then ib_core, ib_uverbs,
# rdma_cm, rdma_ucm, rdma_rxe and what they depend on) under
# /modules/cluster with their load order in /etc/cluster-modules, rdma_rxe
# being the project's patched one (emu/rxe: GPU memory regions), built
# here from the guest kernel's source and loaded after gdirect.ko
# (cluster_up in tests/guest/cluster/cluster-lib.sh); Debian's
# RDMA user space (libibverbs with the rxe provider and its driver file,
# librdmacm, iproute2's `rdma`, ibv_devinfo, ibv_rc_pingpong) and UCX
# (its libraries, its transport modules, ucx_info, ucx_perftest), each with
# the host libraries it needs.  Exits 77 naming what is missing when any of
# it is absent (the caller reports a skip, loudly), 1 on any other failure.
set -eu
build=$1; out=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=${KVER:-$(ls -1 /lib/modules | grep -- '-amd64$' | sort -V | tail -n1)}
multiarch=/usr/lib/x86_64-linux-gnu
ucx=${UCX_PREFIX:-}

missing=""
need() { [ -e "$1" ] || missing="$missing $1${2:+ ($2)}"; }
for b in rdma ibv_devinfo ibv_rc_pingpong; do
	need "/usr/bin/$b" "$([ "$b" = rdma ] && echo iproute2 || echo ibverbs-utils)"
done
need /etc/libibverbs.d/rxe.driver ibverbs-providers
need "$multiarch/libibverbs/librxe-rdmav34.so" ibverbs-providers
need "$multiarch/librdmacm.so.1" librdmacm1
if [ -n "$ucx" ]; then
	need "$ucx/bin/ucx_perftest" "UCX_PREFIX"
	need "$ucx/lib/ucx" "UCX_PREFIX"
else
	need /usr/bin/ucx_perftest ucx-utils
	need "$multiarch/ucx/libuct_ib.so.0" libucx0
fi

# The modules in load order: each after what it depends on.
order=""
add_module() {
	case " $order " in *" $1 "*) return 0 ;; esac
	deps=$(modinfo -k "$kver" -F depends "$1" 2>/dev/null) ||
		{ missing="$missing module:$1"; return 0; }
	for d in $(echo "$deps" | tr ',' ' '); do add_module "$d"; done
	order="$order $1"
}
for m in e1000 crc32_generic ib_core ib_uverbs rdma_cm rdma_ucm rdma_rxe; do
	add_module "$m"
done
# Soft-RoCE is ours, never the kernel's own: a cluster that silently ran
# the stock module could not register GPU memory.  Its build is cached
# (emu/rxe/build.sh): unchanged sources cost about a second.
rxe_ko=$build/kmod/rxe/rdma_rxe/rdma_rxe.ko
rc=0
"$top/emu/rxe/build.sh" "/lib/modules/$kver/build" "$build/kmod/rxe" \
	"$build/kmod/v2/gdirect" >/dev/null || rc=$?
case $rc in
0) ;;
77) missing="$missing rdma_rxe:patched(emu/rxe/build.sh: see above)" ;;
*) echo "build-cluster-initramfs.sh: building the patched rdma_rxe failed (emu/rxe/build.sh)" >&2; exit 1 ;;
esac
if [ -n "$missing" ]; then
	echo "build-cluster-initramfs.sh: missing:$missing" >&2
	exit 77
fi

GUEST_TESTS=${GUEST_TESTS:-c-*} "$top/tests/harness/build-initramfs.sh" "$build" v2 "$out.base"
root=$(mktemp -d)
trap 'rm -rf "$root" "$out.base"' EXIT
mkdir -p "$root/modules/cluster" "$root/etc/libibverbs.d" "$root/usr/bin" \
	"$root$multiarch/libibverbs"
for m in $order; do
	if [ "$m" = rdma_rxe ]; then
		cp "$rxe_ko" "$root/modules/cluster/"
	else
		cp "$(modinfo -k "$kver" -F filename "$m")" "$root/modules/cluster/"
	fi
done
echo "$order" | tr ' ' '\n' | sed '/^$/d' >"$root/etc/cluster-modules"
cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"
cp "$multiarch/libibverbs/librxe-rdmav34.so" "$root$multiarch/libibverbs/"
for b in rdma ibv_devinfo ibv_rc_pingpong; do cp "/usr/bin/$b" "$root/usr/bin/"; done
if [ -n "$ucx" ]; then
	# At a fixed place in the guest, not at the build's path: that may be
	# under /tmp, which the guest's init mounts a tmpfs over.
	mkdir -p "$root/opt/ucx"
	cp -a "$ucx/bin" "$ucx/lib" "$root/opt/ucx/"
	rm -f "$root"/opt/ucx/lib/*.a "$root"/opt/ucx/lib/*.la \
		"$root"/opt/ucx/lib/ucx/*.a "$root"/opt/ucx/lib/ucx/*.la
	for b in ucx_info ucx_perftest; do ln -s "/opt/ucx/bin/$b" "$root/usr/bin/$b"; done
	echo /opt/ucx/lib >"$root/etc/cluster-ucx-lib"
else
	mkdir -p "$root$multiarch/ucx"
	cp -P "$multiarch"/ucx/*.so.0* "$root$multiarch/ucx/"
	cp -P "$multiarch"/libuc[mpst].so.0* "$root$multiarch/"
	for b in ucx_info ucx_perftest; do cp "/usr/bin/$b" "$root/usr/bin/"; done
fi

# Host libraries of every ELF we add, at the same paths.
find "$root" -type f \( -perm -u+x -o -name '*.so*' \) | while read -r f; do
	LD_LIBRARY_PATH=${ucx:+$ucx/lib:$ucx/lib/ucx} ldd "$f" 2>/dev/null |
		awk '/=> \//{print $3} /^\t\//{print $1}' || true
done | sort -u | while read -r lib; do
	[ -e "$root$lib" ] && continue
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.extra"
cat "$out.base" "$out.extra" >"$out"
rm -f "$out.extra"
