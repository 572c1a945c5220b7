# SPDX-License-Identifier: MIT
# gdirect - top-level entry points.
#
#   make            the product: user space (meson, build/product/:
#                   libgdirect, libgdrapi, the gdirect tool) and gdirect.ko and
#                   gdirect_edu.ko for the NVIDIA driver found under
#                   /usr/src/nvidia-* (NVIDIA_SRC=DIR names another), into
#                   build/kmod/nvidia; with no driver it says so and fails
#   make userspace  user space alone (TESTBED=1: with the emulated GPU's
#                   libraries and the tests, in build/ itself)
#   make modules    the two modules alone (KDIR=, the running kernel's tree)
#   make testbed    the emulated machine's modules: the emulated GPU
#                   (nvp2p_emu), its self-test, gdirect, gdirect_edu and the
#                   kapi test module, in five flavours under build/kmod/
#                   (below); make test, make demo and the others that boot
#                   the emulated machine build it themselves
#   make deps       install the Debian packages the build targets need
#   make test       every lane: unit tests, lint, packages, the emulated machine's
#                   guest suites, the GPU suites where a GPU is (scripts/test.sh)
#   make lint       checkpatch and sparse over the kernel code
#   make demo       the product walked end to end: the emulated machine, or the
#                   real path with an NVIDIA driver (scripts/demo-gpu.sh)
#   make demo-nvp2p the raw nv-p2p walk on the emulated machine, for driver authors
#   make demo-cluster two emulated GPU nodes, GPUDirect RDMA between them over
#                   the patched Soft-RoCE (verbs, perftest, UCX), and UCX staged
#                   (docs/cluster.md)
#   make rxe        the patched Soft-RoCE module that registers GPU memory
#                   (emu/rxe), into build/kmod/rxe
#   make install    libgdirect, the gdirect tool, module sources for DKMS, udev rule
#                   (PREFIX=/usr/local, DESTDIR=, DKMS=1 to build with dkms)
#   make deb        Debian packages (dpkg-buildpackage, debhelper, dh-dkms) into
#                   build/deb, lintian-checked (docs/building.md)
#   make bench      registration-cache benchmarks against UCX's, in one run
#   make bench-gdrcopy  gdrcopy 2.6's apiperf and copylat through gdirect against
#                   through gdrcopy's own driver and library, in one guest run
#   make ucx        Debian's UCX built GPU-aware against our CUDA libraries and
#                   libgdrapi, into build/ucx/prefix (docs/cluster.md)
#   make test-debug-kernel  the guest suite under a KASAN/lockdep/kmemleak/KFENCE kernel
#   make test-gpu   device-library tests on a machine with an NVIDIA GPU
#   make bench-gpu  the device library's round-trip benchmark, on such a machine
#
# User space is built with meson/ninja; the modules with Kbuild.  The
# product's modules are built against the running kernel (KDIR) and the
# NVIDIA driver's nv-p2p.h and Module.symvers (NVIDIA_SRC, NVIDIA_SYMVERS;
# kernel/gdirect/Kbuild).  The testbed's are built against the Debian kernel
# the guest boots (linux-headers-amd64, GUEST_KDIR), one copy per flavour
# under build/kmod/: page-table version 2.0 "v2", 1.2 "v1", and "tegra",
# the Tegra interface of guide 13.4 (the provider, gdirect and the example),
# "prop", page table 2.0 with the emulator licensed as NVIDIA's
# proprietary driver, and "coherent", page table 2.0 with the emulator a
# coherent platform's (docs/emulator.md).

BUILD     ?= build
# The product's modules: the running kernel, the NVIDIA driver's source.
KDIR      ?= /lib/modules/$(shell uname -r)/build
NVIDIA_SRC ?= $(firstword $(patsubst %/nv-p2p.h,%,$(wildcard \
	/usr/src/nvidia-*/nvidia/nv-p2p.h \
	/usr/src/nvidia-*/kernel-open/nvidia/nv-p2p.h \
	/usr/src/nvidia-*/kernel/nvidia/nv-p2p.h)))
NVIDIA_SYMVERS ?=
# The testbed's: the newest Debian -amd64 kernel, which the guest boots.
KVER      ?= $(shell ls -1 /lib/modules 2>/dev/null | grep -- '-amd64$$' | sort -V | tail -n1)
GUEST_KDIR ?= /lib/modules/$(KVER)/build
MODULES   := nvp2p_emu nvp2p_selftest gdirect gdirect_edu gdirect_kapitest
FLAVOURS  := v2 v1 tegra prop coherent
TEGRA_MODULES := nvp2p_emu gdirect gdirect_edu
PROP_MODULES := nvp2p_emu gdirect gdirect_edu
COHERENT_MODULES := nvp2p_emu nvp2p_selftest gdirect gdirect_edu
JOBS      ?= $(shell nproc)
PREFIX    ?= /usr/local

