#!/bin/sh
# SPDX-License-Identifier: MIT
# The emulator binds the ivshmem device, exposes its control device and
# debugfs, honours its BAR1 parameters, and unloads cleanly.
. /tests/lib.sh
plan 9
check "module loads with bar1_size_mb=64 bar1_reserve_mb=8" \
	load_module nvp2p_emu bar1_size_mb=64 bar1_reserve_mb=8
check "control device exists" test -c /dev/nvp2p_emu
check "ivshmem device bound" test -e /sys/bus/pci/drivers/nvp2p_emu/0000:00:02.0 -o -n "$(ls /sys/bus/pci/drivers/nvp2p_emu | grep 0000:)"
check "bar1_total is 64 MiB" test "$(emu_stat bar1_total)" = $((64 << 20))
check "bar1_reserved is 8 MiB" test "$(emu_stat bar1_reserved)" = $((8 << 20))
check "nothing pinned at start" test "$(emu_stat pins)" = 0 -a "$(emu_stat bar1_used)" = 0
check "mem_total is the BAR2 size (256 MiB)" test "$(emu_stat mem_total)" = $((256 << 20))
check "module unloads" unload_module nvp2p_emu
check "an absurd reserve is refused at probe" sh -c \
	'insmod /modules/nvp2p_emu.ko bar1_size_mb=16 bar1_reserve_mb=16; r=$?; rmmod nvp2p_emu 2>/dev/null; test ! -e /dev/nvp2p_emu'
tap_done
