#!/bin/sh
# SPDX-License-Identifier: MIT
# build-cluster-initramfs.sh BUILD OUT - the initramfs of a cluster node.
#
# Environment: GUEST_TESTS (default the lane cluster's tests in tests/TESTS),
# GUEST_TIMEOUT,
# KVER (the guest kernel release, default the newest -amd64 one),
# MODULE_ROOT (a root holding that kernel's lib/modules/KVER and its
# headers, default this machine's: the unpacked bookworm-backports kernel
# of scripts/deps.sh kernel-bpo, or the debug kernel's modules_install
# staging of tests/debug-kernel/build.sh; its modules are indexed there),
# KDIR (that kernel's build tree, where MODULE_ROOT's build link does not
# lead to it, as for the debug kernel's), RXE_BUILD (where the patched
# rdma_rxe is built, default BUILD/kmod/rxe, BUILD/kmod/rxe-KVER with
# MODULE_ROOT), KMOD_DIR (build-initramfs.sh's, whose gdirect/ the patched
# rdma_rxe links against; default BUILD/kmod/v2), RXE_LINUX_SOURCE
# (emu/rxe/build.sh's),
# UCX_PREFIX (a UCX installation to ship instead of Debian's libucx0 and
# ucx-utils, e.g. the GPU-aware build of `make ucx`), RDMA_CORE_CACHE
# (emu/rdma-core/rdma-core-build.sh's), GDIRECT_PEERS_DIR (peers.sh's).
#
# The v2 guest's initramfs (build-initramfs.sh) with a second archive
# appended (the kernel unpacks both): the network and Soft-RoCE modules of
# the guest kernel (e1000, crc32_generic first, then ib_core, ib_uverbs,
# rdma_cm, rdma_ucm, rdma_rxe and what they depend on) under
# /modules/cluster with their load order in /etc/cluster-modules, rdma_rxe
# being the project's patched one (emu/rxe: GPU memory regions), built
# here from the guest kernel's source and loaded after gdirect.ko
# (cluster_up in tests/guest/cluster/cluster-lib.sh); libibverbs and the
# rxe provider of rdma-core 56.1 with our patch (emu/rdma-core: the
# provider's reg_dmabuf_mr), built here, cached, in place of Debian's;
# vgem and what it depends on under /modules/cluster-test with their load
# order in /etc/cluster-test-modules (cluster-rxe-gpu loads them: a dma-buf of system
# memory);
# Debian's other RDMA user space (librdmacm, iproute2's `rdma`,
# ibv_devinfo, ibv_rc_pingpong); UCX (its libraries, its transport
# modules, ucx_info, ucx_perftest); perftest 26.04.17's ib_write_bw,
# ib_read_bw, ib_read_lat and ib_send_bw built against our CUDA and that rdma-core
# (tests/peers/perftest-build.sh), each with the host libraries it needs.
# Exits 77 naming what is missing when any of it is absent but perftest
# (the caller reports a skip, loudly), 1 on any other failure; without the
# perftest release the guests get /etc/cluster-perftest-missing saying
# why, and cluster-perftest.sh skips.
set -eu
build=$1; out=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=${KVER:-$(ls -1 /lib/modules | grep -- '-amd64$' | sort -V | tail -n1)}
# Where the kernel's modules and headers are: this machine's, or
# MODULE_ROOT's, whose headers are found through its build link (absolute,
# as Debian's packages make it, into that root).
modroot=${MODULE_ROOT:-}
kdir=${KDIR:-$modroot/lib/modules/$kver/build}
rxe_out=${RXE_BUILD:-$build/kmod/rxe}
if [ -n "$modroot" ]; then
	[ -n "${KDIR:-}" ] ||
		case $(readlink "$kdir" || :) in /*) kdir=$modroot$(readlink "$kdir") ;; esac
	[ -n "${RXE_BUILD:-}" ] || rxe_out=$build/kmod/rxe-$kver
fi
kmodinfo() { modinfo ${modroot:+-b "$modroot"} -k "$kver" "$@"; }
# copy_module NAME DIR: the module as DIR/NAME.ko, uncompressed (the
# guest's insmod does not decompress; 6.12's Debian modules are xz'd).
copy_module() {
	cm_f=$(kmodinfo -F filename "$1")
	case $cm_f in
	*.ko.xz) xz -dc "$cm_f" >"$2/$1.ko" ;;
	*) cp "$cm_f" "$2/" ;;
	esac
}
multiarch=/usr/lib/x86_64-linux-gnu
ucx=${UCX_PREFIX:-}

missing=""
need() { [ -e "$1" ] || missing="$missing $1${2:+ ($2)}"; }
for b in rdma ibv_devinfo ibv_rc_pingpong; do
	need "/usr/bin/$b" "$([ "$b" = rdma ] && echo iproute2 || echo ibverbs-utils)"
done
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
	deps=$(kmodinfo -F depends "$1" 2>/dev/null) ||
		{ missing="$missing module:$1"; return 0; }
	for d in $(echo "$deps" | tr ',' ' '); do add_module "$d"; done
	order="$order $1"
}
for m in e1000 crc32_generic ib_core ib_uverbs rdma_cm rdma_ucm rdma_rxe; do
	add_module "$m"
done
# vgem (DRM's virtual GEM driver) and what it needs, for cluster-rxe-gpu's dma-buf of
# system memory; loaded by the test, not by cluster_up.  Optional: without
# it the guests get /etc/cluster-test-modules-missing and cluster-rxe-gpu skips that
# check, saying why.
test_order=""
test_missing=""
add_test_module() {
	case " $order $test_order " in *" $1 "*) return 0 ;; esac
	deps=$(kmodinfo -F depends "$1" 2>/dev/null) ||
		{ test_missing="$test_missing $1"; return 0; }
	for d in $(echo "$deps" | tr ',' ' '); do add_test_module "$d"; done
	test_order="$test_order $1"
}
add_test_module vgem
# Soft-RoCE is ours, never the kernel's own: a cluster that silently ran
# the stock module could not register GPU memory.  Its build is cached
# (emu/rxe/build.sh): unchanged sources cost about a second.
rxe_ko=$rxe_out/rdma_rxe/rdma_rxe.ko
rc=0
"$top/emu/rxe/build.sh" "$kdir" "$rxe_out" \
	"${KMOD_DIR:-$build/kmod/v2}/gdirect" >/dev/null || rc=$?
case $rc in
0) ;;
77) missing="$missing rdma_rxe:patched(emu/rxe/build.sh: see above)" ;;
*) echo "build-cluster-initramfs.sh: building the patched rdma_rxe failed (emu/rxe/build.sh)" >&2; exit 1 ;;
esac
# rdma-core 56.1 with our provider patch (cached in BUILD/rdma-core).
if [ -z "$missing" ]; then
	"$top/emu/rdma-core/rdma-core-build.sh" "$build" >"$build/rdma-core-build.log" 2>"$build/rdma-core-build.err" || {
		[ $? = 77 ] || { cat "$build/rdma-core-build.err" >&2; exit 1; }
		missing="$missing rdma-core-56.1($(sed -n 's/^rdma-core-build: missing: //p' "$build/rdma-core-build.err" | head -n1))"
	}
fi
if [ -n "$missing" ]; then
	echo "build-cluster-initramfs.sh: missing:$missing" >&2
	exit 77
fi
# perftest, built at test time from its release; without the release (or
# its build tools) the cluster still runs, and cluster-perftest.sh says why
# it skips.
perftest=""
perftest_why=""
if tb=$("$top/tests/peers/peers.sh" find perftest-26.04.17.tar.gz "$build/peers/cache" 2>"$build/perftest-build.err"); then
	if "$top/tests/peers/perftest-build.sh" "$build" "$tb" >"$build/perftest-build.log" 2>"$build/perftest-build.err"; then
		perftest=$build/peers/perftest-26.04.17/out/bin
	else
		[ $? = 77 ] || { cat "$build/perftest-build.err" >&2; exit 1; }
		perftest_why=$(sed -n 's/^perftest-build: //p' "$build/perftest-build.err" | head -n1)
	fi
else
	[ $? = 77 ] || { cat "$build/perftest-build.err" >&2; exit 1; }
	perftest_why=$(head -n1 "$build/perftest-build.err")
fi
[ -z "$perftest_why" ] || echo "build-cluster-initramfs.sh: WARNING: no perftest in the guests: $perftest_why" >&2

GUEST_TESTS=${GUEST_TESTS:-$("$top/tests/harness/manifest.sh" lane cluster | tr '\n' ' ')} \
	"$top/tests/harness/build-initramfs.sh" "$build" v2 "$out.base"
root=$(mktemp -d)
trap 'rm -rf "$root" "$out.base"' EXIT
mkdir -p "$root/modules/cluster" "$root/etc/libibverbs.d" "$root/usr/bin" \
	"$root$multiarch/libibverbs"
for m in $order; do
	if [ "$m" = rdma_rxe ]; then
		cp "$rxe_ko" "$root/modules/cluster/"
	else
		copy_module "$m" "$root/modules/cluster"
	fi
done
echo "$order" | tr ' ' '\n' | sed '/^$/d' >"$root/etc/cluster-modules"
if [ -z "$test_missing" ]; then
	mkdir -p "$root/modules/cluster-test"
	for m in $test_order; do
		copy_module "$m" "$root/modules/cluster-test"
	done
	echo "$test_order" | tr ' ' '\n' | sed '/^$/d' >"$root/etc/cluster-test-modules"
else
	echo "no module$test_missing in $kver" >"$root/etc/cluster-test-modules-missing"
fi
# Our libibverbs at Debian's path, and at /lib's where the host's ldd
# finds Debian's (usrmerge): the guest has no ld.so.cache, and a copy of
# Debian's there would be found first.
rcore=$build/rdma-core/out
echo "driver rxe" >"$root/etc/libibverbs.d/rxe.driver"
cp "$rcore/lib/libibverbs.so.1" "$root$multiarch/"
cp "$rcore/lib/libibverbs/librxe-rdmav34.so" "$root$multiarch/libibverbs/"
mkdir -p "$root/lib/x86_64-linux-gnu"
ln -s ../../usr/lib/x86_64-linux-gnu/libibverbs.so.1 "$root/lib/x86_64-linux-gnu/libibverbs.so.1"
echo "rdma-core 56.1 $(sha256sum "$rcore/lib/libibverbs.so.1" | cut -d' ' -f1) $(sha256sum "$rcore/lib/libibverbs/librxe-rdmav34.so" | cut -d' ' -f1)" \
	>"$root/etc/cluster-rdma-core"
if [ -n "$perftest" ]; then
	for b in ib_write_bw ib_read_bw ib_read_lat ib_send_bw; do cp "$perftest/$b" "$root/usr/bin/"; done
else
	echo "$perftest_why" >"$root/etc/cluster-perftest-missing"
fi
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
