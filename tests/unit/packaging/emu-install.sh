#!/bin/sh
# SPDX-License-Identifier: MIT
# emu-install.sh SOURCE BUILD - TAP: "make install" (install.sh) leaves
# the emulated GPU's libraries out unless CUDA_EMU=1; with it, installs
# libcuda.so.1, libcudart.so.13, libnvidia-ml.so.1 with their links and
# headers, and a program built against them finds the runtime's version;
# it refuses to replace NVIDIA's libcudart.so.13 unless
# CUDA_EMU_OVERWRITE=1, then keeps NVIDIA's beside ours; both variables
# are parsed strictly.
set -u
top=$1 build=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
opt() { meson introspect --buildoptions "$build" | python3 -c \
	'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1"; }
prefix=$(opt prefix) libdir=$(opt libdir) incdir=$(opt includedir)
case "$libdir" in /*) ;; *) libdir=$prefix/$libdir ;; esac
case "$incdir" in /*) ;; *) incdir=$prefix/$incdir ;; esac
inst() { # inst DESTDIR [VAR=VALUE...]: install.sh's status; log in DESTDIR.log
	dd=$1; shift
	env DESTDIR="$dd" "$@" "$top/packaging/install.sh" "$build" > "$dd.log" 2>&1
}

inst "$d/a"; ok $? "install without CUDA_EMU"
[ ! -e "$d/a$libdir/libcudart.so.13" ] && [ ! -e "$d/a$libdir/libcuda.so.1" ] &&
	[ ! -e "$d/a$libdir/libnvidia-ml.so.1" ] && [ ! -e "$d/a$incdir/cuda_runtime.h" ]
ok $? "no library or header of NVIDIA's names installed"
inst "$d/b" CUDA_EMU=1; ok $? "install with CUDA_EMU=1"
L=$d/b$libdir
[ -f "$L/libcudart.so.13.0.0" ] && [ -L "$L/libcudart.so.13" ] && [ -L "$L/libcudart.so" ] &&
	[ -L "$L/libcuda.so.1" ] && [ -L "$L/libnvidia-ml.so.1" ] &&
	[ -f "$d/b$incdir/cuda_runtime_api.h" ] && [ -f "$d/b$incdir/nvml.h" ] &&
	[ -f "$d/b$incdir/cuda.h" ]
ok $? "the three libraries with their links, and the headers"
printf '#include <cuda_runtime.h>\n#include <stdio.h>\nint main(void) { int v = 0; cudaRuntimeGetVersion(&v); printf("%%d\\n", v); return 0; }\n' > "$d/t.c"
san=$("$(dirname "$0")/sanitize-flags.sh" "$build")
out=$(cc $san -o "$d/t" "$d/t.c" -I"$d/b$incdir" -L"$L" -lcudart 2>"$d/cc.log" &&
	LD_LIBRARY_PATH=$L "$d/t" 2>&1 || cat "$d/cc.log")
[ "$out" = 13000 ]; ok $? "a program built against them runs: '$out'"
inst "$d/b" CUDA_EMU=1; ok $? "installing again over our own needs no option"
inst "$d/c" CUDA_EMU=yes; st=$?
[ $st != 0 ] && grep -q 'CUDA_EMU=yes: want 0 or 1' "$d/c.log"
ok $? "CUDA_EMU=yes is an error (status $st)"

# over NVIDIA's runtime
mkdir -p "$d/e$libdir"
printf 'int cudaFree(void *p) { (void)p; return 0; }\n' > "$d/n.c"
cc -shared -fPIC -Wl,-soname,libcudart.so.13 -o "$d/e$libdir/libcudart.so.13.0.96" "$d/n.c"
ln -s libcudart.so.13.0.96 "$d/e$libdir/libcudart.so.13"
inst "$d/e" CUDA_EMU=1; st=$?
[ $st != 0 ] && grep -q 'CUDA_EMU_OVERWRITE=1' "$d/e.log"
ok $? "refused over NVIDIA's libcudart.so.13, naming CUDA_EMU_OVERWRITE=1 (status $st)"
[ "$(readlink "$d/e$libdir/libcudart.so.13")" = libcudart.so.13.0.96 ] &&
	[ ! -e "$d/e$libdir/libcuda.so.1" ] && [ ! -e "$d/e$libdir/libgdirect.so.0" ]
ok $? "NVIDIA's file untouched, nothing installed"
inst "$d/e" CUDA_EMU=1 CUDA_EMU_OVERWRITE=2; st=$?
[ $st != 0 ] && grep -q 'CUDA_EMU_OVERWRITE=2: want 0 or 1' "$d/e.log"
ok $? "CUDA_EMU_OVERWRITE=2 is an error (status $st)"
inst "$d/e" CUDA_EMU=1 CUDA_EMU_OVERWRITE=1; ok $? "CUDA_EMU_OVERWRITE=1 installs"
grep -q GDIRECT_EMU_LIB "$d/e$libdir/libcudart.so.13" && [ -L "$d/e$libdir/nvidia-saved.libcudart.so.13" ] &&
	[ -f "$d/e$libdir/libcudart.so.13.0.96" ]
ok $? "libcudart.so.13 is ours, NVIDIA's kept as nvidia-saved.libcudart.so.13"
rm -f "$d"/*.log
echo "1..$n"
[ $failed = 0 ]
