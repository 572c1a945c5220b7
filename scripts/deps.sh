#!/bin/sh
# deps.sh - install, or name, the Debian 12 packages a target needs.
#
# usage: scripts/deps.sh build|test|demo|bench|debug-kernel|kernel-bpo
#
# As root it installs what is missing with apt-get; otherwise it prints the
# exact command to run and fails.  Every package is a Debian one, by name.
set -eu

want=${1:-build}

# The guest kernel and its headers must be the same version: both come from
# the linux-image-amd64 / linux-headers-amd64 metapackages.
base="build-essential python3 meson ninja-build pkg-config kmod cpio busybox-static \
      qemu-system-x86 linux-image-amd64 linux-headers-amd64 sparse"
# kernel-bpo: the newest kernel Debian 12 offers (bookworm-backports'
# linux-image-amd64 and linux-headers-amd64), for the 6.12 guest lane only.
# Backports are enabled in a private apt configuration (its own sources,
# lists and cache under BPO_ROOT), never for the system, and the packages
# are unpacked under BPO_ROOT/root rather than installed: installed, they
# would become the newest kernel in /lib/modules that every other build and
# lane picks.  Prints the kernel release; BPO_ROOT/root/usr/src/linux-
# headers-RELEASE is the build tree, BPO_ROOT/root/boot/vmlinuz-RELEASE the
# guest kernel.
if [ "$want" = kernel-bpo ]; then
	bpo=${BPO_ROOT:-/var/cache/gdirect-bpo}
	mkdir -p "$bpo/etc" "$bpo/lists/partial" "$bpo/archives/partial" "$bpo/debs" ||
		{ echo "deps.sh: cannot create $bpo (set BPO_ROOT, or run as root)" >&2; exit 1; }
	cat >"$bpo/etc/bookworm-backports.sources" <<-EOF
	Types: deb
	URIs: http://deb.debian.org/debian
	Suites: bookworm-backports
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	set -- -o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$bpo/etc" \
		-o Dir::State::lists="$bpo/lists" -o Dir::Cache::archives="$bpo/archives" \
		-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
	apt-get "$@" update -qq >&2 || { echo "deps.sh: apt-get update of bookworm-backports failed" >&2; exit 1; }
	img=$(apt-cache "$@" depends linux-image-amd64 | sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1)
	rel=${img#linux-image-}
	[ -n "$rel" ] || { echo "deps.sh: no linux-image-amd64 in bookworm-backports" >&2; exit 1; }
	if [ ! -e "$bpo/root/.done-$rel" ]; then
		kb=$(apt-cache "$@" depends "linux-headers-$rel" | sed -n 's/^ *Depends: \(linux-kbuild-[0-9].*\)$/\1/p' | head -n1)
		rm -rf "$bpo/root" "$bpo/debs" && mkdir -p "$bpo/root" "$bpo/debs"
		(cd "$bpo/debs" && apt-get "$@" download -qq "linux-image-$rel" \
			"linux-headers-$rel" "linux-headers-${rel%-amd64}-common" "$kb") >&2 ||
			{ echo "deps.sh: downloading the $rel kernel failed" >&2; exit 1; }
		for d in "$bpo"/debs/*.deb; do dpkg-deb -x "$d" "$bpo/root"; done
		# The arch headers include the common ones by absolute path.
		sed -i "s|^include /usr/src/|include $bpo/root/usr/src/|" \
			"$bpo/root/usr/src/linux-headers-$rel/Makefile"
		rm -rf "$bpo/debs"
		touch "$bpo/root/.done-$rel"
	fi
	echo "$rel"
	exit 0
fi

case "$want" in
build)        pkgs="$base" ;;
test)         pkgs="$base dkms" ;;
demo)         pkgs="$base" ;;
bench)        pkgs="$base libucx-dev" ;;
debug-kernel) pkgs="$base linux-source-6.1 bc bison flex libelf-dev libssl-dev dwarves rsync xz-utils" ;;
*) echo "deps.sh: unknown target '$want'" >&2; exit 2 ;;
esac

missing=""
for p in $pkgs; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in *"install ok installed"*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing Debian packages:$missing" >&2
	echo "deps.sh: run as root: apt-get update && apt-get install -y$missing" >&2
	exit 1
fi
echo "deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
