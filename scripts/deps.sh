#!/bin/sh
# SPDX-License-Identifier: MIT
# deps.sh - install, or name, what a target needs.
#
# usage: scripts/deps.sh [--check] userspace|modules|build|test|demo|demo-cluster|bench|debug-kernel|ucx|deb|deb-lane
#        scripts/deps.sh kernel-bpo    fetches the backports kernel (below)
#        scripts/deps.sh kernel-bpo-source  fetches its Debian source tarball
#        scripts/deps.sh kernel-headers SUITE  fetches another release's kernel headers
#                      (sid: in a build root, below)
#        scripts/deps.sh kernel-image SUITE  fetches that release's kernel (below)
#        scripts/deps.sh demo-mode     prints "gpu" or "emulated" (see below)
#        scripts/deps.sh nvidia-present  exit status 0 where an NVIDIA driver is loaded
#
# Only `make deps`, `make test`, `make demo`, `make deb` (and the
# debug-kernel lane of `make test`) install.  Build steps (`make`,
# `make install`, `make bench`, `make bench-gdrcopy`) run it with
# --check: it then installs nothing, and names what is missing, the
# packages, and the command that installs them.
#
# Each need is checked by what it provides (a command on PATH, a header
# directory, a pkg-config module), not by asking dpkg, so tools installed
# another way (meson and ninja from pip, say) count.  What is missing is
# installed with apt-get as root on Debian or Ubuntu, by that distribution's
# package names; otherwise, or when apt-get fails, the exact command to run
# is printed and deps.sh fails.  Nothing present is ever asked of apt.
#
# `make demo` on a machine with an NVIDIA driver runs the real path
# (scripts/demo.sh), which needs user space only; GDIRECT_DEMO=emulated
# asks for the emulated machine there too, GDIRECT_DEMO=gpu insists on the
# real path.
set -eu

check_only=0
if [ "${1:-}" = --check ]; then
	check_only=1
	shift
fi
want=${1:-build}

