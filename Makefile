# SPDX-License-Identifier: MIT
# gdirect - top-level entry points.
#
#   make            build user space (meson, build/) and the kernel modules
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
# User space is built with meson/ninja; the modules with Kbuild against the
# Debian kernel the guest boots (linux-headers-amd64), one copy per flavour
# under build/kmod/: page-table version 2.0 "v2", 1.2 "v1", and "tegra",
# the Tegra interface of guide 13.4 (the provider, gdirect and the example),
# "prop", page table 2.0 with the emulator licensed as NVIDIA's
# proprietary driver, and "coherent", page table 2.0 with the emulator a
# coherent platform's (docs/emulator.md).

BUILD     ?= build
KVER      ?= $(shell ls -1 /lib/modules 2>/dev/null | grep -- '-amd64$$' | sort -V | tail -n1)
KDIR      ?= /lib/modules/$(KVER)/build
MODULES   := nvp2p_emu nvp2p_selftest gdirect gdirect_edu gdirect_kapitest
FLAVOURS  := v2 v1 tegra prop coherent
TEGRA_MODULES := nvp2p_emu gdirect gdirect_edu
PROP_MODULES := nvp2p_emu gdirect gdirect_edu
COHERENT_MODULES := nvp2p_emu nvp2p_selftest gdirect gdirect_edu
JOBS      ?= $(shell nproc)
PREFIX    ?= /usr/local

.PHONY: all deps userspace modules test lint unit-test guest-test demo demo-nvp2p demo-cluster rxe bench bench-gdrcopy ucx install deb test-debug-kernel test-gpu bench-gpu clean

all: userspace modules

# The packages every build target needs (make, make bench); only this,
# make test, make demo and make deb install anything.  Build steps check and say.
deps:
	@scripts/deps.sh build
	@scripts/deps.sh bench

# Configured again whenever an optional dependency (UCX, CUDA) came or went.
userspace:
	@scripts/deps.sh --check userspace
	@scripts/meson-setup.sh $(BUILD)
	ninja -C $(BUILD) -j$(JOBS)

# One Kbuild tree per flavour: sources are copied so the two flavours never
# share object files, and the source tree stays clean.
modules:
	@scripts/deps.sh --check modules
	@test -d "$(KDIR)" || { echo "no kernel headers at $(KDIR)"; exit 1; }
	@for fl in $(FLAVOURS); do \
	  mods="$(MODULES)"; [ $$fl = tegra ] && mods="$(TEGRA_MODULES)"; \
	  [ $$fl = prop ] && mods="$(PROP_MODULES)"; \
	  [ $$fl = coherent ] && mods="$(COHERENT_MODULES)"; \
	  scripts/build-modules.sh "$(KDIR)" "$(BUILD)/kmod/$$fl" "$$fl" $$mods || exit 1; \
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
	  $(MAKE) --no-print-directory userspace; \
	else $(MAKE) --no-print-directory userspace && \
	  $(MAKE) --no-print-directory modules FLAVOURS=v2; fi
	@scripts/demo.sh "$(BUILD)"

# The raw nv-p2p walk on the emulated machine, for driver authors.
demo-nvp2p:
	@GDIRECT_DEMO=emulated scripts/deps.sh demo
	@$(MAKE) --no-print-directory userspace
	@$(MAKE) --no-print-directory modules FLAVOURS=v2
	@scripts/demo.sh "$(BUILD)" nvp2p

# The patched Soft-RoCE module of the emulated cluster (emu/rxe), against
# gdirect's v2 build; tests/harness/build-cluster-initramfs.sh (the cluster
# lane, demo-cluster) builds it too, cached.
rxe:
	@$(MAKE) --no-print-directory modules FLAVOURS=v2
	@emu/rxe/build.sh "$(KDIR)" "$(BUILD)/kmod/rxe" "$(BUILD)/kmod/v2/gdirect"

# Two emulated GPU nodes linked by e1000 + Soft-RoCE, UCX between them;
# the GPU-aware UCX of make ucx where it is built, else Debian's.
demo-cluster:
	@scripts/deps.sh demo-cluster
	@$(MAKE) --no-print-directory userspace
	@$(MAKE) --no-print-directory modules FLAVOURS=v2
	@scripts/demo-cluster.sh "$(BUILD)"

install: userspace
	@PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" DKMS="$(DKMS)" packaging/install.sh "$(BUILD)"

# Debian packages from a copy of the tree (build/deb/src; the tree stays
# clean), built by dpkg-buildpackage from packaging/debian/ and checked by
# lintian.  Like make test, it installs the packaging tools it needs.
deb:
	@scripts/deps.sh deb
	@packaging/deb.sh "$(BUILD)/deb"

bench:
	@scripts/deps.sh --check bench
	@$(MAKE) --no-print-directory userspace
	@bench/rcache/run.sh "$(BUILD)"

# gdrcopy 2.6 from ../shared/peers (tests/peers/peers.sh finds it), built
# by its own Makefiles; BENCH_ROUNDS=N rounds (default 5).
bench-gdrcopy:
	@scripts/deps.sh --check test
	@$(MAKE) --no-print-directory all
	@bench/gdrcopy/ratios.sh "$(BUILD)" results

# Debian's ucx source package, GPU-aware, over our libraries; a no-op when
# build/ucx/prefix holds a build from the same version and inputs.
ucx:
	@scripts/deps.sh ucx
	@$(MAKE) --no-print-directory userspace
	@JOBS=$(JOBS) scripts/ucx-build.sh "$(BUILD)"

# The guest suite under a KASAN/lockdep/kmemleak/KFENCE kernel (docs/debug-kernel.md).
# checkpatch and sparse over the kernel code, as make test runs them
# (scripts/lint-kernel.sh, docs/testing.md).
lint:
	@scripts/lint-kernel.sh "$(BUILD)"

test-debug-kernel:
	@scripts/deps.sh debug-kernel
	@$(MAKE) --no-print-directory all
	@MODULES="$(MODULES)" tests/debug-kernel/run.sh "$(BUILD)"

# Need an NVIDIA GPU and the CUDA toolkit; not part of make test.  meson
# builds the GPU programs with user space wherever it finds nvcc
# (scripts/find-cuda.sh; meson option cuda-home).
test-gpu: userspace
	@test -x "$(BUILD)/tests/device/test_device" || { \
	  echo "test-gpu: no GPU tests in $(BUILD): meson found no CUDA toolkit (scripts/find-cuda.sh says why)"; exit 1; }
	@meson test -C "$(BUILD)" --no-rebuild --suite gpu --verbose

bench-gpu: userspace
	@test -x "$(BUILD)/bench/device/roundtrip" || { \
	  echo "bench-gpu: no benchmark in $(BUILD): meson found no CUDA toolkit (scripts/find-cuda.sh says why)"; exit 1; }
	timeout 300 "$(BUILD)/bench/device/roundtrip" --target $(BENCH_ARGS)

clean:
	rm -rf $(BUILD) $(BUILD)-san $(BUILD)-tsan results
