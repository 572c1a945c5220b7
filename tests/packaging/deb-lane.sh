#!/bin/sh
# SPDX-License-Identifier: MIT
# deb-lane.sh BUILD - the Debian packages of `make deb` (BUILD/deb/*.deb)
# installed on a clean Debian 12, used, purged, and nothing left behind.
#
# The clean system is a debootstrap'd bookworm minbase chroot with what a
# user of the packages brings (linux-headers-amd64, dkms, a C compiler,
# pkg-config) and bookworm-backports' 6.12 headers beside Debian's 6.1,
# built once (the only step that needs the archive) and cached as a tarball in
# GDIRECT_DEB_CHROOT (/var/cache/gdirect-deb-chroot); every run unpacks it
# afresh, so each starts clean and needs no network.  In it:
#   apt-get install ./*.deb  (every package but -dbgsym)
#   dkms built gdirect for each kernel's headers, the .ko files are there,
#   the group and udev rule exist, gdirect runs from /usr/bin, the example
#   program builds against the installed header and library through
#   pkg-config, libgdrapi and the emulated GPU's libraries stay out of the
#   dynamic linker's path until asked, and the gdirect-libgdrapi
#   alternative puts ours ahead of a stand-in for NVIDIA's, and back;
#   apt-get purge --autoremove (what the packages pulled in goes too:
#   libibverbs for libgdirect0), and the file list, the group, the dkms tree, /usr/src
#   are as before the install.
# Before the purge, the installed files at work in the emulated machine (a
# chroot shares the host's kernel, so modules are loaded in a guest): the
# modules DKMS built, gdirect, libgdirect, gdirect-emu-cuda's libcuda and the
# example taken from the chroot and booted with nothing of the build tree
# (tests/packaging/deb-guest.sh, step 5 below).
#
# TAP, ending with "deb: N passed, N failed, N skipped".  Skips, saying
# why, without root, debootstrap, the packages, or the archive.
set -u
build=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/include/tap.sh"
# tap.sh's skip, counted for the summary line.
skip() { skips=$((skips + 1)); n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
cache=${GDIRECT_DEB_CHROOT:-/var/cache/gdirect-deb-chroot}
mirror=${GDIRECT_DEB_MIRROR:-http://deb.debian.org/debian}
# What the image holds names it: a change here builds a new one.  What
# gdirect-emu's package pulls in is in the image, so that apt-get installs
# it without the archive: qemu (with ibverbs-providers, which its
# libibverbs1 recommends, as apt would install it), busybox-static (the
# guest's init is a static busybox), cpio, kmod, python3, and the guest
# kernel it depends on (the build's newest -amd64 headers,
# packaging/debian/rules), which may be a security update: that one is
# installed from bookworm-security after debootstrap, and names the image.
emu_kver=$("$top/packaging/guest-kver.sh")
include=linux-headers-amd64,dkms,gcc,make,libc6-dev,pkg-config,adduser
include=$include,qemu-system-x86,ibverbs-providers,busybox-static,cpio,kmod,python3
image=$cache/bookworm-minbase-$(printf '%s bpo %s' "$include" "$emu_kver" | md5sum | cut -c1-8).tar
skips=0
summary() {
	passed=$((n - fails - skips))
	echo "deb: $passed passed, $fails failed, $skips skipped"
}
skip_lane() {
	echo "1..0 # SKIP $*"
	echo "deb: 0 passed, 0 failed, 1 skipped ($*)"
	exit 0
}
[ "$(id -u)" = 0 ] || skip_lane "not root: a chroot needs root"
command -v debootstrap >/dev/null || skip_lane "no debootstrap (scripts/deps.sh deb-lane installs it)"
debs=$(ls "$build"/deb/*.deb 2>/dev/null | grep -v -- '-dbgsym_')
[ -n "$debs" ] || skip_lane "no packages in $build/deb: run make deb first"

root=$(mktemp -d /var/tmp/gdirect-deb-lane.XXXXXX)
cleanup() {
	for m in sys proc; do
		mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m"
	done
	# --one-file-system: never into a mount that outlived umount.
	rm -rf --one-file-system "$root" "$root".*
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# 1. the clean system, built once.
if [ ! -s "$image" ]; then
	diag "no cached chroot: debootstrap bookworm minbase from $mirror into $image (once)"
	mkdir -p "$cache"
	if ! debootstrap --variant=minbase \
		--include="$include" \
		bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1; then
		tail -5 "$root.debootstrap.log" | sed 's/^/# /'
		rm -f "$root.debootstrap.log"
		skip_lane "debootstrap of bookworm from $mirror failed (no archive?)"
	fi
	rm -f "$root.debootstrap.log"
	# bookworm-backports' kernel headers (6.12) beside 6.1's, as on a
	# machine running the backports kernel; without them the lane tests
	# 6.1 alone and says so.
	echo "deb $mirror bookworm-backports main" >"$root/etc/apt/sources.list.d/bookworm-backports.list"
	if ! { chroot "$root" apt-get update -qq &&
	       chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		-t bookworm-backports linux-headers-amd64; } >"$root.bpo.log" 2>&1; then
		diag "bookworm-backports' linux-headers-amd64 not installed in the image:" "$(tail -5 "$root.bpo.log")"
	fi
	rm -f "$root.bpo.log"
	if [ -n "$emu_kver" ]; then
		echo "deb ${mirror%/debian}/debian-security bookworm-security main" \
			>"$root/etc/apt/sources.list.d/bookworm-security.list"
		# An image without it is not cached: it would stand for this
		# kernel until the build's headers change.
		if ! { chroot "$root" apt-get update -qq &&
		       chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends "linux-image-$emu_kver"; } >"$root.kernel.log" 2>&1; then
			tail -5 "$root.kernel.log" | sed 's/^/# /'
			rm -f "$root.kernel.log"
			skip_lane "linux-image-$emu_kver (gdirect-emu's guest kernel) could not be installed in the image (no archive?)"
		fi
		rm -f "$root.kernel.log"
	fi
	chroot "$root" apt-get clean
	tar -C "$root" --numeric-owner -cf "$image.tmp" . && mv "$image.tmp" "$image"
	# Images of an older include list are never used again.
	find "$cache" -maxdepth 1 -name 'bookworm-minbase*.tar' ! -name "$(basename "$image")" -delete
	rm -rf --one-file-system "$root" && mkdir "$root"
fi
tar -C "$root" --numeric-owner -xf "$image" || skip_lane "cannot unpack $image"
ok "a fresh Debian 12 minbase chroot from $image"
mount -t proc proc "$root/proc"
mount -t sysfs -o ro sysfs "$root/sys"
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
# The file list of the system, less what changes by use alone: logs, apt's
# and debconf's caches, dpkg's and apt's own bookkeeping (-old copies,
# apt's record of automatically installed packages), the shadow tools'
# backups (/etc/group- and friends: addgroup's copy of the file before it
# changed), and depmod's indexes (modules.dep and friends), which dkms
# rebuilds on install and on removal and so may appear where no kernel
# image made them: they are checked instead not to name our modules.
snapshot() {
	(cd "$root" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./tmp \
		-o -path ./run -o -path ./var/log -o -path ./var/cache -o -path ./var/tmp \) -prune \
		-o -print) | grep -v -e '^\./var/lib/dpkg/[a-z]*-old$' -e '^\./etc/[a-z]*-$' \
		-e '^\./usr/sbin/policy-rc.d$' -e '^\./var/lib/dpkg/triggers/' \
		-e '^\./var/lib/apt/extended_states$' -e '^\./usr/lib/modules/[^/]*/modules\.[a-z.]*$' | sort
}
snapshot >"$root.before"
# The kernels with headers, which DKMS builds for (gdirect-emu's guest
# kernel is an image without headers).
kvers=$(for k in $(ls "$root/lib/modules" | grep -- '-amd64$'); do
	[ -d "$root/usr/src/linux-headers-$k" ] && echo "$k"; done | sort -V)
diag "chroot kernel headers:" $kvers
version=$(basename "$(ls "$build"/deb/gdirect-dkms_*_all.deb)" | sed 's/^gdirect-dkms_\(.*\)_all\.deb$/\1/')

# 2. install.
mkdir -p "$root/tmp/debs"
cp $debs "$root/tmp/debs/"
names=$(for d in $debs; do dpkg-deb -f "$d" Package; done | tr '\n' ' ')
diag "packages: $names"
if in_root sh -c 'apt-get install -y /tmp/debs/*.deb' >"$root.install.log" 2>&1; then
	ok "apt-get install of the packages"
else
	not_ok "apt-get install of the packages"
	diag "$(tail -40 "$root.install.log")"
fi
diag "$(grep -i -e 'dkms' -e 'error' -e 'warn' "$root.install.log" | head -20)"
rm -f "$root.install.log"

# 3. the modules, built by the postinst for the kernels with headers; one
# it left out (dkms builds for the running kernel, the host's here, and
# the newest) is built as the kernel's own hook (/etc/kernel/postinst.d/
# dkms) would build it: dkms autoinstall, a no-op where already built.
newest=$(printf '%s\n' $kvers | tail -n1)
for k in $kvers; do
	[ "$k" = "$newest" ] && continue
	in_root dkms autoinstall -k "$k" >"$root.dkms.log" 2>&1 || diag "$(tail -20 "$root.dkms.log")"
	rm -f "$root.dkms.log"
done
st=$(in_root dkms status gdirect 2>&1)
diag "dkms status:" "$st"
[ "$(printf '%s\n' $kvers | wc -l)" -ge 2 ] ||
	skip "gdirect built for bookworm-backports' 6.12 headers" "not in the cached image (the backports archive was unavailable when it was built)"
for kver in $kvers; do
	check "dkms built and installed gdirect/$version for $kver" \
		sh -c 'printf "%s\n" "$1" | grep -q "^gdirect/$2, $3, x86_64: installed"' _ "$st" "$version" "$kver"
	for m in nvp2p_emu gdirect gdirect_edu; do
		ko=$(find "$root/lib/modules/$kver/updates/dkms" -name "$m.ko*" 2>/dev/null | head -n1)
		check "$m.ko installed for $kver${ko:+ (${ko#$root})}" [ -n "$ko" ]
	done
done
# The packaged tree is the one packaging/dkms-tree.sh lays out (the tree
# tests/unit/packaging/dkms.sh builds).
"$top/packaging/dkms-tree.sh" "$top" "$root.tree" "$version"
d=$(diff -r "$root.tree" "$root/usr/src/gdirect-$version" 2>&1)
rm -rf "$root.tree"
check "/usr/src/gdirect-$version is packaging/dkms-tree.sh's tree" [ -z "$d" ]
[ -z "$d" ] || diag "$d"
check "the group gdirect exists" sh -c 'chroot "$1" getent group gdirect >/dev/null' _ "$root"
check "the udev rule 60-gdirect.rules is installed" [ -f "$root/usr/lib/udev/rules.d/60-gdirect.rules" ]

# 4. user space.
check "gdirect is /usr/bin/gdirect" [ "$(in_root sh -c 'command -v gdirect')" = /usr/bin/gdirect ]
out=$(in_root gdirect version 2>&1)
check "gdirect version says 'gdirect $version' ($out)" [ "$out" = "gdirect $version" ]
if out=$(in_root gdirect info 2>&1); then ok "gdirect info runs"
else not_ok "gdirect info runs"; fi
diag "$(printf '%s\n' "$out" | head -15)"
cp "$top/lib/examples/gdirect-example.c" "$root/tmp/"
ma=x86_64-linux-gnu
if in_root sh -c "cc -o /tmp/example /tmp/gdirect-example.c \$(pkg-config --cflags --libs gdirect) \
	-I/usr/include/gdirect-emu -L/usr/lib/$ma/gdirect-emu -lcuda" >"$root.cc.log" 2>&1; then
	ok "the example builds against gdirect.h and libgdirect through pkg-config"
	# /lib is /usr/lib on Debian 12 (merged /usr): compare the real paths.
	lib=$(in_root sh -c 'LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/gdirect-emu ldd /tmp/example' |
		sed -n 's/^[[:space:]]*libgdirect\.so\.0 => \([^ ]*\).*/\1/p')
	[ -z "$lib" ] || lib=$(in_root readlink -f "$lib")
	check "it links the installed libgdirect ($lib)" [ "$lib" = "/usr/lib/$ma/libgdirect.so.0.1.0" ]
	out=$(in_root env LD_LIBRARY_PATH=/usr/lib/$ma/gdirect-emu /tmp/example 2>&1)
	diag "the example, with the emulated GPU's libcuda and no device: $out"
else
	not_ok "the example builds against gdirect.h and libgdirect through pkg-config"
	diag "$(cat "$root.cc.log")"
fi
rm -f "$root.cc.log"
cache_has() { in_root ldconfig -p | grep -q "$1"; }
check "libcuda.so.1 (gdirect-emu-cuda) is not in ld.so.cache" sh -c '! chroot "$1" ldconfig -p | grep -q libcuda.so.1' _ "$root"
check "libgdrapi.so.2 is not in ld.so.cache by default" sh -c '! chroot "$1" ldconfig -p | grep -q libgdrapi.so.2' _ "$root"
in_root update-alternatives --quiet --set gdirect-libgdrapi /usr/lib/$ma/gdirect/ld.so.conf.d/gdirect.conf
in_root ldconfig
check "update-alternatives --set gdirect-libgdrapi: ours in ld.so.cache" \
	sh -c 'chroot "$1" ldconfig -p | grep -q "libgdrapi.so.2 .*=> /usr/lib/x86_64-linux-gnu/gdirect/libgdrapi.so.2"' _ "$root"
if in_root sh -c "printf '#include <gdrapi.h>\nint main(void){int a,b;gdr_runtime_get_version(&a,&b);return !(a==2);}\n' >/tmp/g.c &&
	cc -o /tmp/g /tmp/g.c \$(PKG_CONFIG_PATH=/usr/lib/$ma/gdirect/pkgconfig pkg-config --cflags --libs gdrapi) && /tmp/g" >/dev/null 2>&1; then
	ok "a gdrcopy program builds (gdrapi.pc) and runs on ours, found by ldconfig"
else
	not_ok "a gdrcopy program builds (gdrapi.pc) and runs on ours, found by ldconfig"
fi

# Ours ahead of NVIDIA's: a stand-in with NVIDIA's name and SONAME in
# /usr/lib/<triplet>, where gdrcopy's libgdrapi package puts it.
in_root sh -c "echo 'int gdr_stand_in;' >/tmp/n.c && cc -shared -fPIC -Wl,-soname,libgdrapi.so.2 \
	-o /usr/lib/$ma/libgdrapi.so.2 /tmp/n.c && rm /tmp/n.c && ldconfig"
resolved() { in_root ldd /tmp/g 2>/dev/null | sed -n 's/^[[:space:]]*libgdrapi\.so\.2 => \([^ ]*\).*/\1/p'; }
r=$(resolved)
check "with NVIDIA's libgdrapi.so.2 beside it and ours chosen, programs get ours ($r)" \
	[ "$r" = "/usr/lib/$ma/gdirect/libgdrapi.so.2" ]
in_root update-alternatives --quiet --auto gdirect-libgdrapi
in_root ldconfig
r=$(resolved)
case "$r" in /usr/lib/$ma/libgdrapi.so.2|/lib/$ma/libgdrapi.so.2) ok "update-alternatives --auto: NVIDIA's again ($r)" ;;
*) not_ok "update-alternatives --auto: NVIDIA's again ($r)" ;; esac
rm -f "$root/usr/lib/$ma/libgdrapi.so.2"
in_root ldconfig