# fetch_kernel DIR SUITE URI HOW: a Debian kernel of SUITE (its
# linux-headers-amd64's release), fetched through a private apt
# configuration (its own sources, lists and cache under DIR), never for the
# system, and unpacked under DIR/root rather than installed: installed, it
# would become the newest kernel in /lib/modules that every other build and
# lane picks.  HOW 0: the headers (arch and common) and linux-kbuild; 1:
# those and the image; root: a build root instead, a minimal SUITE system
# debootstrap'd with make, binutils (nm, for the GPL-only import check of
# scripts/build-modules.sh) and the headers (which pull in the compiler
# they were built with), for headers whose compiler and host tools the build
# machine cannot run (sid's); the modules are then built in it with chroot
# (scripts/kernel-builds.sh).  Kept until the suite's release, or the
# packages asked for, change.
# Prints the kernel release; DIR/root/usr/src/linux-headers-RELEASE is the
# build tree, DIR/root/boot/vmlinuz-RELEASE the guest kernel.
fetch_kernel() {
	kd=$1 suite=$2 uri=$3 image=$4
	mkdir -p "$kd/etc" "$kd/lists/partial" "$kd/archives/partial" ||
		{ echo "deps.sh: cannot create $kd (run as root, or set its variable)" >&2; exit 1; }
	cat >"$kd/etc/$suite.sources" <<-EOF
	Types: deb
	URIs: $uri
	Suites: $suite
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	# shellcheck disable=SC2046
	set -- $(private_apt "$kd")
	apt-get "$@" update -qq >&2 || { echo "deps.sh: apt-get update of $suite failed" >&2; exit 1; }
	hdr=$(apt-cache "$@" depends linux-headers-amd64 | sed -n 's/^ *Depends: \(linux-headers-[0-9].*-amd64\)$/\1/p' | head -n1)
	rel=${hdr#linux-headers-}
	[ -n "$rel" ] || { echo "deps.sh: no linux-headers-amd64 in $suite" >&2; exit 1; }
	if [ "$image" = root ]; then
		# The root is keyed by its package list, which names the
		# release; it is built aside and moved in only once whole.
		pk="binutils make linux-headers-$rel"
		[ "$(cat "$kd/root/.done" 2>/dev/null)" = "$pk" ] || {
			command -v debootstrap >/dev/null ||
				{ echo "deps.sh: the $suite build root needs debootstrap (apt-get install debootstrap)" >&2; exit 1; }
			rm -rf "$kd/root.new"
			debootstrap --variant=minbase --include="$(echo "$pk" | tr ' ' ,)" \
				"$suite" "$kd/root.new" "$uri" >"$kd/debootstrap.log" 2>&1 ||
				{ echo "deps.sh: debootstrap of the $suite build root failed: $(tail -n1 "$kd/debootstrap.log")" >&2; exit 1; }
			# Only the packages' files are kept: the root is
			# rebuilt, never upgraded.
			rm -rf "$kd/root.new/var/cache/apt/archives"/*.deb "$kd/root"
			echo "$pk" >"$kd/root.new/.done"
			mv "$kd/root.new" "$kd/root"
		}
		echo "$rel"
		return 0
	fi
	if [ ! -e "$kd/root/.done-$rel" ]; then
		kb=$(apt-cache "$@" depends "linux-headers-$rel" | sed -n 's/^ *Depends: \(linux-kbuild-[0-9].*\)$/\1/p' | head -n1)
		pk="linux-headers-$rel linux-headers-${rel%-amd64}-common $kb"
		[ "$image" = 1 ] && pk="$pk linux-image-$rel"
		rm -rf "$kd/root" "$kd/debs" && mkdir -p "$kd/root" "$kd/debs"
		# shellcheck disable=SC2086
		(cd "$kd/debs" && apt-get "$@" download -qq $pk) >&2 ||
			{ echo "deps.sh: downloading the $rel kernel failed" >&2; exit 1; }
		for d in "$kd"/debs/*.deb; do dpkg-deb -x "$d" "$kd/root"; done
		# The arch headers include the common ones by absolute path.
		sed -i "s|^include /usr/src/|include $kd/root/usr/src/|" \
			"$kd/root/usr/src/linux-headers-$rel/Makefile"
		rm -rf "$kd/debs"
		touch "$kd/root/.done-$rel"
	fi
	# The image's modules indexed (modules.dep), so that modinfo -b finds
	# them by name: the cluster's initramfs takes them from here.  The
	# package's postinst would run depmod; dpkg-deb -x does not.
	if [ "$image" = 1 ] && [ ! -e "$kd/root/lib/modules/$rel/modules.dep" ]; then
		depmod -b "$kd/root" "$rel" ||
			{ echo "deps.sh: depmod of the $rel modules failed" >&2; exit 1; }
	fi
	echo "$rel"
}

# private_apt DIR: the options that give apt-get and apt-cache DIR's
# private configuration (fetch_kernel), one a word: DIR has no spaces.
private_apt() {
	echo "-o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts=$1/etc" \
		"-o Dir::State::lists=$1/lists -o Dir::State::status=/dev/null" \
		"-o Dir::Cache::archives=$1/archives" \
		"-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache="
}

# deb_member APTDIR PKG VERSION OUT MEMBER...: PKG at VERSION downloaded
# through APTDIR's private apt configuration (private_apt) and the first
# MEMBER (a path in the package, without its leading ./) that it holds
# written to OUT; exits, saying why, when the download fails or no MEMBER
# is there.  OUT appears only once whole (moved in from a folder beside
# it), so that a reader never sees part of it; the package is not kept.
deb_member() {
	dm_apt=$1 dm_pkg=$2 dm_ver=$3 dm_out=$4
	shift 4
	dm_dl=$(mktemp -d "$(dirname "$dm_out")/.dl.XXXXXX") || exit 1
	chmod 755 "$dm_dl"
	# shellcheck disable=SC2046
	(cd "$dm_dl" && apt-get $(private_apt "$dm_apt") download -qq "$dm_pkg=$dm_ver") >&2 ||
		{ rm -rf "$dm_dl"; echo "deps.sh: downloading $dm_pkg $dm_ver failed" >&2; exit 1; }
	for dm_m; do
		dpkg-deb --fsys-tarfile "$dm_dl"/"$dm_pkg"_*.deb |
			tar -xO "./$dm_m" >"$dm_dl/member" 2>/dev/null || true
		[ -s "$dm_dl/member" ] && break
	done
	if [ ! -s "$dm_dl/member" ]; then
		rm -rf "$dm_dl"
		echo "deps.sh: none of $* in $dm_pkg $dm_ver" >&2
		exit 1
	fi
	mv "$dm_dl/member" "$dm_out"
	rm -rf "$dm_dl"
}

# kernel-bpo: the newest kernel Debian 12 offers (bookworm-backports'
# linux-image-amd64 and linux-headers-amd64), for the 6.12 guest lane, in
# BPO_ROOT (default /var/cache/gdirect-bpo).
if [ "$want" = kernel-bpo ]; then
	fetch_kernel "${BPO_ROOT:-/var/cache/gdirect-bpo}" bookworm-backports \
		http://deb.debian.org/debian 1
	exit 0
fi
# kernel-bpo-source: Debian's source of that kernel, linux-source-X.Y at
# the version of the kernel image kernel-bpo unpacked (the patched rxe of
# emu/rxe must be the source of the ib_core it is built against), in
# LINUX_SOURCE_CACHE (default /var/cache/gdirect-linux-source)/VERSION/
# as linux-source-X.Y.tar.xz; only the tarball is kept.  Prints its path.
if [ "$want" = kernel-bpo-source ]; then
	kd=${BPO_ROOT:-/var/cache/gdirect-bpo}
	rel=$(fetch_kernel "$kd" bookworm-backports http://deb.debian.org/debian 1) || exit 1
	# shellcheck disable=SC2046
	set -- $(private_apt "$kd")
	ver=$(apt-cache "$@" show "linux-image-$rel" | sed -n 's/^Version: //p' | head -n1)
	[ -n "$ver" ] || { echo "deps.sh: no version of linux-image-$rel" >&2; exit 1; }
	series=$(echo "$rel" | cut -d. -f1,2)
	sd=${LINUX_SOURCE_CACHE:-/var/cache/gdirect-linux-source}/$ver
	tb=$sd/linux-source-$series.tar.xz
	if [ ! -s "$tb" ]; then
		mkdir -p "$sd" ||
			{ echo "deps.sh: cannot create $sd (run as root, or set LINUX_SOURCE_CACHE)" >&2; exit 1; }
		deb_member "$kd" "linux-source-$series" "$ver" "$tb" \
			"usr/src/linux-source-$series.tar.xz"
	fi
	echo "$tb"
	exit 0
fi
# kernel-headers SUITE: the headers of another Debian release's kernel,
# for the module builds of the kernel lane (docs/building.md), under
# GDIRECT_KERNELS (default /var/cache/gdirect-kernels)/SUITE.  bullseye:
# 5.10, the oldest kernel the modules build against, unpacked.  sid: the
# newest (7.2), in a build root, as its headers were built by a gcc (16)
# and host tools (glibc 2.38 and later) that Debian 12 cannot run.
if [ "$want" = kernel-headers ]; then
	case ${2:-} in
	bullseye) how=0 ;;
	sid) how=root ;;
	*) echo "deps.sh: kernel-headers '${2:-}': expected bullseye or sid" >&2; exit 2 ;;
	esac
	fetch_kernel "${GDIRECT_KERNELS:-/var/cache/gdirect-kernels}/$2" "$2" \
		http://deb.debian.org/debian "$how"
	exit 0
fi
# kernel-image SUITE: the kernel of kernel-headers SUITE's release
# (bullseye's 5.10, sid's 7.2), for the boot lane that loads the modules
# built against those headers.  linux-image-RELEASE is fetched through the
# same private apt configuration (linux-binary-RELEASE, where the kernel is
# from 7.x) and only its vmlinuz kept, as
# GDIRECT_KERNELS/SUITE/image/vmlinuz-RELEASE, with the package and version
# it came from in vmlinuz-RELEASE.version.  It is fetched again when the
# archive's version of that package differs from the one recorded: a
# release name is not unique to one build (sid uploads a new build of the
# same ABI under the same name).  The headers, cached by release name, need
# not be of the same build: one ABI name promises one module ABI, which is
# what the modules built against them need.  Prints the kernel's path.
if [ "$want" = kernel-image ]; then
	case ${2:-} in
	bullseye|sid) ;;
	*) echo "deps.sh: kernel-image '${2:-}': expected bullseye or sid" >&2; exit 2 ;;
	esac
	kd=${GDIRECT_KERNELS:-/var/cache/gdirect-kernels}/$2
	rel=$("$0" kernel-headers "$2") || exit 1
	img=$kd/image/vmlinuz-$rel
	# shellcheck disable=SC2046
	set -- $(private_apt "$kd")
	# From 7.x the kernel is in linux-binary-RELEASE, on which
	# linux-image-RELEASE depends; before, in linux-image itself.
	pk=$(apt-cache "$@" depends "linux-image-$rel" |
		sed -n "s/^ *Depends: \(linux-binary-$rel\)\$/\1/p" | head -n1)
	pk=${pk:-linux-image-$rel}
	ver=$(apt-cache "$@" policy "$pk" | sed -n 's/^ *Candidate: //p' | head -n1)
	case $ver in
	''|'(none)') echo "deps.sh: no version of $pk in $2" >&2; exit 1 ;;
	esac
	if [ ! -s "$img" ] || [ "$(cat "$img.version" 2>/dev/null)" != "$pk=$ver" ]; then
		mkdir -p "$kd/image" ||
			{ echo "deps.sh: cannot create $kd/image (run as root, or set GDIRECT_KERNELS)" >&2; exit 1; }
		# In /boot before 7.x, in /usr/lib/modules/RELEASE from it.
		deb_member "$kd" "$pk" "$ver" "$img" \
			"boot/vmlinuz-$rel" "usr/lib/modules/$rel/vmlinuz"
		# The version is written after the image, so that a fetch cut
		# short leaves the old version, or none, and is done again.
		echo "$pk=$ver" >"$img.version"
	fi
	echo "$img"
	exit 0
fi

distro=unknown
if [ -r /etc/os-release ]; then
	# shellcheck disable=SC1091
	distro=$(. /etc/os-release && echo "${ID:-unknown}")
fi

# The kernel the modules are built for: Debian's -amd64 kernel the guest
# boots (Makefile's KVER), or on a machine with an NVIDIA driver the one
# running.
# Release names have no spaces or newlines, so ls lists them whole.
# shellcheck disable=SC2010
guest_kver=$(ls -1 /lib/modules 2>/dev/null | grep -- '-amd64$' | sort -V | tail -n1 || true)

nvidia_present() {
	[ -e /dev/nvidiactl ] || [ -r /proc/driver/nvidia/version ]
}

demo_mode() {
	case "${GDIRECT_DEMO:-}" in
	"")       if nvidia_present; then echo gpu; else echo emulated; fi ;;
	emulated) echo emulated ;;
	gpu)      echo gpu ;;
	*) echo "deps.sh: GDIRECT_DEMO='$GDIRECT_DEMO': expected 'emulated' or 'gpu'" >&2
	   return 2 ;;
	esac
}

# need NAME: is it there?  Prints nothing; exit status only.
have() {
	case "$1" in
	cc|make|python3|meson|pkg-config|cpio|sparse|dkms|bc|bison|flex|rsync|xz|qemu-system-x86_64|gnuplot)
		command -v "$1" >/dev/null 2>&1 ;;
	ninja)       command -v ninja >/dev/null 2>&1 || command -v ninja-build >/dev/null 2>&1 ;;
	kmod)        command -v modinfo >/dev/null 2>&1 || [ -x /sbin/modinfo ] ;;
	pahole)      command -v pahole >/dev/null 2>&1 ;;
	busybox)     [ -x /bin/busybox ] || [ -x /usr/bin/busybox ] ;;
	guest-kernel) [ -n "$guest_kver" ] && [ -f "/boot/vmlinuz-$guest_kver" ] ;;
	guest-headers) [ -n "$guest_kver" ] && [ -d "/lib/modules/$guest_kver/build" ] ;;
	ucx)         pkg-config --exists ucx-ucs 2>/dev/null ;;
	autoconf|automake|patch|cmake) command -v "$1" >/dev/null 2>&1 ;;
	libnl)       pkg-config --exists libnl-3.0 libnl-route-3.0 2>/dev/null ;;
	libpci)      pkg-config --exists libpci 2>/dev/null ;;
	libtool)     command -v libtoolize >/dev/null 2>&1 ;;
	c++)         command -v c++ >/dev/null 2>&1 ;;
	dpkg-dev)    command -v dpkg-source >/dev/null 2>&1 ;;
	ibverbs-dev) [ -f /usr/include/infiniband/verbs.h ] ;;
	rdmacm-dev)  [ -f /usr/include/rdma/rdma_cma.h ] ;;
	rdma)        [ -x /usr/bin/rdma ] ;;
	ibverbs-utils) [ -x /usr/bin/ibv_rc_pingpong ] ;;
	rxe-provider) [ -f /etc/libibverbs.d/rxe.driver ] ;;
	librdmacm)   ls /usr/lib/*/librdmacm.so.1 >/dev/null 2>&1 ;;
	ucx-utils)   [ -x /usr/bin/ucx_perftest ] ;;
	libelf)      pkg-config --exists libelf 2>/dev/null ;;
	openssl)     pkg-config --exists openssl 2>/dev/null ;;
	linux-source) ls /usr/src/linux-source-6.1.tar.* >/dev/null 2>&1 ;;
	dpkg-buildpackage|lintian|debootstrap) command -v "$1" >/dev/null 2>&1 ;;
	debhelper)   command -v dh >/dev/null 2>&1 ;;
	dh-dkms)     command -v dh_dkms >/dev/null 2>&1 ;;
	*) echo "deps.sh: unknown need '$1'" >&2; exit 2 ;;
	esac
}