.PHONY: all deps userspace modules testbed test lint unit-test guest-test demo demo-nvp2p demo-cluster rxe bench bench-gdrcopy ucx install deb test-debug-kernel test-gpu bench-gpu clean

all: userspace modules

# The packages every build target needs (make, make bench); only this,
# make test, make demo and make deb install anything.  Build steps check and say.
deps:
	@scripts/deps.sh build
	@scripts/deps.sh bench

# TESTBED=1 adds the emulated GPU's libraries, the tests with their fakes,
# and the demo's guest programs (meson's emulator and tests options); the
# targets that run them pass it.  Each TESTBED has a build folder of its
# own, so that make and make test, one after the other, never configure a
# folder back and forth and rebuild it: the product's (TESTBED=0: make,
# make install, make bench-gpu) is $(BUILD)/product, the testbed's
# (TESTBED=1) $(BUILD) itself, where the harness, the demo and the
# benchmarks find it beside the modules of $(BUILD)/kmod.  Either is
# configured again only when an optional dependency (UCX, CUDA) came or
# went (scripts/meson-setup.sh).
TESTBED ?= 0
meson_testbed_0 := -Demulator=false -Dtests=false
meson_testbed_1 := -Demulator=true -Dtests=true
meson_build_0 := $(BUILD)/product
meson_build_1 := $(BUILD)
userspace:
	@test -n "$(meson_testbed_$(TESTBED))" || { echo "make: TESTBED='$(TESTBED)': expected 0 or 1"; exit 2; }
	@scripts/deps.sh --check userspace
	@scripts/meson-setup.sh $(meson_build_$(TESTBED)) $(meson_testbed_$(TESTBED))
	ninja -C $(meson_build_$(TESTBED)) -j$(JOBS)

# gdirect and gdirect_edu for the NVIDIA driver, built in a copy under
# build/kmod/nvidia so that the source tree stays clean.
modules:
	@test -n "$(NVIDIA_SRC)" || { \
	  echo "make modules: no NVIDIA driver source under /usr/src/nvidia-*, so gdirect.ko is not built."; \
	  echo "  Name one with NVIDIA_SRC=DIR, the directory holding its nv-p2p.h (e.g."; \
	  echo "  /usr/src/nvidia-<version>/kernel-open/nvidia), and NVIDIA_SYMVERS=FILE where"; \
	  echo "  its Module.symvers is not in DIR or DIR/.."; \
	  echo "  Without a GPU, 'make testbed' builds the modules against the emulated GPU, and"; \
	  echo "  'make demo' and 'make test' build and boot them (docs/building.md)."; \
	  exit 1; }
	@test -f "$(NVIDIA_SRC)/nv-p2p.h" || { echo "make modules: no nv-p2p.h in NVIDIA_SRC=$(NVIDIA_SRC)"; exit 1; }
	@test -d "$(KDIR)" || { echo "make modules: no kernel headers at $(KDIR) (Debian: linux-headers-$$(uname -r)); KDIR= names another tree"; exit 1; }
	@GDIRECT_NV_SRC="$(NVIDIA_SRC)" GDIRECT_NV_SYMVERS="$(NVIDIA_SYMVERS)" \
	  scripts/build-modules.sh "$(KDIR)" "$(BUILD)/kmod/nvidia" nvidia gdirect gdirect_edu
	@echo "make modules: $(BUILD)/kmod/nvidia/gdirect/gdirect.ko and $(BUILD)/kmod/nvidia/gdirect_edu/gdirect_edu.ko, for $(NVIDIA_SRC)"

# The emulated machine's modules, one Kbuild tree per flavour: sources are
# copied so the flavours never share object files, and the source tree
# stays clean.
testbed:
	@scripts/deps.sh --check modules
	@test -d "$(GUEST_KDIR)" || { echo "no kernel headers at $(GUEST_KDIR)"; exit 1; }
	@for fl in $(FLAVOURS); do \
	  mods="$(MODULES)"; [ $$fl = tegra ] && mods="$(TEGRA_MODULES)"; \
	  [ $$fl = prop ] && mods="$(PROP_MODULES)"; \
	  [ $$fl = coherent ] && mods="$(COHERENT_MODULES)"; \
	  scripts/build-modules.sh "$(GUEST_KDIR)" "$(BUILD)/kmod/$$fl" "$$fl" $$mods || exit 1; \
	done

# Every lane; on a GPU server (or with GDIRECT_TEST_LANES=available) the
# lanes this machine cannot run are skipped, each saying why.
test:
	@scripts/test.sh "$(BUILD)"

# With an NVIDIA driver (and no GDIRECT_DEMO=emulated): user space alone and
# the real path; else the modules of the flavour the demo boots (v2) too,
# and the emulated machine.
demo:
	@scripts/deps.sh demo
	@if [ "$$(scripts/deps.sh demo-mode)" = gpu ]; then \
	  $(MAKE) --no-print-directory userspace TESTBED=1; \
	else $(MAKE) --no-print-directory userspace TESTBED=1 && \
	  $(MAKE) --no-print-directory testbed FLAVOURS=v2; fi
	@scripts/demo.sh "$(BUILD)"