# 5. the installed files in the emulated machine: the modules DKMS built,
# the installed gdirect, libgdirect and gdirect-emu-cuda's libcuda, and the
# example built above, at their installed paths in a guest of their own
# (build-initramfs.sh's GUEST_TREE: nothing of the build tree), booted on
# a kernel DKMS built for: the host's /boot/vmlinuz-KVER (the 6.1 guest
# lanes' kernel) where the chroot has its headers, else bookworm-backports'
# (scripts/deps.sh kernel-bpo, the 6.12 lane's), where its release is the
# chroot's.  tests/packaging/deb-guest.sh runs there; its checks are this
# lane's, "guest: " before each.
guest_checks=24
bpo_root=${BPO_ROOT:-/var/cache/gdirect-bpo}/root
# guest_kernel: the first of those present, in gkernel and gkver.
guest_kernel() {
	gkernel='' gkver=''
	for k in $kvers; do
		for v in "/boot/vmlinuz-$k" "$bpo_root/boot/vmlinuz-$k"; do
			[ -z "$gkernel" ] && [ -f "$v" ] && gkernel=$v gkver=$k
		done
	done
}
guest_kernel
# The backports kernel is fetched after this lane in make test: here first
# when it is the one wanted.
if [ -z "$gkernel" ]; then
	"$top/scripts/deps.sh" kernel-bpo >/dev/null 2>&1 || diag "scripts/deps.sh kernel-bpo failed"
	guest_kernel