# pkg NAME: the package that provides it on this distribution.
pkg() {
	case "$1" in
	cc|make)      echo build-essential ;;
	ninja)        echo ninja-build ;;
	gnuplot)      echo gnuplot-nox ;;
	kmod)         echo kmod ;;
	busybox)      echo busybox-static ;;
	qemu-system-x86_64) echo qemu-system-x86 ;;
	xz)           echo xz-utils ;;
	pahole)       echo dwarves ;;
	ucx)          echo libucx-dev ;;
	c++)          echo g++ ;;
	ibverbs-dev)  echo libibverbs-dev ;;
	rdmacm-dev)   echo librdmacm-dev ;;
	rdma)         echo iproute2 ;;
	rxe-provider) echo ibverbs-providers ;;
	librdmacm)    echo librdmacm1 ;;
	libelf)       echo libelf-dev ;;
	libnl)        echo "libnl-3-dev libnl-route-3-dev" ;;
	libpci)       echo libpci-dev ;;
	openssl)      echo libssl-dev ;;
	linux-source) echo linux-source-6.1 ;;
	dpkg-buildpackage) echo dpkg-dev ;;
	guest-kernel) echo linux-image-amd64 ;;
	guest-headers)
		# Ubuntu has no Debian -amd64 kernel; its headers are per kernel.
		if [ "$distro" = ubuntu ]; then echo "linux-headers-$(uname -r)"; else echo linux-headers-amd64; fi ;;
	*)            echo "$1" ;;
	esac
}

