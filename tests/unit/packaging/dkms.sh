#!/bin/sh
# SPDX-License-Identifier: MIT
# dkms.sh SOURCE BUILD - the DKMS configuration builds the modules against
# the installed kernel headers: dkms add + build of the DKMS source tree in
# private dkms and source trees (nothing registered system-wide), then the
# built modules are checked (vermagic, dependencies).  Skipped, saying why,
# where dkms or the headers are missing.
set -u
top=$1 build=$2
. "$top/tests/include/tap.sh"
if ! command -v dkms >/dev/null; then
	skip_all "dkms is not installed (Debian: apt-get install dkms)"
fi
kver=${KVER:-$(ls -1 /lib/modules 2>/dev/null | grep -- '-amd64$' | sort -V | tail -n1)}
# KDIR: headers outside /lib/modules (dkms-bpo.sh's private 6.12 ones).
kdir=${KDIR:-/lib/modules/$kver/build}
if [ -z "$kver" ] || [ ! -e "$kdir/Makefile" ]; then
	skip_all "no kernel headers ($kdir; Debian: linux-headers-amd64)"
fi
for h in /usr/src/nvidia-*/nvidia/nv-p2p.h /usr/src/nvidia-*/kernel-open/nvidia/nv-p2p.h; do
	[ -e "$h" ] && { diag "NVIDIA driver source at $h: gdirect builds against it, without nvp2p_emu"; emu=0; }
done
version=$(meson introspect --projectinfo "$build" | sed -n 's/.*"version": "\([^"]*\)".*/\1/p')
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mkdir -p "$d/src" "$d/tree" "$d/install"
check_quiet "the DKMS source tree" "$top/packaging/dkms-tree.sh" "$top" "$d/src/gdirect-$version" "$version" ||
	{ tap_done; exit 1; }
# Leave the machine as it was: dkms would otherwise generate a module
# signing key in /var/lib/dkms to sign what it built.
export sign_file=/nonexistent/sign-file
opts="--dkmstree $d/tree --sourcetree $d/src --installtree $d/install"
diag "dkms add + build gdirect/$version for $kver"
# shellcheck disable=SC2086
check_quiet "dkms add" dkms add -m gdirect -v "$version" $opts || { tap_done; exit 1; }
# shellcheck disable=SC2086
if dkms build -m gdirect -v "$version" -k "$kver" --kernelsourcedir "$kdir" $opts >"$d/build.log" 2>&1; then
	ok "dkms build for $kver"
else
	not_ok "dkms build for $kver"
	diag "$(tail -20 "$d/build.log"; tail -40 "$d/tree/gdirect/$version/build/make.log" 2>/dev/null)"
	tap_done; exit 1
fi
mods="gdirect gdirect_edu"
[ "${emu:-1}" = 1 ] && mods="nvp2p_emu $mods"
for m in $mods; do
	ko=$(find "$d/tree/gdirect/$version/$kver" -name "$m.ko*" | head -n1)
	if [ -z "$ko" ]; then not_ok "dkms built $m.ko"; continue; fi
	ok "dkms built $m.ko"
	vm=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
	dep=$(modinfo -F depends "$ko")
	diag "$m: $(basename "$ko"), vermagic $vm, depends '$dep'"
	check "$m: vermagic $vm, want $kver" [ "$vm" = "$kver" ]
done
# gdirect uses the nv-p2p provider's exports; gdirect_edu uses gdirect's.
if [ "${emu:-1}" = 1 ]; then
	ko=$(find "$d/tree/gdirect/$version/$kver" -name 'gdirect.ko*' | head -n1)
	check "gdirect.ko depends on nvp2p_emu" sh -c '[ -n "$1" ] && modinfo -F depends "$1" | grep -qw nvp2p_emu' _ "$ko"
fi
ko=$(find "$d/tree/gdirect/$version/$kver" -name 'gdirect_edu.ko*' | head -n1)
check "gdirect_edu.ko depends on gdirect" sh -c '[ -n "$1" ] && modinfo -F depends "$1" | grep -qw gdirect' _ "$ko"
tap_done