# The raw nv-p2p walk on the emulated machine, for driver authors.
demo-nvp2p:
	@GDIRECT_DEMO=emulated scripts/deps.sh demo
	@$(MAKE) --no-print-directory userspace TESTBED=1
	@$(MAKE) --no-print-directory testbed FLAVOURS=v2
	@scripts/demo.sh "$(BUILD)" nvp2p

# The patched Soft-RoCE module of the emulated cluster (emu/rxe), against
# gdirect's v2 build; tests/harness/build-cluster-initramfs.sh (the cluster
# lane, demo-cluster) builds it too, cached.
rxe:
	@$(MAKE) --no-print-directory testbed FLAVOURS=v2
	@emu/rxe/build.sh "$(GUEST_KDIR)" "$(BUILD)/kmod/rxe" "$(BUILD)/kmod/v2/gdirect"

# Two emulated GPU nodes linked by e1000 + Soft-RoCE, UCX between them;
# the GPU-aware UCX of make ucx where it is built, else Debian's.
demo-cluster:
	@scripts/deps.sh demo-cluster
	@$(MAKE) --no-print-directory userspace TESTBED=1
	@$(MAKE) --no-print-directory testbed FLAVOURS=v2
	@scripts/demo-cluster.sh "$(BUILD)"

# CUDA_EMU=1 installs the emulated GPU's libraries too (packaging/install.sh),
# from the testbed's build folder; gdirect-emu's machine comes from $(BUILD).
install_testbed := $(if $(filter 1,$(CUDA_EMU)),1,0)
install:
	@$(MAKE) --no-print-directory userspace TESTBED=$(install_testbed)
	@PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" DKMS="$(DKMS)" \
	  packaging/install.sh "$(BUILD)" "$(meson_build_$(install_testbed))"

# Debian packages from a copy of the tree (build/deb/src; the tree stays
# clean), built by dpkg-buildpackage from packaging/debian/ and checked by
# lintian.  Like make test, it installs the packaging tools it needs.
deb:
	@scripts/deps.sh deb
	@packaging/deb.sh "$(BUILD)/deb"

bench:
	@scripts/deps.sh --check bench
	@$(MAKE) --no-print-directory userspace TESTBED=1
	@bench/rcache/run.sh "$(BUILD)"

# gdrcopy 2.6 from ../shared/peers (tests/peers/peers.sh finds it), built
# by its own Makefiles; BENCH_ROUNDS=N rounds (default 5).
bench-gdrcopy:
	@scripts/deps.sh --check test
	@$(MAKE) --no-print-directory userspace testbed TESTBED=1
	@bench/gdrcopy/ratios.sh "$(BUILD)" results

# Debian's ucx source package, GPU-aware, over our libraries; a no-op when
# build/ucx/prefix holds a build from the same version and inputs.
ucx:
	@scripts/deps.sh ucx
	@$(MAKE) --no-print-directory userspace TESTBED=1
	@JOBS=$(JOBS) scripts/ucx-build.sh "$(BUILD)"

# checkpatch and sparse over the kernel code, as make test runs them
# (scripts/lint-kernel.sh, docs/testing.md).
lint:
	@scripts/lint-kernel.sh "$(BUILD)"

# The guest suite under a KASAN/lockdep/kmemleak/KFENCE kernel (docs/debug-kernel.md).
test-debug-kernel:
	@scripts/deps.sh debug-kernel
	@$(MAKE) --no-print-directory userspace testbed TESTBED=1
	@MODULES="$(MODULES)" tests/debug-kernel/run.sh "$(BUILD)"

# Need an NVIDIA GPU and the CUDA toolkit; not part of make test.  meson
# builds the GPU programs with user space wherever it finds nvcc
# (scripts/find-cuda.sh; meson option cuda-home).
test-gpu:
	@$(MAKE) --no-print-directory userspace TESTBED=1
	@test -x "$(BUILD)/tests/device/device-gpu" || { \
	  echo "test-gpu: no GPU tests in $(BUILD): meson found no CUDA toolkit (scripts/find-cuda.sh says why)"; exit 1; }
	@meson test -C "$(BUILD)" --no-rebuild --suite gpu --verbose

bench-gpu: userspace
	@test -x "$(meson_build_0)/bench/device/roundtrip" || { \
	  echo "bench-gpu: no benchmark in $(meson_build_0): meson found no CUDA toolkit (scripts/find-cuda.sh says why)"; exit 1; }
	timeout 300 "$(meson_build_0)/bench/device/roundtrip" --target $(BENCH_ARGS)

clean:
	rm -rf $(BUILD) $(BUILD)-san $(BUILD)-tsan results
