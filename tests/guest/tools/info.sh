#!/bin/sh
# SPDX-License-Identifier: MIT
# gdirect info in the emulated machine: its JSON matches how the emulator
# was configured (BAR1 size and reserve given as module parameters, the
# page-table version the emulator announces in its probe message) and what
# gdirect.ko reports when it is loaded too.
. /tests/lib.sh
plan 16
out=/tmp/gdirect-info.json
# value KEY: the first "KEY": VALUE member of the JSON, quotes stripped.
value() { sed -n "s/^ *\"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$out" | head -n1; }

dmesg -c >/dev/null
check "nvp2p_emu loads with bar1_size_mb=64 bar1_reserve_mb=8" \
	load_module nvp2p_emu bar1_size_mb=64 bar1_reserve_mb=8
# The emulator's own statement of its page-table version, at probe time.
ptv=$(dmesg | sed -n 's/.*emulated GPU:.*page table \(0x[0-9a-f]*\).*/\1/p' | tail -n1)
echo "# emulator says page table $ptv"
check "gdirect info --json succeeds" sh -c "gdirect info --json > $out"
sed 's/^/# /' "$out"
gpu=$(ls /sys/bus/pci/drivers/nvp2p_emu | grep 0000: | head -n1)
check "the emulated GPU $gpu is listed" grep -q "\"bdf\": \"$gpu\"" "$out"
check "it is of kind emulated" test "$(value kind)" = emulated
check "BAR1 total is 64 MiB" grep -q "\"total\": $((64 << 20))," "$out"
check "BAR1 reserved is 8 MiB" grep -q "\"reserved\": $((8 << 20))," "$out"
check "BAR1 used is the emulator's bar1_used" grep -q "\"used\": $(emu_stat bar1_used)," "$out"
check "versions come from the emulator without gdirect.ko" test "$(value source | head -n1)" = nvp2p_emu
check "page-table version is the emulator's ($ptv)" test -n "$ptv" -a "$(value page_table_version)" = "$ptv"
check "persistent API reported available" grep -q '"persistent_api": true' "$out"
check "IOMMU mode off (no IOMMU in the emulated machine)" grep -q '"mode": "off"' "$out"

# With gdirect.ko loaded the versions come from it, and must agree.
if [ -e /modules/gdirect.ko ] && load_module gdirect; then
	gdirect info --json > $out
	sed -n '/"gdirect_ko"/,/}/p;/"nv_p2p"/,/}/p' "$out" | sed 's/^/# /'
	check "with gdirect.ko: loaded is true" grep -q '"loaded": true' "$out"
	check "with gdirect.ko: versions come from gdirect.ko" grep -q '"source": "gdirect.ko"' "$out"
	check "with gdirect.ko: same page-table version ($ptv)" test "$(value page_table_version)" = "$ptv"
	unload_module gdirect
else
	skip "with gdirect.ko: loaded is true" "no gdirect.ko in /modules"
	skip "with gdirect.ko: versions come from gdirect.ko" "no gdirect.ko in /modules"
	skip "with gdirect.ko: same page-table version" "no gdirect.ko in /modules"
fi

# The PCIe path from the GPU to edu (1234:11e8): both on the root bus.
edu=$(grep -l 0x11e8 /sys/bus/pci/devices/*/device | head -n1 | sed 's|.*/devices/\([^/]*\)/device|\1|')
gdirect info --json --peer "$edu" > $out
check "path GPU -> edu ($edu) goes through the host bridge" grep -q '"class": "host_bridge"' "$out"
gdirect info --peer "$edu" | sed 's/^/# /'
check "nvp2p_emu unloads" unload_module nvp2p_emu
tap_done