fi
why=''
command -v qemu-system-x86_64 >/dev/null 2>&1 || why="no qemu-system-x86_64"
[ -x /bin/busybox ] || why="${why:+$why, }no /bin/busybox"
command -v cpio >/dev/null 2>&1 || why="${why:+$why, }no cpio"
[ -n "$gkernel" ] || why="${why:+$why, }no guest kernel of a release DKMS built for ($(echo $kvers)) in /boot or $bpo_root/boot"
[ -x "$root/tmp/example" ] || why="${why:+$why, }the example did not build"
if [ -n "$why" ]; then
	skip "the installed files in the emulated machine" "$why"
	echo "# deb-guest: skipped ($why)"
else
	g=$root.guest
	d=$g/lib/modules/$gkver/updates/dkms
	mkdir -p "$d" "$g/tests" "$g/etc" "$g/usr/bin" "$g/usr/local/bin" "$g/usr/lib/$ma/gdirect-emu"
	env=$g/etc/gdirect-deb.env
	echo "kver=$gkver" >"$env"
	for m in nvp2p_emu gdirect gdirect_edu; do
		ko=$(find "$root/lib/modules/$gkver/updates/dkms" -name "$m.ko*" | head -n1)
		case $ko in
		'') ;;
		*.xz) xz -dc "$ko" >"$d/$m.ko" ;;
		*.zst) zstd -q -dc "$ko" >"$d/$m.ko" ;;
		*) cp "$ko" "$d/$m.ko" ;;
		esac
		id=$(readelf -n "$d/$m.ko" 2>/dev/null | sed -n 's/^[[:space:]]*Build ID: //p')
		echo "buildid_$m=$id" >>"$env"
	done
	cp "$root/usr/bin/gdirect" "$g/usr/bin/"
	cp -P "$root/usr/lib/$ma"/libgdirect.so.0* "$g/usr/lib/$ma/"
	cp -P "$root/usr/lib/$ma/gdirect-emu"/lib*.so* "$g/usr/lib/$ma/gdirect-emu/"
	cp "$root/tmp/example" "$g/usr/local/bin/gdirect-example"
	sum() { sha256sum "$1" | cut -d' ' -f1; }
	{ echo "sha_gdirect=$(sum "$root/usr/bin/gdirect")"
	  echo "sha_libgdirect=$(sum "$root/usr/lib/$ma/libgdirect.so.0")"
	  echo "sha_libcuda=$(sum "$root/usr/lib/$ma/gdirect-emu/libcuda.so.1")"
	  echo "sha_example=$(sum "$root/tmp/example")"; } >>"$env"
	cp "$top/tests/packaging/deb-guest.sh" "$g/tests/packaging-deb-guest.sh"
	diag "guest: kernel $gkernel;" $(cat "$env")
	t0=$(date +%s)
	# One host thread for the vCPUs, as for any 6.12 guest (docs/testing.md).
	if GUEST_TREE=$g GUEST_TESTS=packaging-deb-guest.sh \
		"$top/tests/harness/build-initramfs.sh" "$build" v2 "$root.cpio.gz" >"$root.guest.log" 2>&1 &&
	   python3 "$top/tests/harness/run.py" --initrd "$root.cpio.gz" --kernel "$gkernel" \
		--tcg-thread single --name deb-guest --results "$root.results" --timeout 600 >>"$root.guest.log" 2>&1; then
		rc=0
	else
		rc=1
	fi
	mkdir -p "$root.results"
	[ -f "$root.results/deb-guest.tap" ] || : >"$root.results/deb-guest.tap"
	n0=$n f0=$fails
	tap_relay guest "$root.results/deb-guest.tap" "$guest_checks" "the guest test"
	# run.py also fails a run whose kernel log has a BUG, WARNING or Oops.
	secs=$(( $(date +%s) - t0 ))
	check_rc $rc "guest: booted on $gkver, the test finished, no kernel problem in its log ($secs s)"
	# The guest's own recap line, which run-tests.sh shows.
	echo "# deb-guest: $((n - n0 - fails + f0)) passed, $((fails - f0)) failed on $gkver ($secs s)"
	if [ "$rc" != 0 ]; then
		# Kept for a look, and for booting again by hand.
		kept=$build/deb/guest
		rm -rf "$kept" && mkdir -p "$kept"
		cp "$root.cpio.gz" "$root.guest.log" "$root.results"/* "$kept/" 2>/dev/null
		diag "$(tail -20 "$root.guest.log")" "the guest's initramfs, log and console log: $kept"
	fi
	rm -rf "$g" "$root.cpio.gz" "$root.results" "$root.guest.log"
fi

# 5b. gdirect-emu from its package, as a user's CI runs it in a clean
# system: the guest kernel it depends on boots with the packaged machine,
# the user's COMMAND runs there with gdirect loaded, and its exit status
# is the command's.
emu_deb=$(ls "$build"/deb/gdirect-emu_*_amd64.deb 2>/dev/null | head -n1)
if [ -z "$emu_deb" ]; then
	skip "gdirect-emu from its package" "make deb left the package out (no Debian -amd64 kernel headers where it built)"
else
	# The release its modules were built for, read from a module of the
	# package, must be the kernel image it depends on.
	dpkg-deb --fsys-tarfile "$emu_deb" |
		tar -xOf - ./usr/lib/gdirect-emu/machine/kmod/v2/gdirect/gdirect.ko >"$root.emu.ko" 2>/dev/null
	rel=$(modinfo -F vermagic "$root.emu.ko" 2>/dev/null | cut -d' ' -f1)
	rm -f "$root.emu.ko"
	dep=$(dpkg-deb -f "$emu_deb" Depends)
	check "gdirect-emu depends on linux-image-$rel, the kernel its modules were built for" \
		sh -c '[ -n "$2" ] && printf "%s,\n" "$1" | grep -Eq "(^|[ ,])linux-image-$2(,| )"' _ "$dep" "$rel"
	check_quiet "gdirect-emu --help runs from /usr/bin" in_root gdirect-emu --help
	t0=$(date +%s)
	out=$(in_root gdirect-emu run --timeout 600 --results /tmp/emu-results -- \
		sh -c 'grep -c "^gdirect " /proc/modules; exit 7' 2>"$root.emu.err")
	rc=$?
	check "gdirect-emu run: COMMAND's status 7 is the command's (got $rc, $(( $(date +%s) - t0 )) s)" [ "$rc" = 7 ]
	check "gdirect-emu run: gdirect.ko of the package loaded in the guest" [ "$out" = 1 ]
	[ "$rc" = 7 ] || diag "$out" "$(tail -20 "$root.emu.err")"
	rm -rf "$root.emu.err" "$root/tmp/emu-results"
fi

# 6. purge, and nothing left.
if in_root apt-get purge -y --autoremove $names >"$root.purge.log" 2>&1; then ok "apt-get purge of the packages"
else not_ok "apt-get purge of the packages"; diag "$(tail -30 "$root.purge.log")"; fi
rm -f "$root.purge.log"
rm -rf "$root/tmp/debs" "$root/tmp/example" "$root/tmp/gdirect-example.c" "$root/tmp/g" "$root/tmp/g.c"
check "dkms status knows no gdirect" [ -z "$(in_root dkms status gdirect 2>/dev/null)" ]
check "no /var/lib/dkms/gdirect" [ ! -e "$root/var/lib/dkms/gdirect" ]
check "no /usr/src/gdirect-$version" [ ! -e "$root/usr/src/gdirect-$version" ]
idx=$(grep -l -a -e gdirect -e nvp2p_emu "$root"/lib/modules/*/modules.* 2>/dev/null)
check "depmod's indexes name no gdirect module${idx:+: $idx}" [ -z "$idx" ]
check "no gdirect module under /lib/modules" [ -z "$(find "$root/lib/modules" -name 'gdirect*.ko*' -o -name 'nvp2p_emu.ko*')" ]
check "the group gdirect is gone" sh -c '! chroot "$1" getent group gdirect' _ "$root"
check "the udev rule is gone" [ ! -e "$root/usr/lib/udev/rules.d/60-gdirect.rules" ]
check "the gdirect-libgdrapi alternative is gone" [ ! -e "$root/etc/ld.so.conf.d/00-gdirect-libgdrapi.conf" ] 
snapshot >"$root.after"
left=$(diff "$root.before" "$root.after" | grep '^[<>]')
rm -f "$root.before" "$root.after"
check "the file list is as before the install${left:+ (differences below)}" [ -z "$left" ]
[ -z "$left" ] || diag "$left"
tap_done >/dev/null
echo "1..$n"
summary
[ "$fails" = 0 ]