userspace="cc make python3 meson ninja"
guest="kmod cpio busybox qemu-system-x86_64 guest-kernel"
# The two-node cluster (docs/cluster.md): Debian's verbs user space with the
# Soft-RoCE provider, RDMA-CM, iproute2's rdma, and UCX with its tools,
# copied into the guests; UCX's headers for ucx-xfer; the guest kernel's
# source for the patched Soft-RoCE module (emu/rxe) and libibverbs'
# headers for its tests (rxe-gpu-test, gpu-rdma).
cluster="rdma ibverbs-utils rxe-provider librdmacm ucx ucx-utils linux-source xz patch ibverbs-dev"
# ... and what builds the cluster's own RDMA pieces at test time: rdma-core
# 56.1's libibverbs and rxe provider (emu/rdma-core: cmake, ninja, libnl)
# and perftest (tests/peers/perftest-build.sh: autotools, libpci, and
# RDMA-CM's headers, which its configure requires).
cluster="$cluster cmake ninja pkg-config libnl autoconf automake libtool libpci rdmacm-dev"
modules="cc make guest-headers"
case "$want" in
demo-mode)    demo_mode; exit $? ;;
nvidia-present) nvidia_present; exit $? ;;
userspace)    needs="$userspace" ;;
modules)      needs="$modules" ;;
build)        needs="$userspace $modules" ;;
# pahole: the backports kernel's build tree ships vmlinux, so its module
# builds (the 6.12 lane, the DKMS test against it) generate BTF, with the
# pahole its linux-kbuild package depends on; kernel-bpo unpacks that
# package without its dependencies.
# linux-source: the lint lane's checkpatch.pl comes from its tarball.
# debootstrap: the kernels lane builds 7.2's headers in a sid build root
# (kernel-headers sid).
test)         needs="$userspace $modules $guest c++ sparse linux-source xz dkms pkg-config ucx gnuplot pahole debootstrap $cluster" ;;
demo-cluster) needs="$userspace $modules $guest pkg-config $cluster" ;;
demo)
	mode=$(demo_mode) || exit 2
	if [ "$mode" = gpu ]; then
		# The real path: user space only; modules only where headers are.
		needs="$userspace"
	else
		needs="$userspace $modules $guest"
	fi ;;
