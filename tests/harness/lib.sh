# SPDX-License-Identifier: MIT
# lib.sh - helpers for guest tests written in busybox sh (source it):
# TAP from tests/include/tap.sh, and the emulated machine's modules and
# counters.
. /tests/tap.sh
load_module() { m=$1; shift; insmod "/modules/$m.ko" "$@"; }
unload_module() { rmmod "$1"; }
# The emulator's counters and knobs: debugfs in the open licence flavour,
# /proc/driver/nvp2p_emu in the proprietary one (emu/include/emu_knob.h).
emu_knob_dir() {
	if [ -d /proc/driver/nvp2p_emu ]; then echo /proc/driver/nvp2p_emu
	else echo /sys/kernel/debug/nvp2p_emu; fi
}
emu_stat() { cat "$(emu_knob_dir)/$1"; }
# wait_tcp_listen PORT PID: wait until a TCP socket (IPv4 or IPv6) listens
# on PORT, at most 120 s, while process PID lives; 1 otherwise.  For a
# client of a server that prints nothing when it listens: a client started
# on a clock is refused when the server is late on a loaded machine.
wait_tcp_listen() {
	wtl_port=$(printf '%04X' "$1")
	wtl_k=0
	until cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
	      awk -v p=":$wtl_port" '$2 ~ p"$" && $4 == "0A" { f = 1 } END { exit !f }'; do
		kill -0 "$2" 2>/dev/null || return 1
		wtl_k=$((wtl_k + 1))
		[ "$wtl_k" -le 1200 ] || return 1
		sleep 0.1
	done
}

# ucx_kernel_lacks: what this kernel lacks that UCX needs, or nothing.
# UCX wires up over IPv4 sockets (its tcp transport) and its shared-memory
# transport makes its receive FIFO with SysV shm, without which creating a
# worker fails; the debug kernel (allnoconfig plus a fragment) has IPv4
# for the cluster boot but no SysV IPC.
ucx_kernel_lacks() {
	if [ ! -d /proc/sys/net/ipv4 ]; then
		echo "this kernel has no IPv4"
	elif [ ! -d /proc/sysvipc ]; then
		echo "this kernel has no SysV IPC (CONFIG_SYSVIPC), which UCX's shared-memory transport needs"
	fi
}
