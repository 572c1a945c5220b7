#!/bin/sh
# SPDX-License-Identifier: MIT
# build-modules.sh KDIR OUTDIR FLAVOUR MODULE...
#
# Builds each kernel module of kernel/, emu/ or tests/modules/ with Kbuild into
# OUTDIR/<module>/, in dependency order.  A module that calls another's
# exports gets the provider's Module.symvers through KBUILD_EXTRA_SYMBOLS,
# exactly as a third-party driver links against nvidia.ko (guide 12.6).
# Built after nvp2p_emu, gdirect is built against it: this script names
# the provider to gdirect's Kbuild, which otherwise looks for an NVIDIA
# driver (kernel/gdirect/Kbuild).
# FLAVOUR v1 builds against page-table version 0x00010002; tegra builds
# the Tegra interface of guide 13.4 (nvp2p_emu and gdirect alike); prop
# builds the emulator as NVIDIA's proprietary driver (page table 2.0,
# licensed "NVIDIA", plain exports), and the modules above it find that
# out from its Module.symvers; coherent builds the emulator of a coherent
# platform (page table 2.0, the coherent parameter 1 by default:
# docs/emulator.md), the modules above it as v2.  FLAVOUR nvidia builds
# the product's modules (gdirect gdirect_edu) for an NVIDIA driver, which
# gdirect's Kbuild finds or takes from GDIRECT_NV_SRC and
# GDIRECT_NV_SYMVERS in the environment (the top-level `make modules`).
# The interfaces that moved between kernels are probed once per KDIR by
# scripts/kconftest.sh into OUTDIR/../conftest/<KDIR's checksum>/kconftest.h
# (kept while KDIR's version.h and the script are unchanged), which every
# module gets with -include.  GDIRECT_KCC names the compiler when it is
# not the one KDIR was built with (bullseye's gcc-10, say).
# GDIRECT_KBUILD_CHECK=sparse passes C=2 CHECK=sparse to Kbuild, so every
# source file is run through sparse whether or not it is recompiled
# (scripts/lint-kernel.sh); its warnings go to stderr with the compiler's.
set -eu
kdir=$1; out=$2; flavour=$3; shift 3
check=""
case ${GDIRECT_KBUILD_CHECK:-} in
"") ;;
sparse) check="C=2 CHECK=sparse" ;;
*) echo "build-modules.sh: GDIRECT_KBUILD_CHECK='$GDIRECT_KBUILD_CHECK': expected 'sparse' or empty" >&2; exit 2 ;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
# The probes, once per kernel tree and script.
kc=$(dirname "$out")/conftest/$(printf '%s' "$kdir" | cksum | cut -d' ' -f1)
kc_key="$(cksum <"$top/scripts/kconftest.sh") ${GDIRECT_KCC:-} $(ls -lL --time-style=+%s \
	"$kdir/include/generated/uapi/linux/version.h" "$kdir/Makefile" 2>/dev/null)"
if [ ! -f "$kc/kconftest.h" ] || [ "$(cat "$kc/key" 2>/dev/null)" != "$kc_key" ]; then
	"$top/scripts/kconftest.sh" "$kdir" "$kc"
	printf '%s\n' "$kc_key" >"$kc/key"
fi
symvers="" provider=""
for m in "$@"; do
	# The product's modules are under kernel/, the emulated GPU's
	# provider under emu/, the test-only ones (nvp2p_selftest,
	# gdirect_kapitest) under tests/modules/.
	case $m in
	nvp2p_emu) src="$top/emu/nvp2p" ;;
	*) src="$top/kernel/$m"; [ -d "$src" ] || src="$top/tests/modules/$m" ;;
	esac
	dst="$out/$m"
	mkdir -p "$dst"
	# Copy only what changed, so Kbuild's incremental build still works.
	cp -up "$src"/* "$dst"/ 2>/dev/null || true
	for d in "$src"/*/; do [ -d "$d" ] && cp -rup "$d" "$dst"/; done
	# The product's modules compile against include/ alone; the
	# emulator's and the test modules also see the emulator's interface.
	# The project's own builds carry gdirect's race knobs (debug only:
	# the nvidia flavour below, DKMS and kernel/gdirect/Makefile build
	# without them).
	extra="-include $kc/kconftest.h -I$top/include/nvidia -I$top/include/uapi -DGDIRECT_DEBUG_KNOBS"
	case $src in "$top"/kernel/*) ;; *) extra="$extra -I$top/emu/include/uapi" ;; esac
	extra="$extra$provider"
	tegra=0
	case $flavour in
	nvidia) extra="-include $kc/kconftest.h -I$top/include/uapi" ;;
	v1) extra="$extra -DNVP2P_EMU_PAGE_TABLE_V1" ;;
	tegra) extra="$extra -DNVP2P_EMU_TEGRA"; tegra=1 ;;
	prop) extra="$extra -DNVP2P_EMU_PROPRIETARY" ;;
	coherent) extra="$extra -DNVP2P_EMU_COHERENT" ;;
	esac
	# $check is empty or two words, split on purpose.
	# shellcheck disable=SC2086
	make -s -C "$kdir" ${GDIRECT_KCC:+CC="$GDIRECT_KCC"} M="$dst" KBUILD_EXTRA_SYMBOLS="$symvers" $check \
		GDIRECT_EXTRA_CFLAGS="$extra" GDIRECT_TEGRA=$tegra modules
	symvers="$symvers $dst/Module.symvers"
	# The modules after the emulator are built against it: gdirect's
	# Kbuild takes the provider its caller names (GDIRECT_PROVIDER_EMULATOR,
	# include/uapi/gdirect_ioctl.h), with the provider's nv-p2p.h
	# (include/nvidia) and Module.symvers passed above.
	if [ "$m" = nvp2p_emu ]; then provider=" -DGDIRECT_PROVIDER=1"; fi
done
# Next to a proprietary provider (nv-p2p exported as plain symbols) the
# kernel refuses any module on top that uses a GPL-only symbol; modpost
# cannot see that, so check every module built here against the kernel's
# and the providers' exports.
if [ -n "$symvers" ] && awk -F '\t' '$2 == "nvidia_p2p_get_pages" &&
	$4 == "EXPORT_SYMBOL" { found = 1 } END { exit !found }' $symvers; then
	kos=""
	for m in "$@"; do kos="$kos $out/$m/$m.ko"; done
	"$top/scripts/check-gpl-imports.sh" "$kdir/Module.symvers" $symvers -- $kos
fi
