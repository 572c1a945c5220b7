#!/bin/sh
# SPDX-License-Identifier: MIT
# deb-guest.sh - the Debian packages' installed files at work in the
# emulated machine; tests/packaging/deb-lane.sh copies it into the guest as
# /tests/packaging-deb-guest.sh (its name by tests/TESTS' rule), beside the
# files it took from its chroot at their installed paths and
# /etc/gdirect-deb.env, which names the kernel DKMS built the modules for
# and what each file must be (the modules' build IDs, the programs' and
# libraries' SHA-256 sums).
#
# The modules DKMS installed (updates/dkms) load next to the emulator,
# and the loaded ones are those files (their build IDs in
# /sys/module/M/notes); the installed gdirect finds the emulated GPU and
# gdirect.ko; the example program, built in the chroot against the
# installed header and library, pins and copies through the emulated GPU
# with the installed libgdirect and gdirect-emu-cuda's libcuda, which the
# dynamic loader resolves from their installed paths (no LD_LIBRARY_PATH
# but gdirect-emu's directory); everything unloads.
. /tests/lib.sh
. /etc/gdirect-deb.env
unset LD_LIBRARY_PATH
export PATH=/usr/local/bin:/usr/bin:$PATH
ma=x86_64-linux-gnu
dkms=/lib/modules/$kver/updates/dkms
emu=/usr/lib/$ma/gdirect-emu
plan 24

check "the guest runs $kver, the kernel DKMS built the modules for" test "$(uname -r)" = "$kver"
# build_id M: the GNU build ID of the loaded module M (the note's 16 bytes
# of header skipped), in hex.
build_id() { od -An -tx1 -v -j16 "/sys/module/$1/notes/.note.gnu.build-id" 2>/dev/null | tr -d ' \n'; }
for m in nvp2p_emu gdirect gdirect_edu; do
	check_quiet "insmod $dkms/$m.ko" insmod "$dkms/$m.ko"
	eval want=\$buildid_$m
	got=$(build_id "$m")
	check "the loaded $m is DKMS's build (build ID $got)" test -n "$got" -a "$got" = "$want"
done

# sum FILE: its SHA-256.
sum() { sha256sum "$1" | cut -d' ' -f1; }
check "/usr/bin/gdirect is gdirect-tools' file" test "$(sum /usr/bin/gdirect)" = "$sha_gdirect"
check "libgdirect.so.0 is libgdirect0's file" test "$(sum /usr/lib/$ma/libgdirect.so.0)" = "$sha_libgdirect"
check "libcuda.so.1 is gdirect-emu-cuda's file" test "$(sum $emu/libcuda.so.1)" = "$sha_libcuda"
# resolved PROGRAM LIB: where the dynamic loader finds LIB for PROGRAM.
resolved() { /lib64/ld-linux-x86-64.so.2 --list "$1" 2>/dev/null | sed -n "s/^[[:space:]]*$2 => \([^ ]*\).*/\1/p"; }
r=$(resolved /usr/bin/gdirect libgdirect.so.0)
check "gdirect links /usr/lib/$ma/libgdirect.so.0 ($r)" test "$r" = "/usr/lib/$ma/libgdirect.so.0"

check "gdirect is /usr/bin/gdirect" test "$(command -v gdirect)" = /usr/bin/gdirect
out=/tmp/info.json
check_quiet "gdirect info --json" sh -c "gdirect info --json >$out"
sed 's/^/# /' "$out"
gpu=$(ls /sys/bus/pci/drivers/nvp2p_emu | grep 0000: | head -n1)
check "gdirect info lists the emulated GPU ${gpu:-(none bound)}" grep -q "\"bdf\": \"$gpu\"" "$out"
check "gdirect info: gdirect.ko loaded" grep -q '"loaded": true' "$out"
check "gdirect info: versions from gdirect.ko" grep -q '"source": "gdirect.ko"' "$out"

ex=/usr/local/bin/gdirect-example
check "the example is the one built in the chroot" test "$(sum $ex)" = "$sha_example"
r=$(LD_LIBRARY_PATH=$emu resolved $ex libgdirect.so.0)
check "it links /usr/lib/$ma/libgdirect.so.0 ($r)" test "$r" = "/usr/lib/$ma/libgdirect.so.0"
r=$(LD_LIBRARY_PATH=$emu resolved $ex libcuda.so.1)
check "it links gdirect-emu-cuda's libcuda.so.1 ($r)" test "$r" = "$emu/libcuda.so.1"

LD_LIBRARY_PATH=$emu $ex >/tmp/example.out 2>&1
check_rc $? "the example runs"
sed 's/^/# /' /tmp/example.out
check "it pinned through gdirect.ko and read back what it wrote" sh -c \
	'grep -q "^read back: \"hello, GPU, through the BAR\"" /tmp/example.out &&
	 ! grep -q "no pinning device" /tmp/example.out &&
	 grep -q "misses 1, bytes pinned [1-9]" /tmp/example.out'

for m in gdirect_edu gdirect nvp2p_emu; do
	check_quiet "rmmod $m" rmmod "$m"
done
tap_done