bench)        needs="$userspace pkg-config ucx gnuplot" ;;
# ucx: building Debian's ucx source package GPU-aware (scripts/ucx-build.sh):
# its Build-Depends less what is replaced or left out (debhelper: autoreconf
# is run directly; NUMA, FUSE, Java, doxygen: configured off), plus
# dpkg-source to unpack it.
ucx)          needs="$userspace autoconf automake libtool c++ patch dpkg-dev ibverbs-dev rdmacm-dev" ;;
# deb: packaging/debian/control's Build-Depends (debhelper compat 13,
# dh-dkms, meson, ninja, pkg-config, python3, the -amd64 kernel headers
# that gdirect-emu's machine is built for), dpkg-buildpackage, and
# lintian, which make deb runs on what it built.
deb)          needs="$userspace guest-headers pkg-config ibverbs-dev dpkg-buildpackage debhelper dh-dkms lintian" ;;
# deb-lane: tests/packaging/deb-lane.sh, the packages installed and purged
# in a debootstrap'd Debian 12 chroot.
deb-lane)     needs="debootstrap" ;;
debug-kernel) needs="$userspace $modules $guest linux-source bc bison flex libelf openssl pahole rsync xz" ;;
*) echo "deps.sh: unknown target '$want'" >&2; exit 2 ;;
esac

