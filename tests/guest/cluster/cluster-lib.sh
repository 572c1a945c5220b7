# SPDX-License-Identifier: MIT
# cluster-lib.sh - helpers for the two-node cluster tests (source it after
# lib.sh).  The harness (tests/harness/cluster.py) boots node N with gdirect.node=N
# on the kernel command line; node N has address 10.0.0.(N+1) on eth0 and
# the Soft-RoCE device rxe0 on top of it.
PATH=$PATH:/usr/bin:/usr/sbin
node=$(sed -n 's/.*gdirect\.node=\([0-9]\).*/\1/p' /proc/cmdline)
case "$node" in
0) me=10.0.0.1 peer=10.0.0.2 ;;
1) me=10.0.0.2 peer=10.0.0.1 ;;
*) me="" peer="" ;;
esac
# UCX from the prefix the initramfs was built with (UCX_PREFIX), if any.
if [ -r /etc/cluster-ucx-lib ]; then
	LD_LIBRARY_PATH=$(cat /etc/cluster-ucx-lib):$LD_LIBRARY_PATH
	export LD_LIBRARY_PATH
fi

# in_cluster: are we a node of cluster.py?  Else the tests skip.
in_cluster() { [ -n "$me" ] && [ -s /etc/cluster-modules ]; }

# barrier NAME: wait until the other node reaches barrier NAME too.
barrier() {
	echo "BARRIER $1" >/dev/ttyS1
	read -r reply </dev/ttyS1
	case "$reply" in
	OK*) return 0 ;;
	*) echo "# barrier $1: $reply"; return 1 ;;
	esac
}

# cluster_gpu_up: the emulated GPU and gdirect.ko, once (the patched
# rdma_rxe needs gdirect's exports), with the BAR1 sizes of cluster-ucx.
cluster_gpu_up() {
	grep -q '^gdirect ' /proc/modules && return 0
	grep -q '^nvp2p_emu ' /proc/modules ||
		load_module nvp2p_emu bar1_size_mb=64 bar1_reserve_mb=8 ||
		{ echo "# insmod nvp2p_emu failed"; return 1; }
	load_module gdirect || { echo "# insmod gdirect failed"; return 1; }
}

# cluster_up: the modules, eth0 with our address, rxe0 on eth0, its port
# active and its GID for our address there (idempotent).  Soft-RoCE brings
# the port up and adds the GID asynchronously, after "rdma link add" and
# the address: a test that uses rxe0 at once (cluster-ucx run without
# cluster-net before it) would find it not ready, so wait for both, up to 30 s.
cluster_up() {
	# Not $m: load_module (lib.sh) sets that.
	for mod in $(cat /etc/cluster-modules); do
		grep -q "^$mod " /proc/modules && continue
		if [ "$mod" = rdma_rxe ]; then cluster_gpu_up || return 1; fi
		insmod "/modules/cluster/$mod.ko" || { echo "# insmod $mod failed"; return 1; }
	done
	ip link set lo up
	ip link set eth0 up || return 1
	ip -4 addr show dev eth0 | grep -q "inet $me/" ||
		ip addr add "$me/24" dev eth0 || return 1
	[ -e /sys/class/infiniband/rxe0 ] ||
		rdma link add rxe0 type rxe netdev eth0 || { echo "# rdma link add failed"; return 1; }
	k=0
	until ibv_devinfo -d rxe0 2>/dev/null | grep -q PORT_ACTIVE &&
	      rxe_gid_index >/dev/null; do
		k=$((k + 1))
		[ "$k" -le 30 ] || { echo "# rxe0 not ready after 30 s"; return 1; }
		sleep 1
	done
}

# rxe_gid_index: the index of rxe0's GID for our IPv4 address (RoCE v2).
rxe_gid_index() {
	want=$(echo "$me" | awk -F. '{ printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4 }')
	for f in /sys/class/infiniband/rxe0/ports/1/gids/*; do
		[ "$(cat "$f" 2>/dev/null)" = "$want" ] && { basename "$f"; return 0; }
	done
	return 1
}

# retry N CMD...: run CMD until it succeeds, at most N times, 1 s apart
# (a client may start before its server listens).
retry() {
	k=$1; shift
	while :; do
		"$@" && return 0
		k=$((k - 1)); [ "$k" -gt 0 ] || return 1
		sleep 1
	done
}
