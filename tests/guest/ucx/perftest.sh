#!/bin/sh
# SPDX-License-Identifier: MIT
# UCX built by `make ucx` (scripts/ucx-build.sh, in /opt/ucx of the guest)
# on the emulated GPU, in one guest: ucx_info lists the GPU transports;
# ucx_perftest in loopback with GPU memory (tag, active messages, small and
# large); the same transfer fails without the GPU transports (UCX did not
# take GPU memory for host memory).  ucx-ucp checks UCP between GPU
# buffers, the bytes on the GPU, the memory type and the hooks.
# UCX_MEM_CUDA_HOOK_MODE stays unset: UCX's default hook mode.  Afterwards:
# 0 pins, 0 BAR1 bytes.
. /tests/lib.sh
ucx=/opt/ucx
if [ ! -x "$ucx/bin/ucx_info" ]; then
	echo "# UCX IS NOT IN THIS GUEST: run 'make ucx' before packing the initramfs"
	echo "ok 1 - UCX on the emulated GPU # SKIP no UCX build (make ucx) in this initramfs"
	echo "1..1"
	exit 0
fi
lacks=$(ucx_kernel_lacks)
if [ -n "$lacks" ]; then
	echo "ok 1 - UCX on the emulated GPU # SKIP $lacks"
	echo "1..1"
	exit 0
fi
export LD_LIBRARY_PATH="$ucx/lib:${LD_LIBRARY_PATH:-/usr/lib/gdirect}"
unset UCX_MEM_CUDA_HOOK_MODE UCX_TLS UCX_LOG_LEVEL
ip link set lo up 2>/dev/null

ours=""
for m in nvp2p_emu gdirect; do
	[ -d "/sys/module/$m" ] && continue
	if ! load_module "$m"; then
		echo "ok 1 - UCX on the emulated GPU # SKIP $m could not be loaded"
		echo "1..1"
		for o in $ours; do rmmod "$o"; done
		exit 0
	fi
	ours="$m $ours"
done

# ucx_info -d: the memory domains and transports UCX found.
out=/tmp/ucx-info-d.txt
"$ucx/bin/ucx_info" -d >"$out" 2>&1
check "ucx_info -d runs" [ $? -eq 0 ]
for tl in cuda_copy cuda_ipc gdr_copy tcp self posix; do
	if grep -q "Transport: $tl\$" "$out"; then ok "ucx_info -d lists $tl"
	else not_ok "ucx_info -d lists $tl"; fi
done
for md in cuda_cpy cuda_ipc gdr_copy; do
	if grep -q "Memory domain: $md\$" "$out"; then ok "ucx_info -d lists memory domain $md"
	else not_ok "ucx_info -d lists memory domain $md"; fi
done
grep "Memory domain:\|Transport:\|Device:" "$out" | sed 's/^#  */# /' | tr '\n' ' ' | fold -w 150 | sed 's/^/# /'
echo
if grep -q "UCX  WARN\|UCX  ERROR" "$out"; then
	not_ok "ucx_info -d without warnings"; grep "UCX  WARN\|UCX  ERROR" "$out" | sed 's/^/# /'
else ok "ucx_info -d without warnings"; fi

# ucx_perftest in loopback: one process talks to itself.  Memory types
# SEND[,RECV]; sizes 8 B and 1 MiB; few iterations (TCG is slow).  No
# ucp_put_bw: UCX 1.13 has no RMA lane to GPU memory on an endpoint to its
# own process and emulates put with CPU copies (docs/cluster.md).
perf() {
	what="ucx_perftest -l $*"
	if "$ucx/bin/ucx_perftest" -l -n 20 -w 2 "$@" >/tmp/perf.txt 2>&1 &&
	   grep -q "Final:" /tmp/perf.txt; then
		ok "$what"
		grep "Final:" /tmp/perf.txt | sed 's/^/# /'
	else
		not_ok "$what"; sed 's/^/# /' /tmp/perf.txt | grep -v '^# [|+]' | tail -n 15
	fi
}
for t in tag_bw ucp_am_bw; do
	for m in cuda cuda,cuda; do
		for s in 8 1048576; do
			perf -t "$t" -m "$m" -s "$s"
		done
	done
done

# The emulated GPU's memory cannot be touched by the CPU: without UCX's GPU
# transports the same transfer must fail.  Were UCX taking GPU memory for
# host memory, it would not need them.
if UCX_TLS=^cuda_copy,cuda_ipc,gdr_copy "$ucx/bin/ucx_perftest" -l -n 4 -w 1 \
	-t tag_bw -m cuda,cuda -s 65536 >/tmp/perf-nogpu.txt 2>&1; then
	not_ok "tag_bw -m cuda,cuda fails without cuda_copy, cuda_ipc and gdr_copy"
	grep "Final:" /tmp/perf-nogpu.txt | sed 's/^/# /'
else
	ok "tag_bw -m cuda,cuda fails without cuda_copy, cuda_ipc and gdr_copy"
	grep -v '^[|+]' /tmp/perf-nogpu.txt | tail -n 3 | sed 's/^/# /'
fi

pins=$(emu_stat pins) bar1=$(emu_stat bar1_used)
check "0 pins and 0 BAR1 bytes used afterwards (pins $pins, bar1_used $bar1)" \
	test "$pins" = 0 -a "$bar1" = 0
for o in $ours; do
	check "$o unloads" rmmod "$o"
done
tap_done
