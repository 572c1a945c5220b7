#!/bin/sh
# deps.sh - install, or name, the Debian 12 packages a target needs.
#
# usage: scripts/deps.sh build|test|demo|bench|debug-kernel
#
# As root it installs what is missing with apt-get; otherwise it prints the
# exact command to run and fails.  Every package is a Debian one, by name.
set -eu

want=${1:-build}

# The guest kernel and its headers must be the same version: both come from
# the linux-image-amd64 / linux-headers-amd64 metapackages.
base="build-essential python3 meson ninja-build pkg-config kmod cpio busybox-static \
      qemu-system-x86 linux-image-amd64 linux-headers-amd64 sparse"
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
