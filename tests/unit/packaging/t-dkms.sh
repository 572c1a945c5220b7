#!/bin/sh
# t-dkms.sh SOURCE BUILD - the DKMS configuration builds the modules against
# the installed kernel headers: dkms add + build of the DKMS source tree in
# private dkms and source trees (nothing registered system-wide), then the
# built modules are checked (vermagic, dependencies).  Skipped, saying why,
# where dkms or the headers are missing.
set -u
top=$1 build=$2
if ! command -v dkms >/dev/null; then
	echo "SKIP: dkms is not installed (Debian: apt-get install dkms)"; exit 77
fi
kver=${KVER:-$(ls -1 /lib/modules 2>/dev/null | grep -- '-amd64$' | sort -V | tail -n1)}
# KDIR: headers outside /lib/modules (t-dkms-bpo.sh's private 6.12 ones).
kdir=${KDIR:-/lib/modules/$kver/build}
if [ -z "$kver" ] || [ ! -e "$kdir/Makefile" ]; then
	echo "SKIP: no kernel headers ($kdir; Debian: linux-headers-amd64)"; exit 77
fi
for h in /usr/src/nvidia-*/nvidia/nv-p2p.h /usr/src/nvidia-*/kernel-open/nvidia/nv-p2p.h; do
	[ -e "$h" ] && { echo "note: NVIDIA driver source at $h: gdirect builds against it, without nvp2p_emu"; emu=0; }
done
version=$(meson introspect --projectinfo "$build" | sed -n 's/.*"version": "\([^"]*\)".*/\1/p')
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mkdir -p "$d/src" "$d/tree" "$d/install"
"$top/packaging/dkms-tree.sh" "$top" "$d/src/gdirect-$version" "$version" || exit 1
# Leave the machine as it was: dkms would otherwise generate a module
# signing key in /var/lib/dkms to sign what it built.
export sign_file=/nonexistent/sign-file
opts="--dkmstree $d/tree --sourcetree $d/src --installtree $d/install"
echo "dkms add + build gdirect/$version for $kver"
# shellcheck disable=SC2086
dkms add -m gdirect -v "$version" $opts || { echo "FAIL: dkms add"; exit 1; }
# shellcheck disable=SC2086
if ! dkms build -m gdirect -v "$version" -k "$kver" --kernelsourcedir "$kdir" $opts; then
	cat "$d/tree/gdirect/$version/build/make.log" 2>/dev/null | tail -40
	echo "FAIL: dkms build"; exit 1
fi
mods="gdirect gdirect_edu"
[ "${emu:-1}" = 1 ] && mods="nvp2p_emu $mods"
fails=0
for m in $mods; do
	ko=$(find "$d/tree/gdirect/$version/$kver" -name "$m.ko*" | head -n1)
	if [ -z "$ko" ]; then echo "FAIL: dkms built no $m.ko"; fails=$((fails + 1)); continue; fi
	vm=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
	dep=$(modinfo -F depends "$ko")
	echo "$m: $(basename "$ko"), vermagic $vm, depends '$dep'"
	[ "$vm" = "$kver" ] || { echo "FAIL: $m vermagic $vm, want $kver"; fails=$((fails + 1)); }
done
# gdirect uses the nv-p2p provider's exports; gdirect_edu uses gdirect's.
if [ "${emu:-1}" = 1 ]; then
	ko=$(find "$d/tree/gdirect/$version/$kver" -name 'gdirect.ko*' | head -n1)
	[ -n "$ko" ] && modinfo -F depends "$ko" | grep -qw nvp2p_emu ||
		{ echo "FAIL: gdirect.ko does not depend on nvp2p_emu"; fails=$((fails + 1)); }
fi
ko=$(find "$d/tree/gdirect/$version/$kver" -name 'gdirect_edu.ko*' | head -n1)
[ -n "$ko" ] && modinfo -F depends "$ko" | grep -qw gdirect ||
	{ echo "FAIL: gdirect_edu.ko does not depend on gdirect"; fails=$((fails + 1)); }
[ $fails -eq 0 ] || exit 1
echo "dkms build: all checks passed"