missing="" pkgs=""
# A target's list may name a need twice (test's own and the cluster's):
# each is checked and named once.
seen=""
for n in $needs; do
	case " $seen " in *" $n "*) continue ;; esac
	seen="$seen $n"
	have "$n" && continue
	missing="$missing $n"
	p=$(pkg "$n")
	case " $pkgs " in *" $p "*) ;; *) pkgs="$pkgs $p" ;; esac
done
[ -z "$missing" ] && exit 0

echo "deps.sh: '$want' needs, and this machine lacks:$missing" >&2
case "$distro" in
debian|ubuntu) cmd="apt-get update && apt-get install -y --no-install-recommends$pkgs" ;;
*)             cmd="" ;;
esac
# meson and ninja from pip serve as well as the distribution's.
pip_hint=""
case " $missing " in *" meson "*|*" ninja "*) pip_hint="python3 -m pip install meson ninja" ;; esac

if [ "$check_only" = 1 ]; then
	echo "deps.sh: a build step installs nothing: run 'make deps' (as root), or:" >&2
	echo "deps.sh:   ${cmd:-install the equivalents of:$pkgs}" >&2
	[ -n "$pip_hint" ] && echo "deps.sh: meson and ninja also come from pip: $pip_hint" >&2
	exit 1
fi
if [ -z "$cmd" ]; then
	echo "deps.sh: not Debian or Ubuntu ($distro): install the equivalents of:$pkgs" >&2
	[ -n "$pip_hint" ] && echo "deps.sh: meson and ninja also come from pip: $pip_hint" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "deps.sh: run as root: $cmd" >&2
	[ -n "$pip_hint" ] && echo "deps.sh: or, for meson and ninja: $pip_hint" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# apt-get update succeeds even when no archive answers, and install then
# fails once per package; so each package's candidate is asked first, and
# a machine that reaches no archive is told so once.
urc=0
upd=$(apt-get update -qq 2>&1) || urc=$?
nocand="" n_pkgs=0
for p in $pkgs; do
	n_pkgs=$((n_pkgs + 1))
	c=$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: *//p' | head -n1)
	[ -n "$c" ] && [ "$c" != "(none)" ] || nocand="$nocand $p"
done
if [ -n "$nocand" ]; then
	fetch_err=$(printf '%s\n' "$upd" | grep -E '^(W|E|Err):' | head -n1)
	if [ "$urc" != 0 ] || [ -n "$fetch_err" ] ||
	   [ "$(echo "$nocand" | wc -w)" -eq "$n_pkgs" ]; then
		echo "deps.sh: no package archive is reachable from this machine${fetch_err:+ (apt-get update: $fetch_err)}," >&2
		echo "deps.sh: so nothing can be installed; the command, where an archive is reachable: $cmd" >&2
	else
		echo "deps.sh: the package archives of this machine have no:$nocand; the command was: $cmd" >&2
	fi
	[ -n "$pip_hint" ] && echo "deps.sh: meson and ninja also come from pip: $pip_hint" >&2
	exit 1
fi
echo "deps.sh: installing$pkgs"
# shellcheck disable=SC2086
if ! apt-get install -y -qq --no-install-recommends $pkgs >/dev/null; then
	echo "deps.sh: apt-get could not install them; the command was: $cmd" >&2
	[ -n "$pip_hint" ] && echo "deps.sh: meson and ninja also come from pip: $pip_hint" >&2
	exit 1
fi
exit 0
