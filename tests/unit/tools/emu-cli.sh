#!/bin/sh
# SPDX-License-Identifier: MIT
# t-emu-cli.sh GDIRECT_EMU - gdirect-emu's command line without booting:
# --help names every option, and each mistake (an unknown or malformed
# knob, an option the machine does not model, a missing COMMAND) exits 2
# with a message naming it.  A command line that parses runs into the
# empty build tree given with --build, whose complaint (no modules) shows
# that the options before it were accepted.
set -u
emu=$1
. "$(dirname "$0")/../../include/tap.sh"
command -v python3 >/dev/null || skip_all "no python3"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nobuild="--build $tmp/empty"
mkdir "$tmp/empty" "$tmp/dir"

# usage WHAT PATTERN ARGS...: exit status 2 and PATTERN on stderr.
usage() {
	u_what=$1 u_pat=$2; shift 2
	"$emu" "$@" >"$tmp/out" 2>"$tmp/err"
	u_rc=$?
	if [ "$u_rc" = 2 ] && grep -qF -- "$u_pat" "$tmp/err"; then ok "$u_what"
	else not_ok "$u_what"; diag "exit $u_rc, wanted 2 and: $u_pat"; diag "$(cat "$tmp/err")"; fi
}
# accepted WHAT SUBCOMMAND ARGS...: the options parse (the empty build tree is next).
accepted() {
	a_what=$1 a_sub=$2; shift 2
	usage "$a_what" "its modules are not built in $tmp/empty" "$a_sub" $nobuild "$@"
}

"$emu" --help >"$tmp/help" 2>&1
check_rc $? "--help exits 0"
for o in --nodes --flavour --kernel --driver --cuda --with --knob --no-modules \
	--timeout --results --build --mem-mb; do
	check "--help names $o" grep -qF -- "$o" "$tmp/help"
done
check "--help names the exit statuses" grep -qF "124 when the machine did not finish" "$tmp/help"

usage "no subcommand" "the following arguments are required"
usage "an unknown subcommand" "invalid choice: 'boot'" boot
usage "run without COMMAND" "run: no COMMAND" run $nobuild
usage "run with -- and nothing after" "run: no COMMAND" run $nobuild --
usage "an unknown option" "unrecognized arguments: --gpus" run --gpus 2 -- true
usage "--nodes 3" "'3': the machine has 1 or 2 nodes" run --nodes 3 -- true
usage "--nodes x" "'x': the machine has 1 or 2 nodes" run --nodes x -- true
usage "--flavour v3" "invalid choice: 'v3'" run --flavour v3 -- true
usage "--timeout 0" "'0' is not a whole number of seconds" run --timeout 0 -- true
usage "--timeout 10s" "'10s' is not a whole number of seconds" run --timeout 10s -- true
usage "--mem-mb 12" "'12' is not a number of MiB" run --mem-mb 12 -- true
usage "an unknown knob is named" "--knob bar1_sz: no such knob" run --knob bar1_sz=64 -- true
usage "a knob without a value" "--knob 'bar1_size_mb': expected NAME=VALUE" run --knob bar1_size_mb -- true
usage "a knob with trailing garbage" "knob bar1_size_mb: '64M' is not a decimal number" run --knob bar1_size_mb=64M -- true
usage "a negative knob" "knob pin_latency_us: '-1' is not a decimal number" run --knob pin_latency_us=-1 -- true
usage "a knob past 32 bits" "knob callback_delay_ms: 4294967296 is outside 0..4294967295" run --knob callback_delay_ms=4294967296 -- true
usage "a knob given twice" "--knob unmap_delay_ms: given twice" run --knob unmap_delay_ms=1 --knob unmap_delay_ms=2 -- true
usage "cuda_version other than 13000, 13030" "knob cuda_version: '13010' is not 13000 or 13030" run --knob cuda_version=13010 -- true
usage "coherent 2" "knob coherent: '2' is not 0 or 1" run --knob coherent=2 -- true
usage "coherent on tegra" "the tegra flavour has no coherent platform" run --flavour tegra --knob coherent=1 -- true
usage "dev_mode in decimal" "knob dev_mode: '660' is not an octal mode" run --knob dev_mode=660 -- true
usage "fail_next without an errno" "knob fail_next: '3' is not COUNT:ERRNO" run --knob fail_next=3 -- true
usage "fail_next_dma_map errno 0" "knob fail_next_dma_map: 0 is outside 1..4095" run --knob fail_next_dma_map=1:0 -- true
usage "gpu_mem_mb not a power of two" "knob gpu_mem_mb: 300 is not a power of two" run --knob gpu_mem_mb=300 -- true
usage "BAR1 larger than the GPU memory" "knob bar1_size_mb: 512 MiB is more than the GPU memory (256 MiB)" run --knob bar1_size_mb=512 -- true
usage "a reserve that leaves no BAR1" "knob bar1_reserve_mb: leaves nothing of the 16 MiB BAR1" run --knob bar1_size_mb=16 -- true
usage "--driver 595 is not modelled" "--driver 595: not modelled" run --driver 595 -- true
usage "--driver 580 on v1" "that flavour is not driver 580's interface" run --driver 580 --flavour v1 -- true
usage "--cuda 12.8" "--cuda 12.8: the emulated CUDA driver is 13.0 or 13.3" run --cuda 12.8 -- true
usage "--cuda and cuda_version disagree" "--cuda 13.3 and --knob cuda_version=13000 disagree" run --cuda 13.3 --knob cuda_version=13000 -- true
usage "knobs with --no-modules" "which --no-modules leaves out" run --no-modules --knob pin_latency_us=5 -- true
usage "two nodes of another flavour" "--nodes 2 --flavour prop" run --nodes 2 --flavour prop -- true
usage "--with a missing folder" "--with $tmp/nothing: not a folder" run --with "$tmp/nothing" -- true
usage "--with /proc" "/proc is a folder the guest's own system uses" run --with /proc -- true
usage "a shell on two nodes" "shell: one node only" shell --nodes 2

accepted "every knob well formed" run --knob gpu_mem_mb=512 --knob bar1_size_mb=128 \
	--knob bar1_reserve_mb=8 --knob max_mem_per_user_mb=64 --knob dev_mode=0666 \
	--knob pin_latency_us=0 --knob callback_delay_ms=1 --knob unmap_delay_ms=2 \
	--knob map_return_delay_ms=3 --knob map_entry_delay_ms=4 --knob coherent=1 \
	--knob cuda_version=13030 --knob expect_misuse=2 --knob fail_next=2:12 \
	--knob fail_next_dma_map=1:5 -- true
accepted "--driver 580 --cuda 13.3 --nodes 2 --with DIR" run --driver 580 --cuda 13.3 \
	--nodes 2 --with "$tmp/dir" --timeout 60 -- sh -c 'exit 3'
accepted "COMMAND's own options are COMMAND's" run -- ls --nodes 7 --knob x
accepted "shell" shell --timeout 5

"$emu" info $nobuild >"$tmp/info" 2>&1
check_rc $? "info exits 0"
for k in gpu_mem_mb bar1_size_mb fail_next cuda_version; do
	check "info lists the knob $k" grep -q "^  $k " "$tmp/info"
done
check "info says what is not modelled" grep -qF "no kernels run on the GPU" "$tmp/info"
tap_done
