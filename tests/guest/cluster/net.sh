#!/bin/sh
# SPDX-License-Identifier: MIT
# net.sh - the two nodes see each other: the e1000 link over
# qemu's stream netdev, IPv4, Soft-RoCE (rxe0) and an RC exchange over it.
. /tests/lib.sh
. /tests/cluster-lib.sh
plan 6
if ! in_cluster; then
	for i in 1 2 3 4 5 6; do skip "cluster check $i" "not booted by tests/harness/cluster.py"; done
	exit 0
fi
echo "# node $node, $me, peer $peer"
check "network and Soft-RoCE modules load, eth0 $me, rxe0 on eth0" cluster_up
barrier net-up || true
ping_peer() { ping -q -c 2 -W 3 "$peer" >/dev/null; }
check "ping the peer $peer over e1000" retry 5 ping_peer
check "rxe0 port 1 is active" sh -c 'ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE'
gid=$(rxe_gid_index) || gid=""
check "rxe0 has a GID for $me (index ${gid:-none})" test -n "$gid"
barrier pingpong || true
log=/tmp/pingpong.log
if [ "$node" = 0 ]; then
	timeout 60 ibv_rc_pingpong -d rxe0 -g "${gid:-1}" -n 200 >"$log" 2>&1 &
	pid=$!
	# its TCP port for the exchange of addresses (18515), before the client
	wait_tcp_listen 18515 $pid || echo "# ibv_rc_pingpong did not listen"
	barrier pingpong-listening || true
	wait $pid; rc=$?
else
	barrier pingpong-listening || true
	retry 5 timeout 60 ibv_rc_pingpong -d rxe0 -g "${gid:-1}" -n 200 "$peer" >"$log" 2>&1; rc=$?
fi
sed 's/^/# /' "$log"
check "ibv_rc_pingpong over rxe0 (RC, 200 exchanges)" test "$rc" = 0
check "ibv_rc_pingpong reports its bandwidth" grep -q 'bytes in .* seconds' "$log"
barrier net-done || true
